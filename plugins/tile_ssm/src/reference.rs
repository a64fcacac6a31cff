//! The f64 reference: one serial chain per (b, c) and direction, exactly the recurrence of
//! `spec/apex-x-kernels.md` §1.5 in f64 on the stored inputs. Every backend is verified against it.

use crate::{
    Element,
    inputs::{DECAY, INPUT_GAIN, OUTPUT_GAIN, STATE_BIAS, ScanInputs},
    problem::{Direction, Merge, ScanProblem, clamp_decay, clamp_nan_low},
};

/// NaN → 0, then clamp to `[-clamp, clamp]` (so ±inf → ±clamp).
pub fn clean_token(x: f64, clamp: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(-clamp, clamp)
    }
}

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

/// `y` (`[B, K, C]`) followed by the final state (`[B, C]` or `[B, 2, C]`), in f64.
pub fn reference<T: Element>(problem: &ScanProblem, inputs: &ScanInputs<T>) -> Vec<f64> {
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
}
