//! `nn_ops.mse_loss`: `sum((input - target)^2)` over `[batch, seq, dim]`, divided by the element
//! count for `reduction: mean` (PyTorch's default) or not for `sum`; the loss is one f32.

use apex_plugin_api::{
    Accuracy, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work,
    WorkUnit,
};
use rayon::prelude::*;

use crate::{
    Element,
    accuracy::compare_scalar,
    device::DeviceState,
    fast_math::sum_sq_diff_f32_best,
    op::{
        CudaProgram, DeviceFacts, Inputs, NnOp, OutputLens, Outputs, base_descriptor, rows_dim,
        with_bsd,
    },
    program::{assemble, launch_1d},
    rng::uniform,
    rows::FlatPlan,
};

const SOURCE: &str = include_str!("../cuda/mse_loss.cu");

/// Vectors of each input a CUDA thread loads per step.
const UNROLL: usize = 4;
/// Blocks of 256 threads per SM in the CUDA grid (the grid strides; one partial per block).
const BLOCKS_PER_SM: usize = 4;
/// Elements per CPU task (one f32 partial each, summed in f64 in task order).
const TASK: usize = 1 << 15;

/// A validated MSE case.
#[derive(Debug, Clone, Copy)]
pub struct MseLoss {
    pub n: usize,
    pub mean: bool,
}

impl NnOp for MseLoss {
    fn descriptor() -> KernelDescriptor {
        with_bsd(base_descriptor(
            "nn_ops.mse_loss",
            "MSE loss between input and target [batch, seq, dim], reduced to one f32 (mean or sum)",
        ))
        .param(ParamSpec::str(
            "reduction",
            "mean",
            "mean (PyTorch's default) or sum",
        ))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let (rows, dim) = rows_dim(params)?;
        let mean = match params.str("reduction")? {
            "mean" => true,
            "sum" => false,
            other => {
                return Err(PluginError::invalid(format!(
                    "reduction = `{other}` is not supported (hint: mean or sum)"
                )));
            }
        };
        Ok(Self {
            n: rows * dim,
            mean,
        })
    }

    fn work(&self, precision: Precision) -> Work {
        Work {
            bytes_read: (2 * self.n * precision.size_bytes()) as u64,
            bytes_written: 4,
            flops: 3.0 * self.n as f64,
            items: self.n as f64,
            unit: WorkUnit::Elements,
        }
    }

    fn output_lens(&self) -> OutputLens {
        OutputLens {
            tensors: vec![],
            scalars: 1,
        }
    }

    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        Inputs {
            data: vec![
                uniform(self.n, -2.0, 2.0, seed, 1),
                uniform(self.n, -2.0, 2.0, seed, 2),
            ],
            targets: vec![],
        }
    }

    fn run_cpu<T: Element>(&self, inputs: &Inputs<T>, outputs: &mut Outputs<T>, parallel: bool) {
        let [a, b] = &inputs.data[..] else {
            unreachable!("two inputs")
        };
        let partial = |(xa, xb): (&[T], &[T])| {
            if let (Some(fa), Some(fb)) = (T::as_f32(xa), T::as_f32(xb)) {
                return f64::from(sum_sq_diff_f32_best(fa, fb));
            }
            let (mut fa, mut fb) = ([0.0f32; 512], [0.0f32; 512]);
            let mut s = 0.0f64;
            for (pa, pb) in xa.chunks(512).zip(xb.chunks(512)) {
                let n = pa.len();
                T::load(pa, &mut fa);
                T::load(pb, &mut fb);
                s += f64::from(sum_sq_diff_f32_best(&fa[..n], &fb[..n]));
            }
            s
        };
        // Partials in task order whatever the thread count, so the result is deterministic.
        let total: f64 = if parallel {
            let parts: Vec<f64> = a
                .par_chunks(TASK)
                .zip(b.par_chunks(TASK))
                .map(partial)
                .collect();
            parts.iter().sum()
        } else {
            a.chunks(TASK).zip(b.chunks(TASK)).map(partial).sum()
        };
        outputs.scalars[0] = (if self.mean {
            total / self.n as f64
        } else {
            total
        }) as f32;
    }

    fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy {
        let [a, b] = &inputs.data[..] else {
            unreachable!("two inputs")
        };
        let sum: f64 = a
            .par_chunks(TASK)
            .zip(b.par_chunks(TASK))
            .map(|(xa, xb)| {
                xa.iter()
                    .zip(xb)
                    .map(|(p, q)| (p.to_f64() - q.to_f64()).powi(2))
                    .sum::<f64>()
            })
            .sum();
        let reference = if self.mean { sum / self.n as f64 } else { sum };
        compare_scalar(outputs.scalars[0], reference, tolerance)
    }

    fn cuda_program(
        &self,
        precision: Precision,
        facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError> {
        let plan = FlatPlan::new(self.n, precision, UNROLL, facts.sm_count * BLOCKS_PER_SM)?;
        let mut defines = plan.defines();
        defines.push(("MEAN", usize::from(self.mean)));
        Ok(CudaProgram {
            name: "mse_loss",
            source: assemble(precision, &defines, SOURCE),
            function: "mse_loss",
            config: launch_1d(plan.grid, plan.block),
            // Word W_ARRAYS (8) on: one 64-bit partial slot per block.
            scratch_words: 8 + 2 * plan.grid,
            co_resident_blocks: 1,
            grid_stride: false,
        })
    }

    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        let s = &device.sets[set];
        let mut b = device.launcher();
        b.ptr(&s.data[0])
            .ptr(&s.data[1])
            .ptr(&s.scalars)
            .ptr(&device.scratch);
        // SAFETY: the arguments match `mse_loss` in cuda/mse_loss.cu; scratch holds GRID partial
        // slots.
        unsafe { device.launch(b) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::{OpCase, OpKernel},
        harness::{assert_cpu_checks, bsd, params, request},
    };
    use apex_plugin_api::{Backend, Instance, ParamValue};

    #[test]
    fn mean_and_sum_match_the_reference_for_every_precision() {
        let kernel = OpKernel::<MseLoss>::default();
        for reduction in ["mean", "sum"] {
            for (b, s, d) in [(1, 1, 1), (2, 3, 7), (16, 16, 512)] {
                let mut o = bsd(b, s, d);
                o.push(("reduction", ParamValue::Str(reduction.into())));
                assert_cpu_checks(&kernel, &o, Tolerance::default_for);
            }
        }
    }

    #[test]
    fn a_wrong_loss_is_caught_and_a_hand_case_is_exact() {
        let kernel = OpKernel::<MseLoss>::default();
        let p = params(&kernel, &bsd(1, 2, 2));
        let mut case =
            OpCase::<MseLoss, f32>::new(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
                .unwrap();
        case.set_inputs(Inputs {
            data: vec![vec![1.0, 2.0, 3.0, 4.0], vec![1.0, 0.0, 3.0, 7.0]],
            targets: vec![],
        });
        case.run().unwrap();
        assert_eq!(case.outputs().scalars[0], (4.0 + 9.0) / 4.0);
        let tol = Tolerance::default_for(Precision::Fp32);
        assert!(case.verify(&tol).unwrap().within(&tol));
        case.outputs_mut().scalars[0] *= 1.001;
        assert!(!case.verify(&tol).unwrap().within(&tol));
    }
}
