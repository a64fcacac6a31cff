//! The fast CPU path (fp32, rayon): the frame in fused passes.
//!
//! ```text
//! gemm.rs    the pointwise 1x1 convolution as a register-blocked GEMM (AVX2+FMA when the CPU has it)
//! reduce.rs  f64 sums of f32 rows in eight lanes (GroupNorm statistics, token means)
//! tile.rs    one tile's FiLM, modulation, depthwise 3x3, GEMM, GroupNorm and a*relu(b) + residual
//! path.rs    one heavy path: pack + token means (parallel over tiles), scan, tiles (parallel),
//!            alpha, and the fused map (parallel over channel planes)
//! ```
//!
//! Where it differs from the f64 reference's literal steps (the results agree within the fp32
//! tolerance; `verify` checks it on every case): no clone of the base map is made and the
//! FusionGate is evaluated only inside the selected tiles. Outside them the unpacked map equals
//! the base, so `base + alpha*(unfused - base)` is the base itself (exactly, for a finite base
//! and alpha; alpha is a sigmoid, the base is the finite input or the previous level's finite
//! output), and the plane is copied; for the same reason `detail_map = heavy - heavy_l0` is 0
//! outside the L1 tiles, and the L1 pass writes it with the fused map.

pub mod gemm;
mod path;
mod reduce;
mod tile;

use apex_plugin_api::PluginError;
use apex_tile_math::scan::Bidirectional;

use crate::{
    inputs::FfInputs,
    problem::FfProblem,
    select::{FrameSelection, select},
    weights::FfWeights,
};
pub use path::PathScratch;

/// The scan parameters of both paths, constrained once at setup.
pub struct FastWeights {
    pub scan_l0: Bidirectional<f32>,
    pub scan_l1: Bidirectional<f32>,
}

impl FastWeights {
    pub fn new(w: &FfWeights) -> Self {
        Self {
            scan_l0: Bidirectional::from_raw(&w.l0.scan),
            scan_l1: Bidirectional::from_raw(&w.l1.scan),
        }
    }
}

/// Buffers reused across calls.
pub struct CpuScratch {
    heavy_l0: Vec<f32>,
    l0: PathScratch,
    l1: PathScratch,
}

impl CpuScratch {
    pub fn new(problem: &FfProblem) -> Self {
        Self {
            heavy_l0: vec![0.0; problem.channels * problem.height * problem.width],
            l0: PathScratch::new(problem.channels, problem.selected_l0(), problem.tile_l0),
            l1: PathScratch::new(problem.channels, problem.selected_l1(), problem.tile_l1),
        }
    }
}

/// The three outputs, fp32.
pub struct CpuOutputs<'a> {
    pub heavy: &'a mut [f32],
    pub detail: &'a mut [f32],
    pub alpha: &'a mut [f32],
}

/// One call: every batch entry's frame. Returns each frame's selection.
pub fn run_cpu(
    problem: &FfProblem,
    weights: &FfWeights,
    fast: &FastWeights,
    inputs: &FfInputs,
    out: CpuOutputs<'_>,
    scratch: &mut CpuScratch,
) -> Result<Vec<FrameSelection>, PluginError> {
    let hw = problem.height * problem.width;
    let plane = problem.channels * hw;
    let mut selections = Vec::with_capacity(problem.batch);
    for b in 0..problem.batch {
        let sel = select(problem, inputs, b)?;
        let dense = &inputs.dense[b * plane..(b + 1) * plane];
        let boundary = &inputs.boundary[b * hw..(b + 1) * hw];
        let uncertainty = &inputs.uncertainty[b * hw..(b + 1) * hw];
        let alpha = &mut out.alpha[b * hw..(b + 1) * hw];
        path::heavy_path(
            &weights.l0,
            &fast.scan_l0,
            &problem.grid_l0(),
            dense,
            &sel.l0,
            (boundary, uncertainty),
            &mut scratch.heavy_l0,
            None,
            alpha,
            &mut scratch.l0,
        );
        let heavy = &mut out.heavy[b * plane..(b + 1) * plane];
        let detail = &mut out.detail[b * plane..(b + 1) * plane];
        path::heavy_path(
            &weights.l1,
            &fast.scan_l1,
            &problem.grid_l1(),
            &scratch.heavy_l0,
            &sel.l1,
            (boundary, uncertainty),
            heavy,
            Some(detail),
            alpha,
            &mut scratch.l1,
        );
        selections.push(sel);
    }
    Ok(selections)
}
