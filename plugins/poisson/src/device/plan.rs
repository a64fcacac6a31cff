//! How a solve is launched: the block shapes, the choice between one cooperative launch per
//! solve (`cg_persistent`, `mg_persistent`) and per-kernel launches ([`SolvePath`]), the
//! stencil's grid, and the device capacities they are sized from. [`tuning`] lets the GPU
//! self-check and bench force a plan.

use apex_plugin_api::cuda::CudaSession;
use cudarc::driver::{CudaFunction, LaunchConfig};

use crate::grid::Dims;

/// Threads per block of the 1-D grid-stride kernels.
pub const BLOCK: u32 = 256;
/// Blocks of a grid-stride kernel at most (one atomic per block per reduction; 1024 x 256
/// threads fill an H100).
pub const MAX_BLOCKS: usize = 1024;
/// Block of `cg_direction`: 32 x 8 threads over x and y.
pub const STENCIL_BLOCK: (u32, u32) = (32, 8);

/// Grids of at most this many points run as one cooperative launch (`cg_persistent`,
/// `mg_persistent`); larger ones as launches. H100, 2026-11-25 (`poisson_gpu_check --bench`, µs per iteration, the
/// to-1e-5 profiles): 64^3 9.6 persistent against 15.7 launches (the launches after
/// convergence included); 128^3 67 against 46, as the co-resident grid (about 3 blocks of 256
/// threads per SM at the kernel's register count) cannot keep DRAM busy.
pub const PERSISTENT_MAX_POINTS: usize = 64 * 64 * 64;
/// Blocks per SM of `cg_persistent`, capped by its occupancy (H100: 4 requested, 352 launched at
/// 64^3: 9.56 us per iteration; 2: 9.70).
pub const PERSISTENT_BLOCKS_PER_SM: u32 = 4;
/// Planes per thread of `cg_direction` (H100, 256^3 fp32, 50 iterations: 8 planes 255 us per
/// iteration, 16: 260, 64: 267).
pub const STENCIL_PLANES: usize = 8;
/// The most blocks `cg_persistent` is launched with (its partial-sum arrays hold this many).
pub const PERSISTENT_MAX_BLOCKS: usize = 2048;

/// Overrides of the launch plan for the GPU self-check and bench (`poisson_gpu_check`), per
/// thread: a case set up on this thread inside [`tuning::with`] uses them. Never set by the
/// plugin itself.
pub mod tuning {
    use std::cell::Cell;

    /// Which CG path to force, and its shape (0: the default).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct PathTuning {
        /// `Some(true)`: always the cooperative launch; `Some(false)`: always per-kernel
        /// launches.
        pub persistent: Option<bool>,
        /// The cooperative launch's blocks per SM.
        pub blocks_per_sm: u32,
        /// Planes per thread of `cg_direction`.
        pub stencil_zch: u32,
    }

    thread_local! {
        static CURRENT: Cell<PathTuning> = const {
            Cell::new(PathTuning { persistent: None, blocks_per_sm: 0, stencil_zch: 0 })
        };
    }

    /// Runs `f` with `tuning` in force on this thread.
    pub fn with<R>(tuning: PathTuning, f: impl FnOnce() -> R) -> R {
        apex_plugin_api::tuning::with_override(&CURRENT, tuning, f)
    }

    pub(super) fn current() -> PathTuning {
        CURRENT.with(Cell::get)
    }
}

/// How a solve is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolvePath {
    /// One cooperative launch (`cg_persistent` for CG, `mg_persistent` for MG and MG-PCG) with
    /// this grid and planes per thread of its CG pass.
    Persistent { blocks: u32, zch: i32 },
    /// Kernels per iteration (CG: two; MG: a V-cycle's) up to `max_iterations`.
    Launches,
}

pub(super) fn grid_stride(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The launch plan of a solve on `d`: one cooperative launch on small grids when the device can
/// launch it (`occupancy` co-resident blocks of 256 threads per SM; 0 when it cannot), with the
/// CG pass's 32 x 8 tiles cut in z so that there are about as many tiles as blocks. The grid is
/// one block per tile (for `cg_persistent`, whose blocks each own tiles) or, with
/// `all_blocks`, every block requested (for `mg_persistent`, whose other steps are grid-stride
/// loops).
pub fn solve_path(d: Dims, sms: u32, occupancy: u32, all_blocks: bool) -> SolvePath {
    let forced = tuning::current();
    let per_sm = match forced.blocks_per_sm {
        0 => PERSISTENT_BLOCKS_PER_SM,
        n => n,
    }
    .min(occupancy);
    let wanted = forced
        .persistent
        .unwrap_or(d.len() <= PERSISTENT_MAX_POINTS);
    if !wanted || per_sm == 0 || sms == 0 {
        return SolvePath::Launches;
    }
    let columns = d.nx.div_ceil(STENCIL_BLOCK.0 as usize) * d.ny.div_ceil(STENCIL_BLOCK.1 as usize);
    let blocks = ((sms * per_sm) as usize).min(PERSISTENT_MAX_BLOCKS);
    let chunks = (blocks / columns).clamp(1, d.nz.max(1));
    let zch = d.nz.div_ceil(chunks).max(1);
    let tiles = columns * d.nz.div_ceil(zch);
    SolvePath::Persistent {
        blocks: if all_blocks {
            blocks
        } else {
            tiles.min(blocks)
        } as u32,
        zch: zch as i32,
    }
}

/// `cg_direction`'s grid and its planes per thread ([`STENCIL_PLANES`]): one block per 32 x 8
/// x `zch` tile, at most `resident` blocks (the kernel deals the tiles round robin).
pub fn stencil_grid(d: Dims, resident: usize) -> (LaunchConfig, i32) {
    let bx = d.nx.div_ceil(STENCIL_BLOCK.0 as usize);
    let by = d.ny.div_ceil(STENCIL_BLOCK.1 as usize);
    let zch = match tuning::current().stencil_zch {
        0 => STENCIL_PLANES,
        n => n as usize,
    }
    .min(d.nz.max(1));
    let tiles = bx * by * d.nz.div_ceil(zch);
    let cfg = LaunchConfig {
        grid_dim: (tiles.clamp(1, resident.max(1)) as u32, 1, 1),
        block_dim: (STENCIL_BLOCK.0, STENCIL_BLOCK.1, 1),
        shared_mem_bytes: 0,
    };
    (cfg, zch as i32)
}

/// The device's SM count and how many blocks of `block` threads of `function` one SM holds at
/// once.
fn per_sm(session: &CudaSession, function: &CudaFunction, block: u32) -> Option<(u32, u32)> {
    use cudarc::driver::sys::CUdevice_attribute as Attr;
    let sms = session
        .ctx
        .attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .ok()?;
    let blocks = function
        .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
        .ok()?;
    Some((u32::try_from(sms).ok()?, blocks))
}

/// How many blocks of `block` threads of `function` the device holds at once.
pub(super) fn resident_blocks(
    session: &CudaSession,
    function: &CudaFunction,
    block: u32,
) -> Option<usize> {
    let (sms, blocks) = per_sm(session, function, block)?;
    Some(sms as usize * blocks as usize).filter(|&n| n > 0)
}

/// `(SM count, co-resident 256-thread blocks of a persistent kernel per SM)`, or `None` when the
/// device cannot launch cooperatively.
pub(super) fn persistent_capacity(
    session: &CudaSession,
    function: &CudaFunction,
) -> Option<(u32, u32)> {
    use cudarc::driver::sys::CUdevice_attribute as Attr;
    let cooperative = session
        .ctx
        .attribute(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
        .ok()?;
    if cooperative != 1 {
        return None;
    }
    per_sm(session, function, BLOCK)
}
