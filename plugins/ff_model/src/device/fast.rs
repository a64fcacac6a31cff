//! The fast path's launches of one call (`cuda/ff_fast.cu` explains each kernel): `ff_select`,
//! `ff_base`, then per level `ff_pack_*`, `ff_film_scan`, `ff_film_fc1`, `ff_film_out` and the
//! refine block: `ff_refine_apply` (or `ff_refine_apply_lean`) as one thread-block cluster per
//! tile on a fused level, `ff_refine` then `ff_apply` on a split one (`refine.rs`).
//! A level that selects no tile launches nothing.

use apex_plugin_api::{
    PluginError,
    cuda::cuda_error,
    launch::{ClusterPolicy, LaunchEx},
};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};

use super::{
    refine::LevelRefine,
    state::{DeviceState, FastFunctions, FrameSet, LevelState, film_smem, select_smem},
};
use crate::{
    problem::{COST_CHEAP, COST_HEAVY, FfProblem, SPLIT_OVERHEAD},
    program::{APPLY_PER_THREAD, FC1_ROWS, FC2_ROWS, FILM_TOKENS, THREADS, WARPS},
};

fn config(grid: (usize, usize, usize), smem: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0 as u32, grid.1 as u32, grid.2 as u32),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: smem as u32,
    }
}

/// Launches `b` with `cfg`.
///
/// SAFETY (of every caller): the arguments pushed on `b` match the entry point's signature in
/// `cuda/ff_fast.cu`, and every buffer holds what the kernel indexes for this problem (the
/// buffers are sized from the same `FfProblem` in `DeviceState::new`).
unsafe fn launch(mut b: LaunchArgs<'_>, cfg: LaunchConfig, name: &str) -> Result<(), PluginError> {
    unsafe { b.launch(cfg) }.map(drop).map_err(|e| {
        let mut err = cuda_error(e);
        err.message = format!(
            "{} (launching {name}: grid {:?}, block {:?}, {} bytes of dynamic shared memory)",
            err.message, cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes
        )
        .into();
        err
    })
}

impl DeviceState {
    /// Enqueues one call of the fast path on the host's stream with the next buffer set.
    pub fn launch_fast(&mut self, problem: &FfProblem) -> Result<(), PluginError> {
        let i = self.cursor;
        self.cursor = (i + 1) % self.sets.len();
        let set = &self.sets[i];
        let stream = &self.session.stream;
        let (b, c) = (problem.batch, problem.channels as i32);
        let (h, w) = (problem.height as i32, problem.width as i32);
        let pixels = problem.pixels() as i64;
        let g = self.hil0.len();
        let (gw0, k0) = (self.l0.gw as i32, self.l0.k as i32);
        let splits = (self.l1.k / 4) as i32;
        let (cost, overhead) = (COST_HEAVY - COST_CHEAP, SPLIT_OVERHEAD);
        let g_arg = g as i32;
        let mut a = stream.launch_builder(&self.fast.select);
        a.arg(&set.utilities)
            .arg(&set.split)
            .arg(&self.hil0)
            .arg(&self.hil1)
            .arg(&self.l0.ids)
            .arg(&self.l1.ids)
            .arg(&self.cover)
            .arg(&g_arg)
            .arg(&gw0)
            .arg(&k0)
            .arg(&splits)
            .arg(&cost)
            .arg(&overhead);
        // SAFETY: see `launch`; shared memory `select_smem` (2*G f64 + G i32 + G u8).
        unsafe { launch(a, config((b, 1, 1), select_smem(g)), "ff_select")? };

        // After the selection: the base pass skips what the refines write (`cover`).
        let t0 = self.l0.t as i32;
        let bands = b * problem.channels * (problem.height / self.l0.t);
        let mut a = stream.launch_builder(&self.fast.base);
        a.arg(&set.dense)
            .arg(&set.boundary)
            .arg(&set.uncertainty)
            .arg(&self.l1.weights)
            .arg(&self.cover)
            .arg(&set.heavy)
            .arg(&set.detail)
            .arg(&set.alpha)
            .arg(&pixels)
            .arg(&c)
            .arg(&h)
            .arg(&w)
            .arg(&t0);
        // SAFETY: see `launch`.
        unsafe { launch(a, config((bands, 1, 1), 0), "ff_base")? };

        let run = |l, source| Level {
            fast: &self.fast,
            stream,
            l,
            set,
            source,
            l0map: &self.l0map,
            cover: &self.cover,
            dims: (b, c, h, w),
        };
        run(&self.l0, Source::Dense).launch()?;
        run(&self.l1, Source::L0Map).launch()
    }
}

/// Where a level reads its tiles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// L0: the input map (storage type).
    Dense,
    /// L1: the L0 result in f32 (`l0map`, written by L0's refine apply at its tiles).
    L0Map,
}

/// What one level's launches read and write.
struct Level<'a> {
    fast: &'a FastFunctions,
    stream: &'a Arc<CudaStream>,
    l: &'a LevelState,
    set: &'a FrameSet,
    source: Source,
    l0map: &'a CudaSlice<f32>,
    /// `ff_select`'s coverage map: the fused L0 refine keeps its f32 result in `l0map` only at
    /// the tiles it marks split, the only ones L1 reads.
    cover: &'a CudaSlice<u8>,
    /// Batch, channels, height, width.
    dims: (usize, i32, i32, i32),
}

impl Level<'_> {
    /// Pack, FiLM (three launches), then the refine block into `set.heavy` (L0 also into `l0map`;
    /// L1 also writes `set.detail`), fused in one launch or split in two.
    fn launch(&self) -> Result<(), PluginError> {
        let Self {
            fast,
            stream,
            l,
            set,
            source,
            l0map,
            dims: (b, c, h, w),
            ..
        } = *self;
        if l.k == 0 {
            return Ok(());
        }
        let (t, gw, k) = (l.t as i32, l.gw as i32, l.k as i32);
        let mut a = match source {
            Source::Dense => {
                let mut a = stream.launch_builder(&fast.pack_s);
                a.arg(&set.dense);
                a
            }
            Source::L0Map => {
                let mut a = stream.launch_builder(&fast.pack_f);
                a.arg(l0map);
                a
            }
        };
        a.arg(&l.ids)
            .arg(&l.packed)
            .arg(&l.tokens)
            .arg(&c)
            .arg(&h)
            .arg(&w)
            .arg(&t)
            .arg(&gw)
            .arg(&k);
        // SAFETY: see `launch`.
        let channel_groups = (c as usize).div_ceil(WARPS);
        unsafe { launch(a, config((l.k, b, channel_groups), 0), "ff_pack")? };

        let mut a = stream.launch_builder(&fast.film_scan);
        a.arg(&l.tokens)
            .arg(&l.weights)
            .arg(&l.scanned)
            .arg(&c)
            .arg(&k);
        // SAFETY: see `launch`.
        unsafe { launch(a, config((b, channel_groups, 1), 0), "ff_film_scan")? };
        // The two linears: one block per (tile, FILM_TOKENS frames, slice of rows), the frames'
        // vectors in shared memory.
        let (frames, batch) = (b.div_ceil(FILM_TOKENS), b as i32);
        let tokens_smem = film_smem(c as usize);
        for (function, input, output, slices, name) in [
            (
                &fast.film_fc1,
                &l.scanned,
                &l.hidden,
                (c as usize).div_ceil(FC1_ROWS),
                "ff_film_fc1",
            ),
            (
                &fast.film_out,
                &l.hidden,
                &l.film,
                (2 * c as usize).div_ceil(FC2_ROWS),
                "ff_film_out",
            ),
        ] {
            let mut a = stream.launch_builder(function);
            a.arg(input)
                .arg(&l.weights)
                .arg(output)
                .arg(&c)
                .arg(&k)
                .arg(&batch);
            // SAFETY: see `launch`; shared memory FILM_TOKENS * C f32.
            unsafe { launch(a, config((l.k, frames, slices), tokens_smem), name)? };
        }

        match &l.refine {
            LevelRefine::Fused => self.fused(false),
            LevelRefine::Lean => self.fused(true),
            LevelRefine::Split { pre, stats } => self.split(pre, stats),
        }
    }

    /// `ff_refine_apply` (`lean`: `ff_refine_apply_lean`, same arguments): grid (chunks, K, B)
    /// in clusters of the tile's chunks.
    fn fused(&self, lean: bool) -> Result<(), PluginError> {
        let Self { fast, l, set, .. } = *self;
        let (b, c, h, w) = self.dims;
        let (function, name, smem) = if lean {
            (&fast.refine_apply_lean, "ff_refine_apply_lean", l.lean_smem)
        } else {
            (&fast.refine_apply, "ff_refine_apply", l.refine_smem)
        };
        let refine_apply = function.as_ref().ok_or_else(|| {
            PluginError::cuda(format!(
                "a fused refine level without {name} (a plugin bug)"
            ))
        })?;
        // The load-balancing policy: B=8 229.2 -> 224.1 us against the default (H100, 2026-11-26,
        // session 12 call 5), where the lean CTAs spent 41 % of their stall samples waiting for
        // the slowest CTA of their cluster.
        let mut a = LaunchEx::new(self.stream, refine_apply);
        a.cluster(l.chunks as u32, ClusterPolicy::LoadBalancing);
        a.ptr(&l.packed)
            .ptr(&l.film)
            .ptr(&l.weights)
            .ptr(&l.ids)
            .ptr(&set.boundary)
            .ptr(&set.uncertainty)
            .ptr(&set.heavy);
        match self.source {
            // L0: no detail; its f32 result kept for L1 (at the split tiles, `cover`).
            Source::Dense => a.null().ptr(self.l0map),
            // L1: detail = heavy - heavy_l0; nothing kept.
            Source::L0Map => a.ptr(&set.detail).null(),
        };
        a.ptr(self.cover)
            .int(c)
            .int(h)
            .int(w)
            .int(l.t as i32)
            .int(l.gw as i32)
            .int(l.k as i32);
        let cfg = config((l.chunks, l.k, b), smem);
        // SAFETY: the arguments follow `ff_refine_apply`'s parameters (`ff_refine_apply_lean`'s
        // are the same); the buffers are sized from the same `FfProblem` (see `launch`), `detail`
        // and `l0map` are map-sized or null; the level was planned fused (or lean) only where
        // `fits_cluster` held (at most 8 CTAs a cluster, C at most 16 * WARPS), and `smem` is the
        // kernel's own (`refine_smem` or `lean_smem`, opted in past 48 KiB in `DeviceState::new`).
        unsafe { a.launch(cfg) }.map_err(|e| {
            let mut err = cuda_error(e);
            err.message = format!(
                "{} (launching {name}: grid {:?} in clusters of {}, {} bytes of dynamic shared \
                 memory)",
                err.message, cfg.grid_dim, l.chunks, cfg.shared_mem_bytes
            )
            .into();
            err
        })
    }

    /// `ff_refine` (the pre-norm tensor and the chunks' partials), then `ff_apply`.
    fn split(&self, pre: &CudaSlice<f32>, stats: &CudaSlice<f32>) -> Result<(), PluginError> {
        let Self {
            fast,
            stream,
            l,
            set,
            ..
        } = *self;
        let (b, c, h, w) = self.dims;
        let (t, gw, k) = (l.t as i32, l.gw as i32, l.k as i32);
        let mut a = stream.launch_builder(&fast.refine);
        a.arg(&l.packed)
            .arg(&l.film)
            .arg(&l.weights)
            .arg(pre)
            .arg(stats)
            .arg(&c)
            .arg(&t)
            .arg(&k);
        // SAFETY: see `launch`; shared memory `refine_smem` (the attribute is set past 48 KiB).
        unsafe { launch(a, config((l.chunks, l.k, b), l.refine_smem), "ff_refine")? };

        let mut a = stream.launch_builder(&fast.apply);
        let null: u64 = 0;
        let chunks = l.chunks as i32;
        a.arg(&l.packed)
            .arg(&l.film)
            .arg(&l.weights)
            .arg(pre)
            .arg(stats)
            .arg(&l.ids)
            .arg(&set.boundary)
            .arg(&set.uncertainty)
            .arg(&set.heavy);
        match self.source {
            Source::Dense => a.arg(&null).arg(self.l0map),
            Source::L0Map => a.arg(&set.detail).arg(&null),
        };
        a.arg(&c)
            .arg(&h)
            .arg(&w)
            .arg(&t)
            .arg(&gw)
            .arg(&k)
            .arg(&chunks);
        let blocks = (c as usize * l.t * l.t).div_ceil(THREADS as usize * APPLY_PER_THREAD);
        // SAFETY: see `launch`; `detail` and `l0map` are buffers of the map's size or null
        // pointers, which the kernel never writes through.
        unsafe { launch(a, config((blocks, l.k, b), 0), "ff_apply") }
    }
}
