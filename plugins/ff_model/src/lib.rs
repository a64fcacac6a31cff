//! `ff_model`: the Apex-X end-to-end FF inference path (`spec/apex-x-kernels.md` §1.1, §2) as
//! one apex-bench kernel, `ff_model.infer`: one call = one frame per batch entry.
//!
//! ```text
//! problem.rs    FfProblem: parameters and defaults, validation, selection counts, cost model
//! weights.rs    FfWeights: the FFModule state (L0 and L1 heavy paths) drawn from a seed
//! inputs.rs     FfInputs: dense map, utilities, split utilities, boundary, uncertainty
//! select.rs     the frame's two-stage selection (apex-tile-math), L0 ids in Hilbert order
//! reference.rs  the f64 reference, the spec's steps one by one: the verifier of every variant
//! cpu/          the fast CPU path (fp32, rayon, blocked GEMM for the pointwise conv)
//! storage.rs    Storage: fp32 / fp16 / bf16 maps on the device, rounding and byte encodings
//! cuda/fast/    the CUDA C of the fast path, a file a stage (twelve launches a call, selection
//!               on the device; prelude.cu lists the parts and kernels)
//! cuda/ff_eager.cu  the CUDA C of the eager path (one launch per op)
//! program.rs    the CUDA source per storage, NVRTC output cached per process
//! device/       DeviceState: the weights as the kernels read them, buffer sets, the launches
//! case.rs       FfKernel / FfCase: the Kernel and Instance the host drives, figures
//! ```
//!
//! The selection, Hilbert order, scan and gate formulas come from `apex-tile-math`, which
//! registers no kernel, so this plugin carries only its own kernel id.

pub mod case;
pub mod cpu;
pub mod device;
pub mod inputs;
pub mod problem;
pub mod program;
pub mod reference;
pub mod select;
pub mod storage;
pub mod weights;

pub use case::{FfCase, FfKernel};

apex_plugin_api::export_plugin!();
