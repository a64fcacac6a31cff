//! `perf_cpu.json`: the Apex-X CPU perf-regression report (seed 001, `perf_current.json`; field by
//! field in `spec/apex-x-kernels.md` §4.2) from the run's CPU cases: the seed's **flat**
//! `metrics{KEY: ms}`.
//!
//! | seed key | case (CPU, fp32 as the seed's microbenchmarks) | statistic |
//! | --- | --- | --- |
//! | `infer_p50_ms` | `ff_model.infer/cpu/fp32`, FF profile (`B=1, C=128, 128x128, tiles 16/8, b1 16, b2 8, kmax 32/64, path=fast`) | p50 |
//! | `infer_p95_ms` | `ff_model.infer/cpu/fp32`, FF profile | p95 |
//! | `tile_pack_p50_ms` | `tile_ops.tile_pack/cpu/fp32`, fixed profile, `ids=sorted` | p50 |
//! | `tile_unpack_p50_ms` | `tile_ops.tile_unpack/cpu/fp32`, fixed profile, `ids=sorted, mode=override, offgrid=false` | p50 |
//! | `fusion_gate_p50_ms` | `tile_ops.fusion_gate/cpu/fp32`, `B=1, C=128, 128x128`, default weights | p50 |
//!
//! The fixed profile is `B=1, C=128, 128x128, tile 8, kmax 32` (the seed's CPU microbenchmarks
//! used `C=64`, tile 16 and 10 ids; `config` records the shape actually measured). A key whose
//! case is absent or not `ok` is `null` in `metrics`, and `unavailable` says why (the seed's
//! `infer()` was a NumPy toy model on a 1x1 tile grid, §6.2 item 19; the `infer_*` keys time
//! the real FF frame of the `ff_model` plugin instead, so they are not comparable with the
//! seed's numbers). The gate resolves a seed CPU baseline's keys through the
//! same table ([`resolve_key`]).

use serde_json::{Map, Value, json};

use super::select::{Selector, fixed_profile};
use crate::model::{CaseStatus, RunSummary};

pub const FILE: &str = "perf_cpu.json";
/// The seed's `suite`, also what a seed CPU baseline names.
pub const SUITE: &str = "apex_x_cpu_perf_regression";

const fn cpu(kernel: &'static str, params: &'static [(&'static str, &'static str)]) -> Selector {
    Selector {
        kernel,
        backend: "cpu",
        precision: "fp32",
        params,
    }
}

/// Every key of the seed's `metrics`, its case and statistic.
pub const KEYS: [(&str, Selector, &str); 5] = [
    (
        "infer_p50_ms",
        cpu("ff_model.infer", fixed_profile::FF_MODEL_FAST),
        "p50_ms",
    ),
    (
        "infer_p95_ms",
        cpu("ff_model.infer", fixed_profile::FF_MODEL_FAST),
        "p95_ms",
    ),
    (
        "tile_pack_p50_ms",
        cpu("tile_ops.tile_pack", fixed_profile::TILE_PACK),
        "p50_ms",
    ),
    (
        "tile_unpack_p50_ms",
        cpu("tile_ops.tile_unpack", fixed_profile::TILE_UNPACK),
        "p50_ms",
    ),
    (
        "fusion_gate_p50_ms",
        cpu("tile_ops.fusion_gate", fixed_profile::FUSION_GATE),
        "p50_ms",
    ),
];

/// Resolves a seed CPU key to the metric id of its case, or says why the export has no number.
pub fn resolve_key(summary: &RunSummary, key: &str) -> Result<String, String> {
    let Some((_, sel, stat)) = KEYS.iter().find(|(k, _, _)| *k == key) else {
        let known: Vec<&str> = KEYS.iter().map(|(k, _, _)| *k).collect();
        return Err(format!(
            "`{key}` is not a key of the apex-x-cpu export (keys: {})",
            known.join(", ")
        ));
    };
    sel.find(summary)
        .map(|c| c.key.metric(stat))
        .map_err(|e| format!("metrics.{key} is null in the apex-x-cpu export: {e}"))
}

/// The `perf_cpu.json` document.
pub fn document(summary: &RunSummary) -> Value {
    let mut metrics = Map::new();
    let mut unavailable = Map::new();
    let mut warmup = None;
    let mut iters = Vec::new();
    for (key, sel, stat) in &KEYS {
        let value = match sel.find(summary) {
            Ok(case) if case.status == CaseStatus::Ok => {
                if let Some(p) = &case.protocol {
                    warmup = warmup.or(Some(p.warmup_calls));
                }
                if let Some(t) = case.headline.as_deref().and_then(|h| case.timing.get(h)) {
                    iters.push(t.stats.n);
                }
                match *stat {
                    "p95_ms" => case.p95_ms,
                    _ => case.p50_ms,
                }
            }
            Ok(case) => {
                unavailable.insert(
                    (*key).into(),
                    json!(format!(
                        "case `{}` is {}: {}",
                        case.id,
                        case.status.as_str(),
                        case.reason.as_deref().unwrap_or("no reason recorded")
                    )),
                );
                None
            }
            Err(reason) => {
                unavailable.insert((*key).into(), json!(reason));
                None
            }
        };
        metrics.insert((*key).into(), json!(value));
    }
    let env = &summary.environment;
    let host = &env["host"];
    json!({
        "schema_version": 1,
        "suite": SUITE,
        "environment": {
            "python": null,
            "torch": null,
            "platform": host["os_pretty"],
            "apex_host": env["tool"]["version"],
            "device": "cpu",
            "cuda_available": env["facts"]["cuda"]["available"].as_bool().unwrap_or(false),
        },
        "config": {
            "infer_warmup": null,
            "infer_iters": null,
            "micro_warmup": summary.config.get("warmup").filter(|v| !v.is_null()).cloned()
                .unwrap_or_else(|| json!(warmup)),
            "micro_iters": summary.config.get("iters").filter(|v| !v.is_null()).cloned()
                .unwrap_or_else(|| json!(iters.iter().min())),
            "seed": summary.config.get("seed").cloned().unwrap_or(Value::Null),
            "input_shape": null,
            "tile_shape": [1, 128, 128, 128],
            "tile_size": 8,
        },
        "metrics": metrics,
        "unavailable": unavailable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseKey, CaseResult};
    use crate::report::test_support::{measured_case, summary_of};

    fn at_key(key: &str, p50: f64) -> CaseResult {
        let (_, sel, _) = KEYS.iter().find(|(k, _, _)| *k == key).unwrap();
        let mut c = measured_case(sel.kernel, "cpu", p50, 0.01);
        let params = sel
            .params
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
            .collect();
        c.key = CaseKey::new(sel.kernel, "cpu", "fp32", &params);
        c.id = c.key.id();
        c
    }

    #[test]
    fn flat_metrics_hold_the_cases_figures_and_null_with_a_reason_otherwise() {
        let mut unpack = at_key("tile_unpack_p50_ms", 3.0);
        unpack.status = CaseStatus::Failed;
        unpack.reason = Some("signal: SIGSEGV".into());
        let s = summary_of(vec![
            at_key("tile_pack_p50_ms", 2.0),
            unpack,
            at_key("fusion_gate_p50_ms", 4.0),
        ]);
        let doc = document(&s);
        let m = doc["metrics"].as_object().unwrap();
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "infer_p50_ms",
                "infer_p95_ms",
                "tile_pack_p50_ms",
                "tile_unpack_p50_ms",
                "fusion_gate_p50_ms"
            ]
        );
        assert_eq!(m["tile_pack_p50_ms"], 2.0);
        assert_eq!(m["fusion_gate_p50_ms"], 4.0);
        assert!(m["tile_unpack_p50_ms"].is_null() && m["infer_p50_ms"].is_null());
        let why = &doc["unavailable"];
        assert!(
            why["tile_unpack_p50_ms"]
                .as_str()
                .unwrap()
                .contains("SIGSEGV")
        );
        assert!(
            why["infer_p95_ms"]
                .as_str()
                .unwrap()
                .contains("ff_model.infer/cpu/fp32")
        );
        assert!(why.get("tile_pack_p50_ms").is_none());
        assert_eq!(doc["suite"], SUITE);
        assert_eq!(
            resolve_key(&s, "tile_pack_p50_ms"),
            Ok(at_key("tile_pack_p50_ms", 2.0).key.metric("p50_ms"))
        );
        assert!(
            resolve_key(&s, "infer_p50_ms")
                .unwrap_err()
                .contains("null")
        );
        assert!(
            resolve_key(&s, "tile_pack_p95_ms")
                .unwrap_err()
                .contains("keys:")
        );
    }

    #[test]
    fn the_document_matches_its_schema_and_the_schema_has_teeth() {
        let schema = include_str!("../../../../docs/schemas/perf_cpu.schema.json");
        let s = summary_of(vec![at_key("tile_pack_p50_ms", 2.0)]);
        let doc = document(&s);
        super::super::check_schema(schema, &doc).unwrap();
        let mut broken = doc.clone();
        broken["metrics"]["tile_pack_p90_ms"] = json!(1.0);
        assert!(
            super::super::check_schema(schema, &broken).is_err(),
            "a key the seed lacks"
        );
        let mut broken = doc;
        broken["metrics"]
            .as_object_mut()
            .unwrap()
            .remove("infer_p95_ms");
        assert!(
            super::super::check_schema(schema, &broken).is_err(),
            "a seed key missing"
        );
    }
}
