//! The elementwise machinery GELU and Swish share: cost model, inputs, the CPU path, the f64
//! reference, and one CUDA program (`cuda/activation.cu`) selected by [`Func`].

use apex_plugin_api::{Accuracy, PluginError, Precision, Tolerance, Work, WorkUnit};

use crate::{
    Element,
    accuracy::compare_rows,
    cpu_par::for_each_chunk,
    device::DeviceState,
    fast_math::{
        gelu_erf_f32, gelu_erf_f64, gelu_tanh_f32, gelu_tanh_f64, simd_dispatch, swish_f32,
        swish_f64,
    },
    op::{CudaProgram, DeviceFacts, Inputs, OutputLens, Outputs},
    program::{assemble, launch_1d},
    rng::uniform,
    rows::{FlatPlan, MIN_BLOCK},
};

const SOURCE: &str = include_str!("../cuda/activation.cu");

/// Vectors a CUDA thread may load before it computes any (see [`Activation::unroll`]).
pub const UNROLL_CHOICES: [usize; 3] = [1, 2, 4];
/// Elements per CPU task.
const TASK: usize = 1 << 14;

/// Which function (the `ACT` code of `activation.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    GeluErf,
    GeluTanh,
    Swish,
}

impl Func {
    fn code(self) -> usize {
        match self {
            Self::GeluErf => 0,
            Self::GeluTanh => 1,
            Self::Swish => 2,
        }
    }

    /// Flops per element, counting an exponential or erfc as 8.
    fn flops(self) -> f64 {
        match self {
            Self::GeluErf => 12.0,
            Self::GeluTanh => 15.0,
            Self::Swish => 11.0,
        }
    }

    pub fn f32(self, x: f32) -> f32 {
        match self {
            Self::GeluErf => gelu_erf_f32(x),
            Self::GeluTanh => gelu_tanh_f32(x),
            Self::Swish => swish_f32(x),
        }
    }

    pub fn f64(self, x: f64) -> f64 {
        match self {
            Self::GeluErf => gelu_erf_f64(x),
            Self::GeluTanh => gelu_tanh_f64(x),
            Self::Swish => swish_f64(x),
        }
    }
}

/// An elementwise case over `n = batch * seq * dim` elements.
#[derive(Debug, Clone, Copy)]
pub struct Activation {
    pub n: usize,
    pub func: Func,
}

impl Activation {
    pub fn work(&self, precision: Precision) -> Work {
        let bytes = (self.n * precision.size_bytes()) as u64;
        Work {
            bytes_read: bytes,
            bytes_written: bytes,
            flops: self.func.flops() * self.n as f64,
            items: self.n as f64,
            unit: WorkUnit::Elements,
        }
    }

    pub fn output_lens(&self) -> OutputLens {
        OutputLens {
            tensors: vec![self.n],
            scalars: 0,
        }
    }

    /// `x` uniform in `[-5, 5)`: both tails of every function and the region around 0.
    pub fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        Inputs {
            data: vec![uniform(self.n, -5.0, 5.0, seed, 1)],
            targets: vec![],
        }
    }

    pub fn run_cpu<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &mut Outputs<T>,
        parallel: bool,
    ) {
        let x = &inputs.data[0];
        let func = self.func;
        for_each_chunk(&mut outputs.tensors[0], TASK, parallel, |task, out| {
            let x = &x[task * TASK..task * TASK + out.len()];
            // fp32 reads x and writes the output directly; 16-bit types convert 256 elements
            // at a time through two L1-resident buffers.
            if let (Some(src), Some(dst)) = (T::as_f32(x), T::as_f32_mut(out)) {
                apply(func, src, dst);
                return;
            }
            let (mut a, mut b) = ([0.0f32; 256], [0.0f32; 256]);
            for (piece, xs) in out.chunks_mut(256).zip(x.chunks(256)) {
                let n = piece.len();
                T::load(xs, &mut a);
                apply(func, &a[..n], &mut b[..n]);
                T::store(&b[..n], piece);
            }
        });
    }

    pub fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy {
        let (x, y) = (&inputs.data[0], &outputs.tensors[0]);
        let chunk = 4096;
        let rows = self.n.div_ceil(chunk);
        compare_rows(rows, chunk, tolerance, |r, out, reference| {
            let range = r * chunk..((r + 1) * chunk).min(self.n);
            out.extend(y[range.clone()].iter().map(|v| v.to_f64()));
            reference.extend(x[range].iter().map(|v| self.func.f64(v.to_f64())));
        })
    }

    pub fn cuda_program(
        &self,
        precision: Precision,
        facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError> {
        let plan = FlatPlan::covering(self.n, precision, self.unroll(precision, facts))?;
        let mut defines = plan.defines();
        defines.push(("ACT", self.func.code()));
        defines.push((
            "EARLY_TRIGGER",
            usize::from(self.early_trigger(&plan, facts)),
        ));
        Ok(CudaProgram {
            name: "activation",
            source: assemble(precision, &defines, SOURCE),
            function: "activation",
            config: launch_1d(plan.grid, plan.block),
            scratch_words: 0,
            co_resident_blocks: 1,
            grid_stride: false,
        })
    }

    /// Vectors each thread loads before it computes any: the fewest of [`UNROLL_CHOICES`] that
    /// fit the grid in one wave (every load issued at the start, no block left to schedule),
    /// else one (the most threads, blocks recycled as they finish); GELU-erf, issue-bound at
    /// 16-bit types, always one. DRAM-cold on an H100 through apex-host, one, two and four
    /// vectors in one call (2026-11-26, `benches/results/device_scripts_2026-11-26_s13.sh`
    /// call 5b): Swish bf16 8192 x 1024 (four fit one wave) 12.57 / 12.59 / 11.97 us, 8192 x 512
    /// (two do) 6.87 / 6.78 / 6.92, 8192 x 8192 89.95 / 90.43 / 91.52; GELU-erf bf16 8192 x 1024
    /// 12.78 / 13.18 / 14.66, 8192 x 4096 46.16 / 46.84 / 48.42.
    pub fn unroll(&self, precision: Precision, facts: DeviceFacts) -> usize {
        if self.func == Func::GeluErf {
            return 1;
        }
        let vectors = self.n / (16 / precision.size_bytes());
        let one_wave = facts.blocks_per_wave(MIN_BLOCK);
        UNROLL_CHOICES
            .into_iter()
            .find(|&u| vectors.div_ceil(MIN_BLOCK * u) <= one_wave)
            .unwrap_or(1)
    }

    /// Whether a call lets the next call's blocks in at its start (programmatic dependent
    /// launch, see `launch.rs`). Every function does, except GELU-erf on a grid of one wave or
    /// less: issue-bound at 16-bit types, its blocks then shared their SMs with the next call's
    /// waiting blocks and ran 13-17 % slower (H100, 2026-11-26, bf16/fp16 8192 x 512). On more
    /// waves the next call's blocks only come in as the last wave leaves.
    fn early_trigger(&self, plan: &FlatPlan, facts: DeviceFacts) -> bool {
        self.func != Func::GeluErf || plan.grid > facts.blocks_per_wave(plan.block)
    }

    pub fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        let s = &device.sets[set];
        let mut b = device.launcher();
        b.ptr(&s.data[0]).ptr(&s.outputs[0]);
        // SAFETY: the arguments match `activation` in cuda/activation.cu; the grid covers NVEC.
        unsafe { device.launch(b) }
    }
}

simd_dispatch!(
    /// `dst[i] = func(src[i])` (same lengths), vectorized for the best instruction set the CPU
    /// has ([`simd_dispatch!`]).
    fn apply(func: Func, src: &[f32], dst: &mut [f32]) => apply_portable
);

/// One branch-free loop per function, so each vectorizes.
#[inline(always)]
fn apply_portable(func: Func, src: &[f32], dst: &mut [f32]) {
    match func {
        Func::GeluErf => map_interleaved(src, dst, gelu_erf_f32),
        Func::GeluTanh => map_interleaved(src, dst, gelu_tanh_f32),
        Func::Swish => map_interleaved(src, dst, swish_f32),
    }
}

/// Elements per step of [`map_interleaved`]: four 16-float or eight 8-float vectors.
const INTERLEAVE: usize = 64;

/// `dst[i] = f(src[i])`, [`INTERLEAVE`] elements a step: each function is one long dependent
/// chain of multiply-adds per vector (exp, erfc and a division), so one vector a step leaves the
/// core waiting on latencies; LLVM turns the fixed-size inner loop into independent vectors
/// whose chains overlap.
#[inline(always)]
fn map_interleaved(src: &[f32], dst: &mut [f32], f: impl Fn(f32) -> f32) {
    assert_eq!(src.len(), dst.len(), "map_interleaved: lengths differ");
    let mut d = dst.chunks_exact_mut(INTERLEAVE);
    let mut s = src.chunks_exact(INTERLEAVE);
    for (dc, sc) in (&mut d).zip(&mut s) {
        for (o, &v) in dc.iter_mut().zip(sc) {
            *o = f(v);
        }
    }
    for (o, &v) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *o = f(v);
    }
}

/// The [`crate::op::NnOp`] methods of an op that is a newtype over [`Activation`] (GELU, Swish):
/// each forwards to the wrapped `Activation`. Expanded inside the op's `impl NnOp`, after its own
/// `descriptor` and `plan`.
macro_rules! activation_methods {
    () => {
        fn work(&self, precision: apex_plugin_api::Precision) -> apex_plugin_api::Work {
            self.0.work(precision)
        }
        fn output_lens(&self) -> crate::op::OutputLens {
            self.0.output_lens()
        }
        fn generate<T: crate::Element>(&self, seed: u64) -> crate::op::Inputs<T> {
            self.0.generate(seed)
        }
        fn run_cpu<T: crate::Element>(
            &self,
            inputs: &crate::op::Inputs<T>,
            outputs: &mut crate::op::Outputs<T>,
            parallel: bool,
        ) {
            self.0.run_cpu(inputs, outputs, parallel);
        }
        fn verify<T: crate::Element>(
            &self,
            inputs: &crate::op::Inputs<T>,
            outputs: &crate::op::Outputs<T>,
            tolerance: &apex_plugin_api::Tolerance,
        ) -> apex_plugin_api::Accuracy {
            self.0.verify(inputs, outputs, tolerance)
        }
        fn cuda_program(
            &self,
            precision: apex_plugin_api::Precision,
            facts: crate::op::DeviceFacts,
        ) -> Result<crate::op::CudaProgram, apex_plugin_api::PluginError> {
            self.0.cuda_program(precision, facts)
        }
        fn launch(
            &self,
            device: &crate::device::DeviceState,
            set: usize,
        ) -> Result<(), apex_plugin_api::PluginError> {
            self.0.launch(device, set)
        }
    };
}
pub(crate) use activation_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_the_fewest_vectors_that_fit_one_wave() {
        let facts = DeviceFacts::H100;
        let unroll = |func, n, p| Activation { n, func }.unroll(p, facts);
        // One wave: 132 SMs x 8 blocks of 256 threads.
        assert_eq!(unroll(Func::Swish, 2 << 20, Precision::Bf16), 1);
        assert_eq!(unroll(Func::Swish, 8192 * 512, Precision::Bf16), 2);
        assert_eq!(unroll(Func::Swish, 8192 * 1024, Precision::Bf16), 4);
        assert_eq!(unroll(Func::GeluTanh, 8192 * 512, Precision::Fp32), 4);
        assert_eq!(unroll(Func::Swish, 8192 * 2048, Precision::Bf16), 1);
        assert_eq!(unroll(Func::GeluErf, 8192 * 1024, Precision::Bf16), 1);
        let source = Activation {
            n: 8192 * 1024,
            func: Func::Swish,
        }
        .cuda_program(Precision::Bf16, facts)
        .unwrap()
        .source;
        assert!(source.contains("#define UNROLL 4u"));
    }

    #[test]
    fn only_gelu_erf_on_one_wave_leaves_the_trigger_to_its_blocks_exit() {
        let facts = DeviceFacts::H100;
        let early = |func, n| {
            Activation { n, func }
                .cuda_program(Precision::Bf16, facts)
                .unwrap()
                .source
                .contains("#define EARLY_TRIGGER 1u")
        };
        // GELU-erf at a vector a thread: 2 M bf16 elements are 1,024 blocks of 256 threads, one
        // wave of 132 x 8; 8192 x 4096 are 16,384.
        assert!(!early(Func::GeluErf, 2 << 20));
        assert!(early(Func::GeluErf, 8192 * 4096));
        assert!(early(Func::GeluTanh, 8192 * 512));
        assert!(early(Func::Swish, 8192 * 512));
    }

    #[test]
    fn the_cpu_path_matches_the_reference_elementwise() {
        for func in [Func::GeluErf, Func::GeluTanh, Func::Swish] {
            let op = Activation { n: 1000, func };
            let inputs = op.generate::<f32>(4);
            let mut out = Outputs::poisoned(&op.output_lens());
            op.run_cpu(&inputs, &mut out, true);
            for (x, y) in inputs.data[0].iter().zip(&out.tensors[0]) {
                let want = func.f64(f64::from(*x));
                // GELU-erf's CPU erfc is accurate to an absolute error (fast_math); the others
                // to a relative one.
                let bound = match func {
                    Func::GeluErf => 4e-7 * f64::from(x.abs()).max(1.0),
                    _ => 1e-5 * want.abs().max(1e-3),
                };
                assert!(
                    (f64::from(*y) - want).abs() <= bound,
                    "{func:?}({x}) = {y}, want {want}"
                );
            }
        }
        // Known values: GELU(1) = 0.8413447..., tanh form 0.8411920..., swish(1) = 0.7310585...
        assert!((gelu_erf_f64(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        assert!((gelu_tanh_f64(1.0) - 0.841_191_990_607_477_4).abs() < 1e-12);
        assert!((swish_f64(1.0) - 0.731_058_578_630_004_9).abs() < 1e-15);
    }
}
