//! `perf_gpu.json` and `perf_gpu.md`: the Apex-X GPU suite's report (seed 000, `gpu_bench.py`;
//! field by field in `spec/apex-x-kernels.md` §4.1) from the run's CUDA cases at the fixed
//! profile (`B=1, C=128, 128x128, tile 8, kmax 32, steps 256, fp16`).
//!
//! The seed compares a torch reference with a Triton dispatch path. apex-host measures its own
//! CUDA kernels, so each seed `dispatch` block is filled from our CUDA case; the torch
//! `reference` blocks have no counterpart in a run and are written with every seed field `null`,
//! `status: "skipped"` and the reason. Every metric block also carries `status` and, when filled
//! from a case, `source_case` (its case id). The TensorRT sections come from the `trt_engine`
//! plugin's `trt` cases in the seed's own shape (`trt_sections.rs`): `{status: "ok", …,
//! metrics}`, or `{status: "skipped", reason}` with the case's reason.
//!
//! | seed block (under `benchmarks.`) | case | throughput field |
//! | --- | --- | --- |
//! | `tile_ops.tilepack.dispatch` | `tile_ops.tile_pack/cuda/fp16`, profile, `ids=sorted` | `tiles_per_s` |
//! | `tile_ops.tileunpack.dispatch` | `tile_ops.tile_unpack/cuda/fp16`, profile, `ids=sorted, mode=override, offgrid=false` | `tiles_per_s` |
//! | `tile_ops.fusion_gate.dispatch` | `tile_ops.fusion_gate/cuda/fp16`, `B=1, C=128, 128x128`, default weights | `elements_per_s` |
//! | `tilessm.triton_dispatch` | `tile_ssm.forward/cuda/fp16`, `B=1, steps=256, C=128`, no clamp inside the range, no initial state | `tokens_per_s` |
//! | `end_to_end_infer.torch_eager` | `ff_model.infer/cuda/fp16`, FF profile (`B=1, C=128, 128x128, tiles 16/8, b1 16, b2 8, kmax 32/64`), `path=eager` | `frames_per_s` |
//! | `end_to_end_infer.torch_triton_fastpath` | `ff_model.infer/cuda/fp16`, FF profile, `path=fast` | `frames_per_s` |
//! | `tile_ops.*.reference`, `tilessm.torch_reference` | none: no torch path in a run | — |
//! | `end_to_end_infer.tensorrt_engine` | the one `trt_engine.engine/trt` case of shape case `default` that runs a TensorRT engine | `frames_per_s` (the named batch dimension) |
//! | `tilessm.tensorrt_plugin` | the one `trt_engine.tilessm_plugin/trt` case | `tokens_per_s` |
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

//!
//! | file | owns |
//! | --- | --- |
//! | `blocks.rs` | the seed's metric blocks, the case each is filled from, and the baseline keys they resolve |
//! | `document.rs` | `perf_gpu.json`: environment, config, status and the blocks in the seed's nesting |
//! | `markdown.rs` | `perf_gpu.md`, the seed's Markdown companion |
//! | `trt_sections.rs` | the two TensorRT sections, from the `trt_engine` cases |

mod blocks;
mod document;
mod markdown;
#[cfg(test)]
mod tests;
mod trt_sections;

pub use blocks::resolve_key;
pub use document::{document, status};
pub use markdown::render_markdown;

pub const JSON_FILE: &str = "perf_gpu.json";
pub const MARKDOWN_FILE: &str = "perf_gpu.md";
/// The seed's `suite`, also what a seed GPU baseline names.
pub const SUITE: &str = "apex_x_gpu_benchmark";

/// The latency fields of a metric block; the only ones a baseline can gate (`value_ms`).
pub const GATED_STATS: [&str; 2] = ["p50_ms", "p95_ms"];
