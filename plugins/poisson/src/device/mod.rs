//! [`DeviceSolver`]: one CUDA case's module, buffers and the enqueued solve.
//!
//! `run` enqueues a whole solve on the host's stream: a memset of the flags (and, except for
//! `cg_persistent`, of the per-iteration scalar slots the kernels add into), then the solve. No
//! host synchronisation and no allocation: the stopping test runs on the device (see
//! `cuda/poisson.cu`), so the sequence can be captured in a CUDA graph.
//! - Grids of at most [`PERSISTENT_MAX_POINTS`]: one cooperative launch runs the whole solve
//!   with grid-wide barriers (`cg_persistent` for CG, `mg_persistent` for MG and MG-PCG): a
//!   launch per solve instead of two per CG iteration or about 35 per V-cycle, and the loop ends
//!   at convergence. [`SolvePath`] picks it.
//! - Otherwise `init_solve`, `max_iterations` iterations of kernels, `finish` and (CG, MG-PCG)
//!   `cg_final_step`, the x step that each CG iteration defers to the next one; after
//!   convergence every remaining kernel returns at its first instruction, and those launches
//!   still cost their launch time, which README.md quantifies.
//!
//! [`DeviceSolver::rotate`] adds buffer sets (every vector, level and scalar a solve touches;
//! the coarse inverse, read-only, is shared) and `run` cycles through them.
//!
//! ```text
//! plan.rs     block shapes, SolvePath (one cooperative launch or launches), the stencil grid,
//!             tuning
//! solver.rs   DeviceSolver (setup, buffer sets, rotate, poison, results), BufferSet
//! enqueue.rs  the kernel launches of one solve
//! ```

mod enqueue;
mod plan;
mod solver;

pub use plan::{
    BLOCK, MAX_BLOCKS, PERSISTENT_BLOCKS_PER_SM, PERSISTENT_MAX_BLOCKS, PERSISTENT_MAX_POINTS,
    STENCIL_BLOCK, STENCIL_PLANES, SolvePath, solve_path, stencil_grid, tuning,
};
pub use solver::{BufferSet, DeviceSolver, as_bytes};
