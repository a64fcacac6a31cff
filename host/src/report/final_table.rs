//! [`final_table`]: the end-of-run summary printed to the terminal: counts per status, the
//! fastest cases, and every case that did not pass with its reason.

use super::case_view::{counts_line, headline_timing, leaderboard};
use std::path::Path;

use super::fmt::{NA, opt_ms, pct_of_ratio, si};
use super::paths;
use super::table::Table;
use super::throughput::unit_rate;
use crate::model::{CaseStatus, RunSummary};
use crate::report::term::{out, outln};

/// How many leaderboard rows the terminal table shows (`summary.md` has them all).
pub const TOP_CASES: usize = 10;

/// Prints the end-of-run table, the gate's result when there is one, and where the report is.
pub fn print_final(summary: &RunSummary, output_dir: &Path, regressions: Option<&str>) {
    out!("{}", final_table(summary));
    if let Some(block) = regressions {
        outln!("\n{}", block.trim_end());
    }
    outln!(
        "\nreport: {} ({}, {}, {}/)",
        output_dir.join(paths::SUMMARY_MD).display(),
        paths::SUMMARY_JSON,
        paths::ENV_JSON,
        paths::KERNELS_DIR
    );
}

/// The end-of-run table as plain text, ending in a newline.
pub fn final_table(summary: &RunSummary) -> String {
    let mut s = format!("run {}: cases {}\n", summary.status, counts_line(summary));
    if let Some(t) = &summary.time_accounting {
        s.push_str(&format!(
            "measuring: {:.1} s of {:.1} s wall sampling ({:.1} %)\n",
            t.sampling_s, t.wall_s, t.sampling_pct
        ));
    }

    let board = leaderboard(summary);
    if !board.is_empty() {
        let shown = board.len().min(TOP_CASES);
        s.push_str(&format!("\nfastest {shown} of {} by p50:\n", board.len()));
        let mut t = Table::new(&["case", "mode", ">p50 ms", ">p95 ms", ">CV", ">throughput"]);
        for c in board.iter().take(TOP_CASES) {
            let rate = c.throughput.as_ref().and_then(unit_rate).map_or_else(
                || NA.into(),
                |(n, v)| format!("{} {}/s", si(v), n.trim_end_matches("_per_s")),
            );
            t.row(vec![
                c.id.clone(),
                c.headline.clone().unwrap_or_else(|| NA.into()),
                opt_ms(c.p50_ms),
                opt_ms(c.p95_ms),
                headline_timing(c).map_or_else(|| NA.into(), |m| pct_of_ratio(m.stats.cv)),
                rate,
            ]);
        }
        s.push_str(&t.plain());
    }

    let not_ok: Vec<_> = summary
        .benchmarks
        .values()
        .filter(|c| c.status != CaseStatus::Ok)
        .collect();
    if !not_ok.is_empty() {
        s.push_str(&format!("\nnot ok ({}):\n", not_ok.len()));
        let mut t = Table::new(&["case", "status", "reason"]);
        for c in not_ok {
            let reason = match (c.status, &c.accuracy, &c.reason) {
                (_, _, Some(r)) => r.lines().next().unwrap_or_default().to_string(),
                (CaseStatus::FailedAccuracy, Some(a), None) => {
                    format!(
                        "output outside tolerance (max abs err {:.2e})",
                        a.max_abs_error
                    )
                }
                _ => NA.into(),
            };
            t.row(vec![c.id.clone(), c.status.as_str().into(), reason]);
        }
        s.push_str(&t.plain());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, sample_summary, summary_of};

    #[test]
    fn counts_top_cases_and_failures() {
        let text = final_table(&sample_summary());
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "run failed: cases 6 (failed 1, failed_accuracy 1, ok 3, skipped 1)"
        );
        assert!(text.contains("fastest 3 of 3 by p50:"));
        let fastest = text
            .lines()
            .skip_while(|l| !l.starts_with("case"))
            .nth(1)
            .unwrap();
        assert!(fastest.starts_with("tile_ops.tile_pack/cuda/"), "{fastest}");
        assert!(text.contains("not ok (3):"));
        assert!(text.contains("signal: SIGSEGV"));
        assert!(
            text.contains("output outside tolerance (max abs err 2.50e-1)"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn only_the_top_cases_are_listed() {
        let cases = (0..15)
            .map(|i| {
                let mut c = measured_case("k.op", "cpu", 1.0 + i as f64, 0.01);
                c.id = format!("k.op/cpu/fp16/n={i:02}");
                c
            })
            .collect();
        let text = final_table(&summary_of(cases));
        assert!(text.contains("fastest 10 of 15 by p50:"));
        assert!(text.contains("n=09") && !text.contains("n=10"));
        assert!(!text.contains("not ok"));
    }
}
