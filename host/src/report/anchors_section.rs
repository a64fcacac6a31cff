//! The `## Side by side with anchors` section of `summary.md`: each case beside the other
//! implementations' times for it (`--anchor-results`), with the ratio anchor / ours (above 1 we
//! are faster), then the anchor rows that matched no case. [`rows`] is shared with the HTML page.

use super::fmt::{NA, ms, opt_ms, sig};
use super::table::Table;
use crate::model::{AnchorMatch, CaseResult, CaseStatus, RunSummary};

/// How many unmatched rows the Markdown lists before it counts the rest.
const UNMATCHED_SHOWN: usize = 20;

/// One line of the side-by-side table.
#[derive(Debug, Clone, PartialEq)]
pub struct SideBySide<'a> {
    pub case: &'a CaseResult,
    pub anchor: &'a AnchorMatch,
}

impl SideBySide<'_> {
    /// Our p50 in ms (the headline's, or that of the mode the anchor is compared with), or the
    /// case's status when it has no valid time.
    pub fn ours(&self) -> String {
        match self.case.status {
            CaseStatus::Ok => opt_ms(match &self.anchor.ours_mode {
                Some(mode) => self.case.timing.get(mode).map(|t| t.stats.p50_ms),
                None => self.case.p50_ms,
            }),
            other => other.as_str().to_string(),
        }
    }

    /// The anchor's time in ms, `n/a` when it has none.
    pub fn anchor_ms(&self) -> String {
        self.anchor.us_per_call.map_or(NA.into(), |us| ms(us / 1e3))
    }

    /// `4.12×`, `n/a` without a ratio.
    pub fn ratio(&self) -> String {
        self.anchor
            .ratio
            .map_or(NA.into(), |r| format!("{}×", sig(r, 3)))
    }

    /// The anchor's error, else its cache, device and note. When ours is not the headline it
    /// names our mode; when the anchor's cache state and ours still differ (an L2-hot figure of
    /// ours against a DRAM-cold anchor, say), the note says so: the ratio then does not compare
    /// like with like.
    pub fn note(&self) -> String {
        if let Some(e) = &self.anchor.error {
            return format!("error: {e}");
        }
        let cache = self.anchor.cache.as_ref().map(|a| match self.our_cache() {
            Some(ours) if ours != a => format!("anchor {a}, ours {ours}: not like for like"),
            _ => match &self.anchor.ours_mode {
                Some(mode) => format!("{a} (ours: {mode})"),
                None => a.clone(),
            },
        });
        [cache, self.anchor.device.clone(), self.anchor.note.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The cache state of our figure (`dram_cold`, `l2_hot`), when it has one.
    fn our_cache(&self) -> Option<&str> {
        let mode = self
            .anchor
            .ours_mode
            .as_deref()
            .or(self.case.headline.as_deref())?;
        self.case.timing.get(mode)?.cache.as_deref()
    }
}

/// Every (case, anchor) pair, in case order, then the anchor's file order.
pub fn rows(s: &RunSummary) -> Vec<SideBySide<'_>> {
    s.benchmarks
        .values()
        .flat_map(|case| {
            case.anchors
                .iter()
                .map(move |anchor| SideBySide { case, anchor })
        })
        .collect()
}

/// Appends the section, or nothing when the report has no anchors.
pub fn anchors_section(s: &RunSummary, md: &mut String) {
    let Some(summary) = &s.anchors else { return };
    md.push_str("## Side by side with anchors\n\n");
    md.push_str(
        "Other implementations' times for the same case (`--anchor-results`); ratio = anchor \
         time / our p50, so above 1× we are faster.\n\n",
    );
    for f in &summary.files {
        md.push_str(&format!(
            "- `{}`: {} row(s), sha256 `{}`\n",
            f.path,
            f.rows,
            &f.sha256[..f.sha256.len().min(12)]
        ));
    }
    md.push('\n');
    let pairs = rows(s);
    if pairs.is_empty() {
        md.push_str("No anchor row matched a case of this report.\n\n");
    } else {
        let mut t = Table::new(&[
            "case",
            ">ours p50 ms",
            "anchor",
            ">anchor ms",
            ">ratio",
            "note",
            "source",
        ]);
        for p in &pairs {
            t.row(vec![
                p.case.id.clone(),
                p.ours(),
                p.anchor.implementation.clone(),
                p.anchor_ms(),
                p.ratio(),
                p.note(),
                p.anchor.source.clone(),
            ]);
        }
        md.push_str(&t.markdown());
        md.push('\n');
    }
    if !summary.unmatched.is_empty() {
        md.push_str(&format!(
            "{} anchor row(s) matched no case of this report (another shape, backend or \
             precision than this run measured):\n\n",
            summary.unmatched.len()
        ));
        let mut t = Table::new(&[
            "kernel",
            "backend",
            "precision",
            "params",
            "anchor",
            ">anchor ms",
            "source",
        ]);
        for u in summary.unmatched.iter().take(UNMATCHED_SHOWN) {
            let params: Vec<String> = u
                .params
                .iter()
                .map(|(k, v)| format!("{k}={}", crate::model::render_param_value(v)))
                .collect();
            t.row(vec![
                u.kernel.clone(),
                u.backend.clone(),
                u.precision.clone(),
                params.join(","),
                u.implementation.clone(),
                u.us_per_call.map_or_else(
                    || {
                        u.error
                            .as_ref()
                            .map_or(NA.into(), |e| format!("error: {e}"))
                    },
                    |us| ms(us / 1e3),
                ),
                u.source.clone(),
            ]);
        }
        md.push_str(&t.markdown());
        if summary.unmatched.len() > UNMATCHED_SHOWN {
            md.push_str(&format!(
                "\nand {} more (summary.json `anchors.unmatched` lists every one).\n",
                summary.unmatched.len() - UNMATCHED_SHOWN
            ));
        }
        md.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anchors::{AnchorRow, AnchorSet, SourcedRow, attach};
    use crate::report::test_support::{measured_case, summary_of};
    use serde_json::json;

    fn with_anchors(rows: Vec<serde_json::Value>) -> RunSummary {
        let mut s = summary_of(vec![measured_case("tile_ops.tile_pack", "cpu", 0.5, 0.01)]);
        let set = AnchorSet {
            files: vec![crate::model::AnchorFile {
                path: "benches/x.jsonl".into(),
                sha256: "ab".repeat(32),
                rows: rows.len(),
            }],
            rows: rows
                .into_iter()
                .enumerate()
                .map(|(i, v)| SourcedRow {
                    row: AnchorRow::from_json(&v).unwrap(),
                    source: format!("benches/x.jsonl:{}", i + 1),
                })
                .collect(),
        };
        attach(&mut s, &set);
        s
    }

    fn row(kernel: &str, us: serde_json::Value) -> serde_json::Value {
        json!({"kernel": kernel, "impl": "numpy", "params": {"tile_size": 8},
               "precision": "fp16", "backend": "cpu", "us_per_call": us})
    }

    #[test]
    fn a_cache_state_unlike_ours_is_named_in_the_note() {
        let mut r = row("tile_ops.tile_pack", json!(2.0));
        r["cache"] = json!("dram_cold");
        let mut s = with_anchors(vec![r]);
        let case = s.benchmarks.values_mut().next().unwrap();
        let head = case.headline.clone().unwrap();
        case.timing.get_mut(&head).unwrap().cache = Some("l2_hot".into());
        assert_eq!(
            rows(&s)[0].note(),
            "anchor dram_cold, ours l2_hot: not like for like"
        );
        let case = s.benchmarks.values_mut().next().unwrap();
        case.timing.get_mut(&head).unwrap().cache = Some("dram_cold".into());
        assert_eq!(rows(&s)[0].note(), "dram_cold");
    }

    #[test]
    fn an_anchor_compared_with_another_mode_shows_that_modes_time_and_names_it() {
        let mut r = row("tile_ops.tile_pack", json!(100.0));
        r["cache"] = json!("l2_hot");
        let mut s = summary_of(vec![measured_case("tile_ops.tile_pack", "cpu", 0.5, 0.01)]);
        let case = s.benchmarks.values_mut().next().unwrap();
        let head = case.headline.clone().unwrap();
        case.timing.get_mut(&head).unwrap().cache = Some("dram_cold".into());
        let mut hot = case.timing[&head].clone();
        hot.stats.p50_ms = 0.05;
        hot.cache = Some("l2_hot".into());
        case.timing.insert("batch_hot".into(), hot);
        let set = AnchorSet {
            files: Vec::new(),
            rows: vec![SourcedRow {
                row: AnchorRow::from_json(&r).unwrap(),
                source: "x.jsonl:1".into(),
            }],
        };
        attach(&mut s, &set);
        let p = &rows(&s)[0];
        assert_eq!(p.note(), "l2_hot (ours: batch_hot)");
        assert_eq!(p.ours(), "0.05000");
        assert_eq!(p.ratio(), "2.00×");
    }

    #[test]
    fn no_anchors_no_section() {
        let mut md = String::new();
        anchors_section(&summary_of(vec![]), &mut md);
        assert!(md.is_empty());
    }

    #[test]
    fn matched_rows_show_both_times_and_the_ratio_unmatched_ones_are_listed() {
        let mut err = row("tile_ops.tile_pack", serde_json::Value::Null);
        err["error"] = json!("graph capture failed");
        let s = with_anchors(vec![
            row("tile_ops.tile_pack", json!(1500.0)),
            err,
            row("tile_ops.tile_unpack", json!(80.0)),
        ]);
        let mut md = String::new();
        anchors_section(&s, &mut md);
        assert!(md.starts_with("## Side by side with anchors"), "{md}");
        assert!(
            md.contains("`benches/x.jsonl`: 3 row(s), sha256 `abababababab`"),
            "{md}"
        );
        let line = md
            .lines()
            .find(|l| l.ends_with("benches/x.jsonl:1 |"))
            .unwrap();
        assert!(
            line.contains("| 0.5000 | numpy | 1.500 | 3.00× |"),
            "{line}"
        );
        let line = md
            .lines()
            .find(|l| l.ends_with("benches/x.jsonl:2 |"))
            .unwrap();
        assert!(
            line.contains("| n/a | n/a | error: graph capture failed |"),
            "{line}"
        );
        assert!(md.contains("1 anchor row(s) matched no case"), "{md}");
        let line = md
            .lines()
            .find(|l| l.ends_with("benches/x.jsonl:3 |"))
            .unwrap();
        assert!(
            line.starts_with(
                "| tile_ops.tile_unpack | cpu | fp16 | tile_size=8 | numpy | 0.08000 |"
            ),
            "{line}"
        );
    }
}
