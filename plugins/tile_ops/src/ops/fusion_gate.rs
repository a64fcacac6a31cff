//! `tile_ops.fusion_gate`: `alpha = sigmoid(softplus(wb)*boundary + softplus(wu)*uncertainty + bias)`
//! and `fused = base + alpha*(heavy - base)` (`spec/apex-x-kernels.md` §1.4), in one pass.
//! Proxies are sanitised (`nan -> 0`, `+inf -> 1`, `-inf -> 0`); the inputs contain a few of each.

use crate::cpu_par::{for_each_chunk, for_each_chunk_pair};
use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    KernelDescriptor, ParamSpec, Params, PluginError, Precision, Work, WorkUnit,
};
use apex_tile_math::gate::{clean_proxy, softplus};
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{
    Element, MapShape,
    device::{BLOCK, DeviceState},
    device_check::{f, grid},
    op::{CpuScratch, CudaProgram, DataSpec, Draw, Inputs, TileOp, map_spec},
    program::{assemble, vec_elems},
    selection::{Rng, uniform_into},
};

const SOURCE: &str = include_str!("../cuda/fusion_gate.cu");

/// A validated FusionGate case. It works per pixel, so it declares the map's parameters only:
/// a `tile_ops.*` sweep of `tile_size` or `kmax` does not multiply its cases.
#[derive(Debug, Clone)]
pub struct FusionGate {
    pub shape: MapShape,
    /// `softplus(boundary_log_weight)`, `softplus(uncertainty_log_weight)`, `bias`.
    pub wb: f64,
    pub wu: f64,
    pub bias: f64,
}

impl TileOp for FusionGate {
    fn descriptor() -> KernelDescriptor {
        let d = crate::op::descriptor_with(
            "tile_ops.fusion_gate",
            "alpha = sigmoid(softplus(wb)*boundary + softplus(wu)*uncertainty + bias); fused = base + alpha*(heavy - base)",
            MapShape::param_specs(),
        );
        d.param(ParamSpec::float(
            "boundary_log_weight",
            1.0,
            "wb before softplus",
        ))
        .param(ParamSpec::float(
            "uncertainty_log_weight",
            1.0,
            "wu before softplus",
        ))
        .param(ParamSpec::float("bias", 0.0, "bias inside the sigmoid"))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let shape = MapShape::from_params(params)?;
        if shape.batch > 65_535 {
            return Err(PluginError::invalid(format!(
                "batch = {} exceeds 65535 (hint: use a smaller batch)",
                shape.batch
            )));
        }
        let (wb, wu, bias) = (
            params.float("boundary_log_weight")?,
            params.float("uncertainty_log_weight")?,
            params.float("bias")?,
        );
        for (name, v) in [
            ("boundary_log_weight", wb),
            ("uncertainty_log_weight", wu),
            ("bias", bias),
        ] {
            if !v.is_finite() {
                return Err(PluginError::invalid(format!(
                    "{name} = {v} is not finite (hint: use a finite number)"
                )));
            }
        }
        Ok(Self {
            shape,
            wb: softplus(wb),
            wu: softplus(wu),
            bias,
        })
    }

    fn work<T: Element>(&self, _: &Inputs<T>) -> Work {
        let s = &self.shape;
        let es = std::mem::size_of::<T>() as u64;
        Work {
            bytes_read: (2 * s.map_len() + 2 * s.pixels()) as u64 * es,
            bytes_written: (s.map_len() + s.pixels()) as u64 * es,
            // 3 per fused element; about 8 per pixel for alpha (sigmoid counted as 4).
            flops: 3.0 * s.map_len() as f64 + 8.0 * s.pixels() as f64,
            items: s.map_len() as f64,
            unit: WorkUnit::Elements,
        }
    }

    fn output_lens(&self) -> Vec<usize> {
        vec![self.shape.map_len(), self.shape.pixels()]
    }

    crate::batch_rows_of_shape!();

    /// `base` and `heavy` uniform; the proxies drawn on the host (their NaN and infinite pixels
    /// come from a second pass over the stream).
    fn data_specs(&self) -> Vec<DataSpec> {
        let (map, pixels) = (self.shape.map_len(), self.shape.pixels());
        let proxy = DataSpec {
            len: pixels,
            draw: Draw::Host,
        };
        vec![map_spec(map, 1), map_spec(map, 2), proxy, proxy]
    }

    fn generate_host<T: Element>(&self, seed: u64, inputs: &mut Inputs<T>) {
        let s = &self.shape;
        inputs.shape_for(4, 0);
        for (n, proxy) in inputs.data[2..].iter_mut().enumerate() {
            let mut rng = Rng::new(seed, 3 + n as u64);
            uniform_into(proxy, s.pixels(), 0.0, 1.0, &mut rng);
            // About one pixel in 256 is NaN or infinite, to exercise the sanitising.
            for v in proxy.iter_mut() {
                match rng.below(768) {
                    0 => *v = T::from_f64(f64::NAN),
                    1 => *v = T::from_f64(f64::INFINITY),
                    2 => *v = T::from_f64(f64::NEG_INFINITY),
                    _ => {}
                }
            }
        }
    }

    fn cpu_scratch(&self) -> CpuScratch {
        CpuScratch {
            f32s: vec![0.0; self.shape.pixels()],
            ..Default::default()
        }
    }

    fn run_cpu<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &mut [Vec<T>],
        scratch: &mut CpuScratch,
    ) {
        let s = &self.shape;
        let [base, heavy, boundary, uncertainty] = &inputs.data[..] else {
            unreachable!("four inputs")
        };
        let (wb, wu, bias) = (self.wb as f32, self.wu as f32, self.bias as f32);
        let (fused, alpha_out) = outputs.split_at_mut(1);
        let w = s.width;
        // Alpha once per pixel, kept in f32 for the fuse pass and stored rounded as an output.
        let parallel = scratch.parallel;
        for_each_chunk_pair(
            &mut scratch.f32s,
            w,
            &mut alpha_out[0],
            w,
            parallel,
            |row, a32, a_out| {
                let mut bd = [0.0f32; 256];
                let mut un = [0.0f32; 256];
                for (start, (a, o)) in a32.chunks_mut(256).zip(a_out.chunks_mut(256)).enumerate() {
                    let at = row * w + start * 256;
                    let n = a.len();
                    T::load(&boundary[at..at + n], &mut bd);
                    T::load(&uncertainty[at..at + n], &mut un);
                    for ((a, &b), &u) in a.iter_mut().zip(&bd[..n]).zip(&un[..n]) {
                        let z = wb * clean_proxy(b) + wu * clean_proxy(u) + bias;
                        *a = 1.0 / (1.0 + (-z).exp());
                    }
                    T::store(a, o);
                }
            },
        );
        let alpha = &scratch.f32s;
        let hw = s.height * s.width;
        for_each_chunk(&mut fused[0], hw, parallel, |plane, out| {
            let b = plane / s.channels;
            let a_plane = &alpha[b * hw..][..hw];
            let (x_plane, h_plane) = (&base[plane * hw..][..hw], &heavy[plane * hw..][..hw]);
            let mut x = [0.0f32; 512];
            let mut h = [0.0f32; 512];
            for (i, o) in out.chunks_mut(512).enumerate() {
                let n = o.len();
                let at = i * 512;
                T::load(&x_plane[at..at + n], &mut x);
                T::load(&h_plane[at..at + n], &mut h);
                for ((xv, &hv), &av) in x[..n].iter_mut().zip(&h[..n]).zip(&a_plane[at..at + n]) {
                    *xv += av * (hv - *xv);
                }
                T::store(&x[..n], o);
            }
        });
    }

    fn reference<T: Element>(&self, inputs: &Inputs<T>) -> Vec<f64> {
        let s = &self.shape;
        let [base, heavy, boundary, uncertainty] = &inputs.data[..] else {
            unreachable!("four inputs")
        };
        // Plane by plane on rayon's pool (the large profile has 134 M elements per map).
        use rayon::prelude::*;
        let alpha: Vec<f64> = boundary
            .par_iter()
            .zip(uncertainty)
            .map(|(&b, &u)| {
                let z = self.wb * clean_proxy(b.to_f64())
                    + self.wu * clean_proxy(u.to_f64())
                    + self.bias;
                1.0 / (1.0 + (-z).exp())
            })
            .collect();
        let hw = s.height * s.width;
        let mut out = vec![0.0f64; s.map_len() + s.pixels()];
        let (fused, alpha_out) = out.split_at_mut(s.map_len());
        fused
            .par_chunks_mut(hw)
            .enumerate()
            .for_each(|(plane, dst)| {
                let b = plane / s.channels;
                let a = &alpha[b * hw..(b + 1) * hw];
                let at = plane * hw;
                for (p, d) in dst.iter_mut().enumerate() {
                    let (x, h) = (base[at + p].to_f64(), heavy[at + p].to_f64());
                    *d = x + a[p] * (h - x);
                }
            });
        alpha_out.copy_from_slice(&alpha);
        out
    }

    fn cuda_program(&self, precision: Precision) -> CudaProgram {
        CudaProgram {
            name: "fusion_gate",
            source: self.source(precision, self.tuning(precision)),
            functions: &["fusion_gate"],
            scratch_i32: vec![],
        }
    }

    fn launch(&self, precision: Precision, device: &mut DeviceState) -> Result<(), PluginError> {
        let DeviceState {
            session,
            functions,
            data,
            outputs,
            ..
        } = device;
        let cfg = self.launch_config(precision, self.tuning(precision));
        let (wb, wu, bias) = (self.wb as f32, self.wu as f32, self.bias as f32);
        let (fused, alpha) = outputs.split_at_mut(1);
        let mut b = session.stream.launch_builder(&functions[0]);
        b.arg(&data[0]).arg(&data[1]).arg(&data[2]).arg(&data[3]);
        b.arg(&mut fused[0])
            .arg(&mut alpha[0])
            .arg(&wb)
            .arg(&wu)
            .arg(&bias);
        // SAFETY: arguments match `fusion_gate`; the grid covers every pixel vector, channel and batch.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }

    /// Alpha per pixel into the reference's tail, then the fused map from it.
    fn launch_reference(
        &self,
        _: &[Vec<i32>],
        device: &mut DeviceState,
    ) -> Result<(), PluginError> {
        let s = &self.shape;
        let stream = device.stream().clone();
        let (n, pixels, hw) = (
            s.map_len() as u64,
            s.pixels() as u64,
            (s.height * s.width) as u64,
        );
        let ch = s.channels as u32;
        let DeviceState { data, check, .. } = device;
        let (functions, reference) = check.launch_parts()?;
        let (mut fused, mut alpha) = reference.split_at_mut(s.map_len());
        {
            let mut a = stream.launch_builder(&functions[f::REF_GATE_ALPHA]);
            a.arg(&data[2]).arg(&data[3]).arg(&mut alpha).arg(&pixels);
            a.arg(&self.wb).arg(&self.wu).arg(&self.bias);
            // SAFETY: arguments match `ref_gate_alpha`; the tail holds one value per pixel.
            unsafe { a.launch(grid(s.pixels())) }.map_err(cuda_error)?;
        }
        let alpha = alpha.as_view();
        let mut b = stream.launch_builder(&functions[f::REF_GATE_FUSE]);
        b.arg(&data[0]).arg(&data[1]).arg(&alpha).arg(&mut fused);
        b.arg(&n).arg(&hw).arg(&ch);
        // SAFETY: arguments match `ref_gate_fuse`; the head holds the map's values.
        unsafe { b.launch(grid(s.map_len())) }
            .map(drop)
            .map_err(cuda_error)
    }
}

/// The CUDA knobs of `fusion_gate.cu`: channels per thread (`CPB`), channels loaded before use
/// (`UNROLL`) and the cache policy (`HINT`, see `common.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateTuning {
    pub channels_per_thread: usize,
    pub unroll: usize,
    pub hint: usize,
}

impl FusionGate {
    /// The knobs, as apex-host measured them on an H200 (batch mode, µs per call; plain launches
    /// gave the same within 1 %): four channels per thread at 16-bit and two at fp32, two loaded
    /// together, plain accesses, at every size. Large profile (B=8, C=256, 256x256): fp16 186.7
    /// (sixteen channels one at a time 193.9, two 194.6, eight 190.0), fp32 367.8 (four 369.8,
    /// sixteen one at a time 424.8, two with evict-first accesses 398.7). Fixed profile (B=1,
    /// C=128, 128x128): fp16 3.51 (one channel 5.48, two 3.90, eight 3.53), fp32 4.70 (one 6.12):
    /// fewer channels per thread leave more threads but recompute alpha once per channel.
    pub fn tuning(&self, precision: Precision) -> GateTuning {
        let most = if precision == Precision::Fp32 { 2 } else { 4 };
        GateTuning {
            channels_per_thread: most.min(self.shape.channels),
            unroll: 2,
            hint: 0,
        }
    }

    /// The specialised CUDA source for `precision` and `tuning`.
    pub fn source(&self, precision: Precision, tuning: GateTuning) -> String {
        let s = &self.shape;
        let hw = s.height * s.width;
        let defines = [
            ("BATCH", s.batch),
            ("CH", s.channels),
            ("HW", hw),
            ("VEC", vec_elems(precision, hw)),
            ("CPB", tuning.channels_per_thread),
            ("UNROLL", tuning.unroll.clamp(1, tuning.channels_per_thread)),
            ("HINT", tuning.hint),
        ];
        assemble(precision, &defines, SOURCE)
    }

    /// Grid `(pixel vectors / 256, channel groups, batch)`.
    pub fn launch_config(&self, precision: Precision, tuning: GateTuning) -> LaunchConfig {
        let s = &self.shape;
        let hw = s.height * s.width;
        let vec = vec_elems(precision, hw);
        LaunchConfig {
            grid_dim: (
                (hw / vec).div_ceil(BLOCK as usize) as u32,
                s.channels.div_ceil(tuning.channels_per_thread) as u32,
                s.batch as u32,
            ),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, small_shape},
    };
    use apex_plugin_api::{ParamValue::Float, Tolerance};

    #[test]
    fn fused_and_alpha_match_the_reference_for_every_precision() {
        let kernel = OpKernel::<FusionGate>::default();
        assert_cpu_checks(
            &kernel,
            &small_shape(2, 5, 32, 8, 4),
            Tolerance::default_for,
        );
        let mut o = small_shape(1, 3, 48, 16, 4);
        o.extend([
            ("boundary_log_weight", Float(0.8)),
            ("uncertainty_log_weight", Float(1.2)),
            ("bias", Float(-0.1)),
        ]);
        assert_cpu_checks(&kernel, &o, Tolerance::default_for);
    }

    #[test]
    fn non_finite_proxies_are_sanitised() {
        let kernel = OpKernel::<FusionGate>::default();
        let op = FusionGate::plan(&crate::harness::params(
            &kernel,
            &small_shape(1, 1, 8, 8, 1),
        ))
        .unwrap();
        let s = op.shape;
        let mut boundary = vec![0.25f32; s.pixels()];
        boundary[..3].copy_from_slice(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
        let inputs = Inputs {
            data: vec![
                vec![0.0f32; s.map_len()],
                vec![1.0f32; s.map_len()],
                boundary,
                vec![0.0f32; s.pixels()],
            ],
            ints: vec![],
        };
        let mut out = vec![vec![f32::NAN; s.map_len()], vec![f32::NAN; s.pixels()]];
        op.run_cpu(&inputs, &mut out, &mut op.cpu_scratch());
        let sig = |z: f64| (1.0 / (1.0 + (-z).exp())) as f32;
        let wb = op.wb;
        assert_eq!(out[1][0], sig(0.0));
        assert!((out[1][1] - sig(wb)).abs() < 1e-6);
        assert_eq!(out[1][2], sig(0.0));
        // heavy = 1 and base = 0, so fused equals alpha.
        assert!(
            out[0]
                .iter()
                .zip(&out[1])
                .all(|(f, a)| (f - a).abs() < 1e-6)
        );
    }

    #[test]
    fn channels_per_thread_are_four_at_16_bit_and_two_at_fp32_within_the_channels() {
        let kernel = OpKernel::<FusionGate>::default();
        let plan = |channels| {
            let p = crate::harness::params(&kernel, &small_shape(1, channels, 32, 8, 4));
            FusionGate::plan(&p).unwrap()
        };
        let g = plan(128);
        assert_eq!(g.tuning(Precision::Fp16).channels_per_thread, 4);
        assert_eq!(g.tuning(Precision::Bf16).channels_per_thread, 4);
        assert_eq!(g.tuning(Precision::Fp32).channels_per_thread, 2);
        assert_eq!(plan(3).tuning(Precision::Fp16).channels_per_thread, 3);
    }
}
