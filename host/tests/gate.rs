//! The regression gate end to end through the public API: the seed rule's boundaries, every
//! failure kind, the noise-aware verdicts on synthetic samples, the keys of every output file,
//! `baseline emit` and the history trend.

use std::collections::{BTreeMap, BTreeSet};

use apex_host::compare::{
    self, Baseline, BaselineMetric, CheckStatus, GateExitCode, GateOptions, TemplateOptions,
    Verdict, VerdictMethod,
};
use apex_host::model::{
    AccuracyBlock, CaseKey, CaseResult, CaseStatus, ModeTiming, ParamMap, RunSummary, WorkBlock,
};
use apex_host::stats::summarize;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn key(kernel: &str, backend: &str) -> CaseKey {
    let mut p = ParamMap::new();
    p.insert("kmax".into(), 32.into());
    p.insert("tile_size".into(), 8.into());
    CaseKey::new(kernel, backend, "fp32", &p)
}

/// An `ok` case whose headline mode holds `samples` (kept as raw samples too).
fn ok_case(key: CaseKey, samples: &[f64]) -> CaseResult {
    let stats = summarize(samples, 1).expect("samples");
    let mode = if key.backend == "cpu" { "cpu" } else { "batch" };
    let mut c = CaseResult::without_measurements(key, "tile_ops", CaseStatus::Ok, String::new());
    c.reason = None;
    c.headline = Some(mode.into());
    c.p50_ms = Some(stats.p50_ms);
    c.p95_ms = Some(stats.p95_ms);
    c.timing.insert(
        mode.into(),
        ModeTiming {
            calls_per_sample: 1,
            graph: false,
            cache: None,
            buffer_sets: None,
            short_holds: None,
            stats,
            samples_ms: Some(samples.to_vec()),
            samples_per_process: None,
        },
    );
    c.accuracy = Some(accuracy(true));
    c
}

fn accuracy(passed: bool) -> AccuracyBlock {
    AccuracyBlock {
        passed,
        elements: 1024,
        rmse: if passed { 1e-6 } else { 0.3 },
        max_abs_error: if passed { 1e-5 } else { 2.0 },
        max_rel_error: if passed { 1e-4 } else { 1.0 },
        mismatch_ratio: if passed { 0.0 } else { 0.25 },
        non_finite: 0,
        note: None,
        tolerance: BTreeMap::from([("rmse".to_string(), 1e-3)]),
    }
}

fn run(cases: Vec<CaseResult>) -> RunSummary {
    let status = RunSummary::status_of(&cases).to_string();
    RunSummary {
        schema_version: 1,
        suite: "apex_bench".into(),
        timestamp_utc: "2026-11-21T05:30:00+00:00".into(),
        environment: serde_json::json!({"git": {"commit": "0123456789abcdef"}}),
        config: serde_json::json!({"seed": 123}),
        status,
        counts: BTreeMap::new(),
        benchmarks: cases.into_iter().map(|c| (c.id.clone(), c)).collect(),
        time_accounting: None,
        plan: None,
        anchors: None,
    }
}

fn baseline(metrics: &[(&str, f64, f64, f64)]) -> Baseline {
    Baseline {
        schema_version: 1,
        suite: "apex_bench".into(),
        baseline_notes: "test".into(),
        required_status: None,
        reference_commit: None,
        metrics: metrics
            .iter()
            .map(|(k, v, r, a)| {
                (
                    (*k).to_string(),
                    BaselineMetric {
                        value_ms: *v,
                        max_regression_ratio: *r,
                        max_regression_abs_ms: *a,
                    },
                )
            })
            .collect(),
        reference: None,
        seed_keys: None,
    }
}

/// Timings around `median` with about `cv` relative spread (log-normal-ish), seeded.
fn timings(seed: u64, n: usize, median: f64, cv: f64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let z: f64 = (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0;
            median * (cv * z).exp()
        })
        .collect()
}

#[test]
fn equality_passes_and_one_ulp_above_fails() {
    let k = key("tile_ops.tile_pack", "cpu");
    let metric = k.metric("p50_ms");
    let b = baseline(&[(&metric, 1.0, 0.5, 0.25)]);
    let limit = b.metrics[&metric].allowed_max_ms();
    assert_eq!(limit, 1.75);

    let at_limit = run(vec![ok_case(k.clone(), &[limit])]);
    let cmp = compare::gate(&at_limit, &b, &GateOptions::default());
    assert_eq!(cmp.checks[0].status, CheckStatus::Pass);
    assert_eq!(cmp.checks[0].current_ms, Some(limit));
    assert_eq!(cmp.exit_code(), GateExitCode::PASS);

    let above = run(vec![ok_case(k, &[limit.next_up()])]);
    let cmp = compare::gate(&above, &b, &GateOptions::default());
    assert_eq!(cmp.checks[0].status, CheckStatus::Fail);
    assert_eq!(cmp.overall_status(), "fail");
    assert_eq!(cmp.exit_code(), GateExitCode::GATE_FAILED);
    assert_eq!(GateExitCode::GATE_FAILED, 2);
}

#[test]
fn missing_metric_and_unknown_stat_fail() {
    let k = key("tile_ops.tile_pack", "cpu");
    let extra = key("tile_ops.fusion_gate", "cpu");
    let current = run(vec![
        ok_case(k.clone(), &[1.0, 1.1, 0.9]),
        ok_case(extra.clone(), &[0.5]),
    ]);
    let gone = key("tile_ops.tile_unpack", "cpu").metric("p50_ms");
    let odd = k.metric("p42_ms");
    let cmp = compare::gate(
        &current,
        &baseline(&[(&gone, 1.0, 0.5, 0.0), (&odd, 1.0, 0.5, 0.0)]),
        &GateOptions::default(),
    );
    assert_eq!(cmp.exit_code(), GateExitCode::GATE_FAILED);
    assert!(cmp.checks.iter().all(|c| c.status == CheckStatus::Missing));
    assert!(
        cmp.checks
            .iter()
            .all(|c| c.current_ms.is_none() && c.baseline_ms == Some(1.0))
    );
    let reasons: Vec<&str> = cmp
        .checks
        .iter()
        .filter_map(|c| c.reason.as_deref())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("is not in the run")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("unknown statistic `p42_ms`")),
        "{reasons:?}"
    );
    // A case of the run that no metric names is listed, not failed.
    assert_eq!(cmp.unbaselined_cases, vec![extra.id()]);
    assert_eq!(cmp.checks.len(), 2);
}

#[test]
fn a_case_that_is_not_ok_fails() {
    let k = key("tile_ops.tile_pack", "cuda");
    let skipped = CaseResult::without_measurements(
        k.clone(),
        "tile_ops",
        CaseStatus::Skipped,
        "cuda_unavailable: libcuda.so.1 not found".into(),
    );
    let mut b = baseline(&[(&k.metric("p50_ms"), 0.3, 0.6, 0.25)]);
    b.required_status = Some("ok".into());
    let mut current = run(vec![skipped]);
    current.status = "empty".into();
    let cmp = compare::gate(&current, &b, &GateOptions::default());
    assert_eq!(cmp.checks[0].metric, "__status__");
    assert_eq!(cmp.checks[0].status, CheckStatus::StatusMismatch);
    assert_eq!(cmp.checks[0].expected.as_deref(), Some("ok"));
    assert_eq!(cmp.checks[0].current.as_deref(), Some("empty"));
    assert_eq!(cmp.checks[1].status, CheckStatus::CaseNotOk);
    assert!(
        cmp.checks[1]
            .reason
            .as_deref()
            .unwrap()
            .contains("cuda_unavailable")
    );
    assert_eq!(cmp.exit_code(), GateExitCode::GATE_FAILED);
    let counts = cmp.counts();
    assert_eq!(
        (counts.status_mismatch, counts.case_not_ok, counts.failed),
        (1, 1, 2)
    );
}

#[test]
fn failed_accuracy_fails_baselined_or_not() {
    let k = key("tile_ops.fusion_gate", "cpu");
    let mut wrong = ok_case(k.clone(), &[0.2, 0.21, 0.19]);
    wrong.status = CaseStatus::FailedAccuracy;
    wrong.accuracy = Some(accuracy(false));
    let other = key("tile_ops.tile_pack", "cpu");
    let mut crashed = CaseResult::without_measurements(
        other.clone(),
        "tile_ops",
        CaseStatus::Failed,
        "signal 11 (SIGSEGV)".into(),
    );
    crashed.reason = Some("signal 11 (SIGSEGV)".into());
    let current = run(vec![wrong, crashed]);
    // Only the wrong case is baselined; the crash is caught anyway.
    let cmp = compare::gate(
        &current,
        &baseline(&[(&k.metric("p50_ms"), 1.0, 0.5, 0.0)]),
        &GateOptions::default(),
    );
    let by_metric: BTreeMap<&str, CheckStatus> = cmp
        .checks
        .iter()
        .map(|c| (c.metric.as_str(), c.status))
        .collect();
    assert_eq!(
        by_metric[k.metric("p50_ms").as_str()],
        CheckStatus::FailedAccuracy
    );
    assert_eq!(
        by_metric[format!("{}/__status__", other.id()).as_str()],
        CheckStatus::CaseNotOk
    );
    let acc = cmp
        .checks
        .iter()
        .find(|c| c.status == CheckStatus::FailedAccuracy)
        .unwrap();
    assert!(
        acc.reason.as_deref().unwrap().contains("mismatch_ratio"),
        "{acc:?}"
    );
    assert_eq!(cmp.exit_code(), GateExitCode::GATE_FAILED);
    assert_eq!(cmp.counts().failed_accuracy, 1);
}

#[test]
fn noise_aware_verdicts_on_synthetic_samples() {
    let k = key("tile_ops.tile_pack", "cpu");
    let reference = run(vec![ok_case(k.clone(), &timings(1, 200, 1.0, 0.05))]);
    // A baseline emitted from the reference run keeps it for two-sample verdicts; the CPU
    // default tolerance (0.75 + 2 ms) lets a 25 % slowdown through the seed rule.
    let b = Baseline::from_run(reference, &TemplateOptions::default());
    let opts = GateOptions::default();
    let verdict_of = |median: f64, seed: u64, opts: &GateOptions| {
        let current = run(vec![ok_case(k.clone(), &timings(seed, 200, median, 0.05))]);
        compare::gate(&current, &b, opts)
    };

    let aa = verdict_of(1.0, 2, &opts);
    let p50 = aa
        .checks
        .iter()
        .find(|c| c.metric.ends_with("/p50_ms"))
        .unwrap();
    let v = p50.verdict.as_ref().unwrap();
    assert_eq!(v.method, VerdictMethod::TwoSample);
    assert_eq!(v.verdict, Verdict::Pass, "{v:?}");
    assert_eq!(aa.exit_code(), GateExitCode::PASS);

    let slow = verdict_of(1.25, 3, &opts);
    let p50 = slow
        .checks
        .iter()
        .find(|c| c.metric.ends_with("/p50_ms"))
        .unwrap();
    assert_eq!(p50.status, CheckStatus::Pass, "within the seed tolerance");
    assert_eq!(p50.verdict_kind(), Some(Verdict::Regress));
    assert_eq!(
        slow.exit_code(),
        GateExitCode::PASS,
        "verdicts inform unless --fail-on-regress"
    );
    let strict = GateOptions {
        fail_on_regress: true,
        ..opts
    };
    assert_eq!(
        verdict_of(1.25, 3, &strict).exit_code(),
        GateExitCode::GATE_FAILED
    );

    let fast = verdict_of(0.75, 4, &opts);
    let p50 = fast
        .checks
        .iter()
        .find(|c| c.metric.ends_with("/p50_ms"))
        .unwrap();
    assert_eq!(p50.verdict_kind(), Some(Verdict::Improve));
    assert_eq!(
        fast.counts().verdict_improve,
        1,
        "p50 improved; p95's threshold is twice the median's, and -25 % does not clear it on the CPU"
    );
    let md = compare::render_regressions_markdown(&fast);
    assert!(
        md.contains("## Improvements") && md.contains(&k.metric("p50_ms")),
        "{md}"
    );
}

#[test]
fn value_only_baseline_uses_the_current_interval() {
    let k = key("tile_ops.tile_pack", "cpu");
    let metric = k.metric("p50_ms");
    let current = run(vec![ok_case(k, &timings(9, 100, 1.0, 0.05))]);
    let verdict = |value, ratio, abs| {
        let cmp = compare::gate(
            &current,
            &baseline(&[(&metric, value, ratio, abs)]),
            &GateOptions::default(),
        );
        cmp.checks[0].verdict.clone().unwrap()
    };
    let v = verdict(1.0, 0.5, 0.0);
    assert_eq!(
        (v.method, v.verdict),
        (VerdictMethod::CurrentInterval, Verdict::Pass)
    );
    assert!(v.ci_low_ms.unwrap() < 1.0 && v.ci_high_ms.unwrap() > 0.98);
    assert_eq!(verdict(0.5, 0.2, 0.0).verdict, Verdict::Regress);
    assert_eq!(verdict(2.0, 0.5, 0.0).verdict, Verdict::Improve);
    // A limit inside the current interval cannot be decided.
    assert_eq!(verdict(1.0, 0.0, 0.0).verdict, Verdict::Inconclusive);
}

fn keys(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn every_output_has_its_keys() {
    let k = key("tile_ops.tile_pack", "cpu");
    let missing = key("tile_ops.tile_unpack", "cpu").metric("p50_ms");
    let mut b = baseline(&[
        (&k.metric("p50_ms"), 1.0, 0.5, 0.0),
        (&missing, 1.0, 0.5, 0.0),
    ]);
    b.required_status = Some("ok".into());
    let mut current = run(vec![ok_case(k, &[1.0, 1.01, 0.99])]);
    current.status = "failed".into();
    let cmp = compare::gate(&current, &b, &GateOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let written = compare::write_outputs(&cmp, dir.path()).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["compare_summary.json", "trend.json", "regressions.md"]
    );
    let read = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
        serde_json::from_str(&text).unwrap()
    };

    let summary = read("compare_summary.json");
    assert_eq!(
        keys(&summary),
        set(&[
            "schema_version",
            "suite",
            "baseline_suite",
            "timestamp_utc",
            "status",
            "required_status",
            "current_status",
            "counts",
            "checks",
            "unbaselined_cases",
            "gate_options"
        ])
    );
    assert_eq!(summary["status"], "fail");
    let checks = summary["checks"].as_array().unwrap();
    assert_eq!(
        keys(&checks[0]),
        set(&["metric", "status", "expected", "current", "reason"])
    );
    assert_eq!(checks[0]["metric"], "__status__");
    assert_eq!(checks[0]["status"], "fail");
    let pass = checks.iter().find(|c| c["status"] == "pass").unwrap();
    assert_eq!(
        keys(pass),
        set(&[
            "metric",
            "status",
            "baseline_ms",
            "allowed_max_ms",
            "current_ms",
            "regression_ratio",
            "verdict"
        ])
    );
    assert_eq!(
        keys(&pass["verdict"]),
        set(&[
            "verdict",
            "method",
            "ci_low_ms",
            "ci_high_ms",
            "ratio",
            "ratio_ci_low",
            "ratio_ci_high",
            "mann_whitney_p",
            "confidence_level"
        ])
    );
    let miss = checks.iter().find(|c| c["status"] == "missing").unwrap();
    assert_eq!(
        keys(miss),
        set(&[
            "metric",
            "status",
            "baseline_ms",
            "allowed_max_ms",
            "current_ms",
            "reason"
        ])
    );
    assert!(miss["current_ms"].is_null());

    let trend = read("trend.json");
    for k in [
        "schema_version",
        "suite",
        "timestamp_utc",
        "overall_status",
        "required_status",
        "current_status",
        "total_metrics",
        "failed_metrics",
        "metrics",
    ] {
        assert!(trend.get(k).is_some(), "trend lacks {k}");
    }
    assert_eq!(trend["total_metrics"], 3);
    assert_eq!(trend["failed_metrics"], 2);
    let metrics = trend["metrics"].as_array().unwrap();
    for m in metrics {
        assert_eq!(
            keys(m),
            set(&[
                "metric",
                "status",
                "baseline_ms",
                "allowed_max_ms",
                "current_ms",
                "regression_ratio",
                "verdict"
            ])
        );
    }
    assert!(
        metrics[0]["baseline_ms"].is_null(),
        "the status entry has null values"
    );

    let md = std::fs::read_to_string(dir.path().join("regressions.md")).unwrap();
    for section in [
        "# Regressions",
        "## Gate failures",
        "## Regressions within the limit",
        "## Improvements",
        "## Inconclusive",
        "## Cases not in the baseline",
    ] {
        assert!(md.contains(section), "regressions.md lacks {section}");
    }
    assert!(md.contains(&missing));
}

#[test]
fn baseline_emit_uses_default_tolerances_per_kind() {
    let cpu = key("tile_ops.tile_pack", "cpu");
    let cuda = key("tile_ops.tile_pack", "cuda");
    let e2e = key("ff_model.infer", "cuda");
    let mut e2e_case = ok_case(e2e.clone(), &[8.0, 8.5, 9.0]);
    e2e_case.work = Some(WorkBlock {
        bytes_read: 1,
        bytes_written: 1,
        flops: 1.0,
        items: 1.0,
        unit: "frames".into(),
    });
    let skipped = CaseResult::without_measurements(
        key("tile_ops.tile_unpack", "cuda"),
        "tile_ops",
        CaseStatus::Skipped,
        "no gpu".into(),
    );
    let current = run(vec![
        ok_case(cpu.clone(), &[1.0, 2.0, 3.0]),
        ok_case(cuda.clone(), &[0.2]),
        e2e_case,
        skipped,
    ]);
    let emitted = compare::emit_template(&current, &TemplateOptions::default());
    let m = &emitted.baseline.metrics;
    let tol = |k: &CaseKey, s: &str| {
        let x = m[&k.metric(s)];
        (x.max_regression_ratio, x.max_regression_abs_ms)
    };
    assert_eq!(tol(&cpu, "p50_ms"), (0.75, 2.0));
    assert_eq!(tol(&cpu, "p95_ms"), (1.0, 5.0));
    assert_eq!(tol(&cuda, "p50_ms"), (0.6, 0.25));
    assert_eq!(tol(&cuda, "p95_ms"), (0.8, 0.5));
    assert_eq!(tol(&e2e, "p50_ms"), (0.5, 1.0));
    assert_eq!(tol(&e2e, "p95_ms"), (0.8, 2.0));
    assert_eq!(m[&cpu.metric("p50_ms")].value_ms, 2.0);
    assert_eq!(m.len(), 6);
    assert_eq!(emitted.left_out.len(), 1);
    assert_eq!(emitted.baseline.required_status.as_deref(), Some("ok"));
    // The template gates its own run as a pass, and round-trips through its file format.
    let text = apex_host::report::to_sorted_json(&emitted.baseline).unwrap();
    let parsed = Baseline::parse(&text, std::path::Path::new("emitted.json")).unwrap();
    assert_eq!(parsed.metrics, emitted.baseline.metrics);
    let ok_only = run(current
        .benchmarks
        .values()
        .filter(|c| c.status == CaseStatus::Ok)
        .cloned()
        .collect());
    assert_eq!(
        compare::gate(&ok_only, &parsed, &GateOptions::default()).exit_code(),
        GateExitCode::PASS
    );
    // Overrides apply to every metric.
    let flat = compare::emit_template(
        &current,
        &TemplateOptions {
            ratio: Some(0.1),
            abs_ms: Some(0.0),
            ..TemplateOptions::default()
        },
    );
    assert!(
        flat.baseline
            .metrics
            .values()
            .all(|x| x.max_regression_ratio == 0.1 && x.max_regression_abs_ms == 0.0)
    );
}

#[test]
fn history_appends_and_renders_the_trend() {
    let k = key("tile_ops.tile_pack", "cpu");
    let dir = tempfile::tempdir().unwrap();
    let mut first = run(vec![ok_case(k.clone(), &[1.0])]);
    first.timestamp_utc = "2026-11-20T05:30:00+00:00".into();
    let mut second = run(vec![ok_case(k.clone(), &[1.5])]);
    second.timestamp_utc = "2026-11-21T05:30:00+00:00".into();
    // Appended out of order; the trend is chronological.
    compare::history::append(dir.path(), &second).unwrap();
    let p = compare::history::append(dir.path(), &first).unwrap();
    assert_eq!(
        compare::history::append(dir.path(), &first).unwrap(),
        p,
        "idempotent"
    );
    let records = compare::history::load(dir.path()).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].metrics[&k.metric("p50_ms")], 1.0);
    assert_eq!(records[0].git_commit.as_deref(), Some("0123456789abcdef"));
    let md = compare::history::render_trend_markdown(dir.path()).unwrap();
    let row = md
        .lines()
        .find(|l| l.contains(&k.metric("p50_ms")))
        .unwrap();
    assert!(row.contains("| 1.0000 | 1.5000 | +50.0% |"), "{row}");
    assert!(md.contains("`01234567`"));
}

#[test]
fn baseline_from_several_runs_takes_the_median_and_widens_by_the_spread() {
    let k = key("tile_ops.tile_unpack", "cpu");
    let runs: Vec<_> = [1.0, 1.1, 2.0]
        .iter()
        .map(|&ms| run(vec![ok_case(k.clone(), &[ms])]))
        .collect();
    let opts = TemplateOptions {
        ratio: Some(0.9),
        abs_ms: Some(0.0),
        stats: vec!["p50_ms".into()],
        notes: None,
    };
    let emitted = compare::emit_template_from_runs(&runs, &opts);
    let m = emitted.baseline.metrics[&k.metric("p50_ms")];
    assert_eq!(m.value_ms, 1.1, "the median run");
    // The allowed maximum is 1.9 times the slowest run (2.0 ms): 3.8 ms.
    let allowed = m.value_ms * (1.0 + m.max_regression_ratio) + m.max_regression_abs_ms;
    assert!((allowed - 3.8).abs() < 1e-9, "{allowed}");
    assert!(
        emitted
            .baseline
            .baseline_notes
            .contains("Widened by the spread between runs")
    );
}
