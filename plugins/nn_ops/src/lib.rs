//! `nn_ops`: the memory-bound NN ops of seed 004 (LayerNorm, GELU, Swish, MSE and cross-entropy
//! loss over `batch x seq x dim`) as apex-bench kernels, on the CPU and in CUDA.
//!
//! ```text
//! ops/<op>.rs     NnOp impl: descriptor, cost model, inputs, fast CPU path, f64 verification, CUDA launch
//! cuda/*.cu       one kernel per op (NVRTC at setup; shape and dtype specialised by #define);
//!                 cuda/common.cuh: conversions, 16-byte vectors, reductions, one-launch grid coordination
//! rows.rs         how a row kernel maps rows of any length onto threads (sub-warp ... split-row)
//! case.rs         OpKernel<O> / OpCase<O, T>: any NnOp becomes a Kernel with cpu + cuda cases
//! device.rs       a CUDA case's buffers: set 0, the DRAM-cold rotation copies, the shared scratch
//! launch.rs       every launch programmatic-dependent (and the override that turns it off)
//! ```
//!
//! Policies shared by every backend (README.md states them for users): every call is one kernel
//! launch; reductions to a scalar are deterministic (per-block partials summed in a fixed order
//! by the block that finishes last); cross-entropy ignores targets outside `[0, vocab)` (-100)
//! and returns NaN when every row is ignored, as PyTorch does.

pub mod accuracy;
pub mod case;
pub mod cpu_par;
pub mod device;
pub mod fast_math;
pub mod harness;
pub mod launch;
pub mod op;
pub mod ops;
pub mod program;
pub mod rng;
pub mod rows;
pub mod self_check;

pub use apex_plugin_api::element::Element;

apex_plugin_api::export_plugin!();
