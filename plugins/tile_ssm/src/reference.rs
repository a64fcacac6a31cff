//! The f64 reference: one serial chain per (b, c) and direction, exactly the recurrence of
//! `spec/apex-x-kernels.md` §1.5 in f64 on the stored inputs. Every backend is verified against it.

use crate::{
    Element,
    inputs::{DECAY, INPUT_GAIN, OUTPUT_GAIN, STATE_BIAS, ScanInputs},
    problem::{Direction, Merge, ScanProblem, clamp_decay, clamp_nan_low},
};

/// NaN → 0, then clamp to `[-clamp, clamp]` (so ±inf → ±clamp): the shared formula.
pub use apex_tile_math::scan::clean_token;

/// The merge weights `(w_f, w_b)` of (b, c): `y = w_f*y_f + w_b*y_b`.
pub fn merge_weights(problem: &ScanProblem, gate: &[f32], b: usize, c: usize) -> (f64, f64) {
    match problem.merge {
        Merge::Sum => (1.0, 1.0),
        Merge::Avg => (0.5, 0.5),
        Merge::Gated => {
            let g = clamp_nan_low(f64::from(gate[problem.gate_index(b, c)]), 0.0, 1.0);
            (g, 1.0 - g)
        }
    }
}

/// Channels per task of [`reference`]: each task walks K once for this many adjacent channels
/// (row accesses instead of one K-long strided chain per channel).
const BLOCK: usize = 64;

/// One (batch entry, channel block) of the reference: `y[k][i]` for channel `c0 + i`, and the
/// final states per direction (`state[d][i]`).
struct BlockOut {
    b: usize,
    c0: usize,
    y: Vec<f64>,
    state: [Vec<f64>; 2],
}

/// `y` (`[B, K, C]`) followed by the final state (`[B, C]` or `[B, 2, C]`), in f64. Tasks of
/// (batch entry, 64-channel block) run on rayon; every element is the same f64 expression, in the
/// same order, as one serial chain per (b, c) would compute (a test holds them bitwise equal).
pub fn reference<T: Element>(problem: &ScanProblem, inputs: &ScanInputs<T>) -> Vec<f64> {
    use rayon::prelude::*;
    let (bn, kn, cn) = (problem.batch, problem.steps, problem.channels);
    let states = problem.direction.states();
    let tasks: Vec<(usize, usize)> = (0..bn)
        .flat_map(|b| (0..cn).step_by(BLOCK).map(move |c0| (b, c0)))
        .collect();
    let blocks: Vec<BlockOut> = tasks
        .into_par_iter()
        .map(|(b, c0)| reference_block(problem, inputs, b, c0))
        .collect();
    let mut y = vec![0.0f64; problem.tokens()];
    let mut state = vec![0.0f64; problem.state_len()];
    for blk in &blocks {
        let n = blk.state[0].len();
        for k in 0..kn {
            let at = (blk.b * kn + k) * cn + blk.c0;
            y[at..at + n].copy_from_slice(&blk.y[k * n..(k + 1) * n]);
        }
        for (d, st) in blk.state.iter().enumerate().take(states) {
            let at = (blk.b * states + d) * cn + blk.c0;
            state[at..at + n].copy_from_slice(st);
        }
    }
    y.extend_from_slice(&state);
    y
}

fn reference_block<T: Element>(
    problem: &ScanProblem,
    inputs: &ScanInputs<T>,
    b: usize,
    c0: usize,
) -> BlockOut {
    let (kn, cn) = (problem.steps, problem.channels);
    let n = BLOCK.min(cn - c0);
    let clamp = f64::from(problem.clamp_value);
    let chan = |which: usize| -> Vec<f64> {
        inputs.param(which, cn)[c0..c0 + n]
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    };
    let a: Vec<f64> = chan(DECAY).into_iter().map(clamp_decay).collect();
    let (g, o, bias) = (chan(INPUT_GAIN), chan(OUTPUT_GAIN), chan(STATE_BIAS));
    let init = |d: usize| -> Vec<f64> {
        (c0..c0 + n)
            .map(|c| {
                problem
                    .init_index(b, d, c)
                    .map_or(0.0, |i| inputs.init[i].to_f64())
            })
            .collect()
    };
    let row = |k: usize| &inputs.tokens[(b * kn + k) * cn + c0..][..n];
    // One step of every channel of the block at step k: s = a*s + (1-a)*(g*x + bias).
    let step = |s: &mut [f64], k: usize| {
        for (i, x) in row(k).iter().enumerate() {
            let x = clean_token(x.to_f64(), clamp);
            s[i] = a[i] * s[i] + (1.0 - a[i]) * (g[i] * x + bias[i]);
        }
    };
    let mut y = vec![0.0f64; kn * n];
    let out = |s: &mut [f64], k: usize, y: &mut [f64]| {
        step(s, k);
        for i in 0..n {
            y[k * n + i] = o[i] * s[i];
        }
    };
    let state = match problem.direction {
        Direction::Forward => {
            let mut s = init(0);
            for k in 0..kn {
                out(&mut s, k, &mut y);
            }
            [s, Vec::new()]
        }
        Direction::Backward => {
            let mut s = init(0);
            for k in (0..kn).rev() {
                out(&mut s, k, &mut y);
            }
            [s, Vec::new()]
        }
        Direction::Bidirectional => {
            let w: Vec<(f64, f64)> = (c0..c0 + n)
                .map(|c| merge_weights(problem, &inputs.gate, b, c))
                .collect();
            // The backward states go into y first; the forward pass merges them in place.
            let mut sb = init(1);
            for k in (0..kn).rev() {
                step(&mut sb, k);
                y[k * n..(k + 1) * n].copy_from_slice(&sb);
            }
            let mut sf = init(0);
            for k in 0..kn {
                step(&mut sf, k);
                for i in 0..n {
                    let (wf, wb) = w[i];
                    y[k * n + i] = o[i] * (wf * sf[i] + wb * y[k * n + i]);
                }
            }
            [sf, sb]
        }
    };
    BlockOut { b, c0, y, state }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{DECAY_MAX, DECAY_MIN, GateShape, InitState};

    fn problem(direction: Direction, k: usize) -> ScanProblem {
        ScanProblem {
            direction,
            batch: 1,
            steps: k,
            channels: 1,
            clamp_value: 3.0,
            init: InitState::Bc,
            merge: Merge::Sum,
            gate: GateShape::Channel,
            nonfinite: false,
        }
    }

    fn inputs(tokens: &[f32], init: f32) -> ScanInputs<f32> {
        ScanInputs {
            tokens: tokens.to_vec(),
            // a = 0.5, g = 2, o = 3, bias = 0.25
            params: vec![0.5, 2.0, 3.0, 0.25],
            init: vec![init],
            gate: vec![],
        }
    }

    #[test]
    fn forward_backward_and_sum_by_hand() {
        // u = g*x + bias: x = [1, NaN->0, +inf->3] gives u = [2.25, 0.25, 6.25].
        let x = [1.0, f32::NAN, f32::INFINITY];
        let fwd = reference(&problem(Direction::Forward, 3), &inputs(&x, 1.0));
        // s: 0.5*1 + 0.5*2.25 = 1.625; 0.5*1.625 + 0.125 = 0.9375; 0.46875 + 3.125 = 3.59375.
        assert_eq!(fwd, [4.875, 2.8125, 10.78125, 3.59375]);
        let bwd = reference(&problem(Direction::Backward, 3), &inputs(&x, 1.0));
        // s from k=2: 0.5 + 3.125 = 3.625; 1.8125 + 0.125 = 1.9375; 0.96875 + 1.125 = 2.09375.
        assert_eq!(bwd, [6.28125, 5.8125, 10.875, 2.09375]);
        let bi = reference(&problem(Direction::Bidirectional, 3), &inputs(&x, 1.0));
        let sum: Vec<f64> = (0..3).map(|k| fwd[k] + bwd[k]).collect();
        assert_eq!(bi[..3], sum[..]);
        assert_eq!(bi[3..], [3.59375, 2.09375]);
    }

    #[test]
    fn clamps_follow_the_policy() {
        assert_eq!(clean_token(f64::NEG_INFINITY, 2.0), -2.0);
        assert_eq!(clean_token(-7.0, 2.0), -2.0);
        assert_eq!(clean_token(f64::NAN, 2.0), 0.0);
        assert_eq!(clamp_decay(1.5), f64::from(DECAY_MAX));
        assert_eq!(clamp_decay(-1.0), f64::from(DECAY_MIN));
        assert_eq!(clamp_decay(f64::NAN), f64::from(DECAY_MIN));
        assert_eq!(clamp_decay(0.3), 0.3);
    }

    #[test]
    fn the_blocked_reference_equals_one_serial_chain_per_channel_bitwise() {
        use crate::problem::GateShape::{BatchChannel, Channel};
        for direction in Direction::ALL {
            for (batch, steps, channels, init, gate) in [
                (2, 37, 150, InitState::B2c, BatchChannel),
                (3, 5, 64, InitState::Bc, Channel),
                (1, 1, 7, InitState::None, Channel),
            ] {
                let p = ScanProblem {
                    direction,
                    batch,
                    steps,
                    channels,
                    clamp_value: 1.5,
                    init: if direction == Direction::Bidirectional || init != InitState::B2c {
                        init
                    } else {
                        InitState::Bc
                    },
                    merge: Merge::Gated,
                    gate,
                    nonfinite: true,
                };
                let inputs = ScanInputs::<half::f16>::generate(&p, 7);
                let got = reference(&p, &inputs);
                let want = serial_reference(&p, &inputs);
                assert_eq!(got.len(), want.len());
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g.to_bits(), w.to_bits(), "{direction:?} {p:?} element {i}");
                }
            }
        }
    }

    /// The serial form: one chain per (b, c) and direction (what [`reference`] must equal).
    fn serial_reference<T: Element>(problem: &ScanProblem, inputs: &ScanInputs<T>) -> Vec<f64> {
        let (bn, kn, cn) = (problem.batch, problem.steps, problem.channels);
        let clamp = f64::from(problem.clamp_value);
        let states = problem.direction.states();
        let mut y = vec![0.0f64; problem.tokens()];
        let mut state = vec![0.0f64; problem.state_len()];
        let mut backward = vec![0.0f64; kn];
        for b in 0..bn {
            for c in 0..cn {
                let a = clamp_decay(f64::from(inputs.param(DECAY, cn)[c]));
                let g = f64::from(inputs.param(INPUT_GAIN, cn)[c]);
                let o = f64::from(inputs.param(OUTPUT_GAIN, cn)[c]);
                let bias = f64::from(inputs.param(STATE_BIAS, cn)[c]);
                let init = |d: usize| {
                    problem
                        .init_index(b, d, c)
                        .map_or(0.0, |i| inputs.init[i].to_f64())
                };
                let at = |k: usize| (b * kn + k) * cn + c;
                let step = |s: f64, k: usize| {
                    let x = clean_token(inputs.tokens[at(k)].to_f64(), clamp);
                    a * s + (1.0 - a) * (g * x + bias)
                };
                match problem.direction {
                    Direction::Forward => {
                        let mut s = init(0);
                        for k in 0..kn {
                            s = step(s, k);
                            y[at(k)] = o * s;
                        }
                        state[b * cn + c] = s;
                    }
                    Direction::Backward => {
                        let mut s = init(0);
                        for k in (0..kn).rev() {
                            s = step(s, k);
                            y[at(k)] = o * s;
                        }
                        state[b * cn + c] = s;
                    }
                    Direction::Bidirectional => {
                        let (wf, wb) = merge_weights(problem, &inputs.gate, b, c);
                        let mut s = init(1);
                        for k in (0..kn).rev() {
                            s = step(s, k);
                            backward[k] = s;
                        }
                        state[(b * states + 1) * cn + c] = s;
                        let mut s = init(0);
                        for (k, &sb) in backward.iter().enumerate() {
                            s = step(s, k);
                            y[at(k)] = o * (wf * s + wb * sb);
                        }
                        state[(b * states) * cn + c] = s;
                    }
                }
            }
        }
        y.extend_from_slice(&state);
        y
    }
}
