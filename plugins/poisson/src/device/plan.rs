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

/// Grids of at most this many points run as one cooperative launch (`cg_resident` or
/// `cg_persistent`, `mg_persistent`); larger ones as launches. H100, 2026-11-25
/// (`poisson_gpu_check --bench`, µs per CG iteration, the to-1e-5 profiles): 64^3 4.1 resident,
/// 9.6 persistent, 17.4 launches (the launches after convergence included); 128^3 67
/// persistent against 46 launches, as the co-resident grid (about 3 blocks of 256 threads per SM
/// at the kernel's register count) cannot keep DRAM busy.
pub const PERSISTENT_MAX_POINTS: usize = 64 * 64 * 64;
/// Blocks per SM of `cg_persistent`, capped by its occupancy (H100: 4 requested, 352 launched at
/// 64^3: 9.56 us per iteration; 2: 9.70).
pub const PERSISTENT_BLOCKS_PER_SM: u32 = 4;
/// Planes per thread of `cg_direction` (H100 session 8, 256^3 fp32, 50 iterations: 8 planes 253
/// us per iteration, 16: 252-255, 64: 249; 64 would leave 128^3 with 128 tiles for 528 resident
/// blocks).
pub const STENCIL_PLANES: usize = 8;
/// The most blocks `cg_persistent` is launched with (its partial-sum arrays hold this many).
pub const PERSISTENT_MAX_BLOCKS: usize = 2048;
/// Blocks per SM of `cg_resident` (capped by its occupancy): one, as a grid barrier and the
/// all-reduce after it cost more with more blocks (H100, `benches/probes/grid_barrier.cu`:
/// barrier and all-reduce 2.1 µs with 132 blocks, 3.0 with 264, 5.1 with 528).
pub const RESIDENT_BLOCKS_PER_SM: u32 = 1;
/// The most blocks `cg_resident` runs with (every thread of a block reads one partial sum).
pub const RESIDENT_MAX_BLOCKS: usize = 256;
/// The most z-planes a `cg_resident` thread holds (`RES_ZMAX` in `cuda/poisson.cu`).
pub const RESIDENT_MAX_PLANES: usize = 8;

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
        /// CG's cooperative launch: `Some(false)`: `cg_persistent` even where `cg_resident`
        /// fits.
        pub resident: Option<bool>,
        /// The cooperative launch's blocks per SM.
        pub blocks_per_sm: u32,
        /// Planes per thread of `cg_direction`.
        pub stencil_zch: u32,
    }

    thread_local! {
        static CURRENT: Cell<PathTuning> = const {
            Cell::new(PathTuning {
                persistent: None,
                resident: None,
                blocks_per_sm: 0,
                stencil_zch: 0,
            })
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
    /// CG in one cooperative launch of `cg_resident`: one block per 32 x 8 x `zch` tile, the
    /// vectors in registers.
    Resident { blocks: u32, zch: i32 },
    /// Kernels per iteration (CG: two; MG: a V-cycle's) up to `max_iterations`.
    Launches,
}

impl SolvePath {
    /// The kernel (or `launches`) that runs the solve, for labels.
    pub fn name(&self) -> &'static str {
        match self {
            SolvePath::Persistent { .. } => "persistent",
            SolvePath::Resident { .. } => "resident",
            SolvePath::Launches => "launches",
        }
    }
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
    let blocks = ((sms * per_sm) as usize).min(PERSISTENT_MAX_BLOCKS);
    let (zch, tiles) = tiling(d, blocks);
    SolvePath::Persistent {
        blocks: if all_blocks {
            blocks
        } else {
            tiles.min(blocks)
        } as u32,
        zch: zch as i32,
    }
}

/// CG's launch plan on `d`: `cg_resident` where one block per tile fits at most
/// [`RESIDENT_MAX_PLANES`] planes per tile (`resident_occupancy`: its co-resident blocks per SM),
/// else what [`solve_path`] picks with `persistent_occupancy` (`cg_persistent` or launches).
pub fn cg_plan(d: Dims, sms: u32, persistent_occupancy: u32, resident_occupancy: u32) -> SolvePath {
    let base = solve_path(d, sms, persistent_occupancy, false);
    let forced = tuning::current();
    if !matches!(base, SolvePath::Persistent { .. }) || forced.resident == Some(false) {
        return base;
    }
    let per_sm = match forced.blocks_per_sm {
        0 => RESIDENT_BLOCKS_PER_SM,
        n => n,
    }
    .min(resident_occupancy);
    let blocks = ((sms * per_sm) as usize).min(RESIDENT_MAX_BLOCKS);
    let (zch, tiles) = tiling(d, blocks);
    if per_sm == 0 || zch > RESIDENT_MAX_PLANES || tiles > blocks {
        return base;
    }
    SolvePath::Resident {
        blocks: tiles as u32,
        zch: zch as i32,
    }
}

/// The 32 x 8 columns of `d` cut in z into about `blocks` tiles: `(planes per tile, tiles)`.
fn tiling(d: Dims, blocks: usize) -> (usize, usize) {
    let columns = d.nx.div_ceil(STENCIL_BLOCK.0 as usize) * d.ny.div_ceil(STENCIL_BLOCK.1 as usize);
    let chunks = (blocks / columns).clamp(1, d.nz.max(1));
    let zch = d.nz.div_ceil(chunks).max(1);
    (zch, columns * d.nz.div_ceil(zch))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An H100: 132 SMs; `cg_persistent` 4 blocks per SM, `cg_resident` 1.
    fn h100(d: Dims) -> SolvePath {
        cg_plan(d, 132, 4, 1)
    }

    #[test]
    fn cg_resident_takes_the_self_checks_grids_with_one_tile_per_block() {
        for (nx, ny, nz) in [
            (64, 64, 64),
            (32, 32, 32),
            (64, 32, 16),
            (48, 40, 24),
            (33, 17, 9),
        ] {
            let d = Dims::new(nx, ny, nz);
            let SolvePath::Resident { blocks, zch } = h100(d) else {
                panic!("{d}: expected cg_resident, got {:?}", h100(d));
            };
            let (planes, tiles) = tiling(d, blocks as usize);
            assert_eq!((planes, tiles), (zch as usize, blocks as usize), "{d}");
            assert!(blocks <= 132 && zch as usize <= RESIDENT_MAX_PLANES, "{d}");
            let columns = nx.div_ceil(32) * ny.div_ceil(8);
            assert!(
                columns * nz.div_ceil(zch as usize) == blocks as usize,
                "{d}"
            );
        }
        // 64^3: 16 columns x 8 chunks of 8 planes.
        assert_eq!(
            h100(Dims::new(64, 64, 64)),
            SolvePath::Resident {
                blocks: 128,
                zch: 8
            }
        );
    }

    #[test]
    fn cg_falls_back_where_a_tile_would_need_more_planes_or_blocks() {
        // One column of 2,000 planes: 132 chunks of 16 planes, beyond RESIDENT_MAX_PLANES.
        let deep = Dims::new(1, 1, 2000);
        assert!(deep.len() <= PERSISTENT_MAX_POINTS);
        assert!(matches!(h100(deep), SolvePath::Persistent { .. }));
        // More 32 x 8 columns than blocks.
        let wide = Dims::new(512, 512, 1);
        assert!(matches!(h100(wide), SolvePath::Persistent { .. }));
        // No cooperative launch of cg_resident (occupancy 0): cg_persistent.
        assert!(matches!(
            cg_plan(Dims::new(64, 64, 64), 132, 4, 0),
            SolvePath::Persistent { .. }
        ));
        // Above PERSISTENT_MAX_POINTS: launches.
        assert_eq!(h100(Dims::new(128, 128, 128)), SolvePath::Launches);
    }

    #[test]
    fn forcing_cg_persistent_skips_cg_resident() {
        let t = tuning::PathTuning {
            resident: Some(false),
            ..tuning::PathTuning::default()
        };
        let plan = tuning::with(t, || h100(Dims::new(64, 64, 64)));
        assert!(matches!(plan, SolvePath::Persistent { .. }));
    }
}
