//! [`render_summary_markdown`]: `summary.md`, the human-readable companion of `summary.json`.
//!
//! Sections, in order (QuASIM's list, with Apex-X's per-mode detail): header, Environment,
//! Leaderboard (by p50), Side by side with anchors (with `--anchor-results`), Timing modes (CUDA cold vs batch), Resource use, Skipped, Failed, Key
//! findings, Recommendations, Regressions (when a compare result is given), and a footer that says
//! how the file was made and what a killed run leaves. A missing value prints `n/a`.

use serde_json::Value;
use std::collections::BTreeMap;

use super::case_view::{counts_line, headline_timing, leaderboard, throttled, with_status};
use super::environment_table::{environment, scalar};
use super::findings::analyze;
use super::fmt::{NA, err, ms, opt_ms, opt_pct, opt_sig, pct_of_ratio, si, sig};
use super::param_columns::ParamColumns;
use super::table::Table;
use super::throughput::unit_rate;
use crate::measure::rotation::HOT_BATCH_MODE;
use crate::model::{CaseResult, CaseStatus, RunSummary};

/// The whole of `summary.md`. `regressions` is a Markdown block from the baseline comparison.
pub fn render_summary_markdown(summary: &RunSummary, regressions: Option<&str>) -> String {
    let mut md = String::new();
    header(summary, &mut md);
    environment(&summary.environment, &mut md);
    leaderboard_section(summary, &mut md);
    super::anchors_section::anchors_section(summary, &mut md);
    modes_section(summary, &mut md);
    super::figures_section::figures_section(summary, &mut md);
    super::notes_section::notes_section(summary, &mut md);
    resources_section(summary, &mut md);
    time_section(summary, &mut md);
    skipped_section(summary, &mut md);
    failed_section(summary, &mut md);

    let analysis = analyze(summary, regressions.is_some());
    md.push_str("## Key findings\n\n");
    bullets(&analysis.findings, "Nothing to report.", &mut md);
    md.push_str("## Recommendations\n\n");
    bullets(
        &analysis.recommendations,
        "None: the data raises no issue.",
        &mut md,
    );

    if let Some(block) = regressions {
        let block = block.trim();
        if !block.starts_with('#') {
            md.push_str("## Regressions\n\n");
        }
        md.push_str(block);
        md.push_str("\n\n");
    }
    footer(&mut md);
    md
}

fn header(s: &RunSummary, md: &mut String) {
    md.push_str("# apex-bench report\n\n");
    md.push_str(&format!("- status: **{}**\n", s.status));
    md.push_str(&format!(
        "- suite: `{}` (schema {})\n",
        s.suite, s.schema_version
    ));
    md.push_str(&format!("- timestamp (UTC): {}\n", s.timestamp_utc));
    md.push_str(&format!("- cases: {}\n", counts_line(s)));
    plan_lines(s, md);
    if let Value::Object(cfg) = &s.config {
        let flat: Vec<String> = cfg
            .iter()
            .filter_map(|(k, v)| scalar(v).map(|v| format!("{k}={v}")))
            .collect();
        if !flat.is_empty() {
            md.push_str(&format!("- config: {}\n", flat.join(", ")));
        }
    }
    md.push('\n');
}

/// The shard this run measured, or the shards a merged report joins and the cases none ran.
fn plan_lines(s: &RunSummary, md: &mut String) {
    let Some(plan) = &s.plan else { return };
    if let Some(p) = &plan.partition {
        md.push_str(&format!(
            "- shard: `{}` ({} of the plan's {} cases; from {}); `apex-host merge` joins the shards\n",
            p.label,
            p.cases,
            plan.case_ids.len(),
            p.source
        ));
    }
    if !plan.merged_from.is_empty() {
        let shards: Vec<String> = plan
            .merged_from
            .iter()
            .map(|r| {
                let host = r.host.as_deref().unwrap_or("unknown host");
                format!("`{}` ({host}, {} cases)", r.partition, r.cases)
            })
            .collect();
        md.push_str(&format!(
            "- merged from {} shard(s): {}\n",
            shards.len(),
            shards.join(", ")
        ));
    }
    if !plan.missing.is_empty() {
        const SHOWN: usize = 10;
        let mut ids: Vec<String> = plan
            .missing
            .iter()
            .take(SHOWN)
            .map(|id| format!("`{id}`"))
            .collect();
        if plan.missing.len() > SHOWN {
            ids.push(format!("and {} more", plan.missing.len() - SHOWN));
        }
        md.push_str(&format!(
            "- **missing: {} case(s) of the plan that no shard ran**: {}\n",
            plan.missing.len(),
            ids.join(", ")
        ));
    }
}

fn throughput_cell(c: &CaseResult) -> String {
    match c.throughput.as_ref().and_then(unit_rate) {
        Some((name, v)) => format!("{} {}/s", si(v), name.trim_end_matches("_per_s")),
        None => NA.into(),
    }
}

fn accuracy_cell(c: &CaseResult) -> (String, String) {
    match &c.accuracy {
        Some(a) => (
            err(a.max_abs_error),
            if a.passed { "pass" } else { "FAIL" }.into(),
        ),
        None => (NA.into(), NA.into()),
    }
}

fn leaderboard_section(s: &RunSummary, md: &mut String) {
    md.push_str("## Leaderboard (by p50)\n\n");
    let board = leaderboard(s);
    if board.is_empty() {
        md.push_str("No case was measured.\n\n");
        return;
    }
    let columns = ParamColumns::of(board.iter().map(|c| &c.key));
    let mut t = Table::new(&[
        ">#",
        "kernel",
        "backend",
        "precision",
        "params",
        "mode",
        ">p50 ms",
        ">p95 ms",
        ">median CI ms",
        ">CV",
        ">throughput",
        ">GB/s",
        ">% copy BW",
        ">max abs err",
        "accuracy",
    ]);
    for (i, c) in board.iter().enumerate() {
        let stats = headline_timing(c).map(|t| &t.stats);
        let ci = stats.map_or_else(
            || NA.into(),
            |st| {
                format!(
                    "{}–{} ({:.0}%)",
                    ms(st.median_ci_low_ms),
                    ms(st.median_ci_high_ms),
                    st.ci_level * 100.0
                )
            },
        );
        let (max_err, acc) = accuracy_cell(c);
        let tp = c.throughput.as_ref();
        t.row(vec![
            (i + 1).to_string(),
            c.key.kernel.clone(),
            c.key.backend.clone(),
            c.key.precision.clone(),
            columns.label(&c.key),
            c.headline.clone().unwrap_or_else(|| NA.into()),
            opt_ms(c.p50_ms),
            opt_ms(c.p95_ms),
            ci,
            stats.map_or_else(|| NA.into(), |st| pct_of_ratio(st.cv)),
            throughput_cell(c),
            opt_sig(tp.map(|t| t.gbps), 4),
            opt_pct(tp.and_then(|t| t.pct_of_copy_bandwidth)),
            max_err,
            acc,
        ]);
    }
    md.push_str(&t.markdown());
    md.push('\n');
    let fixed = columns.fixed_lines();
    if !fixed.is_empty() {
        md.push_str(
            "The params column shows what varies; parameters with one value in every case of a \
             kernel (case ids in `summary.json` carry all of them):\n\n",
        );
        bullets(&fixed, "", md);
    }
}

fn modes_section(s: &RunSummary, md: &mut String) {
    let cases: Vec<&CaseResult> = s
        .benchmarks
        .values()
        .filter(|c| c.timing.contains_key("cold") || c.timing.contains_key("batch"))
        .collect();
    if cases.is_empty() {
        return;
    }
    md.push_str("## Timing modes (CUDA: cold, launch, batch)\n\n");
    md.push_str(
        "cold: L2 flushed before each sample, one call per sample, the launch floor (an empty \
         kernel timed the same way) subtracted. launch: one call on an idle stream, host enqueue \
         and launch latency included (what an event-bracketed call from Python reads). batch: \
         back-to-back calls (from a CUDA graph where marked); `dram_cold` when they rotated over \
         ≥ 3 × L2 of buffer sets, `l2_hot` when the working set could stay in L2.\n\n",
    );
    let hot = cases.iter().any(|c| c.timing.contains_key(HOT_BATCH_MODE));
    if hot {
        md.push_str(
            "batch_hot (`run --l2-hot`): back-to-back calls on the case's one buffer set, whose \
             data can stay in L2 between calls (nvbench's hot batch); its cache column says \
             whether it did.\n\n",
        );
    }
    let mut headers = vec![
        "case",
        "status",
        ">cold p50 ms",
        ">cold p95 ms",
        ">cold CV",
        ">batch p50 ms",
        ">batch p95 ms",
        ">batch CV",
        "batch cache",
        ">launch p50 ms",
        ">calls/sample",
        "graph",
        ">cold ÷ batch",
    ];
    if hot {
        headers.extend([">batch_hot p50 ms", "batch_hot cache"]);
    }
    let mut t = Table::new(&headers);
    for c in &cases {
        let cold = c.timing.get("cold").map(|m| &m.stats);
        let batch = c.timing.get("batch");
        let ratio = match (cold, batch) {
            (Some(x), Some(y)) if y.stats.p50_ms > 0.0 => {
                format!("{:.2}×", x.p50_ms / y.stats.p50_ms)
            }
            _ => NA.into(),
        };
        let mut row = vec![
            c.id.clone(),
            c.status.as_str().into(),
            opt_ms(cold.map(|s| s.p50_ms)),
            opt_ms(cold.map(|s| s.p95_ms)),
            cold.map_or_else(|| NA.into(), |s| pct_of_ratio(s.cv)),
            opt_ms(batch.map(|m| m.stats.p50_ms)),
            opt_ms(batch.map(|m| m.stats.p95_ms)),
            batch.map_or_else(|| NA.into(), |m| pct_of_ratio(m.stats.cv)),
            batch
                .and_then(|m| m.cache.clone())
                .unwrap_or_else(|| NA.into()),
            opt_ms(c.timing.get("launch").map(|m| m.stats.p50_ms)),
            batch.map_or_else(|| NA.into(), |m| m.calls_per_sample.to_string()),
            batch.map_or_else(|| NA.into(), |m| if m.graph { "yes" } else { "no" }.into()),
            ratio,
        ];
        if hot {
            let h = c.timing.get(HOT_BATCH_MODE);
            row.push(opt_ms(h.map(|m| m.stats.p50_ms)));
            row.push(h.and_then(|m| m.cache.clone()).unwrap_or_else(|| NA.into()));
        }
        t.row(row);
    }
    md.push_str(&t.markdown());
    md.push('\n');
    short_holds(&cases, md);
}

/// The batch samples whose host-side enqueue outlasted the hold before them, if any.
fn short_holds(cases: &[&CaseResult], md: &mut String) {
    let mut lines = Vec::new();
    for c in cases {
        for (mode, m) in &c.timing {
            if let Some(n) = m.short_holds {
                lines.push(format!(
                    "- `{}` {mode}: {n} of {} samples\n",
                    c.id, m.stats.n
                ));
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    md.push_str(
        "Short holds: the host was still enqueueing these samples' calls when the device-side \
         hold before them ended, so the GPU may have waited for it inside the timed interval \
         (each later sample's hold is sized from the enqueue time measured before it):\n\n",
    );
    lines.iter().for_each(|l| md.push_str(l));
    md.push('\n');
}

/// Where the wall time went: the share spent sampling and each phase summed over the cases.
fn time_section(s: &RunSummary, md: &mut String) {
    let Some(t) = &s.time_accounting else {
        return;
    };
    md.push_str("## Where the time went\n\n");
    md.push_str(&format!(
        "{:.1} s of {:.1} s wall spent taking timed samples ({:.1} %).\n\n",
        t.sampling_s, t.wall_s, t.sampling_pct
    ));
    let mut table = Table::new(&["phase", ">seconds", ">% of wall"]);
    let mut phases: Vec<_> = t.phases_s.iter().collect();
    phases.sort_by(|a, b| b.1.total_cmp(a.1));
    for (name, secs) in phases {
        let pct = if t.wall_s > 0.0 {
            format!("{:.1}", 100.0 * secs / t.wall_s)
        } else {
            NA.into()
        };
        table.row(vec![name.clone(), format!("{secs:.2}"), pct]);
    }
    md.push_str(&table.markdown());
    md.push('\n');
}

fn resources_section(s: &RunSummary, md: &mut String) {
    md.push_str("## Resource use\n\n");
    let cases: Vec<&CaseResult> = s
        .benchmarks
        .values()
        .filter(|c| matches!(c.status, CaseStatus::Ok | CaseStatus::FailedAccuracy))
        .collect();
    if cases.is_empty() {
        md.push_str("No case was measured.\n\n");
        return;
    }
    let mut t = Table::new(&[
        "case",
        ">peak RSS MB",
        ">peak device MB",
        ">energy/call mJ",
        ">mean power W",
        ">SM clock MHz",
        ">throttled samples",
        "throttle reasons",
    ]);
    for c in cases {
        let r = &c.resources;
        let e = r.energy.as_ref();
        let energy = match e {
            Some(e) => match (e.energy_per_call_mj, &e.energy_unavailable) {
                (Some(mj), _) => sig(mj, 4),
                (None, Some(why)) => format!("{NA} ({why})"),
                (None, None) => NA.into(),
            },
            None => NA.into(),
        };
        let reasons = e
            .filter(|_| throttled(c))
            .map(|e| e.throttle_reasons.join(", "))
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| {
                if e.is_some() {
                    "none".into()
                } else {
                    NA.into()
                }
            });
        t.row(vec![
            c.id.clone(),
            opt_sig(r.peak_rss_mb, 4),
            opt_sig(r.peak_device_memory_mb, 4),
            energy,
            opt_sig(e.and_then(|e| e.mean_power_w), 4),
            e.and_then(|e| e.sm_clock_mhz)
                .map_or_else(|| NA.into(), |m| m.to_string()),
            e.map_or_else(|| NA.into(), |e| e.throttled_samples.to_string()),
            reasons,
        ]);
    }
    md.push_str(&t.markdown());
    md.push('\n');
}

fn skipped_section(s: &RunSummary, md: &mut String) {
    let skipped = with_status(s, CaseStatus::Skipped);
    if skipped.is_empty() {
        return;
    }
    md.push_str(&format!("## Skipped ({})\n\n", skipped.len()));
    let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for c in &skipped {
        by_reason
            .entry(c.reason.as_deref().unwrap_or("no reason recorded"))
            .or_default()
            .push(&c.id);
    }
    let mut t = Table::new(&["reason", ">cases", "ids"]);
    for (reason, ids) in by_reason {
        let list: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
        t.row(vec![reason.into(), ids.len().to_string(), list.join(", ")]);
    }
    md.push_str(&t.markdown());
    md.push('\n');
}

fn failed_section(s: &RunSummary, md: &mut String) {
    let failed = with_status(s, CaseStatus::Failed);
    let wrong = with_status(s, CaseStatus::FailedAccuracy);
    if failed.is_empty() && wrong.is_empty() {
        return;
    }
    md.push_str(&format!("## Failed ({})\n\n", failed.len() + wrong.len()));
    if !failed.is_empty() {
        let mut t = Table::new(&["case", "reason"]);
        for c in failed {
            t.row(vec![
                format!("`{}`", c.id),
                c.reason
                    .clone()
                    .unwrap_or_else(|| "no reason recorded".into()),
            ]);
        }
        md.push_str(&t.markdown());
        md.push('\n');
    }
    if !wrong.is_empty() {
        md.push_str("Wrong output (`failed_accuracy`); their timings are not valid results:\n\n");
        let mut t = Table::new(&[
            "case",
            ">rmse",
            ">max abs err",
            ">max rel err",
            ">mismatch",
            ">non-finite",
            "tolerance",
        ]);
        for c in wrong {
            let row = match &c.accuracy {
                Some(a) => {
                    let tol: Vec<String> = a
                        .tolerance
                        .iter()
                        .map(|(k, v)| format!("{k}={v:e}"))
                        .collect();
                    vec![
                        format!("`{}`", c.id),
                        err(a.rmse),
                        err(a.max_abs_error),
                        err(a.max_rel_error),
                        pct_of_ratio(a.mismatch_ratio),
                        a.non_finite.to_string(),
                        tol.join(", "),
                    ]
                }
                None => {
                    let mut row = vec![format!("`{}`", c.id)];
                    row.extend(std::iter::repeat_n(NA.to_string(), 6));
                    row
                }
            };
            t.row(row);
        }
        md.push_str(&t.markdown());
        md.push('\n');
    }
}

fn bullets(items: &[String], empty: &str, md: &mut String) {
    if items.is_empty() {
        md.push_str(&format!("- {empty}\n"));
    }
    for i in items {
        md.push_str(&format!("- {i}\n"));
    }
    md.push('\n');
}

fn footer(md: &mut String) {
    md.push_str("---\n\n");
    md.push_str(
        "Written by `apex-host` from `summary.json`; re-render with `apex-host report --input-dir \
         <dir>`. Times are per call at the headline mode (`cpu`, or `batch` for CUDA); the median CI \
         is a seeded bootstrap (docs/protocol.md). Report files are replaced atomically at the end of \
         a run: a run that is killed leaves the previous report intact, and the cases it finished are \
         kept, one JSON line each, in `.partial/<run_id>/cases.jsonl`.\n",
    );
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
