//! The eager path (`path = eager`): one launch per op of the FFModule, as PyTorch eager runs it
//! (`cuda/ff_eager.cu`), every intermediate a whole f32 tensor, and the selection on the host
//! with its ids copied to the device inside the frame (the original's per-sample Python loop and
//! `.item()` calls). About 44 launches a frame at the profile. A graph would replay the ids of
//! its capture instead of selecting again, so `run` refuses to be captured; the host then times
//! plain launches and reports why.

use std::sync::Arc;

use apex_plugin_api::{PluginError, cuda::cuda_error};
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg,
    sys::CUstreamCaptureStatus,
};

use super::state::{DeviceState, FrameSet};
use crate::{
    inputs::FfInputs, problem::FfProblem, program::THREADS, select::select, weights::PathWeights,
};

/// Most blocks of a grid-stride launch (16 per SM of a 132-SM H100 or H200).
const MAX_BLOCKS: usize = 132 * 16;

/// The eager kernels.
pub struct EagerFunctions {
    to_f32: CudaFunction,
    copy: CudaFunction,
    store: CudaFunction,
    gather: CudaFunction,
    mean: CudaFunction,
    scan: CudaFunction,
    merge: CudaFunction,
    layernorm: CudaFunction,
    linear: CudaFunction,
    activate: CudaFunction,
    modulate: CudaFunction,
    dwconv: CudaFunction,
    pwconv: CudaFunction,
    gn_stats: CudaFunction,
    gn_apply: CudaFunction,
    arelu: CudaFunction,
    add: CudaFunction,
    scatter: CudaFunction,
    alpha: CudaFunction,
    fuse: CudaFunction,
    sub: CudaFunction,
}

impl EagerFunctions {
    pub fn load(module: &Arc<CudaModule>) -> Result<Self, PluginError> {
        let f = |name: &str| module.load_function(name).map_err(cuda_error);
        Ok(Self {
            to_f32: f("e_to_f32")?,
            copy: f("e_copy")?,
            store: f("e_store")?,
            gather: f("e_gather")?,
            mean: f("e_mean")?,
            scan: f("e_scan")?,
            merge: f("e_merge")?,
            layernorm: f("e_layernorm")?,
            linear: f("e_linear")?,
            activate: f("e_activate")?,
            modulate: f("e_modulate")?,
            dwconv: f("e_dwconv")?,
            pwconv: f("e_pwconv")?,
            gn_stats: f("e_gn_stats")?,
            gn_apply: f("e_gn_apply")?,
            arelu: f("e_arelu")?,
            add: f("e_add")?,
            scatter: f("e_scatter")?,
            alpha: f("e_alpha")?,
            fuse: f("e_fuse")?,
            sub: f("e_sub")?,
        })
    }
}

/// One level's intermediates (f32).
struct EagerLevel {
    pw: CudaSlice<f32>,
    packed: CudaSlice<f32>,
    tokens: CudaSlice<f32>,
    yf: CudaSlice<f32>,
    yb: CudaSlice<f32>,
    x: CudaSlice<f32>,
    z1: CudaSlice<f32>,
    film: CudaSlice<f32>,
    m: CudaSlice<f32>,
    dw: CudaSlice<f32>,
    pre: CudaSlice<f32>,
    stat: CudaSlice<f32>,
    r: CudaSlice<f32>,
    res: CudaSlice<f32>,
}

/// The eager path's buffers: whole-map f32 tensors and each level's intermediates.
pub struct EagerState {
    functions: EagerFunctions,
    base: CudaSlice<f32>,
    unpacked: CudaSlice<f32>,
    heavy_l0: CudaSlice<f32>,
    heavy: CudaSlice<f32>,
    detail: CudaSlice<f32>,
    alpha: CudaSlice<f32>,
    levels: [EagerLevel; 2],
    /// The host's ids of the last call, L0 then L1 (`[B, K]` each).
    ids: [Vec<i32>; 2],
}

impl EagerState {
    pub fn new(
        stream: &Arc<CudaStream>,
        module: &Arc<CudaModule>,
        problem: &FfProblem,
        weights: [&PathWeights; 2],
    ) -> Result<Self, PluginError> {
        let zeros = |n: usize| stream.alloc_zeros::<f32>(n.max(1)).map_err(cuda_error);
        let (b, c) = (problem.batch, problem.channels);
        let level = |k: usize, t: usize, w: &PathWeights| -> Result<EagerLevel, PluginError> {
            let tiles = b * k * c * t * t;
            Ok(EagerLevel {
                pw: stream.clone_htod(&w.pw_w).map_err(cuda_error)?,
                packed: zeros(tiles)?,
                tokens: zeros(b * k * c)?,
                yf: zeros(b * k * c)?,
                yb: zeros(b * k * c)?,
                x: zeros(b * k * c)?,
                z1: zeros(b * k * c)?,
                film: zeros(b * k * 2 * c)?,
                m: zeros(tiles)?,
                dw: zeros(tiles)?,
                pre: zeros(2 * tiles)?,
                stat: zeros(b * k * 2)?,
                r: zeros(tiles)?,
                res: zeros(tiles)?,
            })
        };
        Ok(Self {
            functions: EagerFunctions::load(module)?,
            base: zeros(problem.map_len())?,
            unpacked: zeros(problem.map_len())?,
            heavy_l0: zeros(problem.map_len())?,
            heavy: zeros(problem.map_len())?,
            detail: zeros(problem.map_len())?,
            alpha: zeros(problem.pixels())?,
            levels: [
                level(problem.selected_l0(), problem.tile_l0, weights[0])?,
                level(problem.selected_l1(), problem.tile_l1, weights[1])?,
            ],
            ids: [Vec::new(), Vec::new()],
        })
    }
}

/// A grid-stride launch over `n` elements.
fn elements(n: usize) -> LaunchConfig {
    rows(n.div_ceil(THREADS as usize).clamp(1, MAX_BLOCKS))
}

/// `blocks` blocks of [`THREADS`] threads.
fn rows(blocks: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, 65_535) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// SAFETY (of every caller): the arguments match the entry point in `cuda/ff_eager.cu` and every
/// buffer holds what it indexes for this problem (sized in `EagerState::new` from the same
/// problem).
unsafe fn go(mut b: LaunchArgs<'_>, cfg: LaunchConfig, name: &str) -> Result<(), PluginError> {
    unsafe { b.launch(cfg) }.map(drop).map_err(|e| {
        let mut err = cuda_error(e);
        err.message = format!("{} (launching {name})", err.message).into();
        err
    })
}

impl DeviceState {
    /// Enqueues one eager call with the next buffer set: the host selects every frame from
    /// `inputs` (each set holds a copy of them) and copies the ids to the device, then one
    /// launch per op.
    pub fn launch_eager(
        &mut self,
        problem: &FfProblem,
        inputs: &FfInputs,
    ) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        // A captured frame would replay the ids of the capture's selection, not select again:
        // refuse, and the host times plain launches (it reports the reason as the graph
        // fallback).
        let capture = stream.capture_status().map_err(cuda_error)?;
        if capture != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(PluginError::invalid(
                "path = eager selects on the host and copies the ids in every frame, so a CUDA \
                 graph cannot hold it (plain launches time it)",
            ));
        }
        let i = self.next_set();
        let e = self
            .eager
            .as_mut()
            .ok_or_else(|| PluginError::other("the eager path was not set up (a plugin bug)"))?;
        for ids in &mut e.ids {
            ids.clear();
        }
        for b in 0..problem.batch {
            let sel = select(problem, inputs, b)?;
            e.ids[0].extend(sel.l0.iter().map(|&v| v as i32));
            e.ids[1].extend(sel.l1.iter().map(|&v| v as i32));
        }
        for (ids, level) in e.ids.iter().zip([&mut self.l0, &mut self.l1]) {
            if !ids.is_empty() {
                stream
                    .memcpy_htod(ids.as_slice(), &mut level.ids)
                    .map_err(cuda_error)?;
            }
        }
        let set = &self.sets[i];
        let (map, px) = (problem.map_len(), problem.pixels());
        let f = &e.functions;
        let (mapn, pxn) = (map as i64, px as i64);
        let mut a = stream.launch_builder(&f.to_f32);
        a.arg(&set.dense).arg(&e.base).arg(&mapn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(map), "e_to_f32")? };
        let dims = Dims::of(problem);
        eager_level(
            &stream,
            f,
            &e.levels[0],
            &self.l0,
            set,
            &e.base,
            &e.unpacked,
            &e.alpha,
            &e.heavy_l0,
            dims,
        )?;
        eager_level(
            &stream,
            f,
            &e.levels[1],
            &self.l1,
            set,
            &e.heavy_l0,
            &e.unpacked,
            &e.alpha,
            &e.heavy,
            dims,
        )?;
        let mut a = stream.launch_builder(&f.sub);
        a.arg(&e.heavy).arg(&e.heavy_l0).arg(&e.detail).arg(&mapn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(map), "e_sub")? };
        for (src, dst, n, nn) in [
            (&e.heavy, &set.heavy, map, mapn),
            (&e.detail, &set.detail, map, mapn),
            (&e.alpha, &set.alpha, px, pxn),
        ] {
            let mut a = stream.launch_builder(&f.store);
            a.arg(src).arg(dst).arg(&nn);
            // SAFETY: see `go`.
            unsafe { go(a, elements(n), "e_store")? };
        }
        Ok(())
    }
}

/// The frame's sizes as kernel arguments.
#[derive(Clone, Copy)]
struct Dims {
    b: usize,
    c: i32,
    h: i32,
    w: i32,
    hw: i64,
}

impl Dims {
    fn of(p: &FfProblem) -> Self {
        Self {
            b: p.batch,
            c: p.channels as i32,
            h: p.height as i32,
            w: p.width as i32,
            hw: (p.height * p.width) as i64,
        }
    }
}

/// One level, op by op: out = FusionGate(base, unpack(refine(FiLM(scan(pack(base)))))).
#[allow(clippy::too_many_arguments)]
fn eager_level(
    stream: &Arc<CudaStream>,
    f: &EagerFunctions,
    e: &EagerLevel,
    l: &super::state::LevelState,
    set: &FrameSet,
    base: &CudaSlice<f32>,
    unpacked: &CudaSlice<f32>,
    alpha: &CudaSlice<f32>,
    out: &CudaSlice<f32>,
    d: Dims,
) -> Result<(), PluginError> {
    let c = d.c;
    let (t, gw, k) = (l.t as i32, l.gw as i32, l.k as i32);
    let p = l.t * l.t;
    let pi = p as i32;
    let map = d.b * c as usize * (d.h * d.w) as usize;
    let mapn = map as i64;
    let tiles = d.b * l.k * c as usize * p;
    let (tn, rows_bk) = (tiles as i64, (d.b * l.k) as i64);
    let tok = d.b * l.k * c as usize;
    let tokn = tok as i64;
    let zero = 0i32;
    let one = 1i32;
    if l.k > 0 {
        let mut a = stream.launch_builder(&f.gather);
        a.arg(base)
            .arg(&l.ids)
            .arg(&e.packed)
            .arg(&c)
            .arg(&d.h)
            .arg(&d.w)
            .arg(&t)
            .arg(&gw)
            .arg(&k)
            .arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_gather")? };
        let mut a = stream.launch_builder(&f.mean);
        let rows_tok = tokn;
        a.arg(&e.packed).arg(&e.tokens).arg(&pi).arg(&rows_tok);
        // SAFETY: see `go`; a warp per row.
        unsafe { go(a, elements(tok * 32), "e_mean")? };
        let scan_n = (d.b * c as usize) as i64;
        for (dir, y) in [(&zero, &e.yf), (&one, &e.yb)] {
            let mut a = stream.launch_builder(&f.scan);
            a.arg(&e.tokens)
                .arg(&l.weights)
                .arg(y)
                .arg(&c)
                .arg(&k)
                .arg(dir)
                .arg(&scan_n);
            // SAFETY: see `go`.
            unsafe { go(a, elements(scan_n as usize), "e_scan")? };
        }
        let mut a = stream.launch_builder(&f.merge);
        a.arg(&e.yf)
            .arg(&e.yb)
            .arg(&l.weights)
            .arg(&e.x)
            .arg(&c)
            .arg(&tokn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tok), "e_merge")? };
        let mut a = stream.launch_builder(&f.layernorm);
        a.arg(&e.x).arg(&l.weights).arg(&c).arg(&rows_bk);
        // SAFETY: see `go`; a block per row.
        unsafe { go(a, rows(d.b * l.k), "e_layernorm")? };
        let n1 = tokn;
        let mut a = stream.launch_builder(&f.linear);
        a.arg(&e.x)
            .arg(&l.weights)
            .arg(&e.z1)
            .arg(&c)
            .arg(&zero)
            .arg(&n1);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tok), "e_linear")? };
        let mut a = stream.launch_builder(&f.activate);
        a.arg(&e.z1).arg(&c).arg(&zero).arg(&n1);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tok), "e_activate")? };
        let n2 = 2 * tokn;
        let mut a = stream.launch_builder(&f.linear);
        a.arg(&e.z1)
            .arg(&l.weights)
            .arg(&e.film)
            .arg(&c)
            .arg(&one)
            .arg(&n2);
        // SAFETY: see `go`.
        unsafe { go(a, elements(2 * tok), "e_linear")? };
        let mut a = stream.launch_builder(&f.activate);
        a.arg(&e.film).arg(&c).arg(&one).arg(&n2);
        // SAFETY: see `go`.
        unsafe { go(a, elements(2 * tok), "e_activate")? };
        let mut a = stream.launch_builder(&f.modulate);
        a.arg(&e.packed)
            .arg(&e.film)
            .arg(&e.m)
            .arg(&c)
            .arg(&pi)
            .arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_modulate")? };
        let mut a = stream.launch_builder(&f.dwconv);
        a.arg(&e.m)
            .arg(&l.weights)
            .arg(&e.dw)
            .arg(&c)
            .arg(&t)
            .arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_dwconv")? };
        let pre_n = 2 * tn;
        let mut a = stream.launch_builder(&f.pwconv);
        a.arg(&e.dw)
            .arg(&e.pw)
            .arg(&l.weights)
            .arg(&e.pre)
            .arg(&c)
            .arg(&pi)
            .arg(&pre_n);
        // SAFETY: see `go`.
        unsafe { go(a, elements(2 * tiles), "e_pwconv")? };
        let n_tile = 2 * c * pi;
        let mut a = stream.launch_builder(&f.gn_stats);
        a.arg(&e.pre).arg(&e.stat).arg(&n_tile).arg(&rows_bk);
        // SAFETY: see `go`; a block per tile.
        unsafe { go(a, rows(d.b * l.k), "e_gn_stats")? };
        let mut a = stream.launch_builder(&f.gn_apply);
        a.arg(&e.pre)
            .arg(&e.stat)
            .arg(&l.weights)
            .arg(&c)
            .arg(&pi)
            .arg(&pre_n);
        // SAFETY: see `go`.
        unsafe { go(a, elements(2 * tiles), "e_gn_apply")? };
        let mut a = stream.launch_builder(&f.arelu);
        a.arg(&e.pre).arg(&e.r).arg(&c).arg(&pi).arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_arelu")? };
        let mut a = stream.launch_builder(&f.add);
        a.arg(&e.r).arg(&e.m).arg(&e.res).arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_add")? };
    }
    let mut a = stream.launch_builder(&f.copy);
    a.arg(base).arg(unpacked).arg(&mapn);
    // SAFETY: see `go`.
    unsafe { go(a, elements(map), "e_copy")? };
    if l.k > 0 {
        let mut a = stream.launch_builder(&f.scatter);
        a.arg(&e.res)
            .arg(&l.ids)
            .arg(unpacked)
            .arg(&c)
            .arg(&d.h)
            .arg(&d.w)
            .arg(&t)
            .arg(&gw)
            .arg(&k)
            .arg(&tn);
        // SAFETY: see `go`.
        unsafe { go(a, elements(tiles), "e_scatter")? };
    }
    let pxn = d.b as i64 * d.hw;
    let mut a = stream.launch_builder(&f.alpha);
    a.arg(&set.boundary)
        .arg(&set.uncertainty)
        .arg(&l.weights)
        .arg(alpha)
        .arg(&c)
        .arg(&pxn);
    // SAFETY: see `go`.
    unsafe { go(a, elements(pxn as usize), "e_alpha")? };
    let mut a = stream.launch_builder(&f.fuse);
    a.arg(base)
        .arg(unpacked)
        .arg(alpha)
        .arg(out)
        .arg(&c)
        .arg(&d.hw)
        .arg(&mapn);
    // SAFETY: see `go`.
    unsafe { go(a, elements(map), "e_fuse") }
}
