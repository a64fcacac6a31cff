//! [`DeviceSolver`]: one CUDA case's module, buffers and the enqueued solve.
//!
//! `run` enqueues a whole solve on the host's stream: two memsets (the per-iteration scalar
//! slots and the flags), then the solve. No host synchronisation and no allocation: the stopping
//! test runs on the device (see `cuda/poisson.cu`), so the sequence can be captured in a CUDA
//! graph.
//! - CG on a grid of at most [`PERSISTENT_MAX_POINTS`]: one cooperative launch of
//!   `cg_persistent` runs the whole solve with grid-wide barriers (a launch per solve instead of
//!   two per iteration, and the loop ends at convergence). [`CgPath`] picks it.
//! - Otherwise `init_solve`, `max_iterations` iterations of kernels and `finish`; after
//!   convergence every remaining kernel returns at its first instruction, and those launches
//!   still cost their launch time, which README.md quantifies.
//!
//! [`DeviceSolver::rotate`] adds buffer sets (every vector, level and scalar a solve touches;
//! the coarse inverse, read-only, is shared) and `run` cycles through them.

use std::sync::Arc;

use apex_plugin_api::{
    CudaHandles, PluginError,
    cuda::{CudaSession, cuda_error},
};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};

use crate::{
    grid::{Dims, Hierarchy},
    program,
    real::Storage,
    reference::DenseInverse,
    solve::{Method, Report, Settings, relative},
};

/// Threads per block of the 1-D grid-stride kernels.
pub const BLOCK: u32 = 256;
/// Blocks of a grid-stride kernel at most (one atomic per block per reduction; 1024 x 256
/// threads fill an H100).
pub const MAX_BLOCKS: usize = 1024;
/// Block of `cg_direction`: 32 x 8 threads over x and y.
pub const STENCIL_BLOCK: (u32, u32) = (32, 8);

/// CG grids of at most this many points run as one cooperative launch (`cg_persistent`); larger
/// ones as launches. H100, 2026-11-25 (`poisson_gpu_check --bench`, µs per iteration, the
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

/// Overrides of the CG launch plan for the GPU self-check and bench (`poisson_gpu_check`), per
/// thread: a case set up on this thread inside [`tuning::with`] uses them. Never set by the
/// plugin itself.
pub mod tuning {
    use std::cell::Cell;

    /// Which CG path to force, and its shape (0: the default).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct CgTuning {
        /// `Some(true)`: always `cg_persistent`; `Some(false)`: always launches.
        pub persistent: Option<bool>,
        /// `cg_persistent`'s blocks per SM.
        pub blocks_per_sm: u32,
        /// Planes per thread of `cg_direction`.
        pub stencil_zch: u32,
    }

    thread_local! {
        static CURRENT: Cell<CgTuning> = const {
            Cell::new(CgTuning { persistent: None, blocks_per_sm: 0, stencil_zch: 0 })
        };
    }

    /// Runs `f` with `tuning` in force on this thread.
    pub fn with<R>(tuning: CgTuning, f: impl FnOnce() -> R) -> R {
        let before = CURRENT.with(|c| c.replace(tuning));
        let out = f();
        CURRENT.with(|c| c.set(before));
        out
    }

    pub(super) fn current() -> CgTuning {
        CURRENT.with(Cell::get)
    }
}

/// How a CG solve is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgPath {
    /// One cooperative launch of `cg_persistent` with this grid and planes per thread.
    Persistent { blocks: u32, zch: i32 },
    /// Two kernels per iteration up to `max_iterations`.
    Launches,
}

/// Builds a kernel's argument list: the control arguments of iteration `k` (with or without the
/// stopping test) followed by the kernel's own.
type WithCtl<'a> = &'a dyn Fn(usize, bool, &[Arg]) -> Vec<Arg>;

#[derive(Clone, Copy)]
enum Arg {
    P(u64),
    I(i32),
    L(i64),
    D(f64),
}

/// Function indices into [`program::FUNCTIONS`].
mod f {
    pub const INIT: usize = 0;
    pub const CG_DIRECTION: usize = 1;
    pub const CG_UPDATE: usize = 2;
    pub const RBGS: usize = 3;
    pub const RESTRICT: usize = 4;
    pub const PROLONG: usize = 5;
    pub const COARSE: usize = 6;
    pub const RESIDUAL_NORM: usize = 7;
    pub const FINISH: usize = 8;
    pub const CG_PERSISTENT: usize = 9;
}

/// Every buffer one solve reads or writes.
pub struct BufferSet {
    pub b: CudaSlice<u8>,
    pub x: CudaSlice<u8>,
    /// CG: r, p0, p1, q (`cg_persistent`: r0, p, r1, w0, w1, s0, s1); MG-PCG: r, p0, p1, q, z;
    /// MG: none.
    pub cg: Vec<CudaSlice<u8>>,
    /// `(x, b)` of levels 1.. of the hierarchy.
    pub levels: Vec<(CudaSlice<u8>, CudaSlice<u8>)>,
    /// Per-iteration slots: res (max+2), pq (max+2), rz (max+2), as f64.
    pub scalars: CudaSlice<f64>,
    /// `cg_persistent`'s per-block partial sums: 4 x [`PERSISTENT_MAX_BLOCKS`] (empty otherwise).
    pub partials: CudaSlice<f64>,
    /// done, iterations, converged, spare, then `cg_persistent`'s barrier (count, generation)
    /// and two spares.
    pub flags: CudaSlice<i32>,
}

/// One CUDA case of a solver in storage type `T`.
pub struct DeviceSolver<T: Storage> {
    pub session: CudaSession,
    functions: Vec<CudaFunction>,
    pub method: Method,
    pub dims: Dims,
    pub settings: Settings,
    hierarchy: Option<Hierarchy>,
    coarse_inv: Option<CudaSlice<u8>>,
    coarse_n: usize,
    /// How CG runs (MG and MG-PCG always launch per kernel).
    pub cg_path: CgPath,
    /// Co-resident blocks of `cg_direction` on this device (its grid's cap).
    stencil_resident: usize,
    pub sets: Vec<BufferSet>,
    cursor: usize,
    last: usize,
    _t: std::marker::PhantomData<T>,
}

/// Raw bytes of a slice of plain numbers.
pub fn as_bytes<V: Copy>(v: &[V]) -> &[u8] {
    // SAFETY: f16/f32/f64/i32 are plain-old-data with no padding; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn grid_stride(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The launch plan of a CG solve on `d`: `cg_persistent` on small grids when the device can
/// launch it cooperatively (`max_blocks` co-resident blocks of 256 threads; 0 when it cannot),
/// with the 32 x 8 tiles cut in z so that there are about as many tiles as blocks.
pub fn cg_path(d: Dims, sms: u32, occupancy: u32) -> CgPath {
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
        return CgPath::Launches;
    }
    let columns = d.nx.div_ceil(STENCIL_BLOCK.0 as usize) * d.ny.div_ceil(STENCIL_BLOCK.1 as usize);
    let blocks = ((sms * per_sm) as usize).min(PERSISTENT_MAX_BLOCKS);
    let chunks = (blocks / columns).clamp(1, d.nz.max(1));
    let zch = d.nz.div_ceil(chunks).max(1);
    let tiles = columns * d.nz.div_ceil(zch);
    CgPath::Persistent {
        blocks: tiles.min(blocks) as u32,
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

impl<T: Storage> DeviceSolver<T> {
    /// Attaches to the host's stream, compiles the program for the device and allocates one
    /// buffer set holding `b`.
    pub fn new(
        handles: &CudaHandles,
        method: Method,
        dims: Dims,
        settings: Settings,
        b: &[f64],
    ) -> Result<Self, PluginError> {
        let session = CudaSession::attach(handles)?;
        let module = session.compile("poisson", &program::source(T::CUDA_CODE))?;
        let functions = program::FUNCTIONS
            .iter()
            .map(|name| session.function(&module, name))
            .collect::<Result<Vec<_>, _>>()?;
        let hierarchy = if method.uses_multigrid() {
            Some(Hierarchy::build(dims)?)
        } else {
            None
        };
        let (coarse_inv, coarse_n) = match &hierarchy {
            Some(h) => {
                let inv = DenseInverse::new(h.coarsest());
                let bytes: Vec<u8> = if T::CUDA_CODE == 2 {
                    as_bytes(&inv.inv).to_vec()
                } else {
                    let f: Vec<f32> = inv.inv.iter().map(|&v| v as f32).collect();
                    as_bytes(&f).to_vec()
                };
                let slice = session.stream.clone_htod(&bytes).map_err(cuda_error)?;
                (Some(slice), inv.n)
            }
            None => (None, 0),
        };
        let stencil_resident =
            resident_blocks(&session, &functions[f::CG_DIRECTION], 256).unwrap_or(MAX_BLOCKS);
        let cg_path = if method == Method::Cg {
            persistent_capacity(&session, &functions[f::CG_PERSISTENT])
                .map_or(CgPath::Launches, |(sms, occ)| cg_path(dims, sms, occ))
        } else {
            CgPath::Launches
        };
        let mut solver = Self {
            session,
            functions,
            method,
            dims,
            settings,
            hierarchy,
            coarse_inv,
            coarse_n,
            cg_path,
            stencil_resident,
            sets: Vec::new(),
            cursor: 0,
            last: 0,
            _t: std::marker::PhantomData,
        };
        let set = solver.alloc_set()?;
        solver.sets.push(set);
        solver.upload(b)?;
        solver.poison()?;
        Ok(solver)
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.session.stream
    }

    fn scalar_len(&self) -> usize {
        self.settings.max_iterations + 2
    }

    /// Bytes of one buffer set.
    pub fn set_bytes(&self) -> usize {
        let e = std::mem::size_of::<T>();
        let n = self.dims.len();
        let vectors = 2 + self.cg_vectors();
        let levels = self.hierarchy.as_ref().map_or(0, |h| h.total_points() - n);
        let partials = if self.method == Method::Cg {
            4 * PERSISTENT_MAX_BLOCKS
        } else {
            1
        };
        (vectors * n + 2 * levels) * e + (3 * self.scalar_len() + partials) * 8 + 32
    }

    fn cg_vectors(&self) -> usize {
        match self.method {
            // r, p0, p1, q; `cg_persistent`: p and two buffers each of r, w and s.
            Method::Cg if matches!(self.cg_path, CgPath::Persistent { .. }) => 7,
            Method::Cg => 4,
            Method::Mg => 0,
            Method::MgPcg => 5,
        }
    }

    fn alloc_set(&self) -> Result<BufferSet, PluginError> {
        let s = &self.session.stream;
        let e = std::mem::size_of::<T>();
        let n = self.dims.len();
        let vec = |len: usize| s.alloc_zeros::<u8>(len * e).map_err(cuda_error);
        let levels = match &self.hierarchy {
            Some(h) => h.levels[1..]
                .iter()
                .map(|l| Ok((vec(l.dims.len())?, vec(l.dims.len())?)))
                .collect::<Result<Vec<_>, PluginError>>()?,
            None => Vec::new(),
        };
        Ok(BufferSet {
            b: vec(n)?,
            x: vec(n)?,
            cg: (0..self.cg_vectors())
                .map(|_| vec(n))
                .collect::<Result<_, _>>()?,
            levels,
            scalars: s
                .alloc_zeros::<f64>(3 * self.scalar_len())
                .map_err(cuda_error)?,
            partials: s
                .alloc_zeros::<f64>(if self.method == Method::Cg {
                    4 * PERSISTENT_MAX_BLOCKS
                } else {
                    1
                })
                .map_err(cuda_error)?,
            flags: s.alloc_zeros::<i32>(8).map_err(cuda_error)?,
        })
    }

    /// Copies `b` into set 0 (storage precision).
    pub fn upload(&mut self, b: &[f64]) -> Result<(), PluginError> {
        let v: Vec<T> = crate::real::from_f64_vec(b);
        let s = self.session.stream.clone();
        s.memcpy_htod(as_bytes(&v), &mut self.sets[0].b)
            .map_err(cuda_error)?;
        s.synchronize().map_err(cuda_error)
    }

    /// Fills every vector of set 0 but `b` with NaN, so a value a kernel reads before writing,
    /// or never writes, shows up in verification; the next `run` uses set 0.
    pub fn poison(&mut self) -> Result<(), PluginError> {
        let s = self.session.stream.clone();
        let set = &mut self.sets[0];
        let mut targets: Vec<&mut CudaSlice<u8>> = vec![&mut set.x];
        targets.extend(set.cg.iter_mut());
        for (x, b) in &mut set.levels {
            targets.push(x);
            targets.push(b);
        }
        for t in targets {
            let nan = vec![T::POISON; t.len() / std::mem::size_of::<T>()];
            s.memcpy_htod(as_bytes(&nan), t).map_err(cuda_error)?;
        }
        s.synchronize().map_err(cuda_error)?;
        self.cursor = 0;
        Ok(())
    }

    /// Enqueues one solve on the next buffer set.
    pub fn run(&mut self) -> Result<(), PluginError> {
        let i = self.cursor;
        self.enqueue(i)?;
        self.last = i;
        self.cursor = (i + 1) % self.sets.len();
        Ok(())
    }

    /// Uses up to `sets` buffer sets (limited to 80 % of free device memory); returns how many.
    pub fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        let want = (sets.max(1) as usize).min(64);
        let (free, _) = self.session.ctx.mem_get_info().map_err(cuda_error)?;
        let fit = 1 + (free as f64 * 0.8 / self.set_bytes() as f64) as usize;
        let target = want.min(fit).max(self.sets.len().min(want).max(1));
        self.sets.truncate(target.max(1));
        while self.sets.len() < target {
            let mut set = self.alloc_set()?;
            let s = self.session.stream.clone();
            s.memcpy_dtod(&self.sets[0].b, &mut set.b)
                .map_err(cuda_error)?;
            self.sets.push(set);
        }
        self.session.stream.synchronize().map_err(cuda_error)?;
        self.cursor = 0;
        Ok(self.sets.len() as u32)
    }

    /// The solution and the report of the last solve on set `set` (the caller synchronized).
    pub fn result(&self, set: usize) -> Result<(Vec<f64>, Report), PluginError> {
        let s = &self.session.stream;
        let buf = &self.sets[set];
        let bytes = s.clone_dtoh(&buf.x).map_err(cuda_error)?;
        let flags = s.clone_dtoh(&buf.flags).map_err(cuda_error)?;
        let scalars = s.clone_dtoh(&buf.scalars).map_err(cuda_error)?;
        s.synchronize().map_err(cuda_error)?;
        let e = std::mem::size_of::<T>();
        let x = bytes
            .chunks_exact(e)
            .map(|c| {
                let mut v = T::ZERO;
                // SAFETY: `c` has exactly size_of::<T>() bytes and every bit pattern is a
                // valid float of T.
                unsafe {
                    std::ptr::copy_nonoverlapping(c.as_ptr(), (&raw mut v).cast::<u8>(), e);
                }
                v.to_f64()
            })
            .collect();
        if flags[0] != 1 {
            return Err(PluginError::other(format!(
                "the solve on buffer set {set} did not finish (flags {flags:?}): was run() called and the stream synchronized?"
            )));
        }
        let iterations = usize::try_from(flags[1]).unwrap_or(usize::MAX);
        if iterations > self.settings.max_iterations {
            return Err(PluginError::other(format!(
                "the device reports {iterations} iterations, more than max_iterations {}",
                self.settings.max_iterations
            )));
        }
        let report = Report {
            iterations,
            relres: relative(scalars[iterations], scalars[0]),
            converged: flags[2] == 1,
        };
        Ok((x, report))
    }

    /// The set the last `run` used.
    pub fn last_set(&self) -> usize {
        self.last
    }

    fn launch(&self, func: usize, cfg: LaunchConfig, args: &[Arg]) -> Result<(), PluginError> {
        self.launch_with(func, cfg, args, false)
    }

    /// Launches `func`; `cooperative`: with cuLaunchCooperativeKernel, which fails rather than
    /// start a grid whose blocks cannot all be resident at once.
    fn launch_with(
        &self,
        func: usize,
        cfg: LaunchConfig,
        args: &[Arg],
        cooperative: bool,
    ) -> Result<(), PluginError> {
        let mut b = self.session.stream.launch_builder(&self.functions[func]);
        for a in args {
            match a {
                Arg::P(v) => b.arg(v),
                Arg::I(v) => b.arg(v),
                Arg::L(v) => b.arg(v),
                Arg::D(v) => b.arg(v),
            };
        }
        // SAFETY: argument lists match the kernels' signatures in cuda/poisson.cu (checked by
        // the GPU self-check); every pointer is a live allocation of this case sized for the
        // dims passed with it.
        let launched = if cooperative {
            unsafe { b.launch_cooperative(cfg) }
        } else {
            unsafe { b.launch(cfg) }
        };
        launched.map(drop).map_err(cuda_error)
    }

    fn enqueue(&self, set_index: usize) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let set = &self.sets[set_index];
        let ptr = |s: &CudaSlice<u8>| s.device_ptr(&stream).0;
        let (sc, _) = set.scalars.device_ptr(&stream);
        let (fl, _) = set.flags.device_ptr(&stream);
        let m = self.scalar_len() as u64 * 8;
        let (res, pq, rz) = (sc, sc + m, sc + 2 * m);
        let tol2 = self.settings.tolerance * self.settings.tolerance;
        let ctl = |k: usize, check: bool| {
            [
                Arg::P(fl),
                Arg::P(res),
                Arg::I(k as i32),
                Arg::I(i32::from(check)),
                Arg::D(tol2),
            ]
        };
        let with = |k: usize, check: bool, rest: &[Arg]| -> Vec<Arg> {
            let mut v = ctl(k, check).to_vec();
            v.extend_from_slice(rest);
            v
        };
        // The slot memsets are the only non-kernel nodes; both are capturable.
        memset_zero(&stream, sc, 3 * self.scalar_len() * 8)?;
        memset_zero(&stream, fl, 32)?;
        let d = self.dims;
        let n = d.len() as i64;
        let (x, b) = (ptr(&set.x), ptr(&set.b));
        let cg: Vec<u64> = set.cg.iter().map(ptr).collect();
        let r = cg.first().copied().unwrap_or(0);
        if let CgPath::Persistent { blocks, zch } = self.cg_path {
            let (part, _) = set.partials.device_ptr(&stream);
            let args = [
                Arg::P(fl),
                Arg::P(res),
                Arg::P(pq),
                Arg::P(part),
                Arg::P(b),
                Arg::P(x),
                Arg::P(cg[1]),
                Arg::P(cg[0]),
                Arg::P(cg[2]),
                Arg::P(cg[3]),
                Arg::P(cg[4]),
                Arg::P(cg[5]),
                Arg::P(cg[6]),
                Arg::I(d.nx as i32),
                Arg::I(d.ny as i32),
                Arg::I(d.nz as i32),
                Arg::I(zch),
                Arg::I(self.settings.max_iterations as i32),
                Arg::D(tol2),
            ];
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            return self.launch_with(f::CG_PERSISTENT, cfg, &args, true);
        }
        self.launch(
            f::INIT,
            grid_stride(d.len()),
            &with(
                0,
                false,
                &[Arg::P(b), Arg::P(x), Arg::P(r), Arg::P(res), Arg::L(n)],
            ),
        )?;
        let (sgrid, zch) = stencil_grid(d, self.stencil_resident);
        let dims3 = [
            Arg::I(d.nx as i32),
            Arg::I(d.ny as i32),
            Arg::I(d.nz as i32),
        ];
        for k in 0..self.settings.max_iterations {
            match self.method {
                Method::Mg => {
                    self.vcycle(set, &with, 0, x, b, false, k, true, None)?;
                    let mut a = vec![Arg::P(x), Arg::P(b), Arg::P(res)];
                    a.extend_from_slice(&dims3);
                    self.launch(f::RESIDUAL_NORM, grid_stride(d.len()), &with(k, false, &a))?;
                }
                Method::Cg | Method::MgPcg => {
                    let pcg = self.method == Method::MgPcg;
                    let (p0, p1, q) = (cg[1], cg[2], cg[3]);
                    let (p_new, p_old) = if k % 2 == 0 { (p0, p1) } else { (p1, p0) };
                    let (src, rho) = if pcg {
                        let z = cg[4];
                        self.vcycle(set, &with, 0, z, r, true, k, true, Some(rz))?;
                        (z, rz)
                    } else {
                        (r, res)
                    };
                    let mut a = vec![
                        Arg::P(src),
                        Arg::P(p_old),
                        Arg::P(p_new),
                        Arg::P(q),
                        Arg::P(rho),
                        Arg::I(i32::from(k == 0)),
                        Arg::P(pq),
                    ];
                    a.extend_from_slice(&dims3);
                    a.push(Arg::I(zch));
                    self.launch(f::CG_DIRECTION, sgrid, &with(k, !pcg, &a))?;
                    self.launch(
                        f::CG_UPDATE,
                        grid_stride(d.len()),
                        &with(
                            k,
                            false,
                            &[
                                Arg::P(x),
                                Arg::P(r),
                                Arg::P(p_new),
                                Arg::P(q),
                                Arg::P(rho),
                                Arg::P(pq),
                                Arg::P(res),
                                Arg::L(n),
                            ],
                        ),
                    )?;
                }
            }
        }
        self.launch(
            f::FINISH,
            LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (32, 1, 1),
                shared_mem_bytes: 0,
            },
            &[
                Arg::P(fl),
                Arg::P(res),
                Arg::I(self.settings.max_iterations as i32),
                Arg::D(tol2),
            ],
        )
    }

    /// Enqueues one V-cycle on level `l` for `A_l x = b` (device pointers). `check`: its first
    /// kernel applies the stopping test of iteration `k`. `dot`: its last kernel adds `b . x`
    /// into `dot[k]`.
    #[allow(clippy::too_many_arguments)]
    fn vcycle(
        &self,
        set: &BufferSet,
        with: WithCtl<'_>,
        l: usize,
        x: u64,
        b: u64,
        zero_init: bool,
        k: usize,
        check: bool,
        dot: Option<u64>,
    ) -> Result<(), PluginError> {
        let h = self.hierarchy.as_ref().expect("multigrid method");
        let level = h.levels[l];
        let d = level.dims;
        let dot_args = [Arg::P(dot.unwrap_or(0)), Arg::I(k as i32)];
        let Some(coarse) = h.levels.get(l + 1) else {
            let inv = self.coarse_inv.as_ref().expect("multigrid method");
            let (inv, _) = inv.device_ptr(&self.session.stream);
            let mut a = vec![
                Arg::P(inv),
                Arg::P(b),
                Arg::P(x),
                Arg::I(self.coarse_n as i32),
            ];
            a.extend_from_slice(&dot_args);
            return self.launch(
                f::COARSE,
                LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                },
                &with(k, check, &a),
            );
        };
        let pairs = d.nx.div_ceil(2) * d.ny * d.nz;
        let dims3 = [
            Arg::I(d.nx as i32),
            Arg::I(d.ny as i32),
            Arg::I(d.nz as i32),
        ];
        let sweep = |check: bool, color: i32, zero: bool, dot: Option<u64>| {
            let mut a = vec![Arg::P(x), Arg::P(b)];
            a.extend_from_slice(&dims3);
            a.extend_from_slice(&[
                Arg::D(level.ghost),
                Arg::I(color),
                Arg::I(i32::from(zero)),
                Arg::P(dot.unwrap_or(0)),
                Arg::I(k as i32),
            ]);
            self.launch(f::RBGS, grid_stride(pairs), &with(k, check, &a))
        };
        let sweeps = self.settings.sweeps;
        for s in 0..sweeps {
            sweep(check && s == 0, 0, zero_init && s == 0, None)?;
            sweep(false, 1, false, None)?;
        }
        let (xc, bc) = &set.levels[l];
        let stream = &self.session.stream;
        let (xc, bc) = (xc.device_ptr(stream).0, bc.device_ptr(stream).0);
        let mut a = vec![Arg::P(x), Arg::P(b), Arg::P(bc)];
        a.extend_from_slice(&dims3);
        a.push(Arg::D(level.ghost));
        self.launch(
            f::RESTRICT,
            grid_stride(coarse.dims.len()),
            &with(k, false, &a),
        )?;
        self.vcycle(set, with, l + 1, xc, bc, true, k, false, None)?;
        let mut a = vec![Arg::P(xc), Arg::P(x)];
        a.extend_from_slice(&dims3);
        a.push(Arg::D(coarse.ghost));
        self.launch(f::PROLONG, grid_stride(d.len()), &with(k, false, &a))?;
        for s in 0..sweeps {
            sweep(false, 1, false, None)?;
            sweep(false, 0, false, if s + 1 == sweeps { dot } else { None })?;
        }
        Ok(())
    }
}

/// How many blocks of `block` threads of `function` the device holds at once.
fn resident_blocks(session: &CudaSession, function: &CudaFunction, block: u32) -> Option<usize> {
    use cudarc::driver::sys::CUdevice_attribute as Attr;
    let sms = session
        .ctx
        .attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .ok()?;
    let per_sm = function
        .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
        .ok()?;
    Some(usize::try_from(sms).ok()? * per_sm as usize).filter(|&n| n > 0)
}

/// `(SM count, co-resident 256-thread blocks of `cg_persistent` per SM)`, or `None` when the
/// device cannot launch cooperatively.
fn persistent_capacity(session: &CudaSession, function: &CudaFunction) -> Option<(u32, u32)> {
    use cudarc::driver::sys::CUdevice_attribute as Attr;
    let attr = |a| session.ctx.attribute(a).ok();
    if attr(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 1 {
        return None;
    }
    let sms = u32::try_from(attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?).ok()?;
    let occupancy = function
        .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
        .ok()?;
    Some((sms, occupancy))
}

/// `cuMemsetD8Async(ptr, 0, bytes)` on `stream` (capturable).
fn memset_zero(stream: &CudaStream, ptr: u64, bytes: usize) -> Result<(), PluginError> {
    // SAFETY: `ptr` is the start of a live allocation of at least `bytes` bytes of this case.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }
        .map_err(cuda_error)
}
