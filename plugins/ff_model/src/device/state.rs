//! [`DeviceState`]: one CUDA case's module, weights, tables, scratch and buffer sets.
//!
//! A [`FrameSet`] holds every buffer a call reads or writes that differs between frames (the
//! map, the proxies, the utilities, the three outputs); [`DeviceState::rotate`] adds copies of
//! set 0 and `run` walks them round-robin, so a batch of calls streams from DRAM. The weights,
//! the Hilbert tables and the per-level scratch (selected ids, packed tiles, tokens, FiLM, and
//! on a split level the pre-norm tensor and GroupNorm partials) are shared by every set: a call
//! writes each before it reads it, and calls are ordered on the host's stream (a call's side
//! streams start after its selection and join the host's stream before the call ends; each run
//! of frames touches only its frames' part of the scratch).

use apex_plugin_api::{
    CudaHandles, PluginError,
    cuda::{CudaSession, cuda_error},
    launch::{ClusterPolicy, LaunchEx},
};
use apex_tile_math::hilbert;
use cudarc::driver::{CudaFunction, CudaSlice, sys::CUfunction_attribute_enum};

use super::{
    eager::EagerState,
    layout::level_words,
    refine::{LevelRefine, Refine, Residency, fits_cluster},
    sizing::{FILM_MAX_TILES, check_shape, film_frames, lean_smem, refine_smem},
    streams::{Runs, runs, split_batch},
};
use crate::{
    cpu::FastWeights,
    inputs::FfInputs,
    problem::{FfProblem, Path},
    program,
    storage::Storage,
    weights::FfWeights,
};

/// The buffers of one frame batch.
pub struct FrameSet {
    pub dense: CudaSlice<u8>,
    pub boundary: CudaSlice<u8>,
    pub uncertainty: CudaSlice<u8>,
    pub utilities: CudaSlice<f32>,
    pub split: CudaSlice<f32>,
    pub heavy: CudaSlice<u8>,
    pub detail: CudaSlice<u8>,
    pub alpha: CudaSlice<u8>,
}

impl FrameSet {
    fn bytes(&self) -> usize {
        self.dense.len()
            + self.boundary.len()
            + self.uncertainty.len()
            + 4 * (self.utilities.len() + self.split.len())
            + self.heavy.len()
            + self.detail.len()
            + self.alpha.len()
    }
}

/// One level's geometry and scratch.
pub struct LevelState {
    /// Tile size.
    pub t: usize,
    /// Tiles per row of the level's grid.
    pub gw: usize,
    /// Selected tiles per frame.
    pub k: usize,
    /// Refine CTAs per tile.
    pub chunks: usize,
    /// Dynamic shared memory of a refine CTA (`ff_refine`, `ff_refine_apply`).
    pub refine_smem: usize,
    /// Dynamic shared memory of an `ff_refine_apply_lean` CTA.
    pub lean_smem: usize,
    pub weights: CudaSlice<f32>,
    pub ids: CudaSlice<i32>,
    pub packed: CudaSlice<f32>,
    pub tokens: CudaSlice<f32>,
    /// The scan's output per tile (before FiLM's LayerNorm), `[B, K, C]`.
    pub scanned: CudaSlice<f32>,
    /// FiLM's hidden vector per tile, `[B, K, C]`.
    pub hidden: CudaSlice<f32>,
    pub film: CudaSlice<f32>,
    /// Fused or split, with the split path's scratch.
    pub refine: LevelRefine,
}

/// The kernels of the fast path.
pub struct FastFunctions {
    pub base: CudaFunction,
    pub select: CudaFunction,
    /// `ff_pack_s` (a storage-typed source: L0 reads dense) and `ff_pack_f` (f32: L1 reads
    /// the L0 result).
    pub pack_s: CudaFunction,
    pub pack_f: CudaFunction,
    pub film_scan: CudaFunction,
    /// FiLM's two linears: `ff_film_fc1` and `ff_film_out` (a block takes one tile index), then
    /// `ff_film_fc1_x2` and `ff_film_out_x2` (two), each block `FILM_TOKENS` frames of its run;
    /// `sizing::film_tiles` picks. [`FastFunctions::film`] hands them out.
    pub film_fc1: [CudaFunction; FILM_MAX_TILES],
    pub film_out: [CudaFunction; FILM_MAX_TILES],
    /// `ff_film_fc1_one` and `ff_film_out_one`: one tile index and one frame a block
    /// (`sizing::film_frames`).
    pub film_one: [CudaFunction; 2],
    pub refine: CudaFunction,
    pub apply: CudaFunction,
    /// `ff_refine_apply` (sm_90 and later: it launches as thread-block clusters).
    pub refine_apply: Option<CudaFunction>,
    /// `ff_refine_apply_lean` (sm_90 and later, as `refine_apply`).
    pub refine_apply_lean: Option<CudaFunction>,
    /// Its copies compiled for one shape each (`program::LEAN_SHAPES`, in that order; empty
    /// where `refine_apply_lean` is `None`).
    pub lean_shaped: Vec<CudaFunction>,
    /// The wgmma refine's entry points (`program::WG_SHAPES`, in that order): fp16 on sm_90
    /// (the program compiled for sm_90a), empty elsewhere.
    pub wg: Vec<CudaFunction>,
    /// Their pack-free entry points (`program::WG_MAP_ENTRIES`, in that order; empty where
    /// `wg` is).
    pub wg_map: Vec<WgMap>,
    /// The level launches may be programmatic dependents (sm_90 and later, where the kernels
    /// wait for their predecessor: `FF_AFTER_PREDECESSOR` in `cuda/fast/prelude.cu`).
    pub dependent: bool,
}

/// A wgmma shape's pack-free kernels, each [storage-typed source (L0's input), f32 source (L1's
/// `l0map`)]: the refine reading the tile from the source map, FiLM's scan taking the tile means
/// from it.
pub struct WgMap {
    pub refine: [CudaFunction; 2],
    pub scan: [CudaFunction; 2],
}

impl FastFunctions {
    /// FiLM's two linears, `[fc1, out]`, for blocks of `tiles` tile indices (`sizing::film_tiles`)
    /// in a run of `run_frames` frames, with the frames a block of them takes
    /// (`sizing::film_frames`: one for the `_one` entry points).
    pub fn film(&self, tiles: usize, run_frames: usize) -> ([&CudaFunction; 2], usize) {
        let frames = film_frames(tiles, run_frames);
        let functions = if frames == 1 {
            [&self.film_one[0], &self.film_one[1]]
        } else {
            [&self.film_fc1[tiles - 1], &self.film_out[tiles - 1]]
        };
        (functions, frames)
    }

    /// The lean refine a level of `channels` channels and `t`-pixel tiles runs, with its entry
    /// point's name: its shape's copy where `program::LEAN_SHAPES` has one, else the general one.
    pub fn lean(&self, channels: usize, t: usize) -> Option<(&CudaFunction, &'static str)> {
        self.lean_copy(channels, t).or_else(|| {
            self.refine_apply_lean
                .as_ref()
                .map(|f| (f, "ff_refine_apply_lean"))
        })
    }

    /// The wgmma refine a level of `channels` channels and `t`-pixel tiles runs, with its name,
    /// where the module has one.
    pub fn wg(&self, channels: usize, t: usize) -> Option<(&CudaFunction, &'static str)> {
        program::wg_shape(channels, t)
            .and_then(|i| Some((self.wg.get(i)?, program::WG_SHAPES[i].2)))
    }

    /// The pack-free wgmma kernels of a level of `channels` channels and `t`-pixel tiles, where
    /// the module has them.
    pub fn wg_map(&self, channels: usize, t: usize) -> Option<&WgMap> {
        program::wg_shape(channels, t).and_then(|i| self.wg_map.get(i))
    }

    /// The lean refine's copy compiled for this shape (`program::LEAN_SHAPES`), with its name,
    /// where the module has one.
    fn lean_copy(&self, channels: usize, t: usize) -> Option<(&CudaFunction, &'static str)> {
        program::lean_shape(channels, t)
            .and_then(|i| Some((self.lean_shaped.get(i)?, program::LEAN_SHAPES[i].2)))
    }
}

/// The device side of a case. `sets[0]` is the set uploads, poisoning, downloads and the first
/// `run` after `prepare_check` use.
pub struct DeviceState {
    pub session: CudaSession,
    pub storage: Storage,
    /// Frames per call.
    pub batch: usize,
    pub channels: usize,
    pub fast: FastFunctions,
    /// The L0 level's f32 result (`[B, C, H, W]`): the L1 level's source, written only inside
    /// L0 tiles (the fused refines only inside split ones, where L1's tiles lie).
    pub l0map: CudaSlice<f32>,
    pub hil0: CudaSlice<i32>,
    pub hil1: CudaSlice<i32>,
    /// `ff_select`'s coverage map for `ff_base` (`[B, G0]`: bit 0 selected, bit 1 split).
    pub cover: CudaSlice<u8>,
    pub l0: LevelState,
    pub l1: LevelState,
    pub sets: Vec<FrameSet>,
    /// The buffer set the next call uses ([`DeviceState::next_set`]).
    pub cursor: usize,
    /// The eager path's kernels and intermediates (`path = eager` only).
    pub eager: Option<EagerState>,
    /// The batch's runs of frames, each computing both levels on a stream of its own (the first
    /// on the host's).
    pub runs: Runs,
}

/// The host copies of a set's outputs, decoded to f32.
pub struct DeviceOutputs {
    pub heavy: Vec<f32>,
    pub detail: Vec<f32>,
    pub alpha: Vec<f32>,
    /// The selected ids per frame, L0 then L1 (`[B, K]` each, Hilbert order).
    pub ids_l0: Vec<i32>,
    pub ids_l1: Vec<i32>,
}

/// A wgmma refine entry point of a `WG_SHAPES` shape with the shared memory it launches with.
fn wg_opt_in<'f>(
    (f, &(_, t, _)): (&'f CudaFunction, &(usize, usize, &str)),
) -> (&'f CudaFunction, usize) {
    (f, program::wg_smem(t))
}

/// Every tile id of a `gh x gw` grid in Hilbert order.
fn hilbert_table(gh: usize, gw: usize) -> Vec<i32> {
    let mut ids: Vec<usize> = (0..gh * gw).collect();
    hilbert::order(&mut ids, gh, gw);
    ids.into_iter().map(|i| i as i32).collect()
}

impl DeviceState {
    /// The buffer set a call uses, advancing the rotation for the next call.
    pub fn next_set(&mut self) -> usize {
        let i = self.cursor;
        self.cursor = (i + 1) % self.sets.len();
        i
    }

    /// Attaches to the host's stream, loads the (cached) program, uploads the weights, the
    /// tables and `inputs` as set 0, with poisoned outputs.
    pub fn new(
        handles: &CudaHandles,
        problem: &FfProblem,
        storage: Storage,
        weights: &FfWeights,
        fast_weights: &FastWeights,
        inputs: &FfInputs,
    ) -> Result<Self, PluginError> {
        check_shape(problem, storage)?;
        let session = CudaSession::attach(handles)?;
        let ptx = program::ptx(storage, session.arch())?;
        let module = session.ctx.load_module(ptx).map_err(cuda_error)?;
        let f = |name: &str| session.function(&module, name);
        // The entry points of a list of shape copies (`program::LEAN_SHAPES`, `WG_SHAPES`) where
        // the module has them, else none.
        let copies = |compiled: bool, shapes: &[(usize, usize, &str)]| {
            shapes
                .iter()
                .filter(|_| compiled)
                .map(|(_, _, name)| f(name))
                .collect::<Result<Vec<_>, _>>()
        };
        let cluster_kernels = handles.compute_capability_major >= 9;
        let wgmma = program::target(session.arch()) == "sm_90a" && storage == Storage::F16;
        let fast = FastFunctions {
            base: f("ff_base")?,
            select: f("ff_select")?,
            pack_s: f("ff_pack_s")?,
            pack_f: f("ff_pack_f")?,
            film_scan: f("ff_film_scan")?,
            film_fc1: [f("ff_film_fc1")?, f("ff_film_fc1_x2")?],
            film_out: [f("ff_film_out")?, f("ff_film_out_x2")?],
            film_one: [f("ff_film_fc1_one")?, f("ff_film_out_one")?],
            refine: f("ff_refine")?,
            apply: f("ff_apply")?,
            // The source compiles the cluster kernel only for sm_90 and later.
            refine_apply: cluster_kernels.then(|| f("ff_refine_apply")).transpose()?,
            refine_apply_lean: cluster_kernels
                .then(|| f("ff_refine_apply_lean"))
                .transpose()?,
            lean_shaped: copies(cluster_kernels, &program::LEAN_SHAPES)?,
            // The wgmma refine: fp16, the module compiled for sm_90a.
            wg: copies(wgmma, &program::WG_SHAPES)?,
            wg_map: program::WG_MAP_ENTRIES
                .iter()
                .filter(|_| wgmma)
                .map(|m| {
                    Ok(WgMap {
                        refine: [f(m.refine[0])?, f(m.refine[1])?],
                        scan: [f(m.scan[0])?, f(m.scan[1])?],
                    })
                })
                .collect::<Result<Vec<_>, PluginError>>()?,
            dependent: cluster_kernels,
        };
        let stream = session.stream.clone();
        let (b, c) = (problem.batch, problem.channels);
        let level =
            |t: usize, gw: usize, k: usize, words: Vec<f32>| -> Result<LevelState, PluginError> {
                let p = t * t;
                let chunks = p.div_ceil(program::CHUNK);
                let zeros = |n: usize| stream.alloc_zeros::<f32>(n.max(1)).map_err(cuda_error);
                Ok(LevelState {
                    t,
                    gw,
                    k,
                    chunks,
                    refine_smem: refine_smem(c, t, storage),
                    lean_smem: lean_smem(c, t, storage),
                    weights: stream.clone_htod(&words).map_err(cuda_error)?,
                    ids: stream
                        .alloc_zeros::<i32>((b * k).max(1))
                        .map_err(cuda_error)?,
                    packed: zeros(b * k * c * p)?,
                    tokens: zeros(b * k * c)?,
                    scanned: zeros(b * k * c)?,
                    hidden: zeros(b * k * c)?,
                    film: zeros(b * k * 2 * c)?,
                    // Planned by `set_refine` below, once the kernels' shared memory is set.
                    refine: LevelRefine::Fused,
                })
            };
        let (g0, g1) = (problem.grid_l0(), problem.grid_l1());
        let l0 = level(
            problem.tile_l0,
            g0.gw(),
            problem.selected_l0(),
            level_words(&weights.l0, &fast_weights.scan_l0, storage),
        )?;
        let l1 = level(
            problem.tile_l1,
            g1.gw(),
            problem.selected_l1(),
            level_words(&weights.l1, &fast_weights.scan_l1, storage),
        )?;
        let smem = l0.refine_smem.max(l1.refine_smem);
        // The lean kernel only runs on levels that fit a cluster (C <= 128, t <= 16: at most
        // 16 KiB + 26 KiB); a level that cannot run it must not opt it in past the limit.
        let lean = [&l0, &l1]
            .iter()
            .filter(|l| fits_cluster(c, l.chunks))
            .map(|l| l.lean_smem)
            .max()
            .unwrap_or(0);
        let opt_in = std::iter::once((&fast.refine, smem))
            .chain(fast.refine_apply.iter().map(|f| (f, smem)))
            .chain(fast.refine_apply_lean.iter().map(|f| (f, lean)))
            .chain(fast.lean_shaped.iter().map(|f| (f, lean)))
            // Each wgmma refine (both sources of its pack-free copy too) at what its shape
            // launches with: `WG_SHAPES` order, as `wg` and `wg_map` are.
            .chain(fast.wg.iter().zip(&program::WG_SHAPES).map(wg_opt_in))
            .chain(
                fast.wg_map
                    .iter()
                    .zip(&program::WG_SHAPES)
                    .flat_map(|(m, shape)| m.refine.iter().map(move |f| wg_opt_in((f, shape)))),
            );
        for (refine, smem) in opt_in {
            if smem > 48 * 1024 {
                refine
                    .set_attribute(
                        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        smem as i32,
                    )
                    .map_err(cuda_error)?;
            }
        }
        let l0map = stream
            .alloc_zeros::<f32>(problem.map_len())
            .map_err(cuda_error)?;
        let hil0 = stream
            .clone_htod(&hilbert_table(g0.gh(), g0.gw()))
            .map_err(cuda_error)?;
        let hil1 = stream
            .clone_htod(&hilbert_table(g1.gh(), g1.gw()))
            .map_err(cuda_error)?;
        let cover = stream
            .alloc_zeros::<u8>(problem.batch * g0.tiles())
            .map_err(cuda_error)?;
        let eager = match problem.path {
            Path::Eager => Some(EagerState::new(
                &stream,
                &module,
                problem,
                [&weights.l0, &weights.l1],
            )?),
            Path::Fast => None,
        };
        let set = Self::new_set(&session, problem, storage, inputs)?;
        let runs = Runs::new(
            &stream,
            match problem.path {
                Path::Fast => runs(problem.batch),
                // The eager path launches on the host's stream only.
                Path::Eager => split_batch(problem.batch, 1),
            },
        )?;
        let mut state = Self {
            session,
            storage,
            batch: problem.batch,
            channels: problem.channels,
            fast,
            l0map,
            hil0,
            hil1,
            cover,
            l0,
            l1,
            sets: vec![set],
            cursor: 0,
            eager,
            runs,
        };
        state.set_refine(Refine::default())?;
        state.poison()?;
        Ok(state)
    }

    fn new_set(
        session: &CudaSession,
        problem: &FfProblem,
        storage: Storage,
        inputs: &FfInputs,
    ) -> Result<FrameSet, PluginError> {
        let stream = &session.stream;
        let up = |v: &[f32]| stream.clone_htod(&storage.encode(v)).map_err(cuda_error);
        let out = |n: usize| {
            stream
                .alloc_zeros::<u8>(n * storage.bytes())
                .map_err(cuda_error)
        };
        Ok(FrameSet {
            dense: up(&inputs.dense)?,
            boundary: up(&inputs.boundary)?,
            uncertainty: up(&inputs.uncertainty)?,
            utilities: stream.clone_htod(&inputs.utilities).map_err(cuda_error)?,
            split: stream
                .clone_htod(&inputs.split_utilities)
                .map_err(cuda_error)?,
            heavy: out(problem.map_len())?,
            detail: out(problem.map_len())?,
            alpha: out(problem.pixels())?,
        })
    }

    /// Buffer sets in use.
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// Plans both levels' refine launches for `refine` (freeing or allocating the split path's
    /// scratch); the next `run` uses them.
    pub fn set_refine(&mut self, refine: Refine) -> Result<(), PluginError> {
        let shape = (self.batch, self.channels);
        let stream = self.session.stream.clone();
        let residency = [self.residency(&self.l0)?, self.residency(&self.l1)?];
        for (level, residency) in [&mut self.l0, &mut self.l1].into_iter().zip(residency) {
            // The old plan's buffers go first, so the two never coexist.
            level.refine = LevelRefine::Fused;
            level.refine = LevelRefine::plan(refine, residency, shape, level.t, level.k, &stream)?;
        }
        Ok(())
    }

    /// How many of `level`'s clusters each fused kernel holds at once, or `None` where the device
    /// (or module) has no cluster kernels or the level's tiles do not fit a cluster.
    fn residency(&self, level: &LevelState) -> Result<Option<Residency>, PluginError> {
        let (Some(fused), Some((lean, _))) = (
            &self.fast.refine_apply,
            self.fast.lean(self.channels, level.t),
        ) else {
            return Ok(None);
        };
        if !fits_cluster(self.channels, level.chunks) {
            return Ok(None);
        }
        let stream = &self.session.stream;
        let chunks = level.chunks as u32;
        let held = |f, smem: usize| {
            LaunchEx::new(stream, f)
                .cluster(chunks, ClusterPolicy::LoadBalancing)
                .max_active_clusters(program::THREADS, smem as u32)
                .map_err(cuda_error)
        };
        Ok(Some(Residency {
            fused: held(fused, level.refine_smem)?,
            lean: held(lean, level.lean_smem)?,
            shaped: self.fast.lean_copy(self.channels, level.t).is_some(),
            wg: self.fast.wg(self.channels, level.t).is_some(),
        }))
    }

    /// What L0 and L1 run their refine block as.
    pub fn level_refines(&self) -> [Refine; 2] {
        [self.l0.refine.runs(), self.l1.refine.runs()]
    }

    /// Copies fresh inputs over set 0 and makes the next `run` use it.
    pub fn upload(&mut self, inputs: &FfInputs) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let storage = self.storage;
        let set = &mut self.sets[0];
        for (src, dst) in [
            (&inputs.dense, &mut set.dense),
            (&inputs.boundary, &mut set.boundary),
            (&inputs.uncertainty, &mut set.uncertainty),
        ] {
            stream
                .memcpy_htod(&storage.encode(src), dst)
                .map_err(cuda_error)?;
        }
        stream
            .memcpy_htod(&inputs.utilities, &mut set.utilities)
            .map_err(cuda_error)?;
        stream
            .memcpy_htod(&inputs.split_utilities, &mut set.split)
            .map_err(cuda_error)?;
        self.cursor = 0;
        stream.synchronize().map_err(cuda_error)
    }

    /// Fills set 0's outputs and the selected ids with poison (NaN, id -1), so anything the
    /// kernels leave unwritten fails verify.
    pub fn poison(&mut self) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let storage = self.storage;
        let set = &mut self.sets[0];
        for out in [&mut set.heavy, &mut set.detail, &mut set.alpha] {
            let n = out.len() / storage.bytes();
            stream
                .memcpy_htod(&storage.poison(n), out)
                .map_err(cuda_error)?;
        }
        for level in [&mut self.l0, &mut self.l1] {
            let n = level.ids.len();
            stream
                .memcpy_htod(&vec![-1i32; n], &mut level.ids)
                .map_err(cuda_error)?;
        }
        self.cursor = 0;
        stream.synchronize().map_err(cuda_error)
    }

    /// Copies set 0's outputs and the last call's selected ids back (the host synchronized after
    /// the last `run`).
    pub fn download(&self) -> Result<DeviceOutputs, PluginError> {
        let stream = &self.session.stream;
        let set = &self.sets[0];
        let get = |s: &CudaSlice<u8>| -> Result<Vec<f32>, PluginError> {
            let bytes = stream.clone_dtoh(s).map_err(cuda_error)?;
            Ok(self.storage.decode(&bytes))
        };
        let ids = |l: &LevelState| -> Result<Vec<i32>, PluginError> {
            let mut v = stream.clone_dtoh(&l.ids).map_err(cuda_error)?;
            v.truncate(l.k * self.batch);
            Ok(v)
        };
        let out = DeviceOutputs {
            heavy: get(&set.heavy)?,
            detail: get(&set.detail)?,
            alpha: get(&set.alpha)?,
            ids_l0: ids(&self.l0)?,
            ids_l1: ids(&self.l1)?,
        };
        stream.synchronize().map_err(cuda_error)?;
        Ok(out)
    }

    /// Keeps `sets` buffer sets (fewer when device memory is short: the copies may take at most
    /// half of the free memory), each a device-to-device copy of set 0, and restarts at set 0.
    pub fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        let want = (sets as usize).max(1);
        self.sets.truncate(want);
        let per_set = self.sets[0].bytes().max(1);
        let (free, _) = self.session.ctx.mem_get_info().map_err(cuda_error)?;
        let target = want.min(self.sets.len() + free / 2 / per_set);
        let stream = self.session.stream.clone();
        while self.sets.len() < target {
            let s0 = &self.sets[0];
            let d = |s: &CudaSlice<u8>| stream.clone_dtod(s).map_err(cuda_error);
            let copy = FrameSet {
                dense: d(&s0.dense)?,
                boundary: d(&s0.boundary)?,
                uncertainty: d(&s0.uncertainty)?,
                utilities: stream.clone_dtod(&s0.utilities).map_err(cuda_error)?,
                split: stream.clone_dtod(&s0.split).map_err(cuda_error)?,
                heavy: d(&s0.heavy)?,
                detail: d(&s0.detail)?,
                alpha: d(&s0.alpha)?,
            };
            self.sets.push(copy);
        }
        stream.synchronize().map_err(cuda_error)?;
        self.cursor = 0;
        Ok(self.sets.len() as u32)
    }
}
