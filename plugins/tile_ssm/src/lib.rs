//! `tile_ssm`: the Apex-X TileSSM scan (`spec/apex-x-kernels.md` §1.5) as three apex-bench kernels,
//! `tile_ssm.forward`, `tile_ssm.backward` and `tile_ssm.bidirectional`, on the CPU and CUDA.
//!
//! ```text
//! problem.rs    ScanProblem: parameters, validation, policies (decay clamp), cost model (Work)
//! inputs.rs     ScanInputs: tokens, the four per-channel vectors, init state, gate, from a seed
//! reference.rs  the f64 reference every backend is verified against
//! cpu.rs        the fast CPU path (vectorized over channels, rayon over batch x channel blocks)
//! cuda/*.cu     the CUDA C: one chunked parallel-scan launch per call, every direction
//! program.rs    CUDA source per dtype and block shape, NVRTC output cached per process
//! device.rs     device buffers, buffer-set rotation (DRAM-cold batches) and the launch
//! case.rs       ScanKernel / ScanCase: the Kernel and Instance the host drives
//! harness.rs    driving a kernel outside the host (tests, examples)
//! self_check.rs the GPU self-check the example `tile_ssm_gpu_check` runs
//! ```
//!
//! Policies shared by every backend (README.md states them for users): NaN tokens become 0, then
//! tokens are clamped to `[-clamp_value, clamp_value]` (so ±inf become ±clamp_value); the decay
//! is clamped to `[1e-6, 1 - 1e-6]` as f32 values; the merge gate is clamped to `[0, 1]`; all
//! arithmetic is f32 whatever the token dtype, and `y` and the final state are rounded once.

pub mod case;
pub mod cpu;
pub mod device;
pub mod harness;
pub mod inputs;
pub mod problem;
pub mod program;
pub mod reference;
mod rng;
pub mod self_check;

pub use apex_plugin_api::element::Element;

apex_plugin_api::export_plugin!();
