//! `perf_gpu.json`: the environment and config blocks, the report's status, and the metric blocks
//! in the seed's nesting.

use serde_json::{Map, Value, json};

use super::SUITE;
use super::blocks::{BLOCKS, DISPATCH_SECTIONS, NO_TRT_PYTHON, block_case, metric_block};
use crate::model::{CaseStatus, RunSummary};

/// The fixed profile, the export's `config`: the parameter values its cases are selected at.
fn profile_config(summary: &RunSummary) -> Value {
    json!({
        "batch": 1, "channels": 128, "height": 128, "width": 128, "tile_size": 8, "kmax": 32,
        "steps": 256, "dtype": "fp16", "budget_b1": 16.0, "budget_b2": 8.0, "budget_total": 32.0,
        "warmup": summary.config.get("warmup").cloned().unwrap_or(Value::Null),
        "iters": summary.config.get("iters").cloned().unwrap_or(Value::Null),
        "seed": summary.config.get("seed").cloned().unwrap_or(Value::Null),
        "trt_engine_path": "", "trt_plugin_lib": "", "trt_input_shapes": [],
    })
}

/// The value at the dotted `path` of `root`, if there is one.
fn get_path<'a>(root: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let first = root.get(parts.next()?)?;
    parts.try_fold(first, |node, part| node.get(part))
}

/// Inserts `value` at the dotted `path` of `root`, creating objects on the way.
fn insert_path(root: &mut Map<String, Value>, path: &str, value: Value) {
    let mut parts = path.split('.').peekable();
    let mut node = root;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            node.insert(part.into(), value);
            return;
        }
        node = node
            .entry(part)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("the export's paths only nest objects");
    }
}

fn environment(summary: &RunSummary) -> Value {
    let env = &summary.environment;
    let cuda = &env["facts"]["cuda"];
    let host = &env["host"];
    let platform = match (host["os_pretty"].as_str(), host["kernel_release"].as_str()) {
        (Some(os), Some(k)) => json!(format!(
            "{os} ({k}, {})",
            host["arch"].as_str().unwrap_or("?")
        )),
        _ => Value::Null,
    };
    let available = cuda["available"].as_bool().unwrap_or(false);
    json!({
        "python": null,
        "torch": null,
        "platform": platform,
        "apex_host": env["tool"]["version"],
        "device": if available { "cuda" } else { "cpu" },
        "dtype": "float16",
        "requested_dtype": "fp16",
        "effective_dtype": "float16",
        "fp8_requested": false,
        "fp8_enabled": false,
        "fp8_fallback_reason": null,
        "runtime_caps": {
            "cuda": {
                "available": available,
                "device_count": cuda["device_count"],
                "device_name": cuda["device_name"],
                "compute_capability": cuda["compute_capability"].as_f64().map(|c| format!("{c:.1}")),
                "reason": cuda["reason"],
            },
            "triton": {"available": false, "version": null,
                       "reason": "apex-host compiles its CUDA kernels with NVRTC; no Triton"},
            "tensorrt": {"python_available": false, "python_version": null, "python_reason": NO_TRT_PYTHON,
                         "headers_available": false, "header_path": null,
                         "int8_available": false, "int8_reason": NO_TRT_PYTHON},
            "fp8": {"available": false, "dtype_available": false, "supported_dtypes": [],
                    "reason": "the fixed profile is fp16"},
            "any_gpu_runtime": available,
        },
    })
}

/// The report's `status` and, when skipped, the reason: `ok` when any block was measured.
pub fn status(summary: &RunSummary) -> (&'static str, Option<String>) {
    let mut reasons = Vec::new();
    for block in &BLOCKS {
        match block_case(summary, block) {
            Ok(c) if c.status == CaseStatus::Ok => return ("ok", None),
            Ok(c) => reasons.push(format!(
                "{}: {}",
                c.id,
                c.reason.as_deref().unwrap_or(c.status.as_str())
            )),
            Err(_) => {}
        }
    }
    let reason = if reasons.is_empty() {
        "no CUDA case of the seed's sections in this run (hint: run `apex-host run --backends cuda` \
         on a GPU machine)"
            .to_string()
    } else {
        reasons.join("; ")
    };
    ("skipped", Some(reason))
}

/// The `perf_gpu.json` document.
pub fn document(summary: &RunSummary) -> Value {
    let (status, reason) = status(summary);
    let mut benchmarks = Map::new();
    if status == "ok" {
        for block in &BLOCKS {
            insert_path(&mut benchmarks, block.path, metric_block(summary, block));
        }
        for (section, dispatch) in DISPATCH_SECTIONS {
            // The dispatch block written above decides the section's backend.
            let d = get_path(&benchmarks, &format!("{section}.{dispatch}"))
                .cloned()
                .unwrap_or(Value::Null);
            let ok = d["status"] == "ok";
            insert_path(
                &mut benchmarks,
                &format!("{section}.backend"),
                if ok { json!("cuda") } else { Value::Null },
            );
            insert_path(
                &mut benchmarks,
                &format!("{section}.fallback_reason"),
                if ok { Value::Null } else { d["reason"].clone() },
            );
        }
        insert_path(
            &mut benchmarks,
            "end_to_end_infer.tensorrt_engine",
            super::trt_sections::tensorrt_engine(summary),
        );
        insert_path(
            &mut benchmarks,
            "tilessm.tensorrt_plugin",
            super::trt_sections::tensorrt_plugin(summary),
        );
    }
    let mut doc = json!({
        "schema_version": 1,
        "suite": SUITE,
        "timestamp_utc": summary.timestamp_utc,
        "environment": environment(summary),
        "config": profile_config(summary),
        "status": status,
        "benchmarks": benchmarks,
        "triton_autotune": {
            "status": "skipped",
            "reason": "apex-host runs no Triton autotuner: its kernels have fixed launch \
                       configurations",
            "summary": null,
            "entries": [],
        },
    });
    if let Some(reason) = reason {
        doc["reason"] = json!(reason);
    }
    doc
}
