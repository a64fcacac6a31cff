//! The fast path's launches of one call (`cuda/fast/*.cu`, whose `prelude.cu` explains each
//! kernel): `ff_select` and `ff_base` for the whole batch, then per run of frames (`streams.rs`)
//! both levels on the run's stream: per level `ff_pack_*`, `ff_film_scan`, `ff_film_fc1`,
//! `ff_film_out` (their `_x2` entry points where runs overlap: `sizing::film_tiles`; `_one` in a
//! call of one frame: `sizing::film_frames`) and the refine block: `ff_refine_apply` (or
//! `ff_refine_apply_lean`) as one thread-block cluster per tile on a fused level, `ff_refine`
//! then `ff_apply` on a split one (`refine.rs`). A run's launches take
//! every buffer from the run's first frame on (`LaunchEx::ptr_at`) and count its frames in their
//! grids. A level that selects no tile launches nothing. `launch_refines` enqueues only the refine
//! blocks of a call, for timing them apart (`ff_model_gpu_check --stage refines`).
//!
//! Dependent launches: on sm_90 and later every level launch is a programmatic dependent of the
//! run stream's previous kernel (`LaunchEx::dependent`; each kernel waits for its predecessor at
//! its start, `FF_AFTER_PREDECESSOR` in `prelude.cu`). A chain's kernel then starts as its
//! predecessor's last CTA exits instead of after that grid's completion: the profile 44.65 ->
//! 42.6 us, B=8 111.1 -> 104.4, B=16 188.5 -> 183.6 (H200, in process, thirty-fourth session,
//! call 1, two rounds). `ff_select` and `ff_base` launch plainly: they start a call and a stream.
//!
//! Pack-free levels: where a call's frames run in several runs (B > `RUN_FRAMES`), a level on the
//! wgmma refine launches no pack: `ff_film_scan_map_*` takes the tile means from the level's
//! source map and the refine (`ff_refine_wg_map_*`) reads its tile from the map. The packs are
//! short, GPU-wide grids in every run's chain (at B=8, six launches of 960-1,536 blocks); without
//! them B=8 ran 128.1 -> 119.2 us in process (H200, twenty-ninth session, call 5 of
//! `benches/results/device_scripts_2026-11-28_s29.sh`, two rounds), but a map scan's few blocks
//! read the means more slowly than a pack's many at one run (the profile 45.7 -> 50.3, B=3 69.8 ->
//! 74.8), so one run keeps its packs.

use apex_plugin_api::{
    PluginError,
    cuda::cuda_error,
    launch::{ClusterPolicy, LaunchEx},
};
use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DriverError, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::{
    refine::LevelRefine,
    sizing::{film_smem, film_tiles, select_smem},
    state::{DeviceState, FastFunctions, FrameSet, LevelState, WgMap},
    streams::Frames,
};
use crate::{
    problem::{COST_CHEAP, COST_HEAVY, FfProblem, SPLIT_OVERHEAD},
    program::{
        APPLY_PER_THREAD, BASE_BANDS_PER_BLOCK, BASE_CHANNELS, FC1_ROWS, FC2_ROWS,
        SCAN_MAP_CHANNELS, THREADS, WARPS, WG_PIX, wg_smem,
    },
};

fn config(grid: (usize, usize, usize), smem: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0 as u32, grid.1 as u32, grid.2 as u32),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: smem as u32,
    }
}

/// A failed launch's error, naming the kernel and its configuration (`cluster`: the CTAs of each
/// thread-block cluster, where it has clusters).
fn launch_error(
    e: DriverError,
    name: &str,
    cfg: &LaunchConfig,
    cluster: Option<usize>,
) -> PluginError {
    let mut err = cuda_error(e);
    let clusters = cluster.map_or(String::new(), |n| format!(" in clusters of {n}"));
    err.message = format!(
        "{} (launching {name}: grid {:?}{clusters}, block {:?}, {} bytes of dynamic shared memory)",
        err.message, cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes
    )
    .into();
    err
}

/// Launches `b` with `cfg`.
///
/// SAFETY (of every caller): the arguments pushed on `b` match the entry point's signature in
/// `cuda/fast/*.cu`, and every buffer holds what the kernel indexes for this problem (the
/// buffers are sized from the same `FfProblem` in `DeviceState::new`).
unsafe fn launch(mut b: LaunchArgs<'_>, cfg: LaunchConfig, name: &str) -> Result<(), PluginError> {
    unsafe { b.launch(cfg) }
        .map(drop)
        .map_err(|e| launch_error(e, name, &cfg, None))
}

impl DeviceState {
    /// Enqueues one call of the fast path on the host's stream with the next buffer set.
    pub fn launch_fast(&mut self, problem: &FfProblem) -> Result<(), PluginError> {
        let i = self.next_set();
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

        // After the selection the runs fork, run 0 on the host's stream and the others on side
        // streams, and the base pass runs beside them on a stream of its own: it skips what the
        // refines write (`cover`), and nothing reads what it writes.
        self.runs.fork(stream, true)?;
        let t0 = self.l0.t as i32;
        let bands = b * (problem.height / self.l0.t) * problem.channels.div_ceil(BASE_CHANNELS);
        let blocks = bands.div_ceil(BASE_BANDS_PER_BLOCK);
        let mut a = self.runs.background().launch_builder(&self.fast.base);
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
        unsafe { launch(a, config((blocks, 1, 1), 0), "ff_base")? };

        // Each run of frames computes both levels on a stream of its own: L1 reads only its own
        // frames' L0 results.
        self.levels(set, problem, |l| l.launch())?;
        self.runs.join(stream, true)
    }

    /// Only the two levels' refine blocks of one call, on the runs' streams, with the next
    /// buffer set's outputs: what they cost without the rest of the frame (the bench's
    /// `--stage refines`). They read the packed tiles (pack-free levels: the maps), FiLM
    /// vectors and selections the last
    /// [`DeviceState::launch_fast`] left, so one must have run; the outputs are then the
    /// refines' part of a frame, not a whole one.
    pub fn launch_refines(&mut self, problem: &FfProblem) -> Result<(), PluginError> {
        let i = self.next_set();
        self.runs.fork(&self.session.stream, false)?;
        self.levels(&self.sets[i], problem, |l| l.refine())?;
        self.runs.join(&self.session.stream, false)
    }

    /// `each` of L0, then L1, for every run of frames on the run's stream.
    fn levels(
        &self,
        set: &FrameSet,
        problem: &FfProblem,
        each: fn(&Level<'_>) -> Result<(), PluginError>,
    ) -> Result<(), PluginError> {
        let (c, h, w) = (
            problem.channels as i32,
            problem.height as i32,
            problem.width as i32,
        );
        let film_tiles = film_tiles(self.runs.count());
        let pack_free = self.runs.count() > 1;
        for (stream, frames) in self.runs.streams(&self.session.stream) {
            let run = |l, source| Level {
                fast: &self.fast,
                stream,
                l,
                set,
                source,
                l0map: &self.l0map,
                cover: &self.cover,
                g0: self.hil0.len(),
                frames,
                dims: (c, h, w),
                bytes: self.storage.bytes(),
                film_tiles,
                pack_free,
            };
            each(&run(&self.l0, Source::Dense))?;
            each(&run(&self.l1, Source::L0Map))?;
        }
        Ok(())
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

/// What one level's launches read and write, for one run of frames.
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
    /// L0 tiles a frame (the coverage map's bytes a frame).
    g0: usize,
    /// The batch entries these launches compute: every buffer is passed from its first one on,
    /// and the grids count `frames.n` of them.
    frames: Frames,
    /// Channels, height, width.
    dims: (i32, i32, i32),
    /// Bytes of an element of the storage type (the maps, proxies and outputs).
    bytes: usize,
    /// Tile indices a FiLM linear block takes (`sizing::film_tiles`).
    film_tiles: usize,
    /// The call runs in several runs of frames: a wgmma level launches no pack (the module
    /// docs).
    pack_free: bool,
}

impl Level<'_> {
    /// The pack-free kernels this level runs, if it is pack-free: a wgmma level of a call in
    /// several runs.
    fn map_kernels(&self) -> Option<&WgMap> {
        let wgmma = matches!(self.l.refine, LevelRefine::Wg);
        (self.pack_free && wgmma)
            .then(|| self.fast.wg_map(self.dims.0 as usize, self.l.t))
            .flatten()
    }

    /// The level's source: [storage-typed, f32] index of its pack-free kernels.
    fn source_index(&self) -> usize {
        usize::from(self.source == Source::L0Map)
    }

    /// Pushes the level's source map of the run's first frame (L0 the input, L1 `l0map`).
    fn push_source(&self, a: &mut LaunchEx<'_>) {
        let (map, _) = self.per_frame();
        let b0 = self.frames.b0;
        match self.source {
            Source::Dense => a.ptr_at(&self.set.dense, b0 * map * self.bytes),
            Source::L0Map => a.ptr_at(self.l0map, b0 * map),
        };
    }

    /// Elements a frame of the map (`C*H*W`) and of a proxy (`H*W`).
    fn per_frame(&self) -> (usize, usize) {
        let (c, h, w) = self.dims;
        let pixels = h as usize * w as usize;
        (c as usize * pixels, pixels)
    }

    /// A launch of `function` on the run's stream, a dependent one where the device has them.
    fn launch_ex<'f>(&'f self, function: &'f CudaFunction) -> LaunchEx<'f> {
        let mut a = LaunchEx::new(self.stream, function);
        if self.fast.dependent {
            a.dependent();
        }
        a
    }

    /// Launches `a` with `cfg` (in clusters of `cluster` CTAs, where it has them), naming `name`
    /// in an error.
    ///
    /// SAFETY (of every caller): as [`launch`]'s; the run's frames lie inside the batch, so every
    /// `ptr_at` offset (the run's first frame times a buffer's elements a frame) is inside its
    /// buffer, and the grid's batch dimension is the run's length; a dependent launch's kernel
    /// waits for its predecessor before its first memory access (every fast kernel begins with
    /// `FF_AFTER_PREDECESSOR`).
    unsafe fn go(
        mut a: LaunchEx<'_>,
        cfg: LaunchConfig,
        name: &str,
        cluster: Option<usize>,
    ) -> Result<(), PluginError> {
        unsafe { a.launch(cfg) }.map_err(|e| launch_error(e, name, &cfg, cluster))
    }

    /// Pack, FiLM (three launches), then the refine block into `set.heavy` (L0 also into `l0map`;
    /// L1 also writes `set.detail`), fused in one launch or split in two.
    fn launch(&self) -> Result<(), PluginError> {
        let Self {
            fast,
            l,
            source,
            frames,
            dims: (c, h, w),
            ..
        } = *self;
        if l.k == 0 {
            return Ok(());
        }
        let (b, b0) = (frames.n, frames.b0);
        let (t, gw, k) = (l.t as i32, l.gw as i32, l.k as i32);
        let kc = l.k * c as usize;
        let channel_groups = (c as usize).div_ceil(WARPS);
        if let Some(kernels) = self.map_kernels() {
            // FiLM's scan takes the tile means from the source map itself: no pack.
            let mut a = self.launch_ex(&kernels.scan[self.source_index()]);
            self.push_source(&mut a);
            a.ptr_at(&l.ids, b0 * l.k)
                .ptr(&l.weights)
                .ptr_at(&l.scanned, b0 * kc)
                .int(c)
                .int(h)
                .int(w)
                .int(gw)
                .int(k);
            let smem = (1 + SCAN_MAP_CHANNELS) * l.k * std::mem::size_of::<f32>();
            let cfg = config((b, (c as usize).div_ceil(SCAN_MAP_CHANNELS), 1), smem);
            // SAFETY: see `go`; shared memory for K tile ids and SCAN_MAP_CHANNELS * K tile
            // means.
            unsafe { Self::go(a, cfg, "ff_film_scan_map", None)? };
        } else {
            let mut a = match source {
                Source::Dense => self.launch_ex(&fast.pack_s),
                Source::L0Map => self.launch_ex(&fast.pack_f),
            };
            self.push_source(&mut a);
            a.ptr_at(&l.ids, b0 * l.k)
                .ptr_at(&l.packed, b0 * kc * l.t * l.t)
                .ptr_at(&l.tokens, b0 * kc)
                .int(c)
                .int(h)
                .int(w)
                .int(t)
                .int(gw)
                .int(k);
            // SAFETY: see `go`.
            unsafe { Self::go(a, config((l.k, b, channel_groups), 0), "ff_pack", None)? };

            let mut a = self.launch_ex(&fast.film_scan);
            a.ptr_at(&l.tokens, b0 * kc)
                .ptr(&l.weights)
                .ptr_at(&l.scanned, b0 * kc)
                .int(c)
                .int(k);
            // SAFETY: see `go`.
            unsafe { Self::go(a, config((b, channel_groups, 1), 0), "ff_film_scan", None)? };
        }
        // The two linears: one block per (`tiles` tiles, `frames` frames of the run, slice of
        // rows), the block's vectors in shared memory.
        let tiles = self.film_tiles;
        let ([fc1, out], frames) = fast.film(tiles, b);
        let tokens_smem = film_smem(c as usize, tiles, b.min(frames));
        for (function, input, output, width, slices, name) in [
            (
                fc1,
                &l.scanned,
                &l.hidden,
                kc,
                (c as usize).div_ceil(FC1_ROWS),
                "ff_film_fc1",
            ),
            (
                out,
                &l.hidden,
                &l.film,
                2 * kc,
                (2 * c as usize).div_ceil(FC2_ROWS),
                "ff_film_out",
            ),
        ] {
            let mut a = self.launch_ex(function);
            a.ptr_at(input, b0 * kc)
                .ptr(&l.weights)
                .ptr_at(output, b0 * width)
                .int(c)
                .int(k)
                .int(b as i32);
            let cfg = config(
                (l.k.div_ceil(tiles), b.div_ceil(frames), slices),
                tokens_smem,
            );
            // SAFETY: see `go`; shared memory for tiles * min(b, frames) vectors of C f32, the
            // entry point's (`tiles` 1 or 2: `film_tiles`; `frames` FILM_TOKENS, or 1 for one
            // tile of a one-frame run: `film_frames`).
            unsafe { Self::go(a, cfg, name, None)? };
        }

        self.refine()
    }

    /// The level's refine block alone, from the packed tiles and FiLM vectors its last
    /// [`Level::launch`] left (a level that selects no tile launches nothing).
    fn refine(&self) -> Result<(), PluginError> {
        if self.l.k == 0 {
            return Ok(());
        }
        let Self { fast, l, .. } = *self;
        let c = self.dims.0 as usize;
        match &l.refine {
            LevelRefine::Fused => self.fused(
                fast.refine_apply.as_ref(),
                "ff_refine_apply",
                l.refine_smem,
                l.chunks,
                true,
                false,
            ),
            LevelRefine::Lean => {
                let (function, name) = fast.lean(c, l.t).unzip();
                let name = name.unwrap_or("ff_refine_apply_lean");
                self.fused(function, name, l.lean_smem, l.chunks, true, false)
            }
            // Its chunks are WG_PIX pixels, not CHUNK (t = 8: one CTA a SM, `wg_smem`); a pack-free
            // level's reads the map. A one-CTA tile (t = 8) launches without a cluster attribute:
            // the kernel runs no cluster operation there, and the block scheduler places the
            // CTAs freely (B=8 113.7-114.3 -> 113.1-113.2 us, the profile 45.0 -> 45.1; H200, in
            // process, thirty-third session, call 1).
            LevelRefine::Wg => {
                let (chunks, smem) = (l.t * l.t / WG_PIX, wg_smem(l.t));
                let clustered = chunks > 1;
                match self.map_kernels() {
                    Some(kernels) => {
                        let function = &kernels.refine[self.source_index()];
                        let name = "ff_refine_wg_map";
                        self.fused(Some(function), name, smem, chunks, clustered, true)
                    }
                    None => {
                        let (function, name) = fast.wg(c, l.t).unzip();
                        let name = name.unwrap_or("ff_refine_wg");
                        self.fused(function, name, smem, chunks, clustered, false)
                    }
                }
            }
            LevelRefine::Split { pre, stats } => self.split(pre, stats),
        }
    }

    /// The outputs a refine writes besides `heavy`: L0 no detail, its f32 result kept for L1
    /// (the fused kernels: at the split tiles, `cover`); L1 detail = heavy - heavy_l0, nothing
    /// kept.
    fn detail_and_l0map(&self, a: &mut LaunchEx<'_>) {
        let (map, _) = self.per_frame();
        let b0 = self.frames.b0;
        match self.source {
            Source::Dense => a.null().ptr_at(self.l0map, b0 * map),
            Source::L0Map => a.ptr_at(&self.set.detail, b0 * map * self.bytes).null(),
        };
    }

    /// The arguments every refine apply reads after its scratch: the tiles' ids, the proxies and
    /// `heavy` of the run's first frame.
    fn tiles_and_proxies(&self, a: &mut LaunchEx<'_>) {
        let (map, pixels) = self.per_frame();
        let (b0, bytes, set) = (self.frames.b0, self.bytes, self.set);
        a.ptr_at(&self.l.ids, b0 * self.l.k)
            .ptr_at(&set.boundary, b0 * pixels * bytes)
            .ptr_at(&set.uncertainty, b0 * pixels * bytes)
            .ptr_at(&set.heavy, b0 * map * bytes);
    }

    /// A fused refine kernel `name` (`ff_refine_apply`, `ff_refine_apply_lean` or the wgmma
    /// refine: same arguments) with `smem` bytes of dynamic shared memory: grid (chunks, K, B),
    /// in clusters of the tile's `chunks` where `clustered`; its tiles from the packed copies, or
    /// (`from_map`, the pack-free wgmma refine) from the level's source map.
    fn fused(
        &self,
        function: Option<&CudaFunction>,
        name: &str,
        smem: usize,
        chunks: usize,
        clustered: bool,
        from_map: bool,
    ) -> Result<(), PluginError> {
        let l = self.l;
        let (c, h, w) = self.dims;
        let (b0, b) = (self.frames.b0, self.frames.n);
        let refine_apply = function.ok_or_else(|| {
            PluginError::cuda(format!(
                "a fused refine level without {name} (a plugin bug)"
            ))
        })?;
        // The load-balancing policy: B=8 229.2 -> 224.1 us against the default (H100, 2026-11-26,
        // session 12 call 5), where the lean CTAs spent 41 % of their stall samples waiting for
        // the slowest CTA of their cluster.
        let mut a = self.launch_ex(refine_apply);
        if clustered {
            a.cluster(chunks as u32, ClusterPolicy::LoadBalancing);
        }
        let kc = l.k * c as usize;
        if from_map {
            self.push_source(&mut a);
        } else {
            a.ptr_at(&l.packed, b0 * kc * l.t * l.t);
        }
        a.ptr_at(&l.film, b0 * 2 * kc).ptr(&l.weights);
        self.tiles_and_proxies(&mut a);
        self.detail_and_l0map(&mut a);
        a.ptr_at(self.cover, b0 * self.g0)
            .int(c)
            .int(h)
            .int(w)
            .int(l.t as i32)
            .int(l.gw as i32)
            .int(l.k as i32);
        let cfg = config((chunks, l.k, b), smem);
        // SAFETY: the arguments follow `ff_refine_apply`'s parameters (`ff_refine_apply_lean`'s
        // are the same), offset to the run's first frame (see `go`); `detail` and `l0map` are
        // map-sized or null; the level was planned fused (or lean) only where `fits_cluster` held
        // (at most 8 CTAs a cluster, C at most 16 * WARPS), and `smem` is the kernel's own
        // (`refine_smem` or `lean_smem`, opted in past 48 KiB in `DeviceState::new`).
        unsafe { Self::go(a, cfg, name, clustered.then_some(chunks)) }
    }

    /// `ff_refine` (the pre-norm tensor and the chunks' partials), then `ff_apply`.
    fn split(&self, pre: &CudaSlice<f32>, stats: &CudaSlice<f32>) -> Result<(), PluginError> {
        let Self { fast, l, .. } = *self;
        let (c, h, w) = self.dims;
        let (b0, b) = (self.frames.b0, self.frames.n);
        let (t, gw, k) = (l.t as i32, l.gw as i32, l.k as i32);
        let kc = l.k * c as usize;
        let (pre_at, stats_at) = (b0 * 2 * kc * l.t * l.t, b0 * l.k * l.chunks * 2);
        let (packed_at, film_at) = (b0 * kc * l.t * l.t, b0 * 2 * kc);
        let mut a = self.launch_ex(&fast.refine);
        a.ptr_at(&l.packed, packed_at)
            .ptr_at(&l.film, film_at)
            .ptr(&l.weights)
            .ptr_at(pre, pre_at)
            .ptr_at(stats, stats_at)
            .int(c)
            .int(t)
            .int(k);
        // SAFETY: see `go`; shared memory `refine_smem` (the attribute is set past 48 KiB).
        unsafe {
            Self::go(
                a,
                config((l.chunks, l.k, b), l.refine_smem),
                "ff_refine",
                None,
            )?
        };

        let mut a = self.launch_ex(&fast.apply);
        a.ptr_at(&l.packed, packed_at)
            .ptr_at(&l.film, film_at)
            .ptr(&l.weights)
            .ptr_at(pre, pre_at)
            .ptr_at(stats, stats_at);
        self.tiles_and_proxies(&mut a);
        self.detail_and_l0map(&mut a);
        a.int(c)
            .int(h)
            .int(w)
            .int(t)
            .int(gw)
            .int(k)
            .int(l.chunks as i32);
        let blocks = (c as usize * l.t * l.t).div_ceil(THREADS as usize * APPLY_PER_THREAD);
        // SAFETY: see `go`; `detail` and `l0map` are buffers of the map's size or null pointers,
        // which the kernel never writes through.
        unsafe { Self::go(a, config((blocks, l.k, b), 0), "ff_apply", None) }
    }
}
