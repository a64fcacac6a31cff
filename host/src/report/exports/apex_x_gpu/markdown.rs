//! `perf_gpu.md`: the seed's Markdown companion of `perf_gpu.json`.

use serde_json::Value;

use super::blocks::{BLOCKS, metric_block};
use super::document::document;
use crate::model::RunSummary;
use crate::report::fmt;

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
        let r = metrics_or(&t[key]);
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
        let r = metrics_or(&b["end_to_end_infer"][key]);
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

/// A section's numbers: under `metrics` for a TensorRT section the seed's way, else the block.
fn metrics_or(section: &Value) -> &Value {
    if section["metrics"].is_object() {
        &section["metrics"]
    } else {
        section
    }
}
