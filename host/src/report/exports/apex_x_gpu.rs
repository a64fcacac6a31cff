//! `perf_gpu.json` and `perf_gpu.md`: the Apex-X GPU suite's report (seed 000, `gpu_bench.py`;
//! field by field in `spec/apex-x-kernels.md` §4.1) from the run's CUDA cases at the fixed
//! profile (`B=1, C=128, 128x128, tile 8, kmax 32, steps 256, fp16`).
//!
//! The seed compares a torch reference with a Triton dispatch path. apex-host measures its own
//! CUDA kernels, so each seed `dispatch` block is filled from our CUDA case; the torch
//! `reference` blocks have no counterpart in a run and are written with every seed field `null`,
//! `status: "skipped"` and the reason. Every metric block also carries `status` and, when filled
//! from a case, `source_case` (its case id). TensorRT sections use the seed's own convention,
//! `{status: "skipped", reason}`.
//!
//! | seed block (under `benchmarks.`) | case | throughput field |
//! | --- | --- | --- |
//! | `tile_ops.tilepack.dispatch` | `tile_ops.tile_pack/cuda/fp16`, profile, `ids=sorted` | `tiles_per_s` |
//! | `tile_ops.tileunpack.dispatch` | `tile_ops.tile_unpack/cuda/fp16`, profile, `ids=sorted, mode=override, offgrid=false` | `tiles_per_s` |
//! | `tile_ops.fusion_gate.dispatch` | `tile_ops.fusion_gate/cuda/fp16`, `B=1, C=128, 128x128`, default weights | `elements_per_s` |
//! | `tilessm.triton_dispatch` | `tile_ssm.forward/cuda/fp16`, `B=1, steps=256, C=128`, no clamp inside the range, no initial state | `tokens_per_s` |
//! | `end_to_end_infer.torch_eager` | `ff_model.infer/cuda/fp16` with `path=eager` | `frames_per_s` |
//! | `end_to_end_infer.torch_triton_fastpath` | `ff_model.infer/cuda/fp16` with `path=fast` | `frames_per_s` |
//! | `tile_ops.*.reference`, `tilessm.torch_reference` | none: no torch path in a run | — |
//! | `tilessm.tensorrt_plugin`, `end_to_end_infer.tensorrt_engine` | none: no TensorRT plugin | — |
//!
//! `p50_ms`/`p95_ms` are the case's headline (`batch` mode) figures, `peak_memory_mb` its peak
//! device memory. The end-to-end blocks' `selected_l0_per_call`, `selected_l1_per_call`,
//! `budget_b1_spent` and `budget_b2_spent` come from the case's figures of those names.
//! `tile_ops.fused_stage` and the backward/bidirectional scans have no field in the seed's report
//! (they are in `summary.json`). `status` is `ok` when any block was measured; otherwise
//! `skipped` with the reason and `benchmarks: {}`, as the seed does without CUDA.
//!
//! The gate resolves a seed baseline's dotted keys (`benchmarks.tile_ops.tilepack.dispatch.p50_ms`)
//! through the same table ([`resolve_key`]), so a gated key is exactly the number in this file.

use serde_json::{Map, Value, json};

use super::select::{Selector, fixed_profile};
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::report::fmt;

pub const JSON_FILE: &str = "perf_gpu.json";
pub const MARKDOWN_FILE: &str = "perf_gpu.md";
/// The seed's `suite`, also what a seed GPU baseline names.
pub const SUITE: &str = "apex_x_gpu_benchmark";

/// The latency fields of a metric block; the only ones a baseline can gate (`value_ms`).
pub const GATED_STATS: [&str; 2] = ["p50_ms", "p95_ms"];

const NO_TORCH: &str = "apex-host measures no torch reference path: the seed's torch-vs-Triton \
                        comparison has no counterpart in a run (benches/anchors/ measures PyTorch \
                        outside it)";
const NO_TRT: &str = "no TensorRT plugin in apex-host (trt_engine is not implemented)";

/// Where a metric block's numbers come from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Case(Selector),
    NotMeasured(&'static str),
}

/// One metric block of the seed's report.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// The path under `benchmarks.`.
    path: &'static str,
    /// The seed's throughput field of this block.
    unit: &'static str,
    source: Source,
}

const END_TO_END_FIELDS: [&str; 4] = [
    "selected_l0_per_call",
    "selected_l1_per_call",
    "budget_b1_spent",
    "budget_b2_spent",
];

const fn cuda(kernel: &'static str, params: &'static [(&'static str, &'static str)]) -> Source {
    Source::Case(Selector {
        kernel,
        backend: "cuda",
        precision: "fp16",
        params,
    })
}

const BLOCKS: [Block; 10] = [
    Block {
        path: "tile_ops.tilepack.reference",
        unit: "tiles_per_s",
        source: Source::NotMeasured(NO_TORCH),
    },
    Block {
        path: "tile_ops.tilepack.dispatch",
        unit: "tiles_per_s",
        source: cuda("tile_ops.tile_pack", fixed_profile::TILE_PACK),
    },
    Block {
        path: "tile_ops.tileunpack.reference",
        unit: "tiles_per_s",
        source: Source::NotMeasured(NO_TORCH),
    },
    Block {
        path: "tile_ops.tileunpack.dispatch",
        unit: "tiles_per_s",
        source: cuda("tile_ops.tile_unpack", fixed_profile::TILE_UNPACK),
    },
    Block {
        path: "tile_ops.fusion_gate.reference",
        unit: "elements_per_s",
        source: Source::NotMeasured(NO_TORCH),
    },
    Block {
        path: "tile_ops.fusion_gate.dispatch",
        unit: "elements_per_s",
        source: cuda("tile_ops.fusion_gate", fixed_profile::FUSION_GATE),
    },
    Block {
        path: "tilessm.torch_reference",
        unit: "tokens_per_s",
        source: Source::NotMeasured(NO_TORCH),
    },
    Block {
        path: "tilessm.triton_dispatch",
        unit: "tokens_per_s",
        source: cuda("tile_ssm.forward", fixed_profile::TILE_SSM),
    },
    Block {
        path: "end_to_end_infer.torch_eager",
        unit: "frames_per_s",
        source: cuda("ff_model.infer", &[("path", "eager")]),
    },
    Block {
        path: "end_to_end_infer.torch_triton_fastpath",
        unit: "frames_per_s",
        source: cuda("ff_model.infer", &[("path", "fast")]),
    },
];

/// Sections the seed reports as `{status: "skipped", reason}` when they cannot run.
const SKIPPED_SECTIONS: [(&str, &str); 2] = [
    ("tilessm.tensorrt_plugin", NO_TRT),
    ("end_to_end_infer.tensorrt_engine", NO_TRT),
];

/// Sections with the seed's `backend` and `fallback_reason`, and the block that decides them.
const DISPATCH_SECTIONS: [(&str, &str); 4] = [
    ("tile_ops.tilepack", "dispatch"),
    ("tile_ops.tileunpack", "dispatch"),
    ("tile_ops.fusion_gate", "dispatch"),
    ("tilessm", "triton_dispatch"),
];

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

/// What a block says: the case it was filled from, or why there is none.
fn block_case<'a>(summary: &'a RunSummary, block: &Block) -> Result<&'a CaseResult, String> {
    match block.source {
        Source::Case(sel) => sel.find(summary),
        Source::NotMeasured(reason) => Err(reason.to_string()),
    }
}

fn metric_block(summary: &RunSummary, block: &Block) -> Value {
    let mut m = Map::new();
    let figure = |case: &CaseResult, name: &str| {
        case.figures
            .get(name)
            .map_or(Value::Null, |f| json!(f.value))
    };
    let end_to_end = block.unit == "frames_per_s";
    match block_case(summary, block) {
        Ok(case) if case.status == CaseStatus::Ok => {
            m.insert("status".into(), json!("ok"));
            m.insert("source_case".into(), json!(case.id));
            m.insert("p50_ms".into(), json!(case.p50_ms));
            m.insert("p95_ms".into(), json!(case.p95_ms));
            m.insert(
                "peak_memory_mb".into(),
                json!(case.resources.peak_device_memory_mb),
            );
            let rate = case.throughput.as_ref().and_then(crate::report::unit_rate);
            let rate = rate.filter(|(unit, _)| *unit == block.unit).map(|(_, v)| v);
            m.insert(block.unit.into(), json!(rate));
            if end_to_end {
                for f in END_TO_END_FIELDS {
                    m.insert(f.into(), figure(case, f));
                }
            }
        }
        other => {
            let (status, reason) = match other {
                Ok(case) => {
                    m.insert("source_case".into(), json!(case.id));
                    (
                        case.status.as_str(),
                        case.reason
                            .clone()
                            .unwrap_or_else(|| format!("case status `{}`", case.status.as_str())),
                    )
                }
                Err(reason) => ("skipped", reason),
            };
            m.insert("status".into(), json!(status));
            m.insert("reason".into(), json!(reason));
            for f in ["p50_ms", "p95_ms", "peak_memory_mb", block.unit] {
                m.insert(f.into(), Value::Null);
            }
            if end_to_end {
                for f in END_TO_END_FIELDS {
                    m.insert(f.into(), Value::Null);
                }
            }
        }
    }
    Value::Object(m)
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
            "tensorrt": {"python_available": false, "python_version": null, "python_reason": NO_TRT,
                         "headers_available": false, "header_path": null,
                         "int8_available": false, "int8_reason": NO_TRT},
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
            let d = BLOCKS
                .iter()
                .find(|b| b.path == format!("{section}.{dispatch}"))
                .map(|b| metric_block(summary, b))
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
        for (path, reason) in SKIPPED_SECTIONS {
            insert_path(
                &mut benchmarks,
                path,
                json!({"status": "skipped", "reason": reason}),
            );
        }
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

/// Resolves a seed baseline key (`benchmarks.<block>.<p50_ms|p95_ms>`) to the metric id of the
/// case that fills it, or says why the export has no number there.
pub fn resolve_key(summary: &RunSummary, key: &str) -> Result<String, String> {
    let Some((path, stat)) = key
        .strip_prefix("benchmarks.")
        .and_then(|rest| rest.rsplit_once('.'))
    else {
        return Err(format!(
            "`{key}` is not a path `benchmarks.<section>.<block>.<stat>` of the apex-x-gpu export"
        ));
    };
    let Some(block) = BLOCKS.iter().find(|b| b.path == path) else {
        let known: Vec<&str> = BLOCKS.iter().map(|b| b.path).collect();
        return Err(format!(
            "the apex-x-gpu export has no metric block `benchmarks.{path}` (blocks: {})",
            known.join(", ")
        ));
    };
    if !GATED_STATS.contains(&stat) {
        return Err(format!(
            "`{stat}` is not a latency field; a baseline gates `p50_ms` and `p95_ms` (value_ms)"
        ));
    }
    match block.source {
        Source::Case(sel) => sel
            .find(summary)
            .map(|c| c.key.metric(stat))
            .map_err(|e| format!("benchmarks.{path} is null in the apex-x-gpu export: {e}")),
        Source::NotMeasured(reason) => Err(format!(
            "benchmarks.{path} is null in the apex-x-gpu export: {reason}"
        )),
    }
}

/// `perf_gpu.md`, the seed's Markdown companion (`render_markdown_summary`): floats as `%.4f`,
/// a missing value as `n/a`, plus the case each row came from.
pub fn render_markdown(summary: &RunSummary) -> String {
    let doc = document(summary);
    let num = |v: &Value| v.as_f64().map_or("n/a".to_string(), |x| format!("{x:.4}"));
    let txt = |v: &Value| v.as_str().map_or("n/a".to_string(), fmt::cell);
    let env = &doc["environment"];
    let mut out = String::from("# Apex-X GPU Benchmark\n\n");
    out.push_str(&format!("- status: `{}`\n", txt(&doc["status"])));
    out.push_str(&format!(
        "- device: {}\n",
        txt(&env["runtime_caps"]["cuda"]["device_name"])
    ));
    out.push_str(&format!(
        "- dtype: requested `{}`, effective `{}`\n",
        txt(&env["requested_dtype"]),
        txt(&env["effective_dtype"])
    ));
    out.push_str(&format!(
        "- timestamp_utc: {}\n",
        txt(&doc["timestamp_utc"])
    ));
    out.push_str("- fp8: requested `false`, enabled `false` (the fixed profile is fp16)\n\n");
    out.push_str("## Triton Autotune Registry\n\n");
    out.push_str(&format!(
        "- n/a: {}\n\n",
        txt(&doc["triton_autotune"]["reason"])
    ));
    if doc["status"] != "ok" {
        out.push_str(&format!("- reason: {}\n", txt(&doc["reason"])));
        return out;
    }
    let b = &doc["benchmarks"];
    out.push_str("## Tile Ops\n\n| op | dispatch backend | ref p50 ms | dispatch p50 ms | ref p95 ms | dispatch p95 ms |\n| --- | --- | --- | --- | --- | --- |\n");
    for op in ["tilepack", "tileunpack", "fusion_gate"] {
        let s = &b["tile_ops"][op];
        out.push_str(&format!(
            "| {op} | {} | {} | {} | {} | {} |\n",
            txt(&s["backend"]),
            num(&s["reference"]["p50_ms"]),
            num(&s["dispatch"]["p50_ms"]),
            num(&s["reference"]["p95_ms"]),
            num(&s["dispatch"]["p95_ms"])
        ));
    }
    out.push_str("\n## TileSSM\n\n| path | backend | p50 ms | p95 ms | tokens/s |\n| --- | --- | --- | --- | --- |\n");
    let t = &b["tilessm"];
    for (name, key, backend) in [
        ("torch ref", "torch_reference", Value::Null),
        ("dispatch", "triton_dispatch", t["backend"].clone()),
        ("TensorRT plugin", "tensorrt_plugin", Value::Null),
    ] {
        let r = &t[key];
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} |\n",
            txt(&backend),
            num(&r["p50_ms"]),
            num(&r["p95_ms"]),
            num(&r["tokens_per_s"])
        ));
    }
    out.push_str("\n## End-to-End Infer\n\n| path | p50 ms | p95 ms | frames/s | peak memory mb |\n| --- | --- | --- | --- | --- |\n");
    for key in ["torch_eager", "torch_triton_fastpath", "tensorrt_engine"] {
        let r = &b["end_to_end_infer"][key];
        out.push_str(&format!(
            "| {key} | {} | {} | {} | {} |\n",
            num(&r["p50_ms"]),
            num(&r["p95_ms"]),
            num(&r["frames_per_s"]),
            num(&r["peak_memory_mb"])
        ));
    }
    out.push_str("\n## Sources\n\n| block | case | status | reason |\n| --- | --- | --- | --- |\n");
    for block in &BLOCKS {
        let v = metric_block(summary, block);
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            block.path,
            v["source_case"]
                .as_str()
                .map_or("—".to_string(), |s| format!("`{s}`")),
            txt(&v["status"]),
            v["reason"].as_str().map_or(String::new(), fmt::cell)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CaseKey;
    use crate::report::test_support::{measured_case, skipped_case, summary_of};

    /// A CUDA case of `kernel` at exactly the parameters of the export's block `path`.
    fn at_block(path: &str, p50: f64) -> CaseResult {
        let block = BLOCKS.iter().find(|b| b.path == path).unwrap();
        let Source::Case(sel) = block.source else {
            panic!("{path} is not measured")
        };
        let mut c = measured_case(sel.kernel, "cuda", p50, 0.01);
        let params = sel
            .params
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_string(),
                    serde_json::Value::String((*v).to_string()),
                )
            })
            .collect();
        c.key = CaseKey::new(sel.kernel, "cuda", "fp16", &params);
        c.id = c.key.id();
        if let Some(t) = c.throughput.as_mut() {
            let rate = t.tiles_per_s.take();
            match block.unit {
                "elements_per_s" => t.elements_per_s = rate,
                "tokens_per_s" => t.tokens_per_s = rate,
                "frames_per_s" => t.frames_per_s = rate,
                _ => t.tiles_per_s = rate,
            }
        }
        c
    }

    fn gpu_run() -> RunSummary {
        let mut unpack = at_block("tile_ops.tileunpack.dispatch", 0.02);
        unpack.status = CaseStatus::FailedAccuracy;
        unpack.reason = Some("mismatch_ratio 0.5 > 0".into());
        summary_of(vec![
            at_block("tile_ops.tilepack.dispatch", 0.01),
            unpack,
            at_block("tile_ops.fusion_gate.dispatch", 0.03),
            at_block("tilessm.triton_dispatch", 0.04),
            measured_case("tile_ops.tile_pack", "cpu", 2.0, 0.01),
        ])
    }

    #[test]
    fn blocks_are_filled_from_their_cases_and_the_rest_say_why_not() {
        let s = gpu_run();
        let doc = document(&s);
        assert_eq!(doc["status"], "ok");
        assert_eq!(doc["suite"], SUITE);
        let b = &doc["benchmarks"];
        let pack = &b["tile_ops"]["tilepack"];
        let case = at_block("tile_ops.tilepack.dispatch", 0.01);
        assert_eq!(pack["dispatch"]["p50_ms"].as_f64(), case.p50_ms);
        assert_eq!(pack["dispatch"]["p95_ms"].as_f64(), case.p95_ms);
        assert_eq!(pack["dispatch"]["source_case"], case.id.as_str());
        assert!(pack["dispatch"]["tiles_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(pack["backend"], "cuda");
        assert!(pack["fallback_reason"].is_null());
        assert!(pack["reference"]["p50_ms"].is_null());
        assert_eq!(pack["reference"]["status"], "skipped");
        assert!(
            pack["reference"]["reason"]
                .as_str()
                .unwrap()
                .contains("torch")
        );
        assert!(
            b["tile_ops"]["fusion_gate"]["dispatch"]["elements_per_s"]
                .as_f64()
                .is_some()
        );
        assert!(
            b["tilessm"]["triton_dispatch"]["tokens_per_s"]
                .as_f64()
                .is_some()
        );
        // A wrong output is never a number in the report.
        let unpack = &b["tile_ops"]["tileunpack"];
        assert!(unpack["dispatch"]["p50_ms"].is_null());
        assert_eq!(unpack["dispatch"]["status"], "failed_accuracy");
        assert!(unpack["backend"].is_null());
        assert_eq!(unpack["fallback_reason"], "mismatch_ratio 0.5 > 0");
        // No ff_model plugin: the end-to-end blocks carry the selector in their reason.
        let eager = &b["end_to_end_infer"]["torch_eager"];
        assert!(eager["p50_ms"].is_null() && eager["selected_l0_per_call"].is_null());
        assert!(
            eager["reason"]
                .as_str()
                .unwrap()
                .contains("ff_model.infer/cuda/fp16 with path=eager"),
            "{eager}"
        );
        assert_eq!(b["tilessm"]["tensorrt_plugin"]["status"], "skipped");
        let md = render_markdown(&s);
        assert!(
            md.contains(&format!("| tilepack | cuda | n/a | {:.4} |", 0.01)),
            "{md}"
        );
        assert!(md.contains("## End-to-End Infer") && md.contains("## Sources"));
    }

    #[test]
    fn without_a_measured_block_the_report_is_skipped_with_the_reason() {
        let s = summary_of(vec![skipped_case(
            "tile_ops.tile_pack",
            "cuda",
            "cuda_unavailable: libcuda.so.1 not found",
        )]);
        let doc = document(&s);
        assert_eq!(doc["status"], "skipped");
        assert_eq!(doc["benchmarks"], json!({}));
        assert!(doc["reason"].as_str().unwrap().contains("--backends cuda"));
        assert!(render_markdown(&s).contains("- reason: "));
    }

    #[test]
    fn baseline_keys_resolve_to_the_case_that_fills_the_field() {
        let s = gpu_run();
        let case = at_block("tile_ops.tilepack.dispatch", 0.01);
        assert_eq!(
            resolve_key(&s, "benchmarks.tile_ops.tilepack.dispatch.p95_ms"),
            Ok(case.key.metric("p95_ms"))
        );
        for (key, needle) in [
            ("benchmarks.tile_ops.tilepack.reference.p50_ms", "torch"),
            (
                "benchmarks.end_to_end_infer.torch_eager.p50_ms",
                "ff_model.infer",
            ),
            (
                "benchmarks.tile_ops.tilepack.dispatch.tiles_per_s",
                "not a latency",
            ),
            (
                "benchmarks.tile_ops.nope.dispatch.p50_ms",
                "no metric block",
            ),
            ("tile_pack_p50_ms", "not a path"),
        ] {
            let e = resolve_key(&s, key).unwrap_err();
            assert!(e.contains(needle), "{key}: {e}");
        }
    }

    #[test]
    fn the_document_matches_its_schema_and_the_schema_has_teeth() {
        let schema = include_str!("../../../../docs/schemas/perf_gpu.schema.json");
        let doc = document(&gpu_run());
        super::super::check_schema(schema, &doc).unwrap();
        let skipped = summary_of(vec![skipped_case("tile_ops.tile_pack", "cuda", "no GPU")]);
        super::super::check_schema(schema, &document(&skipped)).unwrap();
        let mut broken = doc.clone();
        broken["benchmarks"]["tile_ops"]["tilepack"]["dispatch"]["p50_ms"] = Value::Null;
        assert!(
            super::super::check_schema(schema, &broken).is_err(),
            "ok block without p50"
        );
        let mut broken = doc.clone();
        broken["benchmarks"]["tilessm"]
            .as_object_mut()
            .unwrap()
            .remove("triton_dispatch");
        assert!(
            super::super::check_schema(schema, &broken).is_err(),
            "missing block"
        );
        let mut broken = doc;
        broken["benchmarks"]["tile_ops"]["tilepack"]["reference"]
            .as_object_mut()
            .unwrap()
            .remove("reason");
        assert!(
            super::super::check_schema(schema, &broken).is_err(),
            "null without a reason"
        );
    }
}
