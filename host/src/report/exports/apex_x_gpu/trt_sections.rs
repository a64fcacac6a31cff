//! The seed's two TensorRT sections of `perf_gpu.json` (apex-x-kernels.md §3.1, §3.2), from the
//! `trt_engine` plugin's cases on the `trt` backend:
//!
//! - `end_to_end_infer.tensorrt_engine`: the one `trt_engine.engine/trt` case of the `default`
//!   shape case that runs a TensorRT engine (not ONNX Runtime);
//! - `tilessm.tensorrt_plugin`: the one `trt_engine.tilessm_plugin/trt` case.
//!
//! As the seed writes them: `{status: "ok", engine_path | plugin_library, mode, metrics: {p50_ms,
//! p95_ms, peak_memory_mb, frames_per_s | tokens_per_s}}` plus `source_case`, or `{status:
//! "skipped", reason}` with the case's own skip reason (the library and where it looked, …), or
//! `{status: "failed", reason}`. No case, or several, is `skipped` with why.

use serde_json::{Value, json};

use crate::model::{CaseResult, CaseStatus, RunSummary};

/// Whether `c` runs a TensorRT engine: `runtime=tensorrt`, or `auto` on a file that is not ONNX.
fn runs_tensorrt(c: &CaseResult) -> bool {
    let p = &c.key.params;
    match p.get("runtime").map(String::as_str) {
        Some("tensorrt") => true,
        Some("auto") => p
            .get("engine")
            .is_some_and(|e| !e.is_empty() && !e.to_ascii_lowercase().ends_with(".onnx")),
        _ => false,
    }
}

fn section(cases: Vec<&CaseResult>, none: &str, ok: impl Fn(&CaseResult) -> Value) -> Value {
    match cases.as_slice() {
        [] => json!({"status": "skipped", "reason": none}),
        [c] => match c.status {
            CaseStatus::Ok => ok(c),
            CaseStatus::Skipped => json!({
                "status": "skipped",
                "reason": c.reason.clone().unwrap_or_else(|| "skipped".into()),
                "source_case": c.id,
            }),
            _ => json!({
                "status": "failed",
                "reason": format!("{}: {}", c.status.as_str(), c.reason.as_deref().unwrap_or("no reason recorded")),
                "source_case": c.id,
            }),
        },
        many => json!({
            "status": "skipped",
            "reason": format!(
                "{} cases could fill this section ({}); run one (--trt-engine-path, --filter)",
                many.len(),
                many.iter().map(|c| c.id.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

fn metrics(c: &CaseResult, rate: &str) -> Value {
    let rate_value = c
        .throughput
        .as_ref()
        .and_then(|t| match rate {
            "frames_per_s" => t.frames_per_s,
            _ => t.tokens_per_s,
        })
        .map_or(Value::Null, |v| json!(v));
    json!({
        "p50_ms": c.p50_ms,
        "p95_ms": c.p95_ms,
        "peak_memory_mb": c.peak_memory_mb,
        rate: rate_value,
    })
}

/// `end_to_end_infer.tensorrt_engine`.
pub(super) fn tensorrt_engine(summary: &RunSummary) -> Value {
    let cases = summary
        .benchmarks
        .values()
        .filter(|c| {
            c.key.kernel == "trt_engine.engine"
                && c.key.backend == "trt"
                && c.key.params.get("shape_case").map(String::as_str) == Some("default")
                && runs_tensorrt(c)
        })
        .collect();
    section(
        cases,
        "missing_trt_engine_path: no trt_engine.engine case ran a TensorRT engine on the trt backend (pass --trt-engine-path FILE.engine)",
        |c| {
            json!({
                "status": "ok",
                "engine_path": c.key.params.get("engine"),
                "mode": "modern_io_tensors",
                "metrics": metrics(c, "frames_per_s"),
                "source_case": c.id,
            })
        },
    )
}

/// `tilessm.tensorrt_plugin`.
pub(super) fn tensorrt_plugin(summary: &RunSummary) -> Value {
    let cases = summary
        .benchmarks
        .values()
        .filter(|c| c.key.kernel == "trt_engine.tilessm_plugin" && c.key.backend == "trt")
        .collect();
    section(
        cases,
        "no trt_engine.tilessm_plugin case in this run",
        |c| {
            json!({
                "status": "ok",
                "plugin_library": c.key.params.get("plugin_lib"),
                "metrics": metrics(c, "tokens_per_s"),
                "source_case": c.id,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, summary_of};

    fn engine(engine: &str, status: CaseStatus, reason: Option<&str>) -> CaseResult {
        let mut c = measured_case("trt_engine.engine", "trt", 1.0, 0.01);
        for (k, v) in [
            ("engine", engine),
            ("runtime", "auto"),
            ("shape_case", "default"),
        ] {
            c.key.params.insert(k.into(), v.into());
        }
        c.id = c.key.id();
        c.status = status;
        c.reason = reason.map(str::to_string);
        c
    }

    #[test]
    fn the_engine_section_is_the_one_tensorrt_case() {
        let s = summary_of(vec![
            engine("/e/apex_x.engine", CaseStatus::Ok, None),
            engine("@models/mlp.onnx", CaseStatus::Ok, None),
        ]);
        let v = tensorrt_engine(&s);
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(v["engine_path"], "/e/apex_x.engine");
        assert_eq!(v["metrics"]["p50_ms"], 1.0);
    }

    #[test]
    fn a_skipped_case_gives_its_reason_and_none_gives_the_seeds() {
        let why = "tensorrt_unavailable: libnvinfer not found; looked in: …";
        let s = summary_of(vec![engine("/e/a.engine", CaseStatus::Skipped, Some(why))]);
        assert_eq!(tensorrt_engine(&s)["reason"], why);
        let none = tensorrt_engine(&summary_of(vec![]));
        assert!(
            none["reason"]
                .as_str()
                .unwrap()
                .starts_with("missing_trt_engine_path")
        );
        assert_eq!(tensorrt_plugin(&summary_of(vec![]))["status"], "skipped");
    }
}
