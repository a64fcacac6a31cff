//! [`ScanInputs`]: the inputs of one call and how they are drawn from a seed.
//!
//! Distributions follow the original's GPU tests (`spec/apex-x-kernels.md` §1.5): decay in
//! [0.1, 0.9], gains in [0.05, 1.55], bias about 0.1·N(0,1) (here uniform in [-0.2, 0.2)), tokens
//! uniform in [-2, 2). Two channels in every 16 get a decay outside [0, 1] (1.25 and -0.5), so the
//! clamp to `[DECAY_MIN, DECAY_MAX]` is always exercised; gates are drawn in [-0.25, 1.25) so their
//! clamp to [0, 1] is too. With `nonfinite`, about one token in 256 each is NaN, +inf and -inf.

use crate::{
    Element,
    problem::ScanProblem,
    rng::{Rng, uniform},
};

/// Offsets of the four per-channel vectors in [`ScanInputs::params`].
pub const DECAY: usize = 0;
pub const INPUT_GAIN: usize = 1;
pub const OUTPUT_GAIN: usize = 2;
pub const STATE_BIAS: usize = 3;

/// The inputs of one call. Tokens and the initial state are in the storage type `T`; the
/// per-channel parameters and the gate are f32 (the reference's parameters are fp32; the original
/// Triton path cast them to fp16, which §6.2 item 11 lists as a weakness).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanInputs<T> {
    /// `[B, K, C]`.
    pub tokens: Vec<T>,
    /// `[4, C]`: decay, input_gain, output_gain, state_bias.
    pub params: Vec<f32>,
    /// `[B, C]` or `[B, 2, C]`, or empty.
    pub init: Vec<T>,
    /// `[C]` or `[B, C]`, or empty.
    pub gate: Vec<f32>,
}

impl<T: Element> ScanInputs<T> {
    /// Deterministic inputs of `problem` for `seed`.
    pub fn generate(problem: &ScanProblem, seed: u64) -> Self {
        let c = problem.channels;
        let mut rng = Rng::new(seed, 1);
        let mut tokens = uniform::<T>(problem.tokens(), -2.0, 2.0, &mut rng);
        if problem.nonfinite {
            let mut rng = Rng::new(seed, 2);
            for v in &mut tokens {
                match rng.below(768) {
                    0 => *v = T::from_f64(f64::NAN),
                    1 => *v = T::from_f64(f64::INFINITY),
                    2 => *v = T::from_f64(f64::NEG_INFINITY),
                    _ => {}
                }
            }
        }
        let mut rng = Rng::new(seed, 3);
        let mut params = vec![0.0f32; 4 * c];
        for ch in 0..c {
            params[DECAY * c + ch] = match ch % 16 {
                5 => 1.25,
                11 => -0.5,
                _ => rng.range(0.1, 0.9) as f32,
            };
            params[INPUT_GAIN * c + ch] = rng.range(0.05, 1.55) as f32;
            params[OUTPUT_GAIN * c + ch] = rng.range(0.05, 1.55) as f32;
            params[STATE_BIAS * c + ch] = rng.range(-0.2, 0.2) as f32;
        }
        let init = uniform::<T>(problem.init_len(), -1.0, 1.0, &mut Rng::new(seed, 4));
        let mut rng = Rng::new(seed, 5);
        let gate = (0..problem.gate_len())
            .map(|_| rng.range(-0.25, 1.25) as f32)
            .collect();
        Self {
            tokens,
            params,
            init,
            gate,
        }
    }

    /// Parameter vector `which` (one of [`DECAY`], ...).
    pub fn param(&self, which: usize, channels: usize) -> &[f32] {
        &self.params[which * channels..][..channels]
    }
}
