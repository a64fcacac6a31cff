//! CUDA source assembly: `#define`s for one shape and precision, plugin-api's storage header (the
//! storage type and its conversions), the shared device header (`cuda/common.cuh`: vectors,
//! reductions, grid coordination), then
//! one op's kernel (after `cuda/bulk.cuh`, the TMA bulk copies, for the kernels that stage data
//! in shared memory). Every index division is by a compile-time constant and the launch grid
//! follows from the same numbers.

use apex_plugin_api::Precision;
use apex_plugin_api::cuda::specialised_source;
use cudarc::driver::LaunchConfig;

/// The device header shared by every op.
pub const COMMON: &str = include_str!("cuda/common.cuh");
/// TMA bulk copies between global and shared memory and their mbarriers (sm_90+), for the
/// kernels that stage their data there: put it before such a kernel's body.
pub const BULK: &str = include_str!("cuda/bulk.cuh");

/// The program of one op's `body` for `precision` and `defines`: plugin-api's
/// [`specialised_source`] with the common header, then `body`.
pub fn assemble(precision: Precision, defines: &[(&str, usize)], body: &str) -> String {
    specialised_source(precision, defines, &[COMMON, body])
        .unwrap_or_else(|| unreachable!("the nn ops do not declare {precision:?}"))
}

/// A 1-D launch of `grid` blocks of `block` threads.
pub fn launch_1d(grid: usize, block: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (block as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}
