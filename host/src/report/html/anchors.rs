//! The "Side by side with anchors" section of `index.html`: each case beside the other
//! implementations' times for it (`--anchor-results`), the ratio anchor / ours as a number and a
//! bar on a log scale (green where we are faster, red where the anchor is), then the rows that
//! matched no case. The rows are `summary.md`'s ([`crate::report::anchors_section::rows`]).

use std::fmt::Write as _;

use super::page::{anchor, esc};
use crate::model::RunSummary;
use crate::report::anchors_section::rows;
use crate::report::fmt::{NA, ms};

/// Half the bar's width in pixels: a ratio of 1 is the middle, 10× (or 1/10×) a full half.
const HALF_PX: f64 = 80.0;

/// The section's HTML, or `None` when the report has no anchors.
pub fn section(s: &RunSummary) -> Option<String> {
    let summary = s.anchors.as_ref()?;
    let mut body = String::new();
    body.push_str(
        "<p class=\"note\">Other implementations' times for the same case \
         (<code>--anchor-results</code>); ratio = anchor time / our p50, so above 1× we are \
         faster (bar to the right, green; log scale, ±10× at the ends).</p><p class=\"note\">",
    );
    for f in &summary.files {
        let _ = write!(
            body,
            "<code>{}</code>: {} row(s), sha256 <code>{}</code><br>",
            esc(&f.path),
            f.rows,
            esc(&f.sha256[..f.sha256.len().min(12)])
        );
    }
    body.push_str("</p>");
    let pairs = rows(s);
    if pairs.is_empty() {
        body.push_str("<p>No anchor row matched a case of this report.</p>");
    } else {
        body.push_str(
            "<table class=\"anchors\"><tr><th>case</th><th>ours p50 ms</th><th>anchor</th>\
             <th>anchor ms</th><th>ratio</th><th></th><th>note</th><th>source</th></tr>",
        );
        for p in &pairs {
            let _ = write!(
                body,
                "<tr><td><a href=\"#{link}\">{id}</a></td><td class=\"n\">{ours}</td><td>{imp}</td>\
                 <td class=\"n\">{theirs}</td><td class=\"n\">{ratio}</td><td>{bar}</td>\
                 <td>{note}</td><td>{src}</td></tr>",
                link = anchor(p.case),
                id = esc(&p.case.id),
                ours = esc(&p.ours()),
                imp = esc(&p.anchor.implementation),
                theirs = esc(&p.anchor_ms()),
                ratio = esc(&p.ratio()),
                bar = p.anchor.ratio.map_or(String::new(), bar),
                note = esc(&p.note()),
                src = esc(&p.anchor.source),
            );
        }
        body.push_str("</table>");
    }
    if !summary.unmatched.is_empty() {
        let _ = write!(
            body,
            "<details><summary>{} anchor row(s) matched no case of this report</summary>\
             <table><tr><th>kernel</th><th>backend</th><th>precision</th><th>params</th>\
             <th>anchor</th><th>anchor ms</th><th>source</th></tr>",
            summary.unmatched.len()
        );
        for u in &summary.unmatched {
            let params: Vec<String> = u
                .params
                .iter()
                .map(|(k, v)| format!("{k}={}", crate::model::render_param_value(v)))
                .collect();
            let time = u.us_per_call.map_or_else(
                || {
                    u.error
                        .as_ref()
                        .map_or(NA.into(), |e| format!("error: {e}"))
                },
                |us| ms(us / 1e3),
            );
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td>{}</td></tr>",
                esc(&u.kernel),
                esc(&u.backend),
                esc(&u.precision),
                esc(&params.join(",")),
                esc(&u.implementation),
                esc(&time),
                esc(&u.source),
            );
        }
        body.push_str("</table></details>");
    }
    Some(body)
}

/// An inline SVG bar from the middle (ratio 1) to the right (we are faster) or the left, with a
/// dot at its end so that a ratio near parity still shows where it lies.
fn bar(ratio: f64) -> String {
    if !(ratio.is_finite() && ratio > 0.0) {
        return String::new();
    }
    let w = (ratio.log10().clamp(-1.0, 1.0) * HALF_PX).abs();
    let (x, end, colour) = if ratio >= 1.0 {
        (HALF_PX, HALF_PX + w, "#2a8f3a")
    } else {
        (HALF_PX - w, HALF_PX - w, "#c0392b")
    };
    format!(
        "<svg width=\"{full}\" height=\"12\" role=\"img\" aria-label=\"ratio {ratio:.3}\">\
         <rect x=\"{x:.1}\" y=\"1\" width=\"{w:.1}\" height=\"10\" fill=\"{colour}\"/>\
         <circle cx=\"{cx:.1}\" cy=\"6\" r=\"5\" fill=\"{colour}\"/>\
         <line x1=\"{HALF_PX}\" y1=\"0\" x2=\"{HALF_PX}\" y2=\"12\" stroke=\"#333\"/></svg>",
        full = 2.0 * HALF_PX,
        cx = end.clamp(5.0, 2.0 * HALF_PX - 5.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_grows_right_when_we_are_faster_and_left_when_not() {
        let faster = bar(10.0);
        assert!(
            faster.contains("x=\"80.0\"") && faster.contains("width=\"80.0\""),
            "{faster}"
        );
        assert!(faster.contains("#2a8f3a"));
        let slower = bar(0.5);
        assert!(slower.contains("#c0392b"), "{slower}");
        assert!(slower.contains("width=\"24.1\""), "{slower}");
        assert_eq!(bar(f64::NAN), "");
        assert!(bar(1000.0).contains("width=\"80.0\""), "clamped at 10x");
        let parity = bar(1.02);
        assert!(
            parity.contains("<circle cx=\"80.7\""),
            "a dot at parity: {parity}"
        );
        assert!(
            bar(1000.0).contains("<circle cx=\"155.0\""),
            "the dot stays inside"
        );
    }
}
