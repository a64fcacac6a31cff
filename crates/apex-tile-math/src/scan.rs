//! The TileSSM scan as the FF model runs it (`spec/apex-x-kernels.md` §1.5): token cleaning, the
//! model-side constrained parameters (`StableStateSpaceScan`), and the bidirectional scan of one
//! token sequence with a per-channel merge gate (`StableBidirectionalStateSpaceScan`).
//!
//! Per channel `c`, with `x` the cleaned token: `s = a*s + (1-a)*(input_gain*x + state_bias)`,
//! `y = output_gain*s`, from `s = 0`; backward runs `k = K-1 .. 0`; the merge is
//! `g*y_f + (1-g)*y_b`.

use crate::{Real, gate::sigmoid, gate::softplus};

/// The clamp the model applies to tokens (`clamp_value` default).
pub const TOKEN_CLAMP: f64 = 1e4;

/// NaN → 0, then clamp to `[-clamp, clamp]` (so ±inf → ±clamp).
pub fn clean_token<R: Real>(x: R, clamp: R) -> R {
    if x.is_nan() {
        R::ZERO
    } else {
        x.max(-clamp).min(clamp)
    }
}

/// One direction's raw parameters, `[C]` each (all 0 at the model's init).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanRaw {
    pub decay_logit: Vec<f64>,
    pub input_gain_raw: Vec<f64>,
    pub output_gain_raw: Vec<f64>,
    pub state_bias: Vec<f64>,
}

/// The bidirectional scan's raw parameters: two independent directions and the gate logit.
#[derive(Debug, Clone, PartialEq)]
pub struct BidirectionalRaw {
    pub forward: ScanRaw,
    pub backward: ScanRaw,
    pub merge_gate_logit: Vec<f64>,
}

/// `decay = 1e-3 + (0.999 - 1e-3) * sigmoid(decay_logit)`: always inside `(1e-3, 0.999)`.
pub fn decay(logit: f64) -> f64 {
    1e-3 + (0.999 - 1e-3) * sigmoid(logit)
}

/// `gain = softplus(raw) + 1e-6`: always positive.
pub fn gain(raw: f64) -> f64 {
    softplus(raw) + 1e-6
}

/// One direction's constrained parameters in `R`, `[C]` each.
#[derive(Debug, Clone)]
pub struct Direction<R> {
    pub a: Vec<R>,
    pub one_minus_a: Vec<R>,
    pub input_gain: Vec<R>,
    pub state_bias: Vec<R>,
    pub output_gain: Vec<R>,
}

impl<R: Real> Direction<R> {
    pub fn from_raw(raw: &ScanRaw) -> Self {
        let a: Vec<f64> = raw.decay_logit.iter().map(|&l| decay(l)).collect();
        let cast = |v: &[f64]| v.iter().map(|&x| R::from_f64(x)).collect::<Vec<R>>();
        Self {
            one_minus_a: a.iter().map(|&a| R::from_f64(1.0 - a)).collect(),
            a: cast(&a),
            input_gain: raw
                .input_gain_raw
                .iter()
                .map(|&r| R::from_f64(gain(r)))
                .collect(),
            state_bias: cast(&raw.state_bias),
            output_gain: raw
                .output_gain_raw
                .iter()
                .map(|&r| R::from_f64(gain(r)))
                .collect(),
        }
    }
}

/// The bidirectional scan's constrained parameters in `R`.
#[derive(Debug, Clone)]
pub struct Bidirectional<R> {
    pub forward: Direction<R>,
    pub backward: Direction<R>,
    /// `g = sigmoid(merge_gate_logit)` and `1 - g`, `[C]` each.
    pub gate: Vec<R>,
    pub one_minus_gate: Vec<R>,
}

impl<R: Real> Bidirectional<R> {
    pub fn from_raw(raw: &BidirectionalRaw) -> Self {
        let g: Vec<f64> = raw.merge_gate_logit.iter().map(|&l| sigmoid(l)).collect();
        Self {
            forward: Direction::from_raw(&raw.forward),
            backward: Direction::from_raw(&raw.backward),
            gate: g.iter().map(|&g| R::from_f64(g)).collect(),
            one_minus_gate: g.iter().map(|&g| R::from_f64(1.0 - g)).collect(),
        }
    }

    pub fn channels(&self) -> usize {
        self.gate.len()
    }

    /// Scans `tokens` (`[K, C]`, cleaned here) both ways and writes the merged `y` (`[K, C]`).
    /// `state` (`[C]`) is scratch. The inner loops run over channels, so they vectorize.
    pub fn run(&self, tokens: &[R], y: &mut [R], state: &mut [R]) {
        let c = self.channels();
        let k = tokens.len() / c;
        let clamp = R::from_f64(TOKEN_CLAMP);
        let f = &self.forward;
        state.fill(R::ZERO);
        for step in 0..k {
            let x = &tokens[step * c..(step + 1) * c];
            let out = &mut y[step * c..(step + 1) * c];
            for i in 0..c {
                let u = f.input_gain[i] * clean_token(x[i], clamp) + f.state_bias[i];
                state[i] = f.a[i] * state[i] + f.one_minus_a[i] * u;
                out[i] = self.gate[i] * (f.output_gain[i] * state[i]);
            }
        }
        let b = &self.backward;
        state.fill(R::ZERO);
        for step in (0..k).rev() {
            let x = &tokens[step * c..(step + 1) * c];
            let out = &mut y[step * c..(step + 1) * c];
            for i in 0..c {
                let u = b.input_gain[i] * clean_token(x[i], clamp) + b.state_bias[i];
                state[i] = b.a[i] * state[i] + b.one_minus_a[i] * u;
                out[i] = out[i] + self.one_minus_gate[i] * (b.output_gain[i] * state[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(c: usize, v: f64) -> ScanRaw {
        ScanRaw {
            decay_logit: vec![v; c],
            input_gain_raw: vec![v; c],
            output_gain_raw: vec![v; c],
            state_bias: vec![0.0; c],
        }
    }

    #[test]
    fn init_parameters_match_the_model() {
        assert!((decay(0.0) - 0.5).abs() < 1e-15);
        assert!((gain(0.0) - 0.693_148).abs() < 1e-6);
    }

    #[test]
    fn a_two_step_bidirectional_scan_by_hand() {
        let p = Bidirectional::<f64>::from_raw(&BidirectionalRaw {
            forward: raw(1, 0.0),
            backward: raw(1, 0.0),
            merge_gate_logit: vec![0.0],
        });
        let (a, g) = (0.5, std::f64::consts::LN_2 + 1e-6);
        let x = [1.0, 3.0];
        // forward: s1 = (1-a)*g*1, s2 = a*s1 + (1-a)*g*3; backward: t2 = (1-a)*g*3, t1 = a*t2 + (1-a)*g*1.
        let s1 = (1.0 - a) * g * x[0];
        let s2 = a * s1 + (1.0 - a) * g * x[1];
        let t2 = (1.0 - a) * g * x[1];
        let t1 = a * t2 + (1.0 - a) * g * x[0];
        let mut y = [0.0; 2];
        p.run(&x, &mut y, &mut [0.0]);
        assert!((y[0] - 0.5 * g * (s1 + t1)).abs() < 1e-12, "{y:?}");
        assert!((y[1] - 0.5 * g * (s2 + t2)).abs() < 1e-12, "{y:?}");
    }

    #[test]
    fn tokens_are_cleaned() {
        assert_eq!(clean_token(f64::NAN, 2.0), 0.0);
        assert_eq!(clean_token(f64::INFINITY, 2.0), 2.0);
        assert_eq!(clean_token(-3.0f32, 2.0), -2.0);
        assert_eq!(clean_token(1.5f32, 2.0), 1.5);
    }
}
