//! `nn_ops.cross_entropy`: `mean over counted rows of (logsumexp(logits[r]) - logits[r, t_r])`
//! for logits `[rows, vocab]` and int64 targets `[rows]`. A target outside `[0, vocab)` (PyTorch's
//! `ignore_index` -100, and anything else out of range) is ignored; the mean over zero rows is NaN,
//! as PyTorch's `F.cross_entropy(..., reduction="mean")` gives. With `grad: true` the same call
//! also writes `d loss / d logits` = `(softmax - onehot) / n_counted` on counted rows and 0 on
//! ignored rows, the fused forward+backward of Liger-style training kernels.

use apex_plugin_api::{
    Accuracy, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work,
    WorkUnit,
};
use rayon::prelude::*;

use crate::{
    Element,
    accuracy::{compare_rows, compare_scalar, merge},
    device::DeviceState,
    op::{
        CudaProgram, DeviceFacts, Inputs, MAX_ELEMENTS, NnOp, OutputLens, Outputs, base_descriptor,
        too_large,
    },
    rng::{targets, uniform},
};

/// The CPU path's row losses and gradients.
mod cpu;
/// The CUDA program (plan, `#define`s, launch configuration) and launch.
mod cuda;
/// The forward + gradient plan a case uses, for the bench's and the self-check's comparison.
pub mod tuning;

/// PyTorch's default `ignore_index`; the inputs use it for ignored rows.
pub const IGNORE_INDEX: i64 = -100;

/// A validated cross-entropy case.
#[derive(Debug, Clone, Copy)]
pub struct CrossEntropy {
    pub rows: usize,
    pub vocab: usize,
    pub grad: bool,
    pub ignore_ratio: f64,
}

/// Whether `t` is a class of a `vocab`-way problem (else the row is ignored).
fn is_class(t: i64, vocab: usize) -> bool {
    usize::try_from(t).is_ok_and(|t| t < vocab)
}

/// Rows per CPU task: about 64 K logits.
fn rows_per_task(vocab: usize) -> usize {
    (65_536 / vocab).max(1)
}

impl CrossEntropy {
    fn counted(&self, targets: &[i64]) -> usize {
        targets.iter().filter(|&&t| is_class(t, self.vocab)).count()
    }
}

impl NnOp for CrossEntropy {
    fn descriptor() -> KernelDescriptor {
        base_descriptor(
            "nn_ops.cross_entropy",
            "cross-entropy of logits [rows, vocab] with int64 targets (-100 ignored), mean over counted rows; grad: also writes d loss / d logits in the same pass",
        )
        .param(ParamSpec::int("rows", 4096, "rows (tokens): batch x sequence"))
        .param(ParamSpec::int("vocab", 32_768, "classes per row"))
        .param(ParamSpec::bool(
            "grad",
            false,
            "also write the gradient of the mean loss with respect to the logits (fused forward+backward)",
        ))
        .param(ParamSpec::float(
            "ignore_ratio",
            0.1,
            "fraction of targets set to -100 (ignored); 1.0 ignores every row (the loss is then NaN)",
        ))
        .tolerance(
            Precision::Fp32,
            // The gradient is verified scaled to order one (see `verify`); its one-hot entries,
            // -vocab * (1 - p) after scaling, carry one f32 rounding each.
            Tolerance {
                atol: 1e-5,
                rtol: 1e-4,
                rmse: 1e-4,
                max_mismatch_ratio: 0.0,
            },
        )
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let (rows, vocab) = (params.usize("rows")?, params.usize("vocab")?);
        if rows == 0 || vocab == 0 {
            return Err(PluginError::invalid(format!(
                "rows = {rows}, vocab = {vocab}: both must be at least 1"
            )));
        }
        if rows.checked_mul(vocab).is_none_or(|n| n > MAX_ELEMENTS) {
            return Err(too_large(rows, vocab));
        }
        let ignore_ratio = params.float("ignore_ratio")?;
        if !(0.0..=1.0).contains(&ignore_ratio) {
            return Err(PluginError::invalid(format!(
                "ignore_ratio = {ignore_ratio} must be in [0, 1] (hint: 0.1)"
            )));
        }
        Ok(Self {
            rows,
            vocab,
            grad: params.bool("grad")?,
            ignore_ratio,
        })
    }

    fn work(&self, precision: Precision) -> Work {
        let n = (self.rows * self.vocab) as u64;
        let es = precision.size_bytes() as u64;
        Work {
            bytes_read: n * es + 8 * self.rows as u64,
            bytes_written: if self.grad { n * es } else { 0 } + 4,
            // max, sub+exp (exp as 8) and add per logit; the gradient adds sub+exp and a multiply.
            flops: n as f64 * if self.grad { 21.0 } else { 11.0 },
            items: n as f64,
            unit: WorkUnit::Elements,
        }
    }

    fn output_lens(&self) -> OutputLens {
        OutputLens {
            tensors: if self.grad {
                vec![self.rows * self.vocab]
            } else {
                vec![]
            },
            scalars: 1,
        }
    }

    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        Inputs {
            data: vec![uniform(self.rows * self.vocab, -5.0, 5.0, seed, 1)],
            targets: targets(
                self.rows,
                self.vocab,
                self.ignore_ratio,
                IGNORE_INDEX,
                seed,
                2,
            ),
        }
    }

    fn run_cpu<T: Element>(&self, inputs: &Inputs<T>, outputs: &mut Outputs<T>, parallel: bool) {
        let (x, tg) = (&inputs.data[0], &inputs.targets);
        let v = self.vocab;
        let n_counted = self.counted(tg);
        let inv_n = 1.0 / n_counted as f32;
        let per = rows_per_task(v);
        // One task: rows [r0, r0 + k), returning (sum of losses, counted rows); `grad` is the
        // task's slice of the gradient when there is one.
        // A block of rows at a time (about 2 K logits, L1-resident between load and store).
        let block = crate::cpu_par::rows_per_block(v);
        let task = |r0: usize, k: usize, mut grad: Option<&mut [T]>| -> (f64, usize) {
            let mut buf = vec![0.0f32; block.min(k) * v];
            let (mut sum, mut count) = (0.0f64, 0usize);
            for b0 in (r0..r0 + k).step_by(block) {
                let n = block.min(r0 + k - b0);
                let rows = &mut buf[..n * v];
                T::load(&x[b0 * v..(b0 + n) * v], rows);
                let (s, c) = cpu::rows_loss(rows, v, &tg[b0..b0 + n], inv_n, grad.is_some());
                sum += s;
                count += c;
                if let Some(g) = grad.as_deref_mut() {
                    T::store(rows, &mut g[(b0 - r0) * v..(b0 - r0 + n) * v]);
                }
            }
            (sum, count)
        };
        let tasks = self.rows.div_ceil(per);
        let parts: Vec<(f64, usize)> = match outputs.tensors.first_mut() {
            Some(g) if parallel => g
                .par_chunks_mut(per * v)
                .enumerate()
                .map(|(i, c)| task(i * per, c.len() / v, Some(c)))
                .collect(),
            Some(g) => g
                .chunks_mut(per * v)
                .enumerate()
                .map(|(i, c)| task(i * per, c.len() / v, Some(c)))
                .collect(),
            None if parallel => (0..tasks)
                .into_par_iter()
                .map(|i| task(i * per, per.min(self.rows - i * per), None))
                .collect(),
            None => (0..tasks)
                .map(|i| task(i * per, per.min(self.rows - i * per), None))
                .collect(),
        };
        let (sum, count) = parts
            .iter()
            .fold((0.0, 0), |(s, c), &(ps, pc)| (s + ps, c + pc));
        outputs.scalars[0] = (sum / count as f64) as f32;
    }

    /// The loss is compared relative to `max(1, |loss|)`. The gradient is compared after scaling
    /// by `max(1, n_counted) * vocab`, which brings the softmax entries to order one (the raw
    /// values are ~1e-9, far below any absolute tolerance); before scaling, a difference of up
    /// to one storage ulp at the reference value counts as none (the exact gradient rounded to
    /// fp16 is subnormal at large vocab, where rounding either way is equally right). Each output
    /// is held to the tolerance on its own: the combined figures take the larger rmse and
    /// mismatch ratio of the two.
    fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy {
        let (x, tg) = (&inputs.data[0], &inputs.targets);
        let v = self.vocab;
        let n_counted = self.counted(tg);
        let lse = |r: usize| {
            let row = &x[r * v..(r + 1) * v];
            let m = row
                .iter()
                .map(|e| e.to_f64())
                .fold(f64::NEG_INFINITY, f64::max);
            m + row.iter().map(|e| (e.to_f64() - m).exp()).sum::<f64>().ln()
        };
        // Each counted row's log-sum-exp once, for the loss and the gradient (NaN where the row
        // is ignored: never read).
        let lses: Vec<f64> = (0..self.rows)
            .into_par_iter()
            .map(|r| if is_class(tg[r], v) { lse(r) } else { f64::NAN })
            .collect();
        let sum: f64 = (0..self.rows)
            .into_par_iter()
            .filter(|&r| is_class(tg[r], v))
            .map(|r| lses[r] - x[r * v + tg[r] as usize].to_f64())
            .sum();
        // 0 / 0 = NaN when every row is ignored, as PyTorch.
        let loss = compare_scalar(outputs.scalars[0], sum / n_counted as f64, tolerance);
        let Some(g) = outputs.tensors.first() else {
            return loss;
        };
        let scale = n_counted.max(1) as f64 * v as f64;
        let grad = compare_rows(self.rows, v, tolerance, |r, out, reference| {
            let t = tg[r];
            let counted = is_class(t, v);
            let l = if counted { lses[r] } else { 0.0 };
            for j in 0..v {
                let want = if counted {
                    let p = (x[r * v + j].to_f64() - l).exp();
                    (p - if j as i64 == t { 1.0 } else { 0.0 }) / n_counted as f64
                } else {
                    0.0
                };
                let got = g[r * v + j].to_f64();
                let (d, q) = (got - want, T::ulp(want));
                let got = if d.abs() <= q {
                    want
                } else {
                    got - q * d.signum()
                };
                out.push(got * scale);
                reference.push(want * scale);
            }
        });
        let both = merge(loss, grad);
        Accuracy {
            rmse: loss.rmse.max(grad.rmse),
            mismatch_ratio: loss.mismatch_ratio.max(grad.mismatch_ratio),
            ..both
        }
    }

    fn cuda_program(
        &self,
        precision: Precision,
        facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError> {
        cuda::program(self, precision, facts)
    }

    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        cuda::launch(device, set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::{OpCase, OpKernel},
        harness::{assert_cpu_checks, params, request},
    };
    use apex_plugin_api::{Backend, Instance, Kernel, ParamValue};

    fn shape(rows: i64, vocab: i64, grad: bool, ignore: f64) -> Vec<(&'static str, ParamValue)> {
        vec![
            ("rows", ParamValue::Int(rows)),
            ("vocab", ParamValue::Int(vocab)),
            ("grad", ParamValue::Bool(grad)),
            ("ignore_ratio", ParamValue::Float(ignore)),
        ]
    }

    fn tol(p: Precision) -> Tolerance {
        OpKernel::<CrossEntropy>::default()
            .descriptor()
            .tolerance_for(p)
    }

    #[test]
    fn loss_and_gradient_match_the_reference_for_every_precision() {
        let kernel = OpKernel::<CrossEntropy>::default();
        for grad in [false, true] {
            for (rows, vocab) in [(3, 1), (5, 7), (64, 100), (4, 8193), (2, 262_144)] {
                assert_cpu_checks(&kernel, &shape(rows, vocab, grad, 0.25), tol);
            }
        }
    }

    #[test]
    fn a_nan_logit_gives_a_nan_loss() {
        // Three rows of vocab 8, the second holding a NaN: its loss, and so the sum, is NaN.
        let mut rows: Vec<f32> = (0..24).map(|i| (i as f32 * 0.37).sin()).collect();
        rows[12] = f32::NAN; // not a target: only the logsumexp carries it
        let (sum, count) = cpu::rows_loss(&mut rows, 8, &[1, 2, 3], 1.0 / 3.0, false);
        assert_eq!(count, 3);
        assert!(sum.is_nan(), "{sum}");
    }

    #[test]
    fn all_ignored_rows_give_nan_and_a_zero_gradient() {
        let kernel = OpKernel::<CrossEntropy>::default();
        for precision in [Precision::Fp32, Precision::Bf16] {
            let p = params(&kernel, &shape(6, 9, true, 1.0));
            let mut case = kernel
                .setup(&request(p, Backend::Cpu, precision, 1, None))
                .unwrap();
            case.run().unwrap();
            let acc = case.verify(&tol(precision)).unwrap();
            assert!(acc.within(&tol(precision)), "{acc:?}");
        }
        let p = params(&kernel, &shape(6, 9, true, 1.0));
        let mut case =
            OpCase::<CrossEntropy, f32>::new(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
                .unwrap();
        case.run().unwrap();
        assert!(case.outputs().scalars[0].is_nan());
        assert!(case.outputs().tensors[0].iter().all(|&g| g == 0.0));
    }

    #[test]
    fn a_hand_case_and_wrong_outputs() {
        let kernel = OpKernel::<CrossEntropy>::default();
        let p = params(&kernel, &shape(2, 2, true, 0.0));
        let mut case =
            OpCase::<CrossEntropy, f32>::new(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
                .unwrap();
        // Row 0: logits (0, 0), target 1: loss ln 2, grad (0.5, -0.5) / 1. Row 1 ignored.
        case.set_inputs(Inputs {
            data: vec![vec![0.0, 0.0, 3.0, -1.0]],
            targets: vec![1, IGNORE_INDEX],
        });
        case.run().unwrap();
        assert!((case.outputs().scalars[0] - std::f32::consts::LN_2).abs() < 1e-6);
        let g = &case.outputs().tensors[0];
        assert!(
            (g[0] - 0.5).abs() < 1e-6 && (g[1] + 0.5).abs() < 1e-6,
            "{g:?}"
        );
        assert_eq!(&g[2..], &[0.0, 0.0]);
        let t = tol(Precision::Fp32);
        assert!(case.verify(&t).unwrap().within(&t));
        // A gradient entry off by 1 % fails; so does a loss off by 1 %.
        case.outputs_mut().tensors[0][0] *= 1.01;
        assert!(!case.verify(&t).unwrap().within(&t));
        case.run().unwrap();
        case.outputs_mut().scalars[0] *= 1.01;
        assert!(!case.verify(&t).unwrap().within(&t));
    }

    #[test]
    fn a_dropped_softmax_is_caught_at_large_vocab_in_bf16() {
        // Zeroing every non-target gradient entry changes values of ~1e-9: the scaled comparison
        // must still catch it.
        let kernel = OpKernel::<CrossEntropy>::default();
        let p = params(&kernel, &shape(8, 32_768, true, 0.0));
        let mut case = OpCase::<CrossEntropy, half::bf16>::new(&request(
            p,
            Backend::Cpu,
            Precision::Bf16,
            1,
            None,
        ))
        .unwrap();
        case.run().unwrap();
        let t = tol(Precision::Bf16);
        assert!(case.verify(&t).unwrap().within(&t));
        for g in case.outputs_mut().tensors[0].iter_mut() {
            if g.to_f64() > 0.0 {
                *g = half::bf16::ZERO;
            }
        }
        assert!(!case.verify(&t).unwrap().within(&t));
    }
}
