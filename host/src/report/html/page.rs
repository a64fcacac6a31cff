//! The page: the HTML shell (inline CSS, no script, no external resource), its sections in
//! order, and the escaping every text goes through.

use std::fmt::Write as _;

use super::{HtmlError, HtmlInput, anchors, case_plots, compare_table, copy_line, sweeps, trend};
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::report::fmt::{NA, opt_ms, opt_pct, si, sig};
use crate::report::unit_rate;

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
h3{font-size:15px}table{border-collapse:collapse;font-size:12px;margin:8px 0}\
td,th{border:1px solid #ddd;padding:3px 6px;text-align:left}td.n{text-align:right;\
font-variant-numeric:tabular-nums}tr.failed td,tr.failed_accuracy td{background:#fde8e8}\
tr.skipped td{color:#777}.SLOW{color:#b00;font-weight:bold}.FAST{color:#070;font-weight:bold}\
.fail{color:#b00;font-weight:bold}details{margin:6px 0}summary{cursor:pointer;font-weight:bold}\
figure.chart{margin:8px 0}nav a{margin-right:12px}.note{color:#555;font-size:12px}";

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn render(input: &HtmlInput<'_>) -> Result<String, HtmlError> {
    let s = input.summary;
    let mut body = String::new();
    let mut nav = vec![("results", "Results")];
    header(s, &mut body);
    results(s, &mut body);
    if let Some(html) = anchors::section(s) {
        nav.push(("anchors", "Anchors"));
        section(&mut body, "anchors", "Side by side with anchors");
        body.push_str(&html);
    }
    if let Some(chart) = copy_line::chart(s)? {
        nav.push(("copy-line", "% of copy line"));
        section(&mut body, "copy-line", "% of the measured line");
        body.push_str(
            "<p class=\"note\">DRAM-cold figures against the device's measured copy line; \
             l2_hot batch figures (the working set could stay in L2) against the measured L2 \
             line, never against DRAM.</p>",
        );
        chart_fig(&mut body, &chart);
    }
    let found = sweeps::sweeps(s);
    if !found.is_empty() {
        nav.push(("sweeps", "Sweeps"));
        section(&mut body, "sweeps", "Sweeps");
        for sw in &found {
            let _ = write!(body, "<h3>{} by {}</h3>", esc(&sw.kernel), esc(&sw.axis));
            if sw.dropped > 0 {
                let _ = write!(
                    body,
                    "<p class=\"note\">{} more lines left out (the {} with the most points are drawn).</p>",
                    sw.dropped,
                    sweeps::MAX_LINES
                );
            }
            chart_fig(&mut body, &sweeps::chart(sw, sweeps::Figure::Time)?);
            chart_fig(&mut body, &sweeps::chart(sw, sweeps::Figure::Rate)?);
        }
    }
    if let Some(g) = input.gate {
        nav.push(("gate", "Regression gate"));
        gate(g, s, &mut body);
    }
    if let Some(records) = input.history {
        nav.push(("history", "History"));
        history(records, &mut body)?;
    }
    nav.push(("cases", "Cases"));
    cases(s, &mut body)?;

    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>apex-bench report: {}</title><style>{STYLE}</style></head><body>",
        esc(&s.timestamp_utc)
    );
    page.push_str("<nav>");
    for (id, title) in nav {
        let _ = write!(page, "<a href=\"#{id}\">{}</a>", esc(title));
    }
    page.push_str("</nav>");
    page.push_str(&body);
    page.push_str("<p class=\"note\">Written by apex-host. Self-contained: no script, no request leaves this file.</p></body></html>\n");
    Ok(page)
}

fn section(body: &mut String, id: &str, title: &str) {
    let _ = write!(body, "<h2 id=\"{id}\">{}</h2>", esc(title));
}

fn chart_fig(body: &mut String, svg: &str) {
    let _ = write!(body, "<figure class=\"chart\">{svg}</figure>");
}

fn header(s: &RunSummary, body: &mut String) {
    let _ = write!(
        body,
        "<h1>apex-bench report</h1><p>status <b class=\"{cls}\">{status}</b> · suite <code>{suite}</code> · {ts} UTC · {counts}</p>",
        cls = if s.status == "ok" { "" } else { "fail" },
        status = esc(&s.status),
        suite = esc(&s.suite),
        ts = esc(&s.timestamp_utc),
        counts = esc(&crate::report::case_view::counts_line(s)),
    );
    body.push_str("<table>");
    for (k, v) in crate::report::environment_table::environment_rows(&s.environment) {
        let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    body.push_str("</table>");
}

fn results(s: &RunSummary, body: &mut String) {
    section(body, "results", "Results");
    body.push_str(
        "<table><tr><th>case</th><th>status</th><th>mode</th><th>p50 ms</th><th>p95 ms</th>\
         <th>throughput</th><th>GB/s</th><th>% of line</th><th>reason</th></tr>",
    );
    for c in s.benchmarks.values() {
        let (rate, gbps, pct) = match &c.throughput {
            Some(t) => (
                unit_rate(t).map_or(NA.into(), |(u, v)| format!("{} {u}", si(v))),
                sig(t.gbps, 4),
                match (t.pct_of_copy_bandwidth, t.pct_of_l2_line) {
                    (Some(p), _) => format!("{p:.1} % copy"),
                    (None, Some(p)) => format!("{p:.1} % L2"),
                    _ => NA.into(),
                },
            ),
            None => (NA.into(), NA.into(), NA.into()),
        };
        let _ = write!(
            body,
            "<tr class=\"{st}\"><td><a href=\"#{anchor}\">{id}</a></td><td>{st}</td><td>{mode}</td>\
             <td class=\"n\">{p50}</td><td class=\"n\">{p95}</td><td class=\"n\">{rate}</td>\
             <td class=\"n\">{gbps}</td><td class=\"n\">{pct}</td><td>{reason}</td></tr>",
            st = c.status.as_str(),
            anchor = anchor(c),
            id = esc(&c.id),
            mode = esc(c.headline.as_deref().unwrap_or(NA)),
            p50 = opt_ms(c.p50_ms),
            p95 = opt_ms(c.p95_ms),
            rate = esc(&rate),
            reason = esc(c.reason.as_deref().unwrap_or("")),
        );
    }
    body.push_str("</table>");
}

fn gate(g: &super::GateView, s: &RunSummary, body: &mut String) {
    section(body, "gate", "Regression gate");
    let _ = write!(
        body,
        "<p>against <code>{}</code>: <b class=\"{}\">{}</b>. Status: FAST / SLOW / SAME from the \
         noise-aware verdict, <code>????</code> when the evidence cannot tell; gate: the seed \
         rule (current ≤ allowed maximum).</p>",
        esc(&g.baseline),
        if g.status == "pass" { "" } else { "fail" },
        esc(&g.status),
    );
    for note in &g.notes {
        let _ = write!(
            body,
            "<p class=\"note\">{}</p>",
            esc(&note.replace("**", "").replace('`', ""))
        );
    }
    body.push_str(
        "<table><tr><th>metric</th><th>Ref Time</th><th>Cmp Time</th><th>Noise</th><th>Diff</th>\
         <th>%Diff</th><th>Status</th><th>gate</th><th>reason</th></tr>",
    );
    for r in compare_table::rows(&g.checks, s) {
        let _ = write!(
            body,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td>\
             <td class=\"{}\">{}</td><td>{}</td></tr>",
            esc(&r.metric),
            opt_ms(r.reference_ms),
            opt_ms(r.current_ms),
            opt_pct(r.noise.map(|n| n * 100.0)),
            r.diff_ms.map_or(NA.into(), |d| format!("{d:+.4}")),
            r.diff_pct.map_or(NA.into(), |d| format!("{d:+.2} %")),
            r.status,
            r.status,
            r.gate,
            r.gate,
            esc(r.reason.as_deref().unwrap_or("")),
        );
    }
    body.push_str("</table>");
}

fn history(
    records: &[crate::compare::history::HistoryRecord],
    body: &mut String,
) -> Result<(), HtmlError> {
    section(body, "history", "History");
    let (found, left_out) = trend::trends(records);
    let _ = write!(
        body,
        "<p class=\"note\">{} runs. Red lines: change points (a new level starts there; \
         piecewise-constant L1 fit, docs/protocol.md). Metrics with a change point first.</p>",
        records.len()
    );
    if left_out > 0 {
        let _ = write!(
            body,
            "<p class=\"note\">{left_out} more metrics left out (at most {} drawn).</p>",
            trend::MAX_TRENDS
        );
    }
    for t in &found {
        chart_fig(body, &trend::chart(t, records.len())?);
    }
    Ok(())
}

fn cases(s: &RunSummary, body: &mut String) -> Result<(), HtmlError> {
    section(body, "cases", "Cases");
    let measured: Vec<&CaseResult> = s
        .benchmarks
        .values()
        .filter(|c| matches!(c.status, CaseStatus::Ok | CaseStatus::FailedAccuracy))
        .collect();
    if measured
        .iter()
        .all(|c| c.timing.values().all(|m| m.samples_ms.is_none()))
    {
        body.push_str(
            "<p class=\"note\">The run kept no raw samples, so only the mode summaries are \
             drawn; run with <code>--save-samples</code> for distributions and iteration \
             times.</p>",
        );
    }
    for c in measured {
        let _ = write!(
            body,
            "<details open id=\"{}\"><summary>{} ({})</summary>",
            anchor(c),
            esc(&c.id),
            c.status.as_str()
        );
        let mut drew = false;
        for svg in [
            case_plots::distribution(c)?,
            case_plots::iteration_times(c)?,
            case_plots::modes(c)?,
        ]
        .into_iter()
        .flatten()
        {
            chart_fig(body, &svg);
            drew = true;
        }
        if !drew {
            body.push_str("<p class=\"note\">One mode without raw samples: nothing to draw beyond the table above.</p>");
        }
        if !c.figures.is_empty() {
            body.push_str("<table><tr><th>figure</th><th>value</th><th>unit</th></tr>");
            for (name, f) in &c.figures {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                    esc(name),
                    sig(f.value, 6),
                    esc(&f.unit)
                );
            }
            body.push_str("</table>");
        }
        body.push_str("</details>");
    }
    Ok(())
}

/// A case's element id: its id with every character outside `[A-Za-z0-9_-]` as `-`.
pub(super) fn anchor(c: &CaseResult) -> String {
    let id: String =
        c.id.chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
                    ch
                } else {
                    '-'
                }
            })
            .collect();
    format!("case-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate's notes read back from `compare_summary.json` (as `apex-host report` does) stand
    /// under the gate's first line, as in `regressions.md`.
    #[test]
    fn the_gate_section_shows_a_selection_and_a_debug_build() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::compare::COMPARE_SUMMARY_FILE),
            r#"{"baseline_suite":"apex_bench","status":"pass","checks":[],
                "selection":"--filter 'k.a'","unselected_metrics":3,"build_profile":"debug"}"#,
        )
        .unwrap();
        let view = super::super::GateView::read(dir.path()).unwrap().unwrap();
        assert_eq!(view.notes.len(), 2, "{:?}", view.notes);
        let mut body = String::new();
        gate(
            &view,
            &crate::report::test_support::summary_of(Vec::new()),
            &mut body,
        );
        assert!(
            body.contains("<p class=\"note\">selection: --filter &#39;k.a&#39;; the gate checks"),
            "{body}"
        );
        assert!(body.contains("3 metric(s) of cases it leaves out were not checked"));
        assert!(body.contains("<p class=\"note\">build: debug (apex-host"));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
