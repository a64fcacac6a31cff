//! The seed's metric blocks (`benchmarks.<section>.<block>`): the case each is filled from at the
//! fixed profile, or why none is; one block as the seed writes it; and a baseline key resolved
//! through the same table.

use serde_json::{Map, Value, json};

use super::GATED_STATS;
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::report::exports::select::{Selector, fixed_profile};

pub(super) const NO_TORCH: &str = "apex-host measures no torch reference path: the seed's torch-vs-Triton \
                        comparison has no counterpart in a run (benches/anchors/ measures PyTorch \
                        outside it)";
pub(super) const NO_TRT_PYTHON: &str = "apex-host uses no TensorRT Python module: the trt_engine plugin loads libnvinfer at run time (its cases say whether it was found)";

/// Where a metric block's numbers come from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
    Case(Selector),
    NotMeasured(&'static str),
}

/// One metric block of the seed's report.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    /// The path under `benchmarks.`.
    pub(super) path: &'static str,
    /// The seed's throughput field of this block.
    pub(super) unit: &'static str,
    pub(super) source: Source,
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

pub(super) const BLOCKS: [Block; 10] = [
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
        source: cuda("ff_model.infer", fixed_profile::FF_MODEL_EAGER),
    },
    Block {
        path: "end_to_end_infer.torch_triton_fastpath",
        unit: "frames_per_s",
        source: cuda("ff_model.infer", fixed_profile::FF_MODEL_FAST),
    },
];

/// Sections with the seed's `backend` and `fallback_reason`, and the block that decides them.
pub(super) const DISPATCH_SECTIONS: [(&str, &str); 4] = [
    ("tile_ops.tilepack", "dispatch"),
    ("tile_ops.tileunpack", "dispatch"),
    ("tile_ops.fusion_gate", "dispatch"),
    ("tilessm", "triton_dispatch"),
];

/// What a block says: the case it was filled from, or why there is none.
pub(super) fn block_case<'a>(
    summary: &'a RunSummary,
    block: &Block,
) -> Result<&'a CaseResult, String> {
    match block.source {
        Source::Case(sel) => sel.find(summary),
        Source::NotMeasured(reason) => Err(reason.to_string()),
    }
}

/// One metric block as the seed writes it: the case's figures, or every field `null` with the
/// status and reason.
pub(super) fn metric_block(summary: &RunSummary, block: &Block) -> Value {
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
    block_case(summary, block)
        .map(|c| c.key.metric(stat))
        .map_err(|e| format!("benchmarks.{path} is null in the apex-x-gpu export: {e}"))
}
