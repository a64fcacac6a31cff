//! `quasim.json`: the QuASIM per-kernel report (seed 002, "Per-Kernel Report Format"), one object
//! per case of the run (kernel × parameters × backend × precision), in case id order, as a JSON
//! array (the seed writes one such object per file under `reports/kernels/`).
//!
//! | seed field | from the case |
//! | --- | --- |
//! | `kernel_name`, `backend`, `precision` | the case key (`tile_ops.tile_pack`, `cuda`, `fp16`) |
//! | `problem_size` | the case's parameters (numbers and booleans as JSON, shapes `64x64x64` as lists) plus `seed` |
//! | `timing.latency_ms_p50/p90/p99/mean/std` | the headline mode's statistics (`batch` for CUDA, `cpu` for CPU) |
//! | `timing.throughput_ops_per_sec` | calls per second at the mean latency, `1000 / latency_ms_mean` |
//! | `timing.iterations` | samples taken in the headline mode |
//! | `memory.peak_mb` | peak device memory (CUDA) or peak RSS of the worker (CPU) |
//! | `memory.allocated_mb` | `null`: apex-host records peak memory only |
//! | `energy.energy_j`, `energy.power_w` | NVML energy per call and mean power (CUDA), else `null` |
//! | `accuracy.rmse`, `accuracy.max_error` | the accuracy check's rmse and max absolute error |
//! | `success` | `status == ok` |
//!
//! Added to the seed's fields: `case_id`, `status` and `reason` (skipped or failed cases), and
//! `unavailable` (`{field: why}` for every field left `null`). A case that is not `ok` has
//! `null` timings: a failed or wrong case has no valid timing.

use serde_json::{Map, Value, json};

use crate::model::{CaseResult, CaseStatus, RunSummary};

pub const FILE: &str = "quasim.json";

/// A parameter as JSON: a number or boolean as such, a shape `AxBxC` as a list, else the text.
fn param_value(text: &str) -> Value {
    if let Ok(v @ (Value::Number(_) | Value::Bool(_))) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let dims: Option<Vec<u64>> = text.split('x').map(|d| d.parse().ok()).collect();
    match dims {
        Some(dims) if dims.len() > 1 => json!(dims),
        _ => json!(text),
    }
}

fn kernel_report(case: &CaseResult) -> Value {
    let mut unavailable = Map::new();
    let mut problem_size: Map<String, Value> = case
        .key
        .params
        .iter()
        .map(|(k, v)| (k.clone(), param_value(v)))
        .collect();
    if let Some(p) = &case.protocol {
        problem_size.insert("seed".into(), json!(p.seed));
    }
    let ok = case.status == CaseStatus::Ok;
    let stats = case
        .headline
        .as_deref()
        .and_then(|h| case.timing.get(h))
        .map(|t| &t.stats)
        .filter(|_| ok);
    let timing = match stats {
        Some(s) => json!({
            "latency_ms_p50": s.p50_ms,
            "latency_ms_p90": s.p90_ms,
            "latency_ms_p99": s.p99_ms,
            "latency_ms_mean": s.mean_ms,
            "latency_ms_std": s.std_ms,
            "throughput_ops_per_sec": (s.mean_ms > 0.0).then(|| 1000.0 / s.mean_ms),
            "iterations": s.n,
        }),
        None => {
            unavailable.insert(
                "timing".into(),
                json!(format!(
                    "case status `{}`: no valid timing",
                    case.status.as_str()
                )),
            );
            json!({
                "latency_ms_p50": null, "latency_ms_p90": null, "latency_ms_p99": null,
                "latency_ms_mean": null, "latency_ms_std": null,
                "throughput_ops_per_sec": null, "iterations": null,
            })
        }
    };
    let r = &case.resources;
    let peak_mb = r.peak_device_memory_mb.or(r.peak_rss_mb);
    if peak_mb.is_none() {
        unavailable.insert(
            "memory.peak_mb".into(),
            json!("no memory figure for this case"),
        );
    }
    unavailable.insert(
        "memory.allocated_mb".into(),
        json!("apex-host records peak memory only"),
    );
    let energy = r.energy.as_ref();
    let energy_j = energy
        .and_then(|e| e.energy_per_call_mj)
        .map(|mj| mj / 1000.0);
    let power_w = energy.and_then(|e| e.mean_power_w);
    if energy_j.is_none() || power_w.is_none() {
        let why = energy
            .and_then(|e| e.energy_unavailable.clone())
            .unwrap_or_else(|| "NVML energy is measured for measured CUDA cases only".to_string());
        unavailable.insert("energy".into(), json!(why));
    }
    let accuracy = case.accuracy.as_ref();
    if accuracy.is_none() {
        unavailable.insert("accuracy".into(), json!("the case was not checked"));
    }
    json!({
        "kernel_name": case.key.kernel,
        "backend": case.key.backend,
        "precision": case.key.precision,
        "problem_size": problem_size,
        "timing": timing,
        "memory": {"peak_mb": peak_mb, "allocated_mb": null},
        "energy": {"energy_j": energy_j, "power_w": power_w},
        "accuracy": {
            "rmse": accuracy.map(|a| a.rmse).filter(|x| x.is_finite()),
            "max_error": accuracy.map(|a| a.max_abs_error).filter(|x| x.is_finite()),
        },
        "success": ok,
        "case_id": case.id,
        "status": case.status.as_str(),
        "reason": case.reason,
        "unavailable": unavailable,
    })
}

/// The `quasim.json` document: every case of the run.
pub fn document(summary: &RunSummary) -> Value {
    Value::Array(summary.benchmarks.values().map(kernel_report).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    #[test]
    fn one_report_per_case_with_the_seeds_fields() {
        let s = sample_summary();
        let doc = document(&s);
        let reports = doc.as_array().unwrap();
        assert_eq!(reports.len(), s.benchmarks.len());
        for (r, case) in reports.iter().zip(s.benchmarks.values()) {
            for field in [
                "kernel_name",
                "backend",
                "precision",
                "problem_size",
                "timing",
                "memory",
                "energy",
                "accuracy",
                "success",
            ] {
                assert!(r.get(field).is_some(), "{field} in {r}");
            }
            assert_eq!(r["case_id"], case.id.as_str());
            let ok = case.status == CaseStatus::Ok;
            assert_eq!(r["success"], ok);
            assert_eq!(r["problem_size"]["tile_size"], 8);
            if ok {
                assert_eq!(r["timing"]["latency_ms_p50"].as_f64(), case.p50_ms);
                let mean = r["timing"]["latency_ms_mean"].as_f64().unwrap();
                let ops = r["timing"]["throughput_ops_per_sec"].as_f64().unwrap();
                assert!((ops * mean - 1000.0).abs() < 1e-9);
            } else {
                assert!(r["timing"]["latency_ms_p50"].is_null(), "{r}");
                assert!(r["unavailable"]["timing"].is_string());
            }
            if case.key.backend == "cuda" && ok {
                assert_eq!(r["energy"]["energy_j"].as_f64(), Some(12.5e-3));
                assert_eq!(r["memory"]["peak_mb"], 24.5);
            }
        }
        assert_eq!(param_value("64x32x16"), json!([64, 32, 16]));
        assert_eq!(param_value("1.0e-5"), json!(1.0e-5));
        assert_eq!(param_value("false"), json!(false));
        assert_eq!(param_value("sorted"), json!("sorted"));
    }

    #[test]
    fn the_document_matches_its_schema_and_the_schema_has_teeth() {
        let schema = include_str!("../../../../docs/schemas/quasim.schema.json");
        let doc = document(&sample_summary());
        super::super::check_schema(schema, &doc).unwrap();
        let mut broken = doc;
        broken[0]["timing"]
            .as_object_mut()
            .unwrap()
            .remove("latency_ms_p99");
        assert!(super::super::check_schema(schema, &broken).is_err());
    }
}
