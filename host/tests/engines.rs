//! Engine benchmarks end to end (issue 16, docs/engines.md): the real `apex-host` and the real
//! `trt_engine` plugin on ONNX Runtime's CPU provider. Engine cases are `ok` with trtexec's
//! fields; the seed's skip reasons reach the report; a corrupt model is `failed` with the
//! runtime's message while the other engines go on; a model made wrong is `failed_accuracy`;
//! the shape sweep gives one case per `--shape-case` with the seed's labels.
//!
//! The tests that run a model need ONNX Runtime (`ORT_DYLIB_PATH`): `.ci/run` installs it and
//! sets `APEX_REQUIRE_ORT=1`, so there a missing runtime fails them; elsewhere they say they were
//! skipped. The skip-reason tests need nothing.

mod support;

use support::{case, command, read_json, stderr, stdout, validate_schema};

#[expect(
    clippy::print_stderr,
    reason = "a test skipped for a missing runtime must say so, not pass silently"
)]
fn ort_here() -> bool {
    let found =
        std::env::var_os("ORT_DYLIB_PATH").is_some_and(|p| std::path::Path::new(&p).is_file());
    if !found {
        assert!(
            std::env::var_os("APEX_REQUIRE_ORT").is_none(),
            "APEX_REQUIRE_ORT is set, but ORT_DYLIB_PATH names no file"
        );
        eprintln!("skipped: ORT_DYLIB_PATH names no ONNX Runtime library");
    }
    found
}

/// `apex-host run --quick --output-dir OUT ARGS`, the summary and the exit code.
fn run(args: &[&str], env: &[(&str, &str)]) -> (serde_json::Value, Option<i32>, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = command(
        &[
            &[
                "run",
                "--quick",
                "--output-dir",
                out.path().to_str().unwrap(),
            ],
            args,
        ]
        .concat(),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("apex-host runs");
    let summary_path = out.path().join("summary.json");
    assert!(
        summary_path.is_file(),
        "no summary.json\nstdout:\n{}\nstderr:\n{}",
        stdout(&o),
        stderr(&o)
    );
    (read_json(&summary_path), o.status.code(), out)
}

/// A suite folder holding one file.
fn config(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("10-engines.yaml"), yaml).unwrap();
    dir
}

fn models(name: &str) -> String {
    support::root()
        .join("plugins/trt_engine/models")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn onnx_runtime_engine_cases_are_ok_with_trtexecs_fields() {
    if !ort_here() {
        return;
    }
    let (summary, code, out) = run(
        &["--backends", "cpu", "--filter", "trt_engine.engine/*"],
        &[],
    );
    assert_eq!(code, Some(0));
    let cases = summary["benchmarks"].as_object().unwrap();
    assert_eq!(cases.len(), 3, "{:?}", cases.keys().collect::<Vec<_>>());
    for (id, c) in cases {
        assert_eq!(c["status"], "ok", "{id}: {}", c["reason"]);
        assert!(c["accuracy"]["passed"].as_bool().unwrap());
        let latency = &c["figures"]["latency_ms"];
        assert_eq!(latency["unit"], "ms");
        for stat in ["min", "max", "mean", "median", "p90", "p95", "p99"] {
            assert!(
                latency["series"][stat].as_f64().unwrap() > 0.0,
                "{id}: {stat}"
            );
        }
        let qps = c["figures"]["throughput_qps"]["value"].as_f64().unwrap();
        let wall = c["figures"]["total_host_walltime_s"]["value"]
            .as_f64()
            .unwrap();
        let queries = c["figures"]["queries"]["value"].as_f64().unwrap();
        assert!(
            (qps - queries / wall).abs() <= 1e-9 * qps,
            "{id}: qps = queries / walltime"
        );
        // No transfer is faked on the CPU: absent, and a note says why.
        assert!(c["figures"].get("h2d_ms").is_none(), "{id}");
        let notes: Vec<&str> = c["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("absent: Enqueue Time, H2D Latency")),
            "{notes:?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("CPUExecutionProvider")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("verified against: the f64 reference")),
            "{notes:?}"
        );
        // The batch dimension is named in bench.yaml: frames_per_s = batch / p50.
        let p50 = c["p50_ms"].as_f64().unwrap();
        let frames = c["throughput"]["frames_per_s"].as_f64().unwrap();
        let batch = c["work"]["items"].as_f64().unwrap();
        assert!(
            (frames - batch / (p50 / 1e3)).abs() <= 1e-6 * frames,
            "{id}"
        );
    }
    validate_schema("summary.schema.json", &summary).unwrap();
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(md.contains("## Kernel notes"), "{md}");
    assert!(md.contains("| latency_ms |"), "{md}");
}

#[test]
fn a_dynamic_dimension_without_a_shape_is_skipped_and_with_one_runs() {
    if !ort_here() {
        return;
    }
    let engine = [
        "--backends",
        "cpu",
        "--filter",
        "trt_engine.engine/*",
        "--trt-engine-path",
        "@models/mlp_dynamic.onnx",
    ];
    let (summary, code, _out) = run(&engine, &[]);
    assert_eq!(code, Some(0));
    let c = case(&summary, "trt_engine.engine/cpu/");
    assert_eq!(c["status"], "skipped");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("unresolved_tensor_shape:x (dims [-1, 32]"),
        "{reason}"
    );

    let with = [
        &engine[..],
        &["--trt-input-shape", "x=8x32", "--trt-batch-dim", "x:0"],
    ]
    .concat();
    let (summary, code, _out) = run(&with, &[]);
    assert_eq!(code, Some(0));
    let c = case(&summary, "trt_engine.engine/cpu/");
    assert_eq!(c["status"], "ok", "{}", c["reason"]);
    assert_eq!(c["accuracy"]["elements"], 8 * 16);
    assert_eq!(c["work"]["unit"], "frames");
    assert_eq!(c["work"]["items"], 8.0);
    // Without a reference the model is checked against the unoptimized session, and says so.
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("every graph optimization disabled"),
        "{notes}"
    );

    // Without --trt-batch-dim there is no frames_per_s: the batch dimension is never guessed.
    let no_batch = [&engine[..], &["--trt-input-shape", "x=8x32"]].concat();
    let (summary, _, _out) = run(&no_batch, &[]);
    let c = case(&summary, "trt_engine.engine/cpu/");
    assert!(
        c["throughput"].get("frames_per_s").is_none(),
        "{}",
        c["throughput"]
    );
    assert!(c["throughput"]["elements_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_shape_sweep_gives_one_case_per_shape_case_with_the_seeds_labels() {
    if !ort_here() {
        return;
    }
    let (summary, code, _out) = run(
        &[
            "--backends",
            "cpu",
            "--filter",
            "trt_engine.engine/*",
            "--trt-engine-path",
            "@models/mlp_dynamic.onnx",
            "--trt-input-shape",
            "x=4x32",
            "--shape-case",
            "x=2x32",
            "--shape-case",
            "x=16x32",
        ],
        &[],
    );
    assert_eq!(code, Some(0));
    let cases = summary["benchmarks"].as_object().unwrap();
    let mut labels: Vec<(String, String)> = cases
        .values()
        .map(|c| {
            assert_eq!(c["status"], "ok", "{}", c["reason"]);
            let p = &c["key"]["params"];
            (
                p["shape_case"].as_str().unwrap().to_string(),
                p["input_shapes"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    labels.sort();
    assert_eq!(
        labels,
        [
            ("case_001_2_32".to_string(), "x=2x32".to_string()),
            ("case_002_16_32".to_string(), "x=16x32".to_string()),
            ("default".to_string(), "x=4x32".to_string()),
        ]
    );
}

#[test]
fn a_corrupt_model_fails_with_the_runtimes_message_and_the_others_go_on() {
    if !ort_here() {
        return;
    }
    let suite = config(&format!(
        "- kernel: trt_engine.engine\n  problem_size: {{engine: \"{}\", reference: \"\", input_shapes: \"\", batch_dim: \"\"}}\n  backends: [cpu]\n- kernel: trt_engine.engine\n  problem_size: {{engine: \"{}\", reference: mlp, input_shapes: \"\", batch_dim: \"\"}}\n  backends: [cpu]\n- kernel: trt_engine.engine\n  problem_size: {{engine: \"{}\", reference: mlp, input_shapes: \"\", batch_dim: \"\"}}\n  backends: [cpu]\n",
        models("fixtures/corrupt.onnx"),
        models("fixtures/mlp_wrong.onnx"),
        models("mlp.onnx"),
    ));
    let (summary, code, _out) = run(
        &[
            "--filter",
            "trt_engine.engine/*",
            "--config-dir",
            suite.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, Some(1), "a failed case exits 1");
    let by_engine = |name: &str| {
        summary["benchmarks"]
            .as_object()
            .unwrap()
            .values()
            .find(|c| {
                c["key"]["params"]["engine"]
                    .as_str()
                    .unwrap()
                    .ends_with(name)
            })
            .unwrap_or_else(|| panic!("a case for {name}"))
            .clone()
    };
    let c = by_engine("fixtures/corrupt.onnx");
    assert_eq!(c["status"], "failed");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains("ONNX Runtime refused") && reason.contains("Protobuf parsing failed"),
        "{reason}"
    );
    let wrong = by_engine("fixtures/mlp_wrong.onnx");
    assert_eq!(wrong["status"], "failed_accuracy");
    assert!(
        wrong["reason"]
            .as_str()
            .unwrap()
            .contains("f64 reference `mlp`"),
        "{}",
        wrong["reason"]
    );
    assert!(
        wrong.get("p50_ms").is_none(),
        "a wrong output's timing is never presented as valid"
    );
    assert_eq!(by_engine("models/mlp.onnx")["status"], "ok");
}

#[test]
fn a_missing_engine_file_is_skipped_with_its_path() {
    let (summary, code, _out) = run(
        &[
            "--backends",
            "cpu",
            "--filter",
            "trt_engine.engine/*",
            "--trt-engine-path",
            "/nonexistent/apex_x.onnx",
        ],
        &[],
    );
    assert_eq!(code, Some(0));
    let c = case(&summary, "trt_engine.engine/cpu/");
    assert_eq!(c["status"], "skipped");
    assert_eq!(c["reason"], "engine_not_found:/nonexistent/apex_x.onnx");
}

#[test]
fn no_engine_path_is_skipped_first() {
    let suite = config(
        "kernel: trt_engine.engine\nproblem_size: {engine: \"\", reference: \"\", input_shapes: \"\", batch_dim: \"\"}\nbackends: [cpu]\n",
    );
    let (summary, _, _out) = run(
        &[
            "--filter",
            "trt_engine.engine/*",
            "--config-dir",
            suite.path().to_str().unwrap(),
        ],
        &[("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so.1.32.0")],
    );
    let c = case(&summary, "trt_engine.engine/cpu/");
    assert_eq!(c["status"], "skipped");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .starts_with("missing_trt_engine_path"),
        "{}",
        c["reason"]
    );
}

#[test]
fn a_missing_onnx_runtime_is_skipped_naming_the_library_and_where_it_looked() {
    let engine = [
        "--backends",
        "cpu",
        "--filter",
        "trt_engine.engine/*",
        "--trt-engine-path",
        "@models/mlp.onnx",
    ];
    let (summary, code, _out) = run(
        &engine,
        &[("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so.1.32.0")],
    );
    assert_eq!(code, Some(0));
    let reason = case(&summary, "trt_engine.engine/cpu/")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.starts_with("onnxruntime_unavailable: libonnxruntime not found; looked in: ORT_DYLIB_PATH=/nonexistent/libonnxruntime.so.1.32.0 (no such file)"),
        "{reason}"
    );
    // Unset: the loader's names and path.
    let (summary, _, _out) = run(
        &engine,
        &[
            ("ORT_DYLIB_PATH", ""),
            ("LD_LIBRARY_PATH", "/nonexistent/lib"),
        ],
    );
    let reason = case(&summary, "trt_engine.engine/cpu/")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    for part in [
        "ORT_DYLIB_PATH (unset)",
        "dlopen(libonnxruntime.so): ",
        "dlopen(libonnxruntime.so.1): ",
        "LD_LIBRARY_PATH=/nonexistent/lib",
    ] {
        assert!(reason.contains(part), "{part} in {reason}");
    }
}

#[test]
fn shape_flags_without_an_engine_are_a_usage_error() {
    let o = command(&["run", "--trt-input-shape", "x=1x2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    assert!(stderr(&o).contains("--trt-engine-path"), "{}", stderr(&o));
}

#[test]
fn discover_says_for_each_engine_backend_whether_it_is_available() {
    let o = command(&["discover", "--verbose"])
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let text = stdout(&o);
    assert!(text.contains("engine backends (trt_engine):"), "{text}");
    for line in [
        "  TensorRT ",
        "  ONNX Runtime CPU   unavailable: libonnxruntime not found; looked in: dlopen(/nonexistent/libonnxruntime.so)",
        "  ONNX Runtime CUDA  unavailable:",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    let json = command(&["discover", "--json"])
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = doc["engine_backends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["TensorRT", "ONNX Runtime CPU", "ONNX Runtime CUDA"]);
    assert_eq!(doc["engine_backends"][1]["available"], false);
}

#[test]
fn the_seeds_trt_wrapper_baseline_gates_the_sweep_by_label() {
    if !ort_here() {
        return;
    }
    let baseline_dir = tempfile::tempdir().unwrap();
    let write = |name: &str, value_ms: f64| {
        let path = baseline_dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                r#"{{"schema_version": 1, "suite": "apex_x_trt_engine_shape_sweep", "baseline_notes": "test",
                    "required_status": "ok",
                    "metrics": {{"case.default.p50_ms": {{"value_ms": {value_ms}, "max_regression_ratio": 0.0, "max_regression_abs_ms": 0.0}},
                                 "case.case_001_16_32.p95_ms": {{"value_ms": 1000.0}}}}}}"#
            ),
        )
        .unwrap();
        path
    };
    let sweep = [
        "--backends",
        "cpu",
        "--filter",
        "trt_engine.engine/*",
        "--trt-engine-path",
        "@models/mlp_dynamic.onnx",
        "--trt-input-shape",
        "x=4x32",
        "--shape-case",
        "x=16x32",
    ];
    let generous = write("trt.json", 1000.0);
    let (_, code, out) = run(
        &[&sweep[..], &["--compare", generous.to_str().unwrap()]].concat(),
        &[],
    );
    assert_eq!(code, Some(0));
    let cmp = read_json(&out.path().join("compare_summary.json"));
    let checks = cmp["checks"].as_array().unwrap();
    let default = checks
        .iter()
        .find(|c| c["metric"] == "case.default.p50_ms")
        .unwrap();
    assert_eq!(default["status"], "pass", "{default}");
    // A value no run can meet fails the gate (exit 2): the key reached the case's number.
    let tight = write("tight.json", 1e-9);
    let (_, code, out) = run(
        &[&sweep[..], &["--compare", tight.to_str().unwrap()]].concat(),
        &[],
    );
    assert_eq!(code, Some(2));
    let cmp = read_json(&out.path().join("compare_summary.json"));
    let default = cmp["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "case.default.p50_ms")
        .unwrap()
        .clone();
    assert_eq!(default["status"], "fail", "{default}");
}
