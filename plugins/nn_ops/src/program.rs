//! CUDA source assembly: `#define`s for one shape and precision, the shared device header
//! (`cuda/common.cuh`: storage type, conversions, vectors, reductions, grid coordination), then
//! one op's kernel (after `cuda/bulk.cuh`, the TMA bulk copies, for the kernels that stage data
//! in shared memory). Every index division is by a compile-time constant and the launch grid
//! follows from the same numbers.

use apex_plugin_api::Precision;
use cudarc::driver::LaunchConfig;

/// The device header shared by every op.
pub const COMMON: &str = include_str!("cuda/common.cuh");
/// TMA bulk copies between global and shared memory and their mbarriers (sm_90+), for the
/// kernels that stage their data there: put it before such a kernel's body.
pub const BULK: &str = include_str!("cuda/bulk.cuh");

/// `DTYPE`: 0 = fp32, 1 = fp16, 2 = bf16 (fp16/bf16 are raw `unsigned short` bits on the device).
pub fn dtype_code(precision: Precision) -> usize {
    match precision {
        Precision::Fp32 => 0,
        Precision::Fp16 => 1,
        Precision::Bf16 => 2,
        Precision::Fp8 => unreachable!("nn ops do not declare fp8"),
    }
}

/// `#define NAME VALUEu` lines (unsigned; C++ widens a literal that does not fit 32 bits), then
/// the common header, then `body`.
pub fn assemble(precision: Precision, defines: &[(&str, usize)], body: &str) -> String {
    let mut s = format!("#define DTYPE {}\n", dtype_code(precision));
    for (name, value) in defines {
        s.push_str(&format!("#define {name} {value}u\n"));
    }
    s.push_str(COMMON);
    s.push('\n');
    s.push_str(body);
    s
}

/// A 1-D launch of `grid` blocks of `block` threads.
pub fn launch_1d(grid: usize, block: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (block as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}
