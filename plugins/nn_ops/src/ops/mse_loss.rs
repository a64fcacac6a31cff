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

/// How the MSE kernel's grid is shaped. Per thread, for the GPU bench's comparison
/// (`nn_ops_gpu_check`): a case set up inside [`tuning::with_launch`] uses it; the plugin itself
/// never sets it.
pub mod tuning {
    use std::cell::Cell;

    /// One launch shape of the grid-striding kernel.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Launch {
        /// Vectors of each input a thread loads per step.
        pub unroll: usize,
        /// Blocks of 256 threads per SM in the grid (one partial each).
        pub blocks_per_sm: usize,
        /// Whether `blocks_per_sm` reaches the kernel's launch bounds (`MIN_BLOCKS`). With it,
        /// ptxas may spend `65,536 / (256 blocks_per_sm)` registers a thread; without it, it
        /// aims at 2,048 threads an SM (32 registers) and issues a step's loads in halves.
        pub bounded: bool,
    }

    impl Launch {
        /// The launch a case gets unless [`with_launch`] says otherwise: four vectors of each
        /// input a step, two blocks a SM, bounded (all eight loads in flight, 64 KiB a SM). The
        /// fastest of it and [`Launch::OTHERS`] at every type and every large shape, DRAM-cold on an
        /// H100 (2026-11-26, fifteenth session, call 4, `nn_ops_gpu_check --bench-only --only
        /// mse_loss`, twice), in µs against the earlier default (four a step, four blocks a SM,
        /// unbounded: ptxas issued a 16-bit step's loads in halves at 32 registers):
        /// - 8192 x 4096: bf16 44.97 against 46.20, fp16 45.03 against 46.07, fp32 87.05
        ///   against 87.96;
        /// - 8192 x 8192: bf16 87.35 against 89.30, fp32 172.2 against 173.6;
        /// - 8192 x 1024: bf16 13.07 against 13.71, fp32 23.78 against 24.14;
        /// - the seed's 16 x 256 x 512: bf16 5.07 against 5.34, fp32 7.59 against 8.00.
        ///
        /// Bounding four blocks a SM instead (a 64-register cap) lost 10 % at fp16 and fp32
        /// (fp32 8192 x 4096: 97.0-97.1), three (an 85-register cap) 12-24 %; only the tiny 128
        /// x 256 x 8 went faster with two vectors a step and four blocks (1.80 against 1.94 µs
        /// at bf16).
        pub const DEFAULT: Self = Self::new(4, 2, true);

        /// Every other shape the GPU bench and self-check run, by name, beside the default.
        pub const OTHERS: [Self; 11] = [
            Self::new(1, 8, false),
            Self::new(2, 2, true),
            Self::new(4, 4, false),
            Self::new(4, 4, true),
            Self::new(2, 4, false),
            Self::new(2, 4, true),
            Self::new(2, 8, false),
            Self::new(4, 3, true),
            Self::new(8, 2, true),
            Self::new(8, 4, true),
            Self::new(4, 8, false),
        ];

        const fn new(unroll: usize, blocks_per_sm: usize, bounded: bool) -> Self {
            Self {
                unroll,
                blocks_per_sm,
                bounded,
            }
        }

        pub fn name(self) -> String {
            format!(
                "u{}x{}{}",
                self.unroll,
                self.blocks_per_sm,
                if self.bounded { "b" } else { "" }
            )
        }
    }

    thread_local! {
        static LAUNCH: Cell<Option<Launch>> = const { Cell::new(None) };
    }

    /// Runs `f` with `launch` for the MSE cases set up inside it on this thread.
    pub fn with_launch<R>(launch: Launch, f: impl FnOnce() -> R) -> R {
        apex_plugin_api::tuning::with_override(&LAUNCH, Some(launch), f)
    }

    /// The override in force, else [`Launch::DEFAULT`].
    pub(super) fn launch() -> Launch {
        LAUNCH.with(Cell::get).unwrap_or(Launch::DEFAULT)
    }
}

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
        let launch = tuning::launch();
        let plan = FlatPlan::new(
            self.n,
            precision,
            launch.unroll,
            facts.sm_count * launch.blocks_per_sm,
        )?;
        let mut defines = plan.defines();
        defines.push(("MEAN", usize::from(self.mean)));
        defines.push((
            "MIN_BLOCKS",
            if launch.bounded {
                launch.blocks_per_sm
            } else {
                0
            },
        ));
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
    fn the_launch_shape_sets_the_grid_and_the_launch_bounds() {
        let op = MseLoss {
            n: 8192 * 4096,
            mean: true,
        };
        let facts = DeviceFacts::H100;
        let default = op.cuda_program(Precision::Bf16, facts).unwrap();
        assert_eq!(default.config.grid_dim.0 as usize, 2 * facts.sm_count);
        assert!(default.source.contains("#define MIN_BLOCKS 2u"));
        assert!(default.source.contains("#define UNROLL 4u"));
        let unbounded = tuning::Launch {
            unroll: 2,
            blocks_per_sm: 8,
            bounded: false,
        };
        let other =
            tuning::with_launch(unbounded, || op.cuda_program(Precision::Fp32, facts)).unwrap();
        assert_eq!(other.config.grid_dim.0 as usize, 8 * facts.sm_count);
        assert!(other.source.contains("#define MIN_BLOCKS 0u"));
        assert!(other.source.contains("#define UNROLL 2u"));
        // The override ends with its closure.
        assert!(
            op.cuda_program(Precision::Fp32, facts)
                .unwrap()
                .source
                .contains("#define MIN_BLOCKS 2u")
        );
    }

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
