//! The fast path's launches of one call (`cuda/ff_fast.cu` explains each kernel): `ff_base`,
//! `ff_select`, then per level `ff_pack_*`, `ff_film_hidden`, `ff_film_out`, `ff_refine`,
//! `ff_apply`.
//! A level that selects no tile launches nothing.

use apex_plugin_api::{PluginError, cuda::cuda_error};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};

use super::state::{DeviceState, FastFunctions, FrameSet, LevelState};
use crate::{
    problem::{COST_CHEAP, COST_HEAVY, FfProblem, SPLIT_OVERHEAD},
    program::{APPLY_PER_THREAD, FC1_ROWS, FC2_ROWS, THREADS, WARPS},
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
        let map_len = problem.map_len() as i64;
        let pixels = problem.pixels() as i64;
        let vec = 16 / self.storage.bytes();
        let blocks = (problem.map_len() / vec)
            .max(problem.pixels())
            .div_ceil(THREADS as usize)
            .clamp(1, 65_535);
        let mut a = stream.launch_builder(&self.fast.base);
        a.arg(&set.dense)
            .arg(&set.boundary)
            .arg(&set.uncertainty)
            .arg(&self.l1.weights)
            .arg(&set.heavy)
            .arg(&set.detail)
            .arg(&set.alpha)
            .arg(&map_len)
            .arg(&pixels)
            .arg(&c);
        // SAFETY: see `launch`.
        unsafe { launch(a, config((blocks, 1, 1), 0), "ff_base")? };

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
            .arg(&g_arg)
            .arg(&gw0)
            .arg(&k0)
            .arg(&splits)
            .arg(&cost)
            .arg(&overhead);
        // SAFETY: see `launch`; shared memory 2*G f64 + G i32.
        unsafe { launch(a, config((b, 1, 1), 20 * g), "ff_select")? };

        let fast = &self.fast;
        let l0map = &self.l0map;
        let dims = (b, c, h, w);
        level(fast, stream, &self.l0, set, Source::Dense, l0map, dims)?;
        level(fast, stream, &self.l1, set, Source::L0Map, l0map, dims)
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

/// One level's four launches: pack, FiLM, the refine statistics and the refine apply into
/// `set.heavy` (L0 also into `l0map`; L1 also writes `set.detail`).
fn level(
    fast: &FastFunctions,
    stream: &Arc<CudaStream>,
    l: &LevelState,
    set: &FrameSet,
    source: Source,
    l0map: &CudaSlice<f32>,
    (b, c, h, w): (usize, i32, i32, i32),
) -> Result<(), PluginError> {
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

    let mut a = stream.launch_builder(&fast.film_hidden);
    a.arg(&l.tokens)
        .arg(&l.weights)
        .arg(&l.hidden)
        .arg(&c)
        .arg(&k);
    let slices = (c as usize).div_ceil(FC1_ROWS);
    // SAFETY: see `launch`; shared memory (K + 1) * C f32.
    unsafe {
        launch(
            a,
            config((l.k, b, slices), 4 * (l.k + 1) * c as usize),
            "ff_film_hidden",
        )?
    };
    let mut a = stream.launch_builder(&fast.film_out);
    a.arg(&l.hidden)
        .arg(&l.weights)
        .arg(&l.film)
        .arg(&c)
        .arg(&k);
    let slices = (2 * c as usize).div_ceil(FC2_ROWS);
    // SAFETY: see `launch`; shared memory C f32.
    unsafe { launch(a, config((l.k, b, slices), 4 * c as usize), "ff_film_out")? };

    let mut a = stream.launch_builder(&fast.refine);
    a.arg(&l.packed)
        .arg(&l.film)
        .arg(&l.weights)
        .arg(&l.pre)
        .arg(&l.stats)
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
        .arg(&l.pre)
        .arg(&l.stats)
        .arg(&l.ids)
        .arg(&set.boundary)
        .arg(&set.uncertainty)
        .arg(&set.heavy);
    match source {
        // L0: no detail; its f32 result kept for L1.
        Source::Dense => a.arg(&null).arg(l0map),
        // L1: detail = heavy - heavy_l0; nothing kept.
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
    // SAFETY: see `launch`; `detail` and `l0map` are buffers of the map's size or null pointers,
    // which the kernel never writes through.
    unsafe { launch(a, config((blocks, l.k, b), 0), "ff_apply") }
}
