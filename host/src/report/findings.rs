//! [`analyze`]: the "Key findings" and "Recommendations" of `summary.md`, derived from the run's
//! data only. Each rule names its threshold below; nothing is said that the numbers do not show.

use std::collections::BTreeMap;

use super::case_view::{headline_timing, leaderboard, throttled, with_status};
use super::fmt::{ms, opt_pct, pct_of_ratio};
use crate::model::{CaseResult, CaseStatus, RunSummary};

/// Coefficient of variation above which a case is called noisy (5%).
pub const NOISY_CV: f64 = 0.05;
/// Share of the measured copy bandwidth below which a case is called far from it (10%).
pub const LOW_COPY_BANDWIDTH_PCT: f64 = 10.0;
/// Cold p50 over batch p50 above which launch overhead and cache misses dominate a CUDA case.
pub const COLD_OVER_BATCH: f64 = 2.0;
/// How many cases one finding lists before saying "and N more".
pub const MAX_LISTED: usize = 8;

/// Findings and recommendations, each a Markdown bullet's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysis {
    pub findings: Vec<String>,
    pub recommendations: Vec<String>,
}

/// Derives the findings of `summary`. `compared` tells whether a baseline comparison exists.
pub fn analyze(summary: &RunSummary, compared: bool) -> Analysis {
    let mut a = Analysis::default();
    let board = leaderboard(summary);
    if summary.debug_build() {
        a.findings.push(
            "This run was measured by a debug build of apex-host, which builds and loads the \
             plugins' debug builds: its timings test the tool, they are not the kernels'."
                .into(),
        );
        a.recommendations.push(
            "Measure with a release build: `cargo run --release -p apex-host -- run`.".into(),
        );
    }

    if let (Some(first), Some(last)) = (board.first(), board.last())
        && let (Some(f), Some(l)) = (first.p50_ms, last.p50_ms)
    {
        if board.len() == 1 {
            a.findings.push(format!(
                "One case measured: `{}` at {} ms (p50).",
                first.id,
                ms(f)
            ));
        } else {
            a.findings.push(format!(
                "Fastest: `{}` at {} ms; slowest: `{}` at {} ms (p50, {} measured cases).",
                first.id,
                ms(f),
                last.id,
                ms(l),
                board.len()
            ));
        }
    }

    speedups(&board, &mut a);

    let noisy: Vec<&CaseResult> = board
        .iter()
        .copied()
        .filter(|c| headline_timing(c).is_some_and(|t| t.stats.cv > NOISY_CV))
        .collect();
    if !noisy.is_empty() {
        a.findings.push(format!(
            "{} case(s) are noisy (CV > {}): {}.",
            noisy.len(),
            pct_of_ratio(NOISY_CV),
            list(&noisy, |c| format!(
                "`{}` (CV {})",
                c.id,
                pct_of_ratio(headline_timing(c).map_or(f64::NAN, |t| t.stats.cv))
            ))
        ));
        a.recommendations.push(format!(
            "Re-measure the noisy cases with more samples (`--iters`, or a longer adaptive time cap) on \
             an idle machine; for CPU cases pin the process to fixed cores (e.g. `taskset`). Their p50 \
             is less certain: see the CI column. Rerun one kernel with `--filter {}`.",
            noisy[0].key.kernel
        ));
    }

    let hot: Vec<&CaseResult> = summary
        .benchmarks
        .values()
        .filter(|c| throttled(c))
        .collect();
    if !hot.is_empty() {
        a.findings.push(format!(
            "{} case(s) ran while the GPU throttled: {}.",
            hot.len(),
            list(&hot, |c| {
                let e = c.resources.energy.as_ref();
                let reasons = e.map(|e| e.throttle_reasons.join(", ")).unwrap_or_default();
                let n = e.map_or(0, |e| e.throttled_samples);
                format!("`{}` ({n} samples; {reasons})", c.id)
            })
        ));
        a.recommendations.push(
            "Lock the GPU clocks (`nvidia-smi -lgc <min>,<max>`), give the GPU time to cool between \
             kernels, and rerun the throttled cases; their timings are not comparable with unthrottled ones."
                .into(),
        );
    }

    let wrong = with_status(summary, CaseStatus::FailedAccuracy);
    if !wrong.is_empty() {
        a.findings.push(format!(
            "{} case(s) produced wrong output (`failed_accuracy`; their timings are not valid): {}.",
            wrong.len(),
            list(&wrong, |c| match &c.accuracy {
                Some(acc) => format!(
                    "`{}` (max abs error {:.2e}, mismatch {})",
                    c.id,
                    acc.max_abs_error,
                    pct_of_ratio(acc.mismatch_ratio)
                ),
                None => format!("`{}`", c.id),
            })
        ));
        a.recommendations.push(
            "Fix the kernels that fail accuracy (or, if the reference is too strict, their declared \
             tolerance in `bench.yaml`) before reading their timings."
                .into(),
        );
    }

    let failed = with_status(summary, CaseStatus::Failed);
    if !failed.is_empty() {
        a.findings.push(format!(
            "{} case(s) failed: {}.",
            failed.len(),
            list(&failed, |c| format!(
                "`{}` ({})",
                c.id,
                c.reason.as_deref().unwrap_or("no reason recorded")
            ))
        ));
        a.recommendations.push(format!(
            "Reproduce a failure alone with `apex-host run --filter {} --verbose` to see the worker's \
             error output.",
            failed[0].key.kernel
        ));
    }

    let slow_bw: Vec<&CaseResult> = board
        .iter()
        .copied()
        .filter(|c| {
            c.throughput
                .as_ref()
                .and_then(|t| t.pct_of_copy_bandwidth)
                .is_some_and(|p| p < LOW_COPY_BANDWIDTH_PCT)
        })
        .collect();
    if !slow_bw.is_empty() {
        a.findings.push(format!(
            "{} case(s) move data at under {LOW_COPY_BANDWIDTH_PCT}% of the measured copy bandwidth: {}.",
            slow_bw.len(),
            list(&slow_bw, |c| format!(
                "`{}` ({})",
                c.id,
                opt_pct(c.throughput.as_ref().and_then(|t| t.pct_of_copy_bandwidth))
            ))
        ));
        a.recommendations.push(
            "For the cases far below copy bandwidth, check whether they are compute-bound (TFLOP/s), \
             launch-bound (cold vs batch) or limited by uncoalesced memory access."
                .into(),
        );
    }

    let launch_bound: Vec<(&CaseResult, f64)> = summary
        .benchmarks
        .values()
        .filter_map(|c| {
            let cold = c.timing.get("cold")?.stats.p50_ms;
            let batch = c.timing.get("batch")?.stats.p50_ms;
            (batch > 0.0 && cold / batch > COLD_OVER_BATCH).then_some((c, cold / batch))
        })
        .collect();
    if !launch_bound.is_empty() {
        let cases: Vec<&CaseResult> = launch_bound.iter().map(|(c, _)| *c).collect();
        a.findings.push(format!(
            "{} CUDA case(s) take over {COLD_OVER_BATCH}× longer cold (L2 flushed, one launch) than in \
             batch: {}.",
            launch_bound.len(),
            list(&cases, |c| {
                let r = launch_bound
                    .iter()
                    .find(|(x, _)| x.id == c.id)
                    .map_or(f64::NAN, |(_, r)| *r);
                format!("`{}` ({r:.1}×)", c.id)
            })
        ));
        a.recommendations.push(
            "Cases much slower cold than in batch are dominated by launch overhead or cold caches: \
             fuse small kernels or batch calls, and judge them by the mode that matches their use."
                .into(),
        );
    }

    let skipped = with_status(summary, CaseStatus::Skipped);
    if !skipped.is_empty() {
        let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &skipped {
            *by_reason
                .entry(c.reason.as_deref().unwrap_or("no reason recorded"))
                .or_default() += 1;
        }
        let reasons: Vec<String> = by_reason.iter().map(|(r, n)| format!("{n}× {r}")).collect();
        a.findings.push(format!(
            "{} case(s) skipped: {}.",
            skipped.len(),
            reasons.join("; ")
        ));
        if skipped.iter().any(|c| c.key.backend == "cuda")
            && by_reason.keys().any(|r| r.starts_with("cuda_unavailable"))
        {
            a.recommendations.push(
                "CUDA cases were skipped because no usable GPU was found: run on a GPU machine \
                 (`apex-host run --backends cuda`), or check `apex-host discover --verbose` for why."
                    .into(),
            );
        }
    }

    if !board.is_empty()
        && noisy.is_empty()
        && hot.is_empty()
        && wrong.is_empty()
        && failed.is_empty()
    {
        a.findings.push(format!(
            "All {} measured case(s) are verified, none is noisy (CV ≤ {}) and none was throttled.",
            board.len(),
            pct_of_ratio(NOISY_CV)
        ));
    }
    if board.is_empty() {
        a.findings.push("No case was measured in this run.".into());
    }
    if !compared && !board.is_empty() {
        a.recommendations.push(
            "Gate future runs on this one: `apex-host baseline emit` writes a baseline, and \
             `apex-host run --compare BASELINE` checks against it."
                .into(),
        );
    }
    a
}

/// CUDA over CPU speedups where the same kernel, precision and parameters ran on both.
fn speedups(board: &[&CaseResult], a: &mut Analysis) {
    let mut cpu: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    for c in board.iter().filter(|c| c.key.backend == "cpu") {
        if let Some(p) = c.p50_ms {
            cpu.insert(same_work(c), p);
        }
    }
    let mut lines: Vec<(f64, String)> = board
        .iter()
        .filter(|c| c.key.backend == "cuda")
        .filter_map(|c| {
            let cpu_ms = *cpu.get(&same_work(c))?;
            let gpu_ms = c.p50_ms.filter(|p| *p > 0.0)?;
            let x = cpu_ms / gpu_ms;
            Some((
                x,
                format!(
                    "`{}` {} {}: CUDA {} ms vs CPU {} ms ({x:.1}×)",
                    c.key.kernel,
                    c.key.precision,
                    c.key.params_label(),
                    ms(gpu_ms),
                    ms(cpu_ms)
                ),
            ))
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    lines.sort_by(|x, y| y.0.total_cmp(&x.0));
    let n = lines.len();
    let shown: Vec<String> = lines.into_iter().take(MAX_LISTED).map(|(_, s)| s).collect();
    let more = if n > MAX_LISTED {
        format!("; and {} more", n - MAX_LISTED)
    } else {
        String::new()
    };
    a.findings.push(format!(
        "CUDA vs CPU on the same work (p50): {}{more}.",
        shown.join("; ")
    ));
}

fn same_work(c: &CaseResult) -> (String, String, String) {
    (
        c.key.kernel.clone(),
        c.key.precision.clone(),
        c.key.params_label(),
    )
}

fn list(cases: &[&CaseResult], item: impl Fn(&CaseResult) -> String) -> String {
    let mut s: Vec<String> = cases.iter().take(MAX_LISTED).map(|c| item(c)).collect();
    if cases.len() > MAX_LISTED {
        s.push(format!("and {} more", cases.len() - MAX_LISTED));
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EnergyBlock;
    use crate::report::test_support::{measured_case, sample_summary, summary_of};

    #[test]
    fn a_debug_build_is_the_first_finding() {
        let mut s = summary_of(vec![measured_case("a.b", "cpu", 1.0, 0.01)]);
        assert!(!analyze(&s, false).findings[0].contains("debug build"));
        s.environment["tool"]["build_profile"] = "debug".into();
        let a = analyze(&s, false);
        assert!(a.findings[0].starts_with("This run was measured by a debug build"));
        assert!(a.recommendations.iter().any(|r| r.contains("--release")));
    }

    #[test]
    fn clean_run_says_so_and_suggests_a_baseline() {
        let s = summary_of(vec![measured_case("a.b", "cpu", 1.0, 0.01)]);
        let a = analyze(&s, false);
        assert!(
            a.findings
                .iter()
                .any(|f| f.starts_with("One case measured"))
        );
        assert!(a.findings.iter().any(|f| f.contains("none is noisy")));
        assert!(
            a.recommendations
                .iter()
                .any(|r| r.contains("baseline emit"))
        );
        assert!(
            !analyze(&s, true)
                .recommendations
                .iter()
                .any(|r| r.contains("baseline emit"))
        );
    }

    #[test]
    fn noisy_throttled_and_failing_cases_are_named() {
        let mut noisy = measured_case("a.noisy", "cpu", 2.0, 0.2);
        noisy.id = "a.noisy/cpu/fp32/n=1".into();
        let mut hot = measured_case("a.hot", "cuda", 1.0, 0.01);
        hot.resources.energy = Some(EnergyBlock {
            throttled_samples: 3,
            throttle_reasons: vec!["sw_thermal_slowdown".into()],
            ..EnergyBlock::default()
        });
        let s = summary_of(vec![noisy, hot]);
        let a = analyze(&s, true);
        let all = a.findings.join("\n");
        assert!(all.contains("`a.noisy/cpu/fp32/n=1` (CV 20.0%)"), "{all}");
        assert!(
            all.contains("throttled") && all.contains("sw_thermal_slowdown"),
            "{all}"
        );
        assert!(!all.contains("none is noisy"));
        assert!(a.recommendations.iter().any(|r| r.contains("--iters")));
        assert!(
            a.recommendations
                .iter()
                .any(|r| r.contains("nvidia-smi -lgc"))
        );
    }

    #[test]
    fn sample_summary_findings_come_from_its_data() {
        let a = analyze(&sample_summary(), false);
        let all = a.findings.join("\n");
        assert!(all.contains("failed_accuracy"), "{all}");
        assert!(
            all.contains("skipped") && all.contains("cuda_unavailable"),
            "{all}"
        );
        assert!(all.contains("CUDA vs CPU"), "{all}");
        assert!(all.contains("cold"), "{all}");
        assert!(a.recommendations.iter().any(|r| r.contains("GPU machine")));
    }

    #[test]
    fn empty_run() {
        let a = analyze(&summary_of(vec![]), false);
        assert_eq!(
            a.findings,
            vec!["No case was measured in this run.".to_string()]
        );
        assert!(a.recommendations.is_empty());
    }
}
