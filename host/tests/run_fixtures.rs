//! `apex-host run` on the CPU against the misbehaving fixtures and a healthy plugin: each case
//! gets the right status and reason, the healthy cases are unaffected, every report file is
//! written, and the exported raw samples reproduce the reported quantiles.

mod support;

use support::{apex, case, read_json};

fn run_suite(out_dir: &std::path::Path) -> std::process::Output {
    apex(&[
        "run",
        "--backends",
        "cpu",
        "--fixtures",
        "--quick",
        "--save-samples",
        "--timeout",
        "4",
        "--filter",
        "fixtures.segfault",
        "--filter",
        "fixtures.abort",
        "--filter",
        "fixtures.panic",
        "--filter",
        "fixtures.hang",
        "--filter",
        "fixtures.wrong_result",
        "--filter",
        "fixtures.nan_output",
        "--filter",
        "fixtures.stale_output",
        "--filter",
        "fixtures.bad_figure",
        "--filter",
        "fixtures.known_duration",
        "--filter",
        "example.saxpy",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ])
}

#[test]
fn each_fixture_gets_its_status_and_reason_and_healthy_cases_are_unaffected() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_suite(dir.path());
    assert_eq!(
        out.status.code(),
        Some(1),
        "some cases failed: exit 1\n{}",
        support::stderr(&out)
    );

    for file in [
        "env.json",
        "kernel_manifest.json",
        "summary.json",
        "summary.md",
        "replay_manifest.json",
    ] {
        assert!(dir.path().join(file).is_file(), "{file} written");
    }
    assert!(dir.path().join("kernels/fixtures.segfault.json").is_file());
    assert!(
        !dir.path().join(".partial").exists(),
        "the partial folder is removed after a finished run"
    );

    let s = read_json(&dir.path().join("summary.json"));
    let expect = [
        ("fixtures.segfault/", "failed", "killed by SIGSEGV"),
        ("fixtures.abort/", "failed", "killed by SIGABRT"),
        (
            "fixtures.panic/",
            "failed",
            "plugin panicked: fixture panicked in run()",
        ),
        ("fixtures.hang/", "failed", "timeout after 4 s"),
        (
            "fixtures.wrong_result/",
            "failed_accuracy",
            "output outside tolerance",
        ),
        ("fixtures.nan_output/", "failed_accuracy", "NaN or infinite"),
        // Correct for the inputs it was timed on; the check's fresh inputs expose the cache.
        (
            "fixtures.stale_output/",
            "failed_accuracy",
            "output outside tolerance",
        ),
        // A figure no report could key fails the case and names the figure.
        (
            "fixtures.bad_figure/",
            "failed",
            "figures: figure name `Bad Figure` is not snake_case",
        ),
    ];
    for (prefix, status, reason) in expect {
        let c = case(&s, prefix);
        assert_eq!(c["status"], status, "{prefix}: {c}");
        assert!(
            c["reason"].as_str().unwrap_or_default().contains(reason),
            "{prefix}: {}",
            c["reason"]
        );
        assert!(
            c.get("p50_ms").is_none(),
            "{prefix}: no headline timing for a case that is not ok"
        );
    }
    for prefix in [
        "fixtures.known_duration/",
        "example.saxpy/cpu/fp32/a=2.0,n=1048576",
    ] {
        let c = case(&s, prefix);
        assert_eq!(c["status"], "ok", "{prefix}: {c}");
        assert!(c["accuracy"]["passed"].as_bool().unwrap());
        assert!(c["p50_ms"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(s["status"], "failed");

    // Every file of the real run validates against its schema in docs/schemas/.
    for (file, schema) in [
        ("summary.json", "summary.schema.json"),
        ("env.json", "env.schema.json"),
        ("kernel_manifest.json", "kernel_manifest.schema.json"),
        ("kernels/fixtures.segfault.json", "case.schema.json"),
        ("kernels/example.saxpy.json", "case.schema.json"),
    ] {
        let doc = read_json(&dir.path().join(file));
        if let Err(e) = support::validate_schema(schema, &doc) {
            panic!("{file} does not validate against {schema}: {e}");
        }
    }
}

/// Linear interpolation between order statistics, written independently of `stats`.
fn type7(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

#[test]
fn quantiles_recomputed_from_the_exported_samples_match_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--save-samples",
        "--filter",
        "example.saxpy",
        "--output-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let s = read_json(&dir.path().join("summary.json"));
    let cpu = &case(&s, "example.saxpy/cpu/fp32/a=2.0,n=1048576")["timing"]["cpu"];
    let mut samples: Vec<f64> = cpu["samples_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    samples.sort_by(f64::total_cmp);
    assert!(samples.len() >= 10);
    for (key, q) in [
        ("p50_ms", 0.5),
        ("p90_ms", 0.9),
        ("p95_ms", 0.95),
        ("p99_ms", 0.99),
    ] {
        let reported = cpu["stats"][key].as_f64().unwrap();
        let recomputed = type7(&samples, q);
        assert!(
            (reported - recomputed).abs() <= 1e-12 * recomputed.abs(),
            "{key}: {reported} vs {recomputed}"
        );
    }
}
