//! The seeds' formats on the real binary (issue 17, item 2): a CPU run writes `--format
//! apex-x-gpu,apex-x-cpu,quasim,comprehensive`, every file validates against its schema in
//! `docs/schemas/`, the numbers are the cases' numbers, and a seed-style baseline gates the run
//! through the matching export: seed 001's flat CPU keys (made from this run's own perf_cpu.json)
//! and seed 000's 12 dotted GPU keys (the seed's file, `fixtures/seed/perf_baseline_gpu.json`),
//! whose keys the CPU run cannot fill and which therefore fail by name.

mod support;

use serde_json::{Value, json};
use support::{apex, apex_bare as bare, read_json};

fn validate(schema: &str, doc: &Value) {
    if let Err(e) = support::validate_schema(schema, doc) {
        panic!("the export does not match {schema}: {e}");
    }
}

#[test]
fn seed_formats_are_written_validated_and_gate_with_seed_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--iters",
        "3",
        "--precision",
        "fp32",
        "--filter",
        "tile_ops.tile_pack/cpu/fp32/*",
        "--filter",
        "tile_ops.fusion_gate/cpu/fp32/*",
        "--filter",
        "nn_ops.gelu/cpu/fp32/*,dim=8,*",
        "--format",
        "apex-x-gpu,apex-x-cpu",
        "--format",
        "quasim,comprehensive",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let summary = read_json(&out_dir.join("summary.json"));
    let cases = summary["benchmarks"].as_object().unwrap();
    assert_eq!(cases.len(), 3, "{:?}", cases.keys());
    let pack = support::case(&summary, "tile_ops.tile_pack/cpu/fp32/");
    assert_eq!(pack["status"], "ok");

    // apex-x-cpu: the flat metrics, from the cases; the keys no case fills say why.
    let cpu = read_json(&out_dir.join("perf_cpu.json"));
    validate("perf_cpu.schema.json", &cpu);
    assert_eq!(cpu["metrics"]["tile_pack_p50_ms"], pack["p50_ms"]);
    let gate_case = support::case(&summary, "tile_ops.fusion_gate/cpu/fp32/");
    assert_eq!(cpu["metrics"]["fusion_gate_p50_ms"], gate_case["p50_ms"]);
    assert!(cpu["metrics"]["tile_unpack_p50_ms"].is_null());
    assert!(
        cpu["unavailable"]["tile_unpack_p50_ms"]
            .as_str()
            .unwrap()
            .contains("no case tile_ops.tile_unpack/cpu/fp32")
    );

    // apex-x-gpu: no CUDA case ran, so the report is `skipped` with the reason, as the seed's.
    let gpu = read_json(&out_dir.join("perf_gpu.json"));
    validate("perf_gpu.schema.json", &gpu);
    assert_eq!(gpu["status"], "skipped");
    assert!(gpu["reason"].is_string());
    let md = std::fs::read_to_string(out_dir.join("perf_gpu.md")).unwrap();
    assert!(md.starts_with("# Apex-X GPU Benchmark") && md.contains("- reason: "));

    // quasim: one per-kernel report per case.
    let quasim = read_json(&out_dir.join("quasim.json"));
    validate("quasim.schema.json", &quasim);
    let reports = quasim.as_array().unwrap();
    assert_eq!(reports.len(), cases.len());
    let r = reports.iter().find(|r| r["case_id"] == pack["id"]).unwrap();
    assert_eq!(r["timing"]["latency_ms_p50"], pack["p50_ms"]);
    assert_eq!(r["problem_size"]["kmax"], 32);

    // comprehensive: the nn_ops row.
    let rows = read_json(&out_dir.join("comprehensive.json"));
    validate("comprehensive.schema.json", &rows);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["operation"], "GELU");
    assert_eq!(rows[0]["implementation"], "CPU");
    assert_eq!(rows[0]["tensor_dimension"], 8);

    let manifest = std::fs::read_to_string(out_dir.join("replay_manifest.json")).unwrap();
    for f in [
        "perf_gpu.json",
        "perf_cpu.json",
        "quasim.json",
        "comprehensive.json",
    ] {
        assert!(manifest.contains(f), "{f} is hashed in the replay manifest");
    }

    // A seed-001 CPU baseline made from this run's own perf_cpu.json: the keys the run fills
    // pass, the keys it cannot fill are missing by name, and the gate fails (exit 2).
    let seed_cpu = dir.path().join("perf_baseline_cpu.json");
    let metric = |v: &Value| json!({"value_ms": v, "max_regression_ratio": 0.75, "max_regression_abs_ms": 2.0});
    std::fs::write(
        &seed_cpu,
        json!({
            "schema_version": 1,
            "suite": "apex_x_cpu_perf_regression",
            "baseline_notes": "from this test's own run",
            "metrics": {
                "tile_pack_p50_ms": metric(&cpu["metrics"]["tile_pack_p50_ms"]),
                "fusion_gate_p50_ms": metric(&cpu["metrics"]["fusion_gate_p50_ms"]),
                "infer_p50_ms": metric(&json!(0.25)),
            }
        })
        .to_string(),
    )
    .unwrap();
    let cmp_dir = dir.path().join("cmp-cpu");
    let out = bare([
        "compare",
        out_dir.join("summary.json").to_str().unwrap(),
        seed_cpu.to_str().unwrap(),
        "--output-dir",
        cmp_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let cmp = read_json(&cmp_dir.join("compare_summary.json"));
    let check = |k: &str| {
        cmp["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == k)
            .unwrap_or_else(|| panic!("no check {k}: {cmp}"))
            .clone()
    };
    assert_eq!(check("tile_pack_p50_ms")["status"], "pass");
    assert_eq!(
        check("tile_pack_p50_ms")["current_ms"],
        cpu["metrics"]["tile_pack_p50_ms"]
    );
    assert_eq!(check("fusion_gate_p50_ms")["status"], "pass");
    let infer = check("infer_p50_ms");
    assert_eq!(infer["status"], "missing");
    assert!(
        infer["reason"].as_str().unwrap().contains("ff_model.infer"),
        "{infer}"
    );

    // Seed 000's GPU baseline, its 12 dotted keys: against this CPU run the export is
    // `skipped`, so the status check fails first and every key is named.
    let seed_gpu = support::root().join("host/tests/fixtures/seed/perf_baseline_gpu.json");
    let cmp_dir = dir.path().join("cmp-gpu");
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--iters",
        "3",
        "--precision",
        "fp32",
        "--filter",
        "tile_ops.tile_pack/cpu/fp32/*",
        "--compare",
        seed_gpu.to_str().unwrap(),
        "--output-dir",
        cmp_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let cmp = read_json(&cmp_dir.join("compare_summary.json"));
    let checks = cmp["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 13, "{cmp}");
    assert_eq!(checks[0]["metric"], "__status__");
    assert_eq!(checks[0]["current"], "skipped");
    for c in &checks[1..] {
        assert!(c["metric"].as_str().unwrap().starts_with("benchmarks."));
        assert_eq!(c["status"], "missing", "{c}");
        assert!(
            c["reason"].as_str().unwrap().starts_with("apex-x-gpu: "),
            "{c}"
        );
    }

    // The Python check of the GPU export (benches/gate/check_apex_x_gpu.py, stdlib only): the
    // skipped report has none of the seed's benchmark fields, so it fails and says why.
    let script = support::root().join("benches/gate/check_apex_x_gpu.py");
    if let Ok(out) = std::process::Command::new("python3")
        .arg(&script)
        .arg(&out_dir)
        .output()
    {
        assert_eq!(out.status.code(), Some(1), "{}", support::stdout(&out));
        assert!(support::stdout(&out).contains("status is `skipped`"));
    }
}
