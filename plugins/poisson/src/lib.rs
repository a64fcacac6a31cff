//! `poisson`: the QuASIM pressure-Poisson example (`seeds/002`: a 64^3 grid, 50 iterations,
//! tolerance 1e-5) as three apex-bench kernels that solve the same manufactured problem.
//!
//! ```text
//! grid.rs       dimensions, the per-level operator diagonal, the multigrid hierarchy
//! problem.rs    the manufactured solution u* and b = A u* (the true error is known)
//! solve.rs      methods, settings, the iteration and stopping rules, the solve report
//! reference.rs  the f64 reference: every building block and all three solvers, serial
//! real.rs       storage types (f32, f16, f64) and arithmetic types (f32, f64)
//! cpu.rs        the fast CPU path: rayon over z-planes, fused CG pass, red-black GS
//! verdict.rs    verification: converged? true residual? error against u*? -> Accuracy
//! cuda/*.cu     the CUDA kernels (NVRTC at setup), device-side scalars and stopping test
//! program.rs    CUDA source assembly (#defines for the storage type)
//! device/       one CUDA case: launch plan (plan.rs), buffers and results (solver.rs), the
//!               enqueued solve, no host sync (enqueue.rs), rotation
//! case.rs       the three kernels and their cpu/cuda instances
//! harness.rs    driving a kernel outside the host (tests, examples)
//! self_check.rs the GPU self-check and the NVRTC compile check of every source
//! ```

pub mod case;
pub mod cpu;
pub mod device;
pub mod grid;
pub mod harness;
pub mod problem;
pub mod program;
pub mod real;
pub mod reference;
pub mod self_check;
pub mod solve;
pub mod verdict;

apex_plugin_api::export_plugin!();
