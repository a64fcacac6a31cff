//! Tests of the apex-x-gpu export.

use super::blocks::{BLOCKS, Source};
use super::*;
use crate::model::CaseKey;
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::report::test_support::{measured_case, skipped_case, summary_of};
use serde_json::{Value, json};

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
    let why = eager["reason"].as_str().unwrap();
    assert!(
        why.contains("ff_model.infer/cuda/fp16 with batch=1,channels=128,height=128,width=128")
            && why.contains("tile_size_l0=16,tile_size_l1=8")
            && why.contains("path=eager"),
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
    let schema = include_str!("../../../../../docs/schemas/perf_gpu.schema.json");
    let doc = document(&gpu_run());
    crate::report::exports::check_schema(schema, &doc).unwrap();
    let skipped = summary_of(vec![skipped_case("tile_ops.tile_pack", "cuda", "no GPU")]);
    crate::report::exports::check_schema(schema, &document(&skipped)).unwrap();
    let mut broken = doc.clone();
    broken["benchmarks"]["tile_ops"]["tilepack"]["dispatch"]["p50_ms"] = Value::Null;
    assert!(
        crate::report::exports::check_schema(schema, &broken).is_err(),
        "ok block without p50"
    );
    let mut broken = doc.clone();
    broken["benchmarks"]["tilessm"]
        .as_object_mut()
        .unwrap()
        .remove("triton_dispatch");
    assert!(
        crate::report::exports::check_schema(schema, &broken).is_err(),
        "missing block"
    );
    let mut broken = doc;
    broken["benchmarks"]["tile_ops"]["tilepack"]["reference"]
        .as_object_mut()
        .unwrap()
        .remove("reason");
    assert!(
        crate::report::exports::check_schema(schema, &broken).is_err(),
        "null without a reason"
    );
}
