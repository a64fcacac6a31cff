//! `comprehensive.json`: the "comprehensive benchmark" result rows (seed 004,
//! `benchmark_results.json`): a JSON array with one row per `ok` case of the `nn_ops` plugin,
//! the seed's operations. Other kernels have no batch × sequence × dimension shape and are left
//! out, as are cases without a valid timing (a row is a result; the seed's analysis code
//! averages `time_ms` over rows).
//!
//! | seed field | from the case |
//! | --- | --- |
//! | `operation` | `nn_ops.layer_norm` → `LayerNorm`, `gelu` → `GELU`, `swish` → `Swish`, `mse_loss` and `cross_entropy` → `Loss` |
//! | `implementation` | the backend: `cuda` → `CUDA`, `cpu` → `CPU` (apex-host's own kernels; the seed's `PyTorch` and `Triton` paths have no counterpart) |
//! | `batch_size`, `sequence_length`, `tensor_dimension` | parameters `batch`, `seq`, `dim`; for cross-entropy `tensor_dimension` is `vocab` (the classes) and the other two are `null` (its `rows` are batch × sequence) |
//! | `time_ms` | the headline mode's **mean** (the seed's "average execution time") |
//! | `memory_mb` | peak device memory (CUDA) or peak RSS (CPU) |
//! | `inference_speed` | `1000 / time_ms`, calls per second |
//! | `gpu_efficiency` | CUDA: `% of the copy line`, the case's bandwidth against the GPU's measured copy bandwidth; `null` on the CPU or without a calibrated copy line |
//! | `throughput_gbps` | the case's GB/s at its p50 |
//!
//! Added to the seed's fields: `precision`, `loss_function` (`MSE`, `CrossEntropy`), `rows`
//! (cross-entropy), `p50_ms` and `case_id`.

use serde_json::{Value, json};

use crate::model::{CaseResult, CaseStatus, RunSummary};

pub const FILE: &str = "comprehensive.json";

/// The seed's operation name (and loss function) of an nn_ops kernel.
fn operation(kernel: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match kernel {
        "nn_ops.layer_norm" => ("LayerNorm", None),
        "nn_ops.gelu" => ("GELU", None),
        "nn_ops.swish" => ("Swish", None),
        "nn_ops.mse_loss" => ("Loss", Some("MSE")),
        "nn_ops.cross_entropy" => ("Loss", Some("CrossEntropy")),
        _ => return None,
    })
}

fn int_param(case: &CaseResult, name: &str) -> Value {
    case.key
        .params
        .get(name)
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(Value::Null, |v| json!(v))
}

fn row(case: &CaseResult) -> Option<Value> {
    let (op, loss) = operation(&case.key.kernel)?;
    if case.status != CaseStatus::Ok {
        return None;
    }
    let stats = &case.timing.get(case.headline.as_deref()?)?.stats;
    let time_ms = stats.mean_ms;
    let throughput = case.throughput.as_ref();
    let cross_entropy = loss == Some("CrossEntropy");
    Some(json!({
        "operation": op,
        "implementation": match case.key.backend.as_str() {
            "cuda" => "CUDA".to_string(),
            "cpu" => "CPU".to_string(),
            other => other.to_uppercase(),
        },
        "batch_size": if cross_entropy { Value::Null } else { int_param(case, "batch") },
        "sequence_length": if cross_entropy { Value::Null } else { int_param(case, "seq") },
        "tensor_dimension": int_param(case, if cross_entropy { "vocab" } else { "dim" }),
        "time_ms": time_ms,
        "memory_mb": case.resources.peak_device_memory_mb.or(case.resources.peak_rss_mb),
        "inference_speed": (time_ms > 0.0).then(|| 1000.0 / time_ms),
        "gpu_efficiency": throughput.and_then(|t| t.pct_of_copy_bandwidth)
            .filter(|_| case.key.backend == "cuda"),
        "throughput_gbps": throughput.map(|t| t.gbps),
        "precision": case.key.precision,
        "loss_function": loss,
        "rows": if cross_entropy { int_param(case, "rows") } else { Value::Null },
        "p50_ms": case.p50_ms,
        "case_id": case.id,
    }))
}

/// The `comprehensive.json` document: the rows of the run's ok nn_ops cases.
pub fn document(summary: &RunSummary) -> Value {
    Value::Array(summary.benchmarks.values().filter_map(row).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseKey, ParamMap};
    use crate::report::test_support::{measured_case, sample_summary, summary_of};

    fn nn(kernel: &str, backend: &str, params: &[(&str, i64)], p50: f64) -> CaseResult {
        let mut c = measured_case(kernel, backend, p50, 0.01);
        let p: ParamMap = params
            .iter()
            .map(|(k, v)| ((*k).to_string(), json!(v)))
            .collect();
        c.key = CaseKey::new(kernel, backend, "fp32", &p);
        c.id = c.key.id();
        c
    }

    #[test]
    fn ok_nn_ops_cases_become_rows_with_the_seeds_fields() {
        let mut s = sample_summary();
        let extra = summary_of(vec![
            nn(
                "nn_ops.layer_norm",
                "cuda",
                &[("batch", 32), ("seq", 512), ("dim", 768)],
                0.4,
            ),
            nn(
                "nn_ops.cross_entropy",
                "cpu",
                &[("rows", 4096), ("vocab", 512)],
                1.5,
            ),
        ]);
        s.benchmarks.extend(extra.benchmarks);
        let doc = document(&s);
        let rows = doc.as_array().unwrap();
        // sample_summary's nn_ops cases failed or were skipped: no row for them.
        assert_eq!(rows.len(), 2, "{doc}");
        let ce = &rows[0];
        assert_eq!(ce["operation"], "Loss");
        assert_eq!(ce["loss_function"], "CrossEntropy");
        assert_eq!(ce["implementation"], "CPU");
        assert_eq!(
            (ce["tensor_dimension"].as_u64(), ce["rows"].as_u64()),
            (Some(512), Some(4096))
        );
        assert!(ce["batch_size"].is_null() && ce["gpu_efficiency"].is_null());
        let ln = &rows[1];
        assert_eq!(ln["operation"], "LayerNorm");
        assert_eq!(ln["implementation"], "CUDA");
        assert_eq!(
            (
                ln["batch_size"].as_u64(),
                ln["sequence_length"].as_u64(),
                ln["tensor_dimension"].as_u64()
            ),
            (Some(32), Some(512), Some(768))
        );
        let time = ln["time_ms"].as_f64().unwrap();
        assert!(
            (time - 0.4 * 1.01).abs() < 1e-12,
            "the mean, as the seed averages"
        );
        assert!((ln["inference_speed"].as_f64().unwrap() * time - 1000.0).abs() < 1e-9);
        assert!(ln["gpu_efficiency"].as_f64().unwrap() > 0.0);
        assert!(ln["throughput_gbps"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn the_document_matches_its_schema_and_the_schema_has_teeth() {
        let schema = include_str!("../../../../docs/schemas/comprehensive.schema.json");
        let s = summary_of(vec![nn(
            "nn_ops.gelu",
            "cuda",
            &[("batch", 16), ("seq", 256), ("dim", 8)],
            0.1,
        )]);
        let doc = document(&s);
        super::super::check_schema(schema, &doc).unwrap();
        let mut broken = doc;
        broken[0]["operation"] = json!("Softmax");
        assert!(super::super::check_schema(schema, &broken).is_err());
    }
}
