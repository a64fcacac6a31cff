//! [`DeviceSolver`]: one CUDA case's module, buffer sets and the solve's results; the buffers of
//! one solve ([`BufferSet`]). The enqueued kernels are in [`super::enqueue`].

use std::sync::Arc;

use apex_plugin_api::{
    CudaHandles, PluginError,
    cuda::{CudaSession, cuda_error},
};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr};

use super::enqueue::f;
use super::plan::{
    MAX_BLOCKS, PERSISTENT_MAX_BLOCKS, SolvePath, cg_plan, persistent_capacity, resident_blocks,
    solve_path,
};
use crate::{
    grid::{Dims, Hierarchy},
    program,
    real::Storage,
    reference::DenseInverse,
    solve::{Method, Report, Settings, relative},
};

/// Every buffer one solve reads or writes.
pub struct BufferSet {
    pub b: CudaSlice<u8>,
    pub x: CudaSlice<u8>,
    /// CG: r, p0, p1, q (`cg_persistent`: r0, p, r1, w0, w1, s0, s1); MG-PCG: r, p0, p1, q, z;
    /// MG: none.
    pub cg: Vec<CudaSlice<u8>>,
    /// `(x, b)` of levels 1.. of the hierarchy.
    pub levels: Vec<(CudaSlice<u8>, CudaSlice<u8>)>,
    /// `mg_persistent`'s table of every level (its `struct Level`: x, b, nx ny, nz pad, ghost as
    /// five 8-byte words; level 0's pointers unused); one word when there is no hierarchy.
    pub level_table: CudaSlice<u64>,
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
    pub(super) functions: Vec<CudaFunction>,
    pub method: Method,
    pub dims: Dims,
    pub settings: Settings,
    pub(super) hierarchy: Option<Hierarchy>,
    pub(super) coarse_inv: Option<CudaSlice<u8>>,
    pub(super) coarse_n: usize,
    /// How a solve runs: one cooperative launch or per-kernel launches.
    pub solve_path: SolvePath,
    /// Co-resident blocks of `cg_direction` on this device (its grid's cap).
    pub(super) stencil_resident: usize,
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
        let persistent = if method == Method::Cg {
            f::CG_PERSISTENT
        } else {
            f::MG_PERSISTENT
        };
        let solve_path = match persistent_capacity(&session, &functions[persistent]) {
            None => SolvePath::Launches,
            Some((sms, occ)) if method == Method::Cg => {
                // In f64 `cg_resident` holds twice the registers (218 a thread) and was slower
                // than `cg_persistent` (H100, 64^3: 10.68 against 9.99 µs per iteration).
                let resident = if T::CUDA_CODE == 2 {
                    0
                } else {
                    persistent_capacity(&session, &functions[f::CG_RESIDENT]).map_or(0, |(_, r)| r)
                };
                cg_plan(dims, sms, occ, resident)
            }
            Some((sms, occ)) => solve_path(dims, sms, occ, true),
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
            solve_path,
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

    pub(super) fn scalar_len(&self) -> usize {
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
            Method::Cg if self.solve_path != SolvePath::Launches => 7,
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
        // The large buffers first, in the order they had before the level table existed.
        let b = vec(n)?;
        let x = vec(n)?;
        let cg = (0..self.cg_vectors())
            .map(|_| vec(n))
            .collect::<Result<_, _>>()?;
        let scalars = s
            .alloc_zeros::<f64>(3 * self.scalar_len())
            .map_err(cuda_error)?;
        let partials = s
            .alloc_zeros::<f64>(if self.method == Method::Cg {
                4 * PERSISTENT_MAX_BLOCKS
            } else {
                1
            })
            .map_err(cuda_error)?;
        let flags = s.alloc_zeros::<i32>(8).map_err(cuda_error)?;
        let level_table = s
            .clone_htod(&self.level_words(&levels))
            .map_err(cuda_error)?;
        Ok(BufferSet {
            b,
            x,
            cg,
            levels,
            level_table,
            scalars,
            partials,
            flags,
        })
    }

    /// `mg_persistent`'s level table for a set whose coarse levels are `levels`.
    fn level_words(&self, levels: &[(CudaSlice<u8>, CudaSlice<u8>)]) -> Vec<u64> {
        let Some(h) = &self.hierarchy else {
            return vec![0];
        };
        let s = &self.session.stream;
        let pack = |lo: usize, hi: usize| (lo as u32 as u64) | ((hi as u32 as u64) << 32);
        h.levels
            .iter()
            .enumerate()
            .flat_map(|(l, level)| {
                let (x, b) = match l.checked_sub(1).map(|i| &levels[i]) {
                    Some((x, b)) => (x.device_ptr(s).0, b.device_ptr(s).0),
                    None => (0, 0),
                };
                let d = level.dims;
                [x, b, pack(d.nx, d.ny), pack(d.nz, 0), level.ghost.to_bits()]
            })
            .collect()
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
}
