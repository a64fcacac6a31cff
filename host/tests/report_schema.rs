//! The report files apex-host writes match the JSON Schemas in `docs/schemas/`: a run's worth of
//! real `CaseResult`s (every status, CPU and CUDA shapes) goes through `report::RunWriter`, and
//! every file it writes is validated; broken documents must fail the same schemas.

use apex_host::model::{
    AccuracyBlock, CaseKey, CaseResult, CaseStatus, EnergyBlock, FigureBlock, KernelInfo,
    ModeTiming, Outliers, ParamInfo, ParamMap, ProtocolInfo, Resources, RunSummary, SUITE_NAME,
    SUMMARY_SCHEMA_VERSION, Summary, WorkBlock,
};
use apex_host::report::{self, RunWriter};
use apex_plugin_api::{Backend, Precision};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn schema_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/schemas")
        .join(name)
}

struct Validator {
    schemas: boon::Schemas,
    compiler: boon::Compiler,
}

impl Validator {
    fn new() -> Self {
        Self {
            schemas: boon::Schemas::new(),
            compiler: boon::Compiler::new(),
        }
    }

    /// Validates `doc` against `schema` (a file in docs/schemas, optionally with a `#` pointer).
    fn check(&mut self, schema: &str, doc: &Value) -> Result<(), String> {
        let (file, frag) = schema.split_once('#').unwrap_or((schema, ""));
        let mut loc = schema_path(file).display().to_string();
        if !frag.is_empty() {
            loc = format!("{loc}#{frag}");
        }
        let idx = self
            .compiler
            .compile(&loc, &mut self.schemas)
            .unwrap_or_else(|e| panic!("schema `{schema}` does not compile: {e:#}"));
        self.schemas
            .validate(doc, idx)
            .map_err(|e| format!("{e:#}"))
    }
}

fn stats(p50: f64, cv: f64) -> Summary {
    Summary {
        n: 40,
        p50_ms: p50,
        p90_ms: p50 * 1.04,
        p95_ms: p50 * 1.06,
        p99_ms: p50 * 1.1,
        mean_ms: p50 * 1.01,
        std_ms: p50 * cv,
        min_ms: p50 * 0.98,
        max_ms: p50 * 1.3,
        cv,
        iqr_ms: p50 * 0.02,
        median_ci_low_ms: p50 * 0.995,
        median_ci_high_ms: p50 * 1.005,
        ci_level: 0.95,
        outliers: Outliers {
            high_severe: 2,
            ..Outliers::default()
        },
    }
}

fn key(kernel: &str, backend: &str, precision: &str, tile: i64) -> CaseKey {
    let mut p = ParamMap::new();
    p.insert("tile_size".into(), tile.into());
    p.insert("mode".into(), "blend".into());
    CaseKey::new(kernel, backend, precision, &p)
}

fn accuracy(passed: bool) -> AccuracyBlock {
    AccuracyBlock {
        passed,
        elements: 2_097_152,
        rmse: if passed { 3.1e-5 } else { 0.2 },
        max_abs_error: if passed { 9.7e-4 } else { 1.5 },
        max_rel_error: if passed { 2.0e-3 } else { 0.9 },
        mismatch_ratio: if passed { 0.0 } else { 0.31 },
        non_finite: 0,
        tolerance: BTreeMap::from([
            ("atol".into(), 1e-3),
            ("rtol".into(), 1e-2),
            ("rmse".into(), 1e-3),
            ("max_mismatch_ratio".into(), 0.0),
        ]),
        note: None,
    }
}

fn measured(key: CaseKey, p50: f64, status: CaseStatus, save_samples: bool) -> CaseResult {
    let cuda = key.backend == "cuda";
    let work = WorkBlock {
        bytes_read: 4 << 20,
        bytes_written: 4 << 20,
        flops: 0.0,
        items: 256.0,
        unit: "tiles".into(),
    };
    let mut timing = BTreeMap::new();
    if cuda {
        let cold = ModeTiming {
            calls_per_sample: 1,
            graph: false,
            cache: None,
            buffer_sets: None,
            short_holds: None,
            stats: stats(p50 * 2.5, 0.03),
            samples_ms: save_samples.then(|| vec![p50 * 2.5; 40]),
            samples_per_process: None,
        };
        let batch = ModeTiming {
            calls_per_sample: 200,
            graph: true,
            cache: Some("dram_cold".into()),
            buffer_sets: Some(7),
            short_holds: Some(2),
            stats: stats(p50, 0.01),
            samples_ms: save_samples.then(|| vec![p50; 40]),
            samples_per_process: None,
        };
        timing.insert("cold".to_string(), cold);
        timing.insert("batch".to_string(), batch);
    } else {
        let cpu = ModeTiming {
            calls_per_sample: 8,
            graph: false,
            cache: None,
            buffer_sets: None,
            short_holds: None,
            stats: stats(p50, 0.07),
            samples_ms: save_samples.then(|| vec![p50; 40]),
            samples_per_process: None,
        };
        timing.insert("cpu".to_string(), cpu);
    }
    let resources = if cuda {
        Resources {
            peak_rss_mb: None,
            peak_device_memory_mb: Some(72.0),
            energy: Some(EnergyBlock {
                energy_per_call_mj: Some(0.4),
                energy_method: Some("power_readings".into()),
                energy_unavailable: None,
                mean_power_w: Some(250.5),
                sm_clock_mhz: Some(1755),
                throttle_reasons: vec!["sw_power_cap".into()],
                throttled_samples: 5,
            }),
        }
    } else {
        Resources {
            peak_rss_mb: Some(48.5),
            ..Resources::default()
        }
    };
    CaseResult {
        id: key.id(),
        plugin: "tile-ops".into(),
        status,
        reason: None,
        headline: Some(if cuda { "batch" } else { "cpu" }.into()),
        p50_ms: Some(p50),
        p95_ms: Some(p50 * 1.06),
        peak_memory_mb: resources.peak_device_memory_mb.or(resources.peak_rss_mb),
        throughput: Some(report::throughput(
            &work,
            p50,
            cuda.then_some(report::BandwidthLines {
                copy: 3350.0,
                add: Some(3400.0),
                read: Some(3500.0),
            }),
        )),
        work: Some(work),
        accuracy: Some(accuracy(status == CaseStatus::Ok)),
        figures: BTreeMap::from([
            (
                "selected_l0_per_call".to_string(),
                FigureBlock::from_values("tiles", &[8.0]),
            ),
            (
                "h2d_ms".to_string(),
                FigureBlock::from_values("ms", &[0.011, 0.012, 0.010, 0.013]),
            ),
        ]),
        notes: vec![
            "* GPU compute time is unstable, with coefficient of variance = 2.1500%.".to_string(),
        ],
        timing,
        resources,
        protocol: Some(ProtocolInfo {
            warmup_calls: 10,
            stopped_by: if cuda { "converged" } else { "fixed" }.into(),
            measure_time_s: 0.75,
            worker_start_ms: 41.0,
            seed: 1337,
            processes: 1,
            phases_s: [("setup", 0.2), ("batch", 0.5), ("verify", 0.05)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            launch_floor_us: cuda.then_some(3.1),
            worker_case: u32::from(cuda) * 2,
        }),
        key,
        ran_on: Default::default(),
        anchors: Vec::new(),
    }
}

fn cases() -> Vec<CaseResult> {
    vec![
        measured(
            key("tile_ops.tile_pack", "cpu", "fp32", 8),
            1.25,
            CaseStatus::Ok,
            true,
        ),
        measured(
            key("tile_ops.tile_pack", "cuda", "fp16", 8),
            0.021,
            CaseStatus::Ok,
            false,
        ),
        measured(
            key("tile_ops.tile_pack", "cpu", "fp32", 16),
            0.9,
            CaseStatus::FailedAccuracy,
            false,
        ),
        CaseResult::without_measurements(
            key("tile_ops.tile_unpack", "cuda", "fp16", 8),
            "tile-ops",
            CaseStatus::Skipped,
            "cuda_unavailable: libcuda.so.1 not found".into(),
        ),
        CaseResult::without_measurements(
            key("tile_ops.tile_unpack", "cpu", "fp32", 8),
            "tile-ops",
            CaseStatus::Failed,
            "timeout: worker exceeded 120 s".into(),
        ),
    ]
}

fn summary(env: Value) -> RunSummary {
    let cases = cases();
    let mut counts = BTreeMap::new();
    for c in &cases {
        *counts.entry(c.status.as_str().to_string()).or_insert(0) += 1;
    }
    RunSummary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        suite: SUITE_NAME.into(),
        timestamp_utc: report::env::timestamp_utc(),
        environment: env,
        config: json!({"seed": 1337, "backends": ["cpu", "cuda"], "iters": null}),
        status: RunSummary::status_of(&cases).into(),
        counts,
        time_accounting: Some(apex_host::model::TimeAccounting::of(4.0, &cases)),
        plan: None,
        anchors: None,
        benchmarks: cases.into_iter().map(|c| (c.id.clone(), c)).collect(),
    }
}

fn manifest() -> Value {
    let info = KernelInfo {
        id: "tile_ops.tile_pack".into(),
        description: "Gather selected tiles into a packed buffer".into(),
        backends: vec![Backend::Cpu, Backend::Cuda],
        precisions: vec![Precision::Fp32, Precision::Fp16],
        params: vec![ParamInfo {
            name: "tile_size".into(),
            default: json!(8),
            description: "tile edge".into(),
        }],
        tolerances: BTreeMap::from([(
            "fp16".into(),
            BTreeMap::from([("atol".into(), 1e-3), ("rtol".into(), 1e-2)]),
        )]),
        graph_capturable: true,
        plugin: "tile-ops".into(),
        library: "target/release/libtile_ops.so".into(),
        crate_dir: None,
    };
    // The shape of `discovery::Registry::manifest()`.
    json!({
        "schema_version": 1,
        "plugins": [{"name": "tile-ops", "version": "0.1.0",
                     "library": "target/release/libtile_ops.so", "crate_dir": "plugins/tile-ops",
                     "bench_yaml": "plugins/tile-ops/bench.yaml", "load_ms": 3.5, "kernels": [info]}],
        "failures": [{"path": "target/release/libnot_a_plugin.so",
                      "reason": "not an apex plugin: symbol `_apex_plugin_root` not found"}],
        "scanned_paths": ["plugins", "target/release"],
    })
}

/// Anchor rows of every kind: a time (µs, ms), an error, one that matches no case.
fn anchor_rows() -> Vec<Value> {
    let row = |precision: &str, backend: &str| {
        json!({"kernel": "tile_ops.tile_pack", "impl": "torch_compile", "params": {"tile_size": 8},
               "precision": precision, "backend": backend, "us_per_call": 30.0, "gbps": 900.0,
               "device": "NVIDIA H100", "cache": "l2_hot", "note": "graph replay", "cold_ms": 0.04})
    };
    let mut ms = row("fp32", "cpu");
    ms.as_object_mut().unwrap().remove("us_per_call");
    ms["ms"] = json!(1.5);
    let mut failed = row("fp16", "cuda");
    failed["us_per_call"] = Value::Null;
    failed["error"] = json!("RuntimeError: graph capture failed");
    let mut elsewhere = row("fp16", "cuda");
    elsewhere["params"] = json!({"tile_size": 32});
    vec![row("fp16", "cuda"), ms, failed, elsewhere]
}

fn attach_anchors(summary: &mut RunSummary, rows: &[Value]) {
    let set = apex_host::anchors::AnchorSet {
        files: vec![apex_host::model::AnchorFile {
            path: "anchors.jsonl".into(),
            sha256: "0".repeat(64),
            rows: rows.len(),
        }],
        rows: rows
            .iter()
            .enumerate()
            .map(|(i, v)| apex_host::anchors::SourcedRow {
                row: apex_host::anchors::AnchorRow::from_json(v).unwrap(),
                source: format!("anchors.jsonl:{}", i + 1),
            })
            .collect(),
    };
    apex_host::anchors::attach(summary, &set);
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn every_file_of_a_run_matches_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports");
    let env = report::env::collect(json!({
        "cuda": {"available": false, "reason": "libcuda.so.1 not found", "device_name": null},
        "plugins": [{"name": "tile-ops", "version": "0.1.0"}],
    }));
    let mut summary = summary(env.clone());
    let anchor_rows = anchor_rows();
    let mut v = Validator::new();
    for row in &anchor_rows {
        v.check("anchor_result.schema.json", row)
            .unwrap_or_else(|e| panic!("anchor row: {e}\n{row}"));
    }
    attach_anchors(&mut summary, &anchor_rows);
    assert_eq!(summary.anchors.as_ref().unwrap().unmatched.len(), 1);

    let mut writer = RunWriter::begin(&out, "20260101T000000Z-1").unwrap();
    for case in summary.benchmarks.values() {
        writer.record(case).unwrap();
    }
    let jsonl = std::fs::read_to_string(writer.partial_dir().join("cases.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), summary.benchmarks.len());
    for line in jsonl.lines() {
        let doc: Value = serde_json::from_str(line).unwrap();
        v.check("case.schema.json#/$defs/case_result", &doc)
            .unwrap_or_else(|e| panic!("cases.jsonl line: {e}\n{line}"));
    }

    let files = writer.finish(&summary, &manifest(), &env).unwrap();
    let mut kernel_files = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let schema = match name.as_str() {
            "summary.json" => "summary.schema.json",
            "env.json" => "env.schema.json",
            "kernel_manifest.json" => "kernel_manifest.schema.json",
            "summary.md" => continue,
            _ => {
                kernel_files += 1;
                "case.schema.json"
            }
        };
        v.check(schema, &read_json(f))
            .unwrap_or_else(|e| panic!("{} does not match {schema}:\n{e}", f.display()));
    }
    assert_eq!(kernel_files, 2, "one file per kernel id: {files:?}");
}

type Breakage = (&'static str, Box<dyn Fn(&mut Value)>);

#[test]
fn the_schemas_reject_broken_documents() {
    let mut v = Validator::new();
    let good = serde_json::to_value(summary(report::env::collect(Value::Null))).unwrap();
    v.check("summary.schema.json", &good).unwrap();
    // An interrupted run (issue 11): its own status and the count of the cases that did not run.
    let mut interrupted = good.clone();
    interrupted["status"] = json!("interrupted");
    interrupted["counts"]["not_run"] = json!(2);
    v.check("summary.schema.json", &interrupted).unwrap();

    const OK: &str = "tile_ops.tile_pack/cpu/fp32/mode=blend,tile_size=8";
    const SKIP: &str = "tile_ops.tile_unpack/cuda/fp16/mode=blend,tile_size=8";
    let broken: Vec<Breakage> = vec![
        (
            "unknown status",
            Box::new(|s| s["status"] = json!("mostly_ok")),
        ),
        (
            "ok case without p50",
            Box::new(|s| {
                s["benchmarks"][OK]
                    .as_object_mut()
                    .unwrap()
                    .remove("p50_ms");
            }),
        ),
        (
            "skipped case without reason",
            Box::new(|s| {
                s["benchmarks"][SKIP]
                    .as_object_mut()
                    .unwrap()
                    .remove("reason");
            }),
        ),
        (
            "NaN written as null",
            Box::new(|s| s["benchmarks"][OK]["timing"]["cpu"]["stats"]["cv"] = Value::Null),
        ),
        (
            "unknown timing mode",
            Box::new(|s| {
                let cpu = s["benchmarks"][OK]["timing"]["cpu"].clone();
                s["benchmarks"][OK]["timing"]["warm"] = cpu;
            }),
        ),
        (
            "ok case with failed accuracy",
            Box::new(|s| s["benchmarks"][OK]["accuracy"]["passed"] = json!(false)),
        ),
        (
            "timestamp not in UTC",
            Box::new(|s| s["timestamp_utc"] = json!("2026-01-01T00:00:00+02:00")),
        ),
        ("unknown top-level key", Box::new(|s| s["extra"] = json!(1))),
    ];
    for (what, break_it) in broken {
        let mut doc = good.clone();
        break_it(&mut doc);
        assert!(
            v.check("summary.schema.json", &doc).is_err(),
            "summary.schema.json accepted a document with: {what}"
        );
    }

    let mut m = manifest();
    m["plugins"][0]["kernels"][0]["backends"] = json!(["rocm"]);
    assert!(v.check("kernel_manifest.schema.json", &m).is_err());
    let mut e = report::env::collect(Value::Null);
    e.as_object_mut().unwrap().remove("git");
    assert!(v.check("env.schema.json", &e).is_err());
}

#[test]
fn case_and_summary_schemas_share_their_definitions() {
    let summary = read_json(&schema_path("summary.schema.json"));
    let case = read_json(&schema_path("case.schema.json"));
    assert_eq!(
        summary["$defs"], case["$defs"],
        "docs/schemas/case.schema.json `$defs` must stay identical to summary.schema.json's"
    );
}

#[test]
fn the_anchor_schema_and_the_host_reject_the_same_rows() {
    let mut v = Validator::new();
    let good = anchor_rows()[0].clone();
    let broken: Vec<Breakage> = vec![
        (
            "no kernel",
            Box::new(|r| drop(r.as_object_mut().unwrap().remove("kernel"))),
        ),
        (
            "no params",
            Box::new(|r| drop(r.as_object_mut().unwrap().remove("params"))),
        ),
        (
            "no time and no error",
            Box::new(|r| r["us_per_call"] = Value::Null),
        ),
        ("fp64", Box::new(|r| r["precision"] = json!("fp64"))),
        ("gpu", Box::new(|r| r["backend"] = json!("gpu"))),
        (
            "negative time",
            Box::new(|r| r["us_per_call"] = json!(-2.0)),
        ),
        (
            "nested param",
            Box::new(|r| r["params"]["tile_size"] = json!({"t": 8})),
        ),
        ("unknown cache", Box::new(|r| r["cache"] = json!("warm"))),
    ];
    for (what, breaks) in &broken {
        let mut row = good.clone();
        breaks(&mut row);
        assert!(
            v.check("anchor_result.schema.json", &row).is_err(),
            "the schema accepts a row with {what}"
        );
        assert!(
            apex_host::anchors::AnchorRow::from_json(&row).is_err(),
            "the host accepts a row with {what}"
        );
    }
}
