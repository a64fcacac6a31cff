//! [`FfWeights`]: the state of `FFModule(channels)` (`spec/apex-x-kernels.md` §2.2–2.3), one
//! [`PathWeights`] per heavy path (L0 with `tile_size_l0`, L1 with `tile_size_l1`), drawn from a
//! seed and stored as fp32 values (the f64 reference widens the same values).
//!
//! Per path: FiLM (`LayerNorm(C)`, `Linear(C→C)`, SiLU, `Linear(C→2C)`), the bidirectional scan's
//! raw parameters (two `StableStateSpaceScan`s and the merge-gate logit), the refine block
//! (depthwise 3x3 with bias, pointwise 1x1 `C→2C` with bias, `GroupNorm(1, 2C)`) and the
//! FusionGate. Matrices are row-major `[out][in]`, as PyTorch stores them.
//!
//! Draws: linear and convolution weights and biases uniform in `±1/sqrt(fan_in)` (PyTorch's
//! default init); norm weights `1 ± 0.1`, norm biases `±0.1` (not the init's exact 1 and 0, so
//! a swapped or dropped affine term shows); scan logits and raw gains uniform in `±1` (decay
//! logits `±2`), state biases `±0.1`, so every channel has its own constrained parameters
//! inside their ranges; the FusionGate keeps its defaults `(1, 1, 0)`, as the benchmark did.

use apex_tile_math::{
    gate::GateWeights,
    rng::Rng,
    scan::{BidirectionalRaw, ScanRaw},
};

/// One heavy path's weights (`C` = channels).
#[derive(Debug, Clone, PartialEq)]
pub struct PathWeights {
    pub channels: usize,
    /// LayerNorm weight and bias, `[C]`.
    pub ln_w: Vec<f32>,
    pub ln_b: Vec<f32>,
    /// `Linear(C→C)`: `[C][C]`, `[C]`.
    pub fc1_w: Vec<f32>,
    pub fc1_b: Vec<f32>,
    /// `Linear(C→2C)`: `[2C][C]`, `[2C]`; output rows `0..C` are `gamma_raw`, `C..2C` `beta`.
    pub fc2_w: Vec<f32>,
    pub fc2_b: Vec<f32>,
    /// The scan's raw parameters (fp32 values held in f64).
    pub scan: BidirectionalRaw,
    /// Depthwise 3x3: `[C][3][3]`, `[C]`.
    pub dw_w: Vec<f32>,
    pub dw_b: Vec<f32>,
    /// Pointwise 1x1: `[2C][C]`, `[2C]`; output channels `0..C` are `a`, `C..2C` `b`.
    pub pw_w: Vec<f32>,
    pub pw_b: Vec<f32>,
    /// GroupNorm(1, 2C) weight and bias, `[2C]`.
    pub gn_w: Vec<f32>,
    pub gn_b: Vec<f32>,
    /// FusionGate raw weights: `boundary_log_weight`, `uncertainty_log_weight`, `bias`.
    pub gate_raw: [f32; 3],
}

fn draw(rng: &mut Rng, len: usize, lo: f64, hi: f64) -> Vec<f32> {
    (0..len).map(|_| rng.range(lo, hi) as f32).collect()
}

fn widen(v: Vec<f32>) -> Vec<f64> {
    v.into_iter().map(f64::from).collect()
}

impl PathWeights {
    pub fn generate(channels: usize, rng: &mut Rng) -> Self {
        let c = channels;
        let lin = 1.0 / (c as f64).sqrt();
        let dw = 1.0 / 3.0;
        let scan_raw = |rng: &mut Rng| ScanRaw {
            decay_logit: widen(draw(rng, c, -2.0, 2.0)),
            input_gain_raw: widen(draw(rng, c, -1.0, 1.0)),
            output_gain_raw: widen(draw(rng, c, -1.0, 1.0)),
            state_bias: widen(draw(rng, c, -0.1, 0.1)),
        };
        let forward = scan_raw(rng);
        let backward = scan_raw(rng);
        let merge_gate_logit = widen(draw(rng, c, -1.0, 1.0));
        Self {
            channels,
            ln_w: draw(rng, c, 0.9, 1.1),
            ln_b: draw(rng, c, -0.1, 0.1),
            fc1_w: draw(rng, c * c, -lin, lin),
            fc1_b: draw(rng, c, -lin, lin),
            fc2_w: draw(rng, 2 * c * c, -lin, lin),
            fc2_b: draw(rng, 2 * c, -lin, lin),
            scan: BidirectionalRaw {
                forward,
                backward,
                merge_gate_logit,
            },
            dw_w: draw(rng, c * 9, -dw, dw),
            dw_b: draw(rng, c, -dw, dw),
            pw_w: draw(rng, 2 * c * c, -lin, lin),
            pw_b: draw(rng, 2 * c, -lin, lin),
            gn_w: draw(rng, 2 * c, 0.9, 1.1),
            gn_b: draw(rng, 2 * c, -0.1, 0.1),
            gate_raw: [1.0, 1.0, 0.0],
        }
    }

    pub fn gate(&self) -> GateWeights {
        let [b, u, bias] = self.gate_raw.map(f64::from);
        GateWeights::from_raw(b, u, bias)
    }

    /// Every tensor by its PyTorch `state_dict` name (relative to the path) and shape, in a
    /// fixed order: what the export example writes and the anchor loads.
    pub fn tensors(&self) -> Vec<(&'static str, Vec<usize>, Vec<f32>)> {
        let c = self.channels;
        let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let s = &self.scan;
        vec![
            ("film.norm.weight", vec![c], self.ln_w.clone()),
            ("film.norm.bias", vec![c], self.ln_b.clone()),
            ("film.fc1.weight", vec![c, c], self.fc1_w.clone()),
            ("film.fc1.bias", vec![c], self.fc1_b.clone()),
            ("film.fc2.weight", vec![2 * c, c], self.fc2_w.clone()),
            ("film.fc2.bias", vec![2 * c], self.fc2_b.clone()),
            (
                "scan.forward.decay_logit",
                vec![c],
                narrow(&s.forward.decay_logit),
            ),
            (
                "scan.forward.input_gain_raw",
                vec![c],
                narrow(&s.forward.input_gain_raw),
            ),
            (
                "scan.forward.output_gain_raw",
                vec![c],
                narrow(&s.forward.output_gain_raw),
            ),
            (
                "scan.forward.state_bias",
                vec![c],
                narrow(&s.forward.state_bias),
            ),
            (
                "scan.backward.decay_logit",
                vec![c],
                narrow(&s.backward.decay_logit),
            ),
            (
                "scan.backward.input_gain_raw",
                vec![c],
                narrow(&s.backward.input_gain_raw),
            ),
            (
                "scan.backward.output_gain_raw",
                vec![c],
                narrow(&s.backward.output_gain_raw),
            ),
            (
                "scan.backward.state_bias",
                vec![c],
                narrow(&s.backward.state_bias),
            ),
            (
                "scan.merge_gate_logit",
                vec![c],
                narrow(&s.merge_gate_logit),
            ),
            ("refine.dw.weight", vec![c, 1, 3, 3], self.dw_w.clone()),
            ("refine.dw.bias", vec![c], self.dw_b.clone()),
            ("refine.pw.weight", vec![2 * c, c, 1, 1], self.pw_w.clone()),
            ("refine.pw.bias", vec![2 * c], self.pw_b.clone()),
            ("refine.norm.weight", vec![2 * c], self.gn_w.clone()),
            ("refine.norm.bias", vec![2 * c], self.gn_b.clone()),
            ("gate.boundary_log_weight", vec![], vec![self.gate_raw[0]]),
            (
                "gate.uncertainty_log_weight",
                vec![],
                vec![self.gate_raw[1]],
            ),
            ("gate.bias", vec![], vec![self.gate_raw[2]]),
        ]
    }

    /// Scalars held, for the cost model.
    pub fn elements(&self) -> usize {
        self.tensors().iter().map(|(_, _, v)| v.len()).sum()
    }
}

/// The model: the L0 and the L1 heavy path.
#[derive(Debug, Clone, PartialEq)]
pub struct FfWeights {
    pub l0: PathWeights,
    pub l1: PathWeights,
}

/// The stream the weights are drawn from (inputs use others).
const STREAM: u64 = 0xFF_0001;

impl FfWeights {
    pub fn generate(channels: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed, STREAM);
        let l0 = PathWeights::generate(channels, &mut rng);
        let l1 = PathWeights::generate(channels, &mut rng);
        Self { l0, l1 }
    }

    pub fn elements(&self) -> usize {
        self.l0.elements() + self.l1.elements()
    }
}
