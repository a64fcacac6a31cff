//! `nn_ops.cross_entropy`: `mean over counted rows of (logsumexp(logits[r]) - logits[r, t_r])`
//! for logits `[rows, vocab]` and int64 targets `[rows]`. A target outside `[0, vocab)` (PyTorch's
//! `ignore_index` -100, and anything else out of range) is ignored; the mean over zero rows is NaN,
//! as PyTorch's `F.cross_entropy(..., reduction="mean")` gives. With `grad: true` the same call
//! also writes `d loss / d logits` = `(softmax - onehot) / n_counted` on counted rows and 0 on
//! ignored rows, the fused forward+backward of Liger-style training kernels.

use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    Accuracy, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work,
    WorkUnit,
};
use cudarc::driver::PushKernelArg;
use rayon::prelude::*;

use crate::{
    Element,
    accuracy::{compare_rows, compare_scalar, merge},
    device::DeviceState,
    fast_math::{exp_f32, ln_f32, max_f32, simd_dispatch},
    op::{
        CudaProgram, DeviceFacts, Inputs, MAX_ELEMENTS, NnOp, OutputLens, Outputs, base_descriptor,
        too_large,
    },
    program::{assemble, launch_1d},
    rng::{targets, uniform},
    rows::RowPlan,
};

const SOURCE: &str = include_str!("../cuda/cross_entropy.cu");

/// PyTorch's default `ignore_index`; the inputs use it for ignored rows.
pub const IGNORE_INDEX: i64 = -100;
/// The forward + gradient kernel's plans, for the GPU bench's comparison (`nn_ops_gpu_check
/// --bench`) and the self-check: a case set up on this thread inside [`tuning::with_grad_plan`]
/// uses the plan it names, any other case [`tuning::GradPlan::DEFAULT`]. Never set by the plugin
/// itself.
pub mod tuning {
    use std::cell::Cell;
    use std::fmt;

    /// How a block of the forward + gradient kernel gets its row slice to the gradient, after
    /// the statistics and the wait for its siblings (see `cuda/cross_entropy.cu`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum GradPlan {
        /// Walks its slice (at most [`crate::rows::REREAD_SLICE_BYTES`]) twice: the second
        /// read comes from L2.
        Reread,
        /// Holds its slice in registers.
        Resident,
        /// Loads its slice once into shared memory with TMA bulk copies (sm_90) and works from
        /// there: rows longer than `slice_kib` KiB are split over blocks. Falls back to
        /// [`GradPlan::Reread`] where it does not apply (below sm_90, rows that are not whole
        /// 16-byte vectors, a slice beyond the device's shared memory per block).
        Smem { slice_kib: usize },
    }

    impl GradPlan {
        /// The plan a case gets unless [`with_grad_plan`] says otherwise: 64 KiB shared-memory
        /// slices, the fastest plan at every bench shape (H200, 2026-11-26, session 10 call 5,
        /// bf16 µs at vocab 32k / 131k / 262k: 176.3 / 738.4 / 1,546.2 against reread's 183.6 /
        /// 886.4 / 1,910.2; fp32 331.9 / 1,410.4 / 3,238.2 against 372.6 / 1,636.6 / 3,819.5).
        pub const DEFAULT: Self = Self::Smem { slice_kib: 64 };
        /// Every plan the self-check verifies and the bench times: the shared-memory plan at
        /// four slice budgets (on the H100, 96 KiB slices leave room for two 512-thread blocks
        /// per SM, 64 KiB for three; 48 and 32 KiB would fit four, but the plan's register
        /// budget (`SMEM_REGISTERS`) allows three).
        pub const ALL: [Self; 6] = [
            Self::Reread,
            Self::Resident,
            Self::Smem { slice_kib: 32 },
            Self::Smem { slice_kib: 48 },
            Self::Smem { slice_kib: 64 },
            Self::Smem { slice_kib: 96 },
        ];
    }

    impl fmt::Display for GradPlan {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Self::Reread => f.write_str("reread"),
                Self::Resident => f.write_str("resident"),
                Self::Smem { slice_kib } => write!(f, "smem-{slice_kib}KiB"),
            }
        }
    }

    thread_local! {
        static GRAD_PLAN: Cell<Option<GradPlan>> = const { Cell::new(None) };
    }

    /// Runs `f` with `plan` for the forward + gradient cases set up inside it on this thread.
    pub fn with_grad_plan<R>(plan: GradPlan, f: impl FnOnce() -> R) -> R {
        apex_plugin_api::tuning::with_override(&GRAD_PLAN, Some(plan), f)
    }

    /// The override in force, else [`GradPlan::DEFAULT`].
    pub(super) fn grad_plan() -> GradPlan {
        GRAD_PLAN.with(Cell::get).unwrap_or(GradPlan::DEFAULT)
    }
}

/// Vectors per chunk of the streaming CUDA loops.
/// (8 was measured for the forward+gradient loops, H100 2026-11-25, call 11: bf16 3-10 % slower,
/// fp32 1-4 % faster; not kept.)
const UNROLL: usize = 4;
/// Targets each counting block of the fused CUDA kernel counts (at most).
const TARGETS_PER_COUNTER: usize = 4096;
/// Bytes per bulk copy of the shared-memory plan: a block starts its statistics once the first
/// copy of its slice has landed, while the others are still in flight.
const SMEM_CHUNK_BYTES: usize = 16 * 1024;
/// Registers per thread the shared-memory plan's launch bounds leave at least: ptxas (sm_90,
/// NVRTC 13.0) fits every check source in 40 without spills, and spilled 8 to 12 bytes in 9 of
/// the 48 with 512-thread blocks at 32 (four such blocks per SM). So at most three 512-thread
/// blocks per SM, whatever the slice.
const SMEM_REGISTERS: usize = 40;
/// Shared memory a block of the shared-memory plan uses besides its slice, rounded up: the
/// kernel's static arrays (the reductions' 32 doubles, a few words, one 8-byte barrier per copy:
/// under 512 bytes) and the 1 KiB the driver reserves per block (sm_80 and later).
const SMEM_OVERHEAD_BYTES: usize = 2048;
/// 32-bit registers per SM (every architecture NVRTC targets here).
const REGISTERS_PER_SM: usize = 65_536;

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

/// A shared-memory forward + gradient plan ([`tuning::GradPlan::Smem`]) that fits the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SharedPlan {
    plan: RowPlan,
    /// Dynamic shared memory per block: the block's rows or row slice.
    bytes: usize,
    /// 16-byte vectors per bulk copy, and copies per block.
    chunk_vectors: usize,
    chunks: usize,
    /// Blocks per SM that the shared memory, the thread limit and [`SMEM_REGISTERS`] allow (the
    /// launch bounds).
    blocks_per_sm: usize,
}

impl CrossEntropy {
    fn counted(&self, targets: &[i64]) -> usize {
        targets.iter().filter(|&&t| is_class(t, self.vocab)).count()
    }

    /// The shared-memory plan with slices of at most `slice_bytes`, or `None` (the caller then
    /// uses the reread plan) where it does not apply: below sm_90 (TMA bulk copies), rows that
    /// are not whole 16-byte vectors, or a block's data beyond the device's shared memory per
    /// block (a row longer than `MAX_SPLIT` slices).
    fn shared_plan(
        &self,
        precision: Precision,
        facts: DeviceFacts,
        slice_bytes: usize,
    ) -> Result<Option<SharedPlan>, PluginError> {
        if facts.compute_capability < (9, 0) {
            return Ok(None);
        }
        let Some(plan) = RowPlan::shared_slices(self.rows, self.vocab, precision, slice_bytes)?
        else {
            return Ok(None);
        };
        let bytes = plan.block_bytes(precision.size_bytes());
        if bytes + SMEM_OVERHEAD_BYTES > facts.smem_per_block_optin {
            return Ok(None);
        }
        let chunk_vectors = SMEM_CHUNK_BYTES / 16;
        let blocks_per_sm = (facts.smem_per_sm / (bytes + SMEM_OVERHEAD_BYTES))
            .min(facts.threads_per_sm / plan.block)
            .min(REGISTERS_PER_SM / (SMEM_REGISTERS * plan.block))
            .max(1);
        Ok(Some(SharedPlan {
            plan,
            bytes,
            chunk_vectors,
            chunks: (bytes / 16).div_ceil(chunk_vectors),
            blocks_per_sm,
        }))
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
                let (s, c) = rows_loss(rows, v, &tg[b0..b0 + n], inv_n, grad.is_some());
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
        let sum: f64 = (0..self.rows)
            .into_par_iter()
            .filter(|&r| is_class(tg[r], v))
            .map(|r| lse(r) - x[r * v + tg[r] as usize].to_f64())
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
            let l = if counted { lse(r) } else { 0.0 };
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
        let grad_plan = self.grad.then(tuning::grad_plan);
        let shared = match grad_plan {
            Some(tuning::GradPlan::Smem { slice_kib }) => {
                self.shared_plan(precision, facts, slice_kib * 1024)?
            }
            _ => None,
        };
        let resident = grad_plan == Some(tuning::GradPlan::Resident);
        let plan = if let Some(shared) = &shared {
            shared.plan
        } else if resident {
            RowPlan::resident(self.rows, self.vocab, precision)?
        } else if self.grad {
            RowPlan::streaming_reread(self.rows, self.vocab, precision)?
        } else {
            RowPlan::streaming(self.rows, self.vocab, precision)?
        };
        let mut defines = match &shared {
            Some(shared) => plan.defines_at(shared.blocks_per_sm),
            None => plan.defines(),
        };
        defines.push(("GRAD", usize::from(self.grad)));
        defines.push(("RESIDENT", usize::from(resident)));
        defines.push(("SMEM", usize::from(shared.is_some())));
        if let Some(shared) = &shared {
            defines.push(("CHUNK_V", shared.chunk_vectors));
            defines.push(("CHUNKS", shared.chunks));
        }
        defines.push(("UNROLL", UNROLL));
        defines.push((
            "COUNTERS",
            self.rows
                .div_ceil(TARGETS_PER_COUNTER)
                .min(plan.grid)
                .max(1),
        ));
        let split_words = if plan.split > 1 {
            self.rows + self.rows * plan.split * 2
        } else {
            0
        };
        let mut config = launch_1d(plan.grid, plan.block);
        if let Some(shared) = &shared {
            config.shared_mem_bytes = shared.bytes as u32;
        }
        Ok(CudaProgram {
            name: "cross_entropy",
            source: assemble(precision, &defines, SOURCE),
            function: "cross_entropy",
            config,
            scratch_words: 8 + 2 * plan.grid + split_words,
            co_resident_blocks: plan.split,
            grid_stride: false,
        })
    }

    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        let s = &device.sets[set];
        let targets = s
            .targets
            .as_ref()
            .ok_or_else(|| PluginError::other("cross_entropy has no targets on the device"))?;
        let mut b = device.stream().launch_builder(&device.function);
        b.arg(&s.data[0]).arg(targets);
        // Without `grad` the kernel never touches its gradient pointer; pass the logits.
        match s.outputs.first() {
            Some(g) => b.arg(g),
            None => b.arg(&s.data[0]),
        };
        b.arg(&s.scalars).arg(&device.scratch);
        // SAFETY: the arguments match `cross_entropy` in cuda/cross_entropy.cu; the grid and
        // scratch are the plan's.
        unsafe { b.launch(device.config) }
            .map(drop)
            .map_err(cuda_error)
    }
}

simd_dispatch!(
    /// The losses of `rows` (`vocab` logits each, `targets` one per row): the sum over counted
    /// rows and how many were counted; with `grad`, each row is overwritten with its gradient of
    /// the mean loss (zeros for an ignored row). One call per task of rows, so short rows
    /// (vocab 8) do not pay the dispatch per row.
    fn rows_loss(rows: &mut [f32], vocab: usize, targets: &[i64], inv_n: f32, grad: bool) -> (f64, usize) => rows_loss_portable
);

/// Rows per group of [`rows_loss_portable`]: their sums of exponentials wait in an array so that
/// one vector loop takes all their logarithms.
const LN_GROUP: usize = 64;

#[inline(always)]
fn rows_loss_portable(
    rows: &mut [f32],
    vocab: usize,
    targets: &[i64],
    inv_n: f32,
    grad: bool,
) -> (f64, usize) {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for (group, tg) in rows
        .chunks_mut(LN_GROUP * vocab)
        .zip(targets.chunks(LN_GROUP))
    {
        // Each row's maximum and sum of exponentials, then every logsumexp of the group in
        // one loop (short rows would otherwise pay a scalar libm `ln` per row).
        let (mut lse, mut sums) = ([0.0f32; LN_GROUP], [1.0f32; LN_GROUP]);
        for ((row, m), s) in group.chunks_exact(vocab).zip(&mut lse).zip(&mut sums) {
            *m = max_f32(row);
            *s = sum_exp(row, *m);
        }
        for (m, &s) in lse.iter_mut().zip(&sums) {
            *m += ln_f32(s);
        }
        for ((row, &t), &lse) in group.chunks_exact_mut(vocab).zip(tg).zip(&lse) {
            let counted = is_class(t, vocab);
            if counted {
                sum += f64::from(lse - row[t as usize]);
                count += 1;
            }
            if grad {
                if counted {
                    row_grad(row, t as usize, lse, inv_n);
                } else {
                    row.fill(0.0);
                }
            }
        }
    }
    (sum, count)
}

/// `sum(exp(row - m))`, at least 1 when `m` is the row's maximum: the exponentials summed in
/// sixteen lanes (one AVX-512 vector; 16 lanes ran vocab 512 1.5x faster than 8 on the Zen 4
/// dev machine), or in eight for rows shorter than sixteen (a vocab-8 row stays one vector).
#[inline(always)]
fn sum_exp(row: &[f32], m: f32) -> f32 {
    if row.len() >= 16 {
        sum_exp_lanes::<16>(row, m)
    } else {
        sum_exp_lanes::<8>(row, m)
    }
}

#[inline(always)]
fn sum_exp_lanes<const N: usize>(row: &[f32], m: f32) -> f32 {
    let mut acc = [0.0f32; N];
    let mut chunks = row.chunks_exact(N);
    for c in &mut chunks {
        for (a, &xv) in acc.iter_mut().zip(c) {
            *a += exp_f32(xv - m);
        }
    }
    acc.iter().sum::<f32>()
        + chunks
            .remainder()
            .iter()
            .map(|&xv| exp_f32(xv - m))
            .sum::<f32>()
}

/// Overwrites `row` (logits) with the gradient of the mean loss: `softmax * inv_n`, minus
/// `inv_n` at the target `t`.
#[inline(always)]
fn row_grad(row: &mut [f32], t: usize, lse: f32, inv_n: f32) {
    let p_t = exp_f32(row[t] - lse);
    for xv in row.iter_mut() {
        *xv = exp_f32(*xv - lse) * inv_n;
    }
    row[t] = p_t.mul_add(inv_n, -inv_n);
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

    /// The forward + gradient program of 4096 rows of `vocab` under `plan`.
    fn program(
        plan: tuning::GradPlan,
        vocab: usize,
        precision: Precision,
        facts: DeviceFacts,
    ) -> CudaProgram {
        let op = CrossEntropy {
            rows: 4096,
            vocab,
            grad: true,
            ignore_ratio: 0.1,
        };
        tuning::with_grad_plan(plan, || op.cuda_program(precision, facts)).unwrap()
    }

    #[test]
    fn the_shared_memory_plan_sizes_its_blocks_and_falls_back_to_the_reread_plan() {
        use tuning::GradPlan::{Reread, Smem};
        let h100 = DeviceFacts::H100;
        let defines = |p: &CudaProgram, names: &[&str]| -> Vec<String> {
            names
                .iter()
                .map(|n| {
                    let key = format!("#define {n} ");
                    p.source
                        .lines()
                        .find_map(|l| l.strip_prefix(key.as_str()).map(str::to_string))
                        .unwrap_or_default()
                })
                .collect()
        };
        let names = ["SMEM", "SPLIT", "CHUNKS", "MIN_BLOCKS"];
        // bf16 vocab 262,144 (512 KiB rows): 8 slices of 64 KiB in four bulk copies each, three
        // blocks per SM; 96 KiB: 6 slices of 85.3 KiB, two blocks per SM.
        let p = program(Smem { slice_kib: 64 }, 262_144, Precision::Bf16, h100);
        assert_eq!(p.config.shared_mem_bytes, 64 * 1024);
        assert_eq!(defines(&p, &names), ["1u", "8u", "4u", "3u"]);
        assert_eq!(p.co_resident_blocks, 8);
        let p = program(Smem { slice_kib: 96 }, 262_144, Precision::Bf16, h100);
        assert_eq!(p.config.shared_mem_bytes, 87_392);
        assert_eq!(defines(&p, &names), ["1u", "6u", "6u", "2u"]);
        // fp32 vocab 32,768 at 48 KiB: three slices of 43,696 bytes.
        let p = program(Smem { slice_kib: 48 }, 32_768, Precision::Fp32, h100);
        assert_eq!(p.config.shared_mem_bytes, 43_696);
        assert_eq!(defines(&p, &names), ["1u", "3u", "3u", "3u"]);
        // The reread plan where the shared-memory plan does not apply: rows that are not whole
        // 16-byte vectors, a device below sm_90, a slice beyond the shared memory of a block.
        let ampere = DeviceFacts {
            compute_capability: (8, 0),
            ..h100
        };
        let small = DeviceFacts {
            smem_per_block_optin: 64 * 1024,
            ..h100
        };
        for (vocab, precision, facts, kib) in [
            (8193, Precision::Bf16, h100, 64),
            (7, Precision::Fp32, h100, 32),
            (262_144, Precision::Bf16, ampere, 64),
            (262_144, Precision::Bf16, small, 96),
        ] {
            let smem = program(Smem { slice_kib: kib }, vocab, precision, facts);
            let reread = program(Reread, vocab, precision, facts);
            assert_eq!(smem.config.shared_mem_bytes, 0, "{vocab} {precision}");
            assert_eq!(smem.source, reread.source, "{vocab} {precision}");
        }
        // Without the gradient the plan plays no part.
        let op = CrossEntropy {
            rows: 4096,
            vocab: 32_768,
            grad: false,
            ignore_ratio: 0.1,
        };
        let forward =
            |plan| tuning::with_grad_plan(plan, || op.cuda_program(Precision::Bf16, h100)).unwrap();
        assert_eq!(
            forward(Smem { slice_kib: 64 }).source,
            forward(Reread).source
        );
    }

    #[test]
    fn a_nan_logit_gives_a_nan_loss() {
        // Three rows of vocab 8, the second holding a NaN: its loss, and so the sum, is NaN.
        let mut rows: Vec<f32> = (0..24).map(|i| (i as f32 * 0.37).sin()).collect();
        rows[12] = f32::NAN; // not a target: only the logsumexp carries it
        let (sum, count) = rows_loss(&mut rows, 8, &[1, 2, 3], 1.0 / 3.0, false);
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
