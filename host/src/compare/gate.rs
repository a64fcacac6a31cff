//! [`gate`]: applies the seed rule and the noise-aware verdicts to every baselined metric, checks
//! statuses and accuracy, and returns a [`Comparison`]. Pure: no I/O, no clock.

use std::collections::BTreeSet;

use super::comparison::{Check, CheckStatus, Comparison, SELECTION_METRIC, STATUS_METRIC};
use super::lookup::{Current, MetricValue, lookup, split_metric};
use super::rule::{exceeds, regression_ratio};
use super::selection::Selection;
use super::verdict::{
    VerdictReport, interval_verdict, point_verdict, process_verdict, two_sample_verdict,
};
use super::{Baseline, BaselineMetric, GateOptions};
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::stats::{Sample, bootstrap::quantile_ci};

/// Gates `summary` against `baseline`.
///
/// - A `__status__` check comes first when the baseline has a `required_status` the run's
///   status does not equal (for a seed-style baseline, the matching export's status).
/// - A seed-style baseline's keys are resolved through the matching export to the case that
///   fills them; a key the export leaves `null` is `missing`, with the export's reason.
/// - Every baseline metric gets a check: `pass`/`fail` by the rule `current > value * (1 +
///   ratio) + abs` (equality passes), `missing` when the run lacks it, `case_not_ok` when its
///   case was skipped or failed, `failed_accuracy` when its case's output was wrong.
/// - A case of the run that `failed` or `failed_accuracy` and that no metric covers gets a
///   `<case id>/__status__` check, so a crash never passes the gate unnoticed.
/// - A run that selected part of the suite (`--filter`, `--backends`, `--precision`, as its
///   summary records them) is gated on the metrics of the cases it selected; the others are
///   counted in `unselected_metrics`, and a selection that leaves out every metric is a
///   `__selection__` check that fails.
pub fn gate(summary: &RunSummary, baseline: &Baseline, opts: &GateOptions) -> Comparison {
    let mut checks = Vec::new();
    let run_status = match baseline.seed_keys {
        Some(seed) => seed.status(summary),
        None => summary.status.clone(),
    };
    if let Some(required) = &baseline.required_status
        && run_status != *required
    {
        let mut c = Check::empty(STATUS_METRIC.into(), CheckStatus::StatusMismatch);
        c.expected = Some(required.clone());
        c.current = Some(run_status.clone());
        c.reason = Some(match baseline.seed_keys {
            Some(seed) => format!(
                "the {} export's status is `{run_status}`, the baseline requires `{required}`",
                seed.format_name()
            ),
            None => format!("run status is `{run_status}`, the baseline requires `{required}`"),
        });
        checks.push(c);
    }
    let selection = Selection::of(summary);
    let mut unselected_metrics = 0;
    let mut covered = BTreeSet::new();
    let mut metric_checks = Vec::new();
    for (key, bm) in &baseline.metrics {
        metric_checks.push(match baseline.metric_id(summary, key) {
            Ok(metric) => {
                if let Some((case_id, _)) = split_metric(&metric) {
                    if !selection.keeps(case_id) {
                        unselected_metrics += 1;
                        continue;
                    }
                    covered.insert(case_id.to_string());
                }
                metric_check(summary, baseline, key, &metric, bm, opts)
            }
            Err(reason) => {
                let mut c = Check::empty(key.clone(), CheckStatus::Missing);
                c.baseline_ms = Some(bm.value_ms);
                c.allowed_max_ms = Some(bm.allowed_max_ms());
                c.reason = Some(reason);
                c
            }
        });
    }
    if metric_checks.is_empty() && unselected_metrics > 0 {
        // A gate that checks nothing must not pass.
        let mut c = Check::empty(SELECTION_METRIC.into(), CheckStatus::Missing);
        c.reason = Some(format!(
            "the run's selection ({}) leaves out the cases of all {unselected_metrics} baseline metric(s), so nothing was gated (hint: gate against the baseline of the selected cases, or run without the selection)",
            selection.flags()
        ));
        metric_checks.push(c);
    }
    for (id, case) in &summary.benchmarks {
        if covered.contains(id)
            || !matches!(case.status, CaseStatus::Failed | CaseStatus::FailedAccuracy)
        {
            continue;
        }
        metric_checks.push(not_ok_check(format!("{id}/{STATUS_METRIC}"), case));
    }
    metric_checks.sort_by(|a, b| a.metric.cmp(&b.metric));
    checks.extend(metric_checks);
    let unbaselined_cases = summary
        .benchmarks
        .iter()
        .filter(|(id, c)| c.status == CaseStatus::Ok && !covered.contains(*id))
        .map(|(id, _)| id.clone())
        .collect();
    Comparison {
        suite: summary.suite.clone(),
        baseline_suite: baseline.suite.clone(),
        baseline_notes: baseline.baseline_notes.clone(),
        timestamp_utc: summary.timestamp_utc.clone(),
        required_status: baseline.required_status.clone(),
        current_status: summary.status.clone(),
        checks,
        unbaselined_cases,
        // Named only where the selection left out baseline metrics.
        selection: if unselected_metrics > 0 {
            selection.flags()
        } else {
            String::new()
        },
        unselected_metrics,
        debug_build: summary.debug_build(),
        options: *opts,
    }
}

/// The check named `name` (the baseline's key) of the metric id `metric` it resolved to (the
/// same, but for seed keys).
fn metric_check(
    summary: &RunSummary,
    baseline: &Baseline,
    name: &str,
    metric: &str,
    bm: &BaselineMetric,
    opts: &GateOptions,
) -> Check {
    let allowed = bm.allowed_max_ms();
    let with_limits = |mut c: Check| {
        c.baseline_ms = Some(bm.value_ms);
        c.allowed_max_ms = Some(allowed);
        c
    };
    let mut check = match lookup(summary, metric) {
        Current::NoCase { case_id } => {
            let mut c = with_limits(Check::empty(name.into(), CheckStatus::Missing));
            c.reason = Some(format!(
                "case `{case_id}` is not in the run (hint: was it renamed, or did its plugin not load? `apex-host discover` lists what loads)"
            ));
            c
        }
        Current::NoMetric { detail } => {
            let mut c = with_limits(Check::empty(name.into(), CheckStatus::Missing));
            c.reason = Some(detail);
            c
        }
        Current::NotOk(case) => with_limits(not_ok_check(name.into(), case)),
        Current::Value(v) => {
            let status = if exceeds(v.ms, allowed) {
                CheckStatus::Fail
            } else {
                CheckStatus::Pass
            };
            let mut c = with_limits(Check::empty(name.into(), status));
            c.current_ms = Some(v.ms);
            c.regression_ratio = regression_ratio(v.ms, bm.value_ms);
            c.verdict = Some(verdict_for(baseline, metric, bm, allowed, &v, opts));
            if status == CheckStatus::Fail {
                c.reason = Some(format!("{:.4} ms > allowed max {allowed:.4} ms", v.ms));
            }
            c
        }
    };
    // A seed key names a place in an export; the reason names the metric it was read from.
    if name != metric
        && let Some(reason) = check.reason.as_mut()
    {
        reason.push_str(&format!(" (seed key read from `{metric}`)"));
    }
    check
}

fn not_ok_check(metric: String, case: &CaseResult) -> Check {
    let accuracy = case.status == CaseStatus::FailedAccuracy
        || case.accuracy.as_ref().is_some_and(|a| !a.passed);
    let mut c = Check::empty(
        metric,
        if accuracy {
            CheckStatus::FailedAccuracy
        } else {
            CheckStatus::CaseNotOk
        },
    );
    let mut reason = format!("case status `{}`", case.status.as_str());
    if let Some(r) = &case.reason {
        reason.push_str(&format!(": {r}"));
    }
    if let Some(a) = case.accuracy.as_ref().filter(|a| !a.passed) {
        reason.push_str(&format!(
            " (rmse {:.3e}, max_abs_error {:.3e}, max_rel_error {:.3e}, mismatch_ratio {:.3e}, non_finite {})",
            a.rmse, a.max_abs_error, a.max_rel_error, a.mismatch_ratio, a.non_finite
        ));
    }
    c.reason = Some(reason);
    c
}

/// The strongest evidence available: two samples, then the current interval, then the point.
fn verdict_for(
    baseline: &Baseline,
    metric: &str,
    bm: &BaselineMetric,
    allowed: f64,
    v: &MetricValue<'_>,
    opts: &GateOptions,
) -> VerdictReport {
    let current = v.samples.and_then(|s| Sample::new(s).ok());
    let threshold = opts.threshold_for(metric, v.quantile);
    let reference = baseline.reference.as_deref().map(|r| lookup(r, metric));
    if let (Some(q), Some(cur_groups), Some(Current::Value(base_v))) =
        (v.quantile, v.process_groups(), reference.as_ref())
        && let Some(base_groups) = base_v.process_groups()
        && let Some(report) = process_verdict(&base_groups, &cur_groups, q, threshold, opts)
    {
        return report;
    }
    if let (Some(q), Some(cur)) = (v.quantile, current.as_ref())
        && let Some(reference) = baseline.reference.as_deref()
        && let Current::Value(base_v) = lookup(reference, metric)
        && let Some(base) = base_v.samples.and_then(|s| Sample::new(s).ok())
        && let Some(report) = two_sample_verdict(&base, cur, q, threshold, opts)
    {
        return report;
    }
    let ci = match (v.quantile, current.as_ref()) {
        (Some(q), Some(cur)) => Some(quantile_ci(cur, q, &opts.bootstrap)),
        (Some(0.5), None) => v.stats.map(|s| crate::stats::ConfidenceInterval {
            low: s.median_ci_low_ms,
            high: s.median_ci_high_ms,
            confidence_level: s.ci_level,
        }),
        _ => None,
    };
    match ci {
        Some(ci) => interval_verdict(&ci, bm.value_ms, allowed, threshold),
        None => point_verdict(v.ms, bm.value_ms, allowed, threshold),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare_summary_json, render_regressions_markdown};
    use crate::report::exports::apex_x_gpu;
    use crate::report::test_support::{case_at, summary_of};
    use std::path::Path;

    const PACK: &[(&str, &str)] = crate::report::exports::select::fixed_profile::TILE_PACK;

    fn seed_baseline(metrics: &str) -> Baseline {
        Baseline::parse(
            &format!(
                r#"{{"schema_version":1,"suite":"apex_x_gpu_benchmark","baseline_notes":"n",
                    "required_status":"ok","metrics":{{{metrics}}}}}"#
            ),
            Path::new("seed.json"),
        )
        .unwrap()
    }

    #[test]
    fn seed_keys_gate_the_number_the_export_holds_and_name_what_is_missing() {
        let run = summary_of(vec![case_at(
            "tile_ops.tile_pack",
            "cuda",
            "fp16",
            PACK,
            0.2,
        )]);
        let b = seed_baseline(
            r#""benchmarks.tile_ops.tilepack.dispatch.p50_ms": {"value_ms": 0.3, "max_regression_ratio": 0.6, "max_regression_abs_ms": 0.25},
               "benchmarks.tile_ops.tilepack.dispatch.p95_ms": {"value_ms": 0.1, "max_regression_ratio": 0.0, "max_regression_abs_ms": 0.0},
               "benchmarks.end_to_end_infer.torch_eager.p50_ms": {"value_ms": 3.0}"#,
        );
        assert_eq!(
            b.seed_keys,
            Some(crate::report::exports::seed_keys::SeedExport::ApexXGpu)
        );
        let cmp = gate(&run, &b, &GateOptions::default());
        let by = |k: &str| cmp.checks.iter().find(|c| c.metric == k).unwrap();
        let export = apex_x_gpu::document(&run);
        let p50 = by("benchmarks.tile_ops.tilepack.dispatch.p50_ms");
        assert_eq!(p50.status, CheckStatus::Pass);
        assert_eq!(
            p50.current_ms,
            export["benchmarks"]["tile_ops"]["tilepack"]["dispatch"]["p50_ms"].as_f64()
        );
        let p95 = by("benchmarks.tile_ops.tilepack.dispatch.p95_ms");
        assert_eq!(p95.status, CheckStatus::Fail);
        assert!(
            p95.reason
                .as_deref()
                .unwrap()
                .contains("tile_ops.tile_pack/cuda/fp16/")
        );
        let e2e = by("benchmarks.end_to_end_infer.torch_eager.p50_ms");
        assert_eq!(e2e.status, CheckStatus::Missing);
        let why = e2e.reason.as_deref().unwrap();
        assert!(
            why.starts_with("apex-x-gpu: ") && why.contains("ff_model.infer"),
            "{why}"
        );
        assert!(cmp.checks.iter().all(|c| c.metric != STATUS_METRIC));
        assert_ne!(cmp.exit_code(), 0);
    }

    #[test]
    fn required_status_is_the_exports_status() {
        // The run is `ok` (a skip is a result), but the GPU report without a measured block is
        // `skipped`, as the seed's report without CUDA.
        let mut skipped = case_at("tile_ops.tile_pack", "cuda", "fp16", PACK, 0.2);
        skipped.status = crate::model::CaseStatus::Skipped;
        skipped.reason = Some("cuda_unavailable: libcuda.so.1 not found".into());
        let run = summary_of(vec![skipped]);
        assert_eq!(run.status, "ok");
        let b =
            seed_baseline(r#""benchmarks.tile_ops.tilepack.dispatch.p50_ms": {"value_ms": 0.3}"#);
        let cmp = gate(&run, &b, &GateOptions::default());
        let status = &cmp.checks[0];
        assert_eq!(status.metric, STATUS_METRIC);
        assert_eq!(status.current.as_deref(), Some("skipped"));
        assert_eq!(cmp.checks[1].status, CheckStatus::CaseNotOk);
    }

    /// A baseline of three metrics: two CUDA cases of two kernels and a CPU case.
    fn three_metrics() -> Baseline {
        Baseline::parse(
            r#"{"schema_version":1,"suite":"s","baseline_notes":"n","metrics":{
                "k.a/cuda/fp16/n=1/p50_ms":{"value_ms":1.0,"max_regression_ratio":0.1,"max_regression_abs_ms":0},
                "k.b/cuda/fp16/n=1/p50_ms":{"value_ms":1.0,"max_regression_ratio":0.1,"max_regression_abs_ms":0},
                "k.a/cpu/fp32/n=1/p50_ms":{"value_ms":1.0,"max_regression_ratio":0.1,"max_regression_abs_ms":0}}}"#,
            Path::new("b.json"),
        )
        .unwrap()
    }

    #[test]
    fn a_selective_run_is_gated_on_its_cases_and_still_misses_a_renamed_one() {
        let a = case_at("k.a", "cuda", "fp16", &[("n", "1")], 1.0);
        // Every case ran: the whole baseline is checked, as before.
        let mut all = summary_of(vec![
            a.clone(),
            case_at("k.b", "cuda", "fp16", &[("n", "1")], 1.0),
            case_at("k.a", "cpu", "fp32", &[("n", "1")], 1.0),
        ]);
        all.config = serde_json::json!({"filter": [], "backends": null});
        let cmp = gate(&all, &three_metrics(), &GateOptions::default());
        assert_eq!((cmp.counts().passed, cmp.unselected_metrics), (3, 0));
        assert!(cmp.selection.is_empty() && compare_summary_json(&cmp).get("selection").is_none());

        // `--filter 'k.a' --backends cuda`: one metric is gated, the other two are unselected.
        let mut one = summary_of(vec![a]);
        one.config = serde_json::json!({"filter": ["k.a"], "backends": ["cuda"]});
        let cmp = gate(&one, &three_metrics(), &GateOptions::default());
        assert_eq!(cmp.exit_code(), 0, "{:?}", cmp.checks);
        assert_eq!((cmp.counts().total, cmp.unselected_metrics), (1, 2));
        assert_eq!(cmp.selection, "--filter 'k.a' --backends cuda");
        let json = compare_summary_json(&cmp);
        assert_eq!(
            (
                json["selection"].as_str(),
                json["unselected_metrics"].as_u64()
            ),
            (Some("--filter 'k.a' --backends cuda"), Some(2))
        );
        assert!(
            render_regressions_markdown(&cmp)
                .contains("2 metric(s) of cases it leaves out were not checked")
        );

        // The selected case renamed (another parameter value): still `missing`, the gate fails.
        let mut renamed = summary_of(vec![case_at("k.a", "cuda", "fp16", &[("n", "2")], 1.0)]);
        renamed.config = one.config.clone();
        let cmp = gate(&renamed, &three_metrics(), &GateOptions::default());
        assert_eq!((cmp.counts().missing, cmp.unselected_metrics), (1, 2));
        assert_ne!(cmp.exit_code(), 0);
    }

    #[test]
    fn a_selection_that_leaves_out_every_metric_fails_the_gate_and_says_why() {
        let mut other = summary_of(vec![case_at("k.c", "cuda", "fp16", &[("n", "1")], 1.0)]);
        other.config = serde_json::json!({"filter": ["k.c"]});
        let cmp = gate(&other, &three_metrics(), &GateOptions::default());
        assert_ne!(cmp.exit_code(), 0);
        assert_eq!(cmp.unselected_metrics, 3);
        let check = &cmp.checks[0];
        assert_eq!(
            (check.metric.as_str(), check.status),
            (SELECTION_METRIC, CheckStatus::Missing)
        );
        let why = check.reason.as_deref().unwrap();
        assert!(
            why.contains("--filter 'k.c'") && why.contains("all 3 baseline metric(s)"),
            "{why}"
        );
    }

    #[test]
    fn a_run_of_a_debug_build_is_named_as_one_in_every_output() {
        let mut run = summary_of(vec![case_at("k.a", "cuda", "fp16", &[("n", "1")], 1.0)]);
        let release = gate(&run, &three_metrics(), &GateOptions::default());
        assert!(!release.debug_build);
        assert!(!render_regressions_markdown(&release).contains("build: **debug**"));
        assert!(
            compare_summary_json(&release)
                .get("build_profile")
                .is_none()
        );
        run.environment["tool"]["build_profile"] = serde_json::json!("debug");
        let debug = gate(&run, &three_metrics(), &GateOptions::default());
        assert!(debug.debug_build);
        assert!(
            render_regressions_markdown(&debug)
                .contains("- build: **debug** (apex-host, and the plugins it built)")
        );
        assert_eq!(compare_summary_json(&debug)["build_profile"], "debug");
    }
}
