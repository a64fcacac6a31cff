//! The fast CPU path: f32 arithmetic, vectorized over channels, threads over (batch, channel
//! block) tasks.
//!
//! Layout `[B, K, C]` is channel-contiguous, so one task owns a block of up to
//! [`CHANNEL_BLOCK`] channels of one batch entry and walks K once (twice for bidirectional): each
//! step is a row of independent chains, which the compiler vectorizes (8 f32 lanes with AVX2, so 8
//! vectors of chains hide the latency). Tokens are converted a row at a time through
//! [`Element::load`] and outputs rounded a row at a time through [`Element::store`].
//!
//! The walk is chunked like the CUDA kernel: within a chunk of [`CHUNK`] steps the chain `e`
//! starts from 0 and the state is `s_t = a^(t+1) * carry + e_t`; the carry advances once per
//! chunk. A plain serial f32 chain `s = a*s + w` rounds `a*s` at every step, and where `a` is near
//! 1 (the decay clamp, 1 - 1e-6) and |s| is large those roundings add up: 7e-4 off the f64 result
//! after K = 65,536 steps, against 2e-6 for the chunked form (both measured with NumPy f32).

use rayon::prelude::*;

use crate::{
    Element,
    inputs::{DECAY, INPUT_GAIN, OUTPUT_GAIN, STATE_BIAS, ScanInputs},
    problem::{Direction, ScanProblem, clamp_decay},
};

/// Channels per task: 64 f32 chains, 8 AVX2 vectors.
pub const CHANNEL_BLOCK: usize = 64;

/// Steps per chunk (the carry advances once per chunk).
pub const CHUNK: usize = 16;

/// From this many token-channels per call, tasks run on rayon's pool; below it a call stays on
/// the calling thread (waking the pool costs tens of microseconds, more than a small call).
pub const PARALLEL_MIN_TOKENS: usize = 1 << 18;

/// Working memory sized at setup, so that `run` does not allocate.
#[derive(Debug, Default)]
pub struct CpuScratch {
    /// Per channel: `a`, `(1-a)*g`, `(1-a)*bias`, `o`.
    a: Vec<f32>,
    gw: Vec<f32>,
    bw: Vec<f32>,
    o: Vec<f32>,
    /// `[CHUNK, C]`: `a^(t+1)`.
    powers: Vec<f32>,
    /// Bidirectional: the backward pass's `w_b * s_b`, `[B, K, C]`.
    backward: Vec<f32>,
    pub(crate) parallel: bool,
}

impl CpuScratch {
    pub fn new(problem: &ScanProblem) -> Self {
        let c = problem.channels;
        Self {
            a: vec![0.0; c],
            gw: vec![0.0; c],
            bw: vec![0.0; c],
            o: vec![0.0; c],
            powers: vec![0.0; CHUNK * c],
            backward: if problem.direction == Direction::Bidirectional {
                vec![0.0; problem.tokens()]
            } else {
                Vec::new()
            },
            // A one-thread pool (RAYON_NUM_THREADS=1, as the CPU gate runs) would only add its
            // scheduling: nn_ops' MSE at 2 MiB took 51 us through one against 33 without.
            parallel: problem.tokens() >= PARALLEL_MIN_TOKENS && rayon::current_num_threads() > 1,
        }
    }
}

/// A raw output pointer shared by tasks that write disjoint elements.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: every task writes only the elements of its own (batch, channel block); see `run_cpu`.
unsafe impl<T: Send> Send for Shared<T> {}
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// `len` elements from `at`.
    ///
    /// # Safety
    /// The range must be in bounds and not used by any other task at the same time.
    #[expect(
        clippy::mut_from_ref,
        reason = "disjoint ranges handed to parallel tasks"
    )]
    unsafe fn slice(&self, at: usize, len: usize) -> &mut [T] {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}

/// NaN → 0, then clamp to `[-clamp, clamp]` (selects, so it vectorizes).
#[inline(always)]
fn clean(x: f32, clamp: f32) -> f32 {
    let x = if x.is_nan() { 0.0 } else { x };
    if x > clamp {
        clamp
    } else if x < -clamp {
        -clamp
    } else {
        x
    }
}

/// One call: writes `y` (`[B, K, C]`) and `state` (`[B, C]` or `[B, 2, C]`).
pub fn run_cpu<T: Element>(
    problem: &ScanProblem,
    inputs: &ScanInputs<T>,
    y: &mut [T],
    state: &mut [T],
    scratch: &mut CpuScratch,
) {
    let cn = problem.channels;
    assert_eq!(y.len(), problem.tokens());
    assert_eq!(state.len(), problem.state_len());
    for c in 0..cn {
        // Exact: the bounds and the decay are f32 values.
        let a = clamp_decay(f64::from(inputs.param(DECAY, cn)[c])) as f32;
        scratch.a[c] = a;
        scratch.gw[c] = (1.0 - a) * inputs.param(INPUT_GAIN, cn)[c];
        scratch.bw[c] = (1.0 - a) * inputs.param(STATE_BIAS, cn)[c];
        scratch.o[c] = inputs.param(OUTPUT_GAIN, cn)[c];
        let mut p = 1.0f32;
        for t in 0..CHUNK {
            p *= a;
            scratch.powers[t * cn + c] = p;
        }
    }
    let blocks = cn.div_ceil(CHANNEL_BLOCK);
    let tasks = problem.batch * blocks;
    let (y, state, backward) = (
        Shared(y.as_mut_ptr()),
        Shared(state.as_mut_ptr()),
        Shared(scratch.backward.as_mut_ptr()),
    );
    let consts = Consts {
        a: &scratch.a,
        gw: &scratch.gw,
        bw: &scratch.bw,
        o: &scratch.o,
        powers: &scratch.powers,
    };
    let task = |i: usize| {
        let (b, blk) = (i / blocks, i % blocks);
        let c0 = blk * CHANNEL_BLOCK;
        let c1 = (c0 + CHANNEL_BLOCK).min(cn);
        // SAFETY: task (b, blk) touches only channels c0..c1 of batch entry b in y, state and
        // backward; tasks are distinct, so no element is shared.
        unsafe { scan_block(problem, inputs, &consts, b, c0, c1, y, state, backward) };
    };
    if scratch.parallel {
        (0..tasks).into_par_iter().for_each(task);
    } else {
        (0..tasks).for_each(task);
    }
}

/// The per-channel constants of one call.
struct Consts<'a> {
    a: &'a [f32],
    gw: &'a [f32],
    bw: &'a [f32],
    o: &'a [f32],
    powers: &'a [f32],
}

/// One task's channels `c0..c1` of batch entry `b`, and how to walk them.
struct Block<'a, T> {
    tokens: &'a [T],
    a: &'a [f32],
    gw: &'a [f32],
    bw: &'a [f32],
    powers: &'a [f32],
    /// Element index of (b, k = 0, c0).
    base: usize,
    channels: usize,
    steps: usize,
    clamp: f32,
}

impl<T: Element> Block<'_, T> {
    /// Walks K (`rev`: from K-1 down) from `carry`, calling `emit(k, s)` with the block's states
    /// after step k; leaves the final state in `carry`. `e` and `s` are working rows.
    fn walk(
        &self,
        rev: bool,
        carry: &mut [f32],
        e: &mut [f32],
        s: &mut [f32],
        mut emit: impl FnMut(usize, &[f32]),
    ) {
        let n = carry.len();
        let (a, gw, bw) = (&self.a[..n], &self.gw[..n], &self.bw[..n]);
        let (e, s) = (&mut e[..n], &mut s[..n]);
        let mut t = 0;
        for i in 0..self.steps {
            let k = if rev { self.steps - 1 - i } else { i };
            if t == 0 {
                e.fill(0.0);
            }
            // s holds the tokens first, then the states.
            T::load(&self.tokens[self.base + k * self.channels..][..n], s);
            let p = &self.powers[t * self.channels..][..n];
            let clamp = self.clamp;
            for ((((((e, s), &c), &a), &gw), &bw), &p) in e
                .iter_mut()
                .zip(s.iter_mut())
                .zip(carry.iter())
                .zip(a)
                .zip(gw)
                .zip(bw)
                .zip(p)
            {
                *e = a * *e + (gw * clean(*s, clamp) + bw);
                *s = p * c + *e;
            }
            emit(k, s);
            t += 1;
            if t == CHUNK || i + 1 == self.steps {
                carry.copy_from_slice(s);
                t = 0;
            }
        }
    }
}

/// The chains of channels `c0..c1` of batch entry `b`.
///
/// # Safety
/// No other task may touch those channels of `b` in `y`, `state` or `backward` meanwhile.
#[expect(clippy::too_many_arguments, reason = "one task's view of the call")]
unsafe fn scan_block<T: Element>(
    problem: &ScanProblem,
    inputs: &ScanInputs<T>,
    consts: &Consts<'_>,
    b: usize,
    c0: usize,
    c1: usize,
    y: Shared<T>,
    state: Shared<T>,
    backward: Shared<f32>,
) {
    let (kn, cn) = (problem.steps, problem.channels);
    let n = c1 - c0;
    let block = Block {
        tokens: &inputs.tokens,
        a: &consts.a[c0..c1],
        gw: &consts.gw[c0..c1],
        bw: &consts.bw[c0..c1],
        powers: &consts.powers[c0..],
        base: b * kn * cn + c0,
        channels: cn,
        steps: kn,
        clamp: problem.clamp_value,
    };
    let o = &consts.o[c0..c1];
    let mut carry = [0.0f32; CHANNEL_BLOCK];
    let mut e = [0.0f32; CHANNEL_BLOCK];
    let mut s = [0.0f32; CHANNEL_BLOCK];
    let mut out = [0.0f32; CHANNEL_BLOCK];
    let (carry, out) = (&mut carry[..n], &mut out[..n]);
    let init = |d: usize, carry: &mut [f32]| {
        for (i, v) in carry.iter_mut().enumerate() {
            *v = problem
                .init_index(b, d, c0 + i)
                .map_or(0.0, |at| inputs.init[at].to_f64() as f32);
        }
    };
    let row = |k: usize| (b * kn + k) * cn + c0;
    let states = problem.direction.states();
    match problem.direction {
        Direction::Forward | Direction::Backward => {
            init(0, carry);
            let rev = problem.direction == Direction::Backward;
            block.walk(rev, carry, &mut e, &mut s, |k, s| {
                for ((out, &s), &o) in out.iter_mut().zip(s).zip(o) {
                    *out = o * s;
                }
                // SAFETY: row k, channels c0..c1 of b belong to this task.
                T::store(out, unsafe { y.slice(row(k), n) });
            });
        }
        Direction::Bidirectional => {
            let mut wf = [0.0f32; CHANNEL_BLOCK];
            let mut wb = [0.0f32; CHANNEL_BLOCK];
            for i in 0..n {
                let (f, bk) = crate::reference::merge_weights(problem, &inputs.gate, b, c0 + i);
                wf[i] = f as f32;
                wb[i] = bk as f32;
            }
            let (wf, wb) = (&wf[..n], &wb[..n]);
            init(1, carry);
            block.walk(true, carry, &mut e, &mut s, |k, s| {
                // SAFETY: row k, channels c0..c1 of b belong to this task.
                let back = unsafe { backward.slice(row(k), n) };
                for ((back, &s), &wb) in back.iter_mut().zip(s).zip(wb) {
                    *back = wb * s;
                }
            });
            // SAFETY: channels c0..c1 of (b, backward) belong to this task.
            T::store(carry, unsafe { state.slice((b * states + 1) * cn + c0, n) });
            init(0, carry);
            block.walk(false, carry, &mut e, &mut s, |k, s| {
                // SAFETY: as above; the backward walk of this task wrote this row.
                let back = unsafe { backward.slice(row(k), n) };
                for ((((out, &s), &wf), &back), &o) in
                    out.iter_mut().zip(s).zip(wf).zip(back.iter()).zip(o)
                {
                    *out = o * (wf * s + back);
                }
                // SAFETY: row k, channels c0..c1 of b belong to this task.
                T::store(out, unsafe { y.slice(row(k), n) });
            });
        }
    }
    // SAFETY: channels c0..c1 of (b, forward) belong to this task.
    T::store(carry, unsafe { state.slice(b * states * cn + c0, n) });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        problem::{DECAY_MAX, DECAY_MIN, GateShape, InitState, Merge},
        reference::reference,
    };
    use apex_plugin_api::{Precision, compare_outputs};
    use half::{bf16, f16};

    fn problem(direction: Direction, b: usize, k: usize, c: usize) -> ScanProblem {
        ScanProblem {
            direction,
            batch: b,
            steps: k,
            channels: c,
            clamp_value: 1e4,
            init: InitState::None,
            merge: Merge::Avg,
            gate: GateShape::Channel,
            nonfinite: false,
        }
    }

    /// Runs the fast path on poisoned outputs and compares with the f64 reference.
    fn check<T: Element>(p: &ScanProblem, seed: u64) -> apex_plugin_api::Accuracy {
        let inputs = ScanInputs::<T>::generate(p, seed);
        let mut y = vec![T::POISON; p.tokens()];
        let mut state = vec![T::POISON; p.state_len()];
        run_cpu(p, &inputs, &mut y, &mut state, &mut CpuScratch::new(p));
        let out: Vec<f64> = y.iter().chain(&state).map(|v| v.to_f64()).collect();
        let tol = crate::problem::tolerance(T::PRECISION);
        let acc = compare_outputs(&out, &reference(p, &inputs), &tol);
        assert!(
            acc.within(&tol),
            "{:?} {} seed {seed}: {acc:?}",
            p,
            T::PRECISION
        );
        acc
    }

    fn all_precisions(p: &ScanProblem) {
        for seed in [1, 2] {
            check::<f32>(p, seed);
            check::<f16>(p, seed);
            check::<bf16>(p, seed);
        }
    }

    #[test]
    fn every_direction_and_merge_matches_the_reference() {
        for d in Direction::ALL {
            for (b, k, c) in [(2, 37, 72), (1, 256, 128), (3, 1, 5), (64, 3, 33)] {
                let mut p = problem(d, b, k, c);
                all_precisions(&p);
                p.init = InitState::Bc;
                p.nonfinite = true;
                p.clamp_value = 1.5;
                all_precisions(&p);
                if d == Direction::Bidirectional {
                    for (merge, gate, init) in [
                        (Merge::Sum, GateShape::Channel, InitState::B2c),
                        (Merge::Gated, GateShape::Channel, InitState::None),
                        (Merge::Gated, GateShape::BatchChannel, InitState::B2c),
                    ] {
                        p.merge = merge;
                        p.gate = gate;
                        p.init = init;
                        all_precisions(&p);
                    }
                }
            }
        }
    }

    #[test]
    fn edge_tokens_are_cleaned_the_same_way() {
        // One channel, a = 0.5, g = 1, o = 1, bias = 0: s_k = 0.5*s + 0.5*clean(x_k).
        let mut p = problem(Direction::Forward, 1, 4, 1);
        p.clamp_value = 2.0;
        let inputs = ScanInputs {
            tokens: vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 5.0],
            params: vec![0.5, 1.0, 1.0, 0.0],
            init: vec![],
            gate: vec![],
        };
        let (mut y, mut state) = (vec![f32::NAN; 4], vec![f32::NAN; 1]);
        run_cpu(&p, &inputs, &mut y, &mut state, &mut CpuScratch::new(&p));
        // x = [0, 2, -2, 2]
        assert_eq!(y, [0.0, 1.0, -0.5, 0.75]);
        assert_eq!(state, [0.75]);
        let r = reference(&p, &inputs);
        assert_eq!(r, [0.0, 1.0, -0.5, 0.75, 0.75]);
    }

    #[test]
    fn decay_is_clamped_on_both_sides() {
        // decay 3.0 -> a = DECAY_MAX: s barely moves from 0; decay -1 -> a = DECAY_MIN: s = u.
        let p = problem(Direction::Forward, 1, 2, 2);
        let inputs = ScanInputs {
            tokens: vec![1.0, 1.0, 1.0, 1.0],
            params: vec![3.0, -1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
            init: vec![],
            gate: vec![],
        };
        let (mut y, mut state) = (vec![f32::NAN; 4], vec![f32::NAN; 2]);
        run_cpu(&p, &inputs, &mut y, &mut state, &mut CpuScratch::new(&p));
        let small = 1.0 - DECAY_MAX;
        assert_eq!(y[0], small);
        assert!((y[1] - (1.0 - DECAY_MIN)).abs() < 1e-7);
        let r = reference(&p, &inputs);
        assert!(
            r.iter()
                .zip(y.iter().chain(&state))
                .all(|(r, &v)| { (r - f64::from(v)).abs() <= 1e-7 * r.abs() })
        );
    }

    #[test]
    fn long_sequences_stay_within_the_fp32_tolerance() {
        // K = 65,536 at fp32, two channel blocks plus a partial one; includes the decay-clamped
        // channels (a = 1 - 1e-6), whose serial f32 chain drifts most.
        let mut p = problem(Direction::Forward, 1, 65_536, 80);
        let acc = check::<f32>(&p, 3);
        assert!(acc.max_abs_error < 1e-5, "{acc:?}");
        p.direction = Direction::Bidirectional;
        p.init = InitState::B2c;
        check::<f32>(&p, 4);
        check::<f16>(&p, 4);
    }

    #[test]
    fn a_wrong_output_is_caught() {
        let p = problem(Direction::Bidirectional, 2, 40, 40);
        let inputs = ScanInputs::<f16>::generate(&p, 9);
        let mut y = vec![f16::POISON; p.tokens()];
        let mut state = vec![f16::POISON; p.state_len()];
        run_cpu(&p, &inputs, &mut y, &mut state, &mut CpuScratch::new(&p));
        let tol = crate::problem::tolerance(Precision::Fp16);
        let reference = reference(&p, &inputs);
        let flat =
            |y: &[f16], s: &[f16]| -> Vec<f64> { y.iter().chain(s).map(|v| v.to_f64()).collect() };
        assert!(compare_outputs(&flat(&y, &state), &reference, &tol).within(&tol));
        // One output element off by 1 %: caught, although it is one element in 3,360.
        y[1234] = f16::from_f64(y[1234].to_f64() * 1.01 + 0.01);
        assert!(!compare_outputs(&flat(&y, &state), &reference, &tol).within(&tol));
        // One unwritten (poisoned) state element: caught.
        y[1234] = f16::from_f64(reference[1234]);
        state[3] = f16::POISON;
        let acc = compare_outputs(&flat(&y, &state), &reference, &tol);
        assert!(acc.non_finite == 1 && !acc.within(&tol));
    }

    #[test]
    fn parallel_and_serial_paths_agree_bit_for_bit() {
        let p = problem(Direction::Bidirectional, 3, 700, 130);
        let inputs = ScanInputs::<bf16>::generate(&p, 5);
        let mut outs = Vec::new();
        for parallel in [false, true] {
            let mut scratch = CpuScratch::new(&p);
            scratch.parallel = parallel;
            let mut y = vec![bf16::POISON; p.tokens()];
            let mut state = vec![bf16::POISON; p.state_len()];
            run_cpu(&p, &inputs, &mut y, &mut state, &mut scratch);
            outs.push((y, state));
        }
        assert!(outs[0] == outs[1]);
    }
}
