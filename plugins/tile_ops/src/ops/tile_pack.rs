//! `tile_ops.tile_pack`: gathers the selected `t x t` tiles of `F[B,C,H,W]` into `P[B,K,C,t,t]`,
//! keeping the given slot order (no Hilbert reordering, as the original's kernels did).

use crate::cpu_par::for_each_chunk;
use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work, WorkUnit,
};
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{
    Element, IdPattern, TileShape,
    device::{DeviceState, grid_1d},
    device_check::{f, grid, upload_slot_origins},
    op::{CudaProgram, DataSpec, Inputs, TileOp, tiled_map_specs},
    program::{assemble, vec_elems},
};

const SOURCE: &str = include_str!("../cuda/tile_pack.cu");

/// A validated TilePack case.
#[derive(Debug, Clone)]
pub struct TilePack {
    pub shape: TileShape,
    pub ids: IdPattern,
}

impl TileOp for TilePack {
    fn descriptor() -> KernelDescriptor {
        let mut d = crate::op::base_descriptor(
            "tile_ops.tile_pack",
            "gather K t x t tiles of F[B,C,H,W] into P[B,K,C,t,t]; empty slots (-1, out of range) give zeros",
        );
        d = d.param(ParamSpec::str(IdPattern::PARAM, "sorted", IdPattern::HELP));
        // A gather is a copy: bit-exact on every backend.
        for p in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
            d = d.tolerance(p, Tolerance::EXACT);
        }
        d
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let shape = TileShape::from_params(params)?;
        let ids = IdPattern::parse(params.str(IdPattern::PARAM)?)?;
        ids.check(&shape)?;
        Ok(Self { shape, ids })
    }

    fn work<T: Element>(&self, inputs: &Inputs<T>) -> Work {
        let s = &self.shape;
        let tile = (s.tile_block() * std::mem::size_of::<T>()) as u64;
        let valid = inputs.ints[0]
            .iter()
            .filter(|&&id| s.is_valid_id(id))
            .count() as u64;
        // Empty slots read nothing but are still written (as zeros).
        Work {
            bytes_read: valid * tile + 4 * s.slots() as u64,
            bytes_written: s.slots() as u64 * tile,
            flops: 0.0,
            items: valid as f64,
            unit: WorkUnit::Tiles,
        }
    }

    fn output_lens(&self) -> Vec<usize> {
        vec![self.shape.tiles_len()]
    }

    crate::batch_rows_of_shape!();

    fn data_specs(&self) -> Vec<DataSpec> {
        tiled_map_specs(&self.shape)
    }

    fn generate_host<T: Element>(&self, seed: u64, inputs: &mut Inputs<T>) {
        inputs.fill_ids(&self.shape, &self.ids, seed);
    }

    fn run_cpu<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &mut [Vec<T>],
        scratch: &mut crate::op::CpuScratch,
    ) {
        pack_cpu(
            &self.shape,
            &inputs.data[0],
            &inputs.ints[0],
            &mut outputs[0],
            scratch.parallel,
        );
    }

    fn reference<T: Element>(&self, inputs: &Inputs<T>) -> Vec<f64> {
        pack_reference(&self.shape, &inputs.data[0], &inputs.ints[0])
    }

    fn cuda_program(&self, precision: Precision) -> CudaProgram {
        CudaProgram {
            name: "tile_pack",
            source: self.source(precision, self.tuning(precision)),
            functions: &["tile_pack"],
            scratch_i32: vec![],
        }
    }

    fn launch(&self, precision: Precision, device: &mut DeviceState) -> Result<(), PluginError> {
        let DeviceState {
            session,
            functions,
            data,
            ints,
            outputs,
            ..
        } = device;
        let tuning = self.tuning(precision);
        let mut b = session.stream.launch_builder(&functions[0]);
        b.arg(&data[0]).arg(&ints[0]).arg(&mut outputs[0]);
        let cfg = self.launch_config(precision, tuning);
        // SAFETY: `tile_pack` takes (f, ids, p) and `launch_config` covers every vector of P.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }

    fn launch_reference(
        &self,
        ints: &[Vec<i32>],
        device: &mut DeviceState,
    ) -> Result<(), PluginError> {
        let s = &self.shape;
        let stream = device.stream().clone();
        let origins = upload_slot_origins(&stream, s, &ints[0])?;
        let (slots, [kmax, ch, h, w, t]) = (s.slots() as u64, s.dims_u32());
        let DeviceState { data, check, .. } = device;
        let (functions, reference) = check.launch_parts()?;
        let mut b = stream.launch_builder(&functions[f::REF_PACK]);
        b.arg(&data[0]).arg(&origins).arg(reference).arg(&slots);
        b.arg(&kmax).arg(&ch).arg(&h).arg(&w).arg(&t);
        // SAFETY: arguments match `ref_pack`; the reference holds the tiles_len() values of P.
        unsafe { b.launch(grid(s.tiles_len())) }
            .map(drop)
            .map_err(cuda_error)
    }
}

/// The CUDA knobs of `tile_pack.cu`: vectors per thread (`NV`), the cache policy (`HINT`, see
/// `common.cuh`) and the slots copied side by side (`RUN_SLOTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackTuning {
    pub vectors_per_thread: usize,
    pub hint: usize,
    pub run_slots: usize,
}

impl TilePack {
    /// The specialised CUDA source for `precision` and `tuning`.
    pub fn source(&self, precision: Precision, tuning: PackTuning) -> String {
        let s = &self.shape;
        let defines = [
            ("BATCH", s.batch),
            ("CH", s.channels),
            ("HEIGHT", s.height),
            ("WIDTH", s.width),
            ("TILE", s.tile),
            ("KMAX", s.kmax),
            ("VEC", vec_elems(precision, s.tile)),
            ("NV", tuning.vectors_per_thread),
            ("HINT", tuning.hint),
            ("RUN_SLOTS", tuning.run_slots),
        ];
        assemble(precision, &defines, SOURCE)
    }

    /// The knobs for this shape, as apex-host measured them on an H200 (B=8, C=256, 256x256,
    /// batch mode, µs per call): two plain vectors per thread from t=16 (t=16 fp16 151.4 against
    /// 164.4 with one, t=32 140.8 against 146.7, t=16 fp32 287.6 against 302.0), one below (t=8:
    /// 70.7 against 72.7 fp16, 100.7 against 106.9 fp32). Four vectors and evict-first accesses
    /// were slower everywhere. Runs of 256 bytes of neighbouring slots against one slot at a time
    /// and runs of 128/512 bytes: t=16 fp32 265.0 against 288.0/266.4/271.6, t=16 fp16 130.7
    /// against 152.4/131.9/140.4, t=8 fp16 60.4 against 70.8/60.9/88.3.
    pub fn tuning(&self, precision: Precision) -> PackTuning {
        let row_bytes = self.shape.tile * precision.size_bytes();
        PackTuning {
            vectors_per_thread: if self.shape.tile >= 16 { 2 } else { 1 },
            hint: 0,
            run_slots: (RUN_BYTES / row_bytes).max(1),
        }
    }

    /// One block per `256 * NV` vectors of `P` (the slots rounded up to whole runs).
    pub fn launch_config(&self, precision: Precision, tuning: PackTuning) -> LaunchConfig {
        let s = &self.shape;
        let runs = s.slots().div_ceil(tuning.run_slots);
        let vectors = runs * tuning.run_slots * s.tile_block() / vec_elems(precision, s.tile);
        grid_1d(vectors.div_ceil(tuning.vectors_per_thread))
    }
}

/// The load run `tile_pack` aims for, in bytes: row i of this many bytes' worth of neighbouring
/// slots side by side.
const RUN_BYTES: usize = 256;

/// The fast CPU gather: one task per slot (on all cores when `parallel`), a `copy_from_slice`
/// per tile row.
pub fn pack_cpu<T: Element>(s: &TileShape, f: &[T], ids: &[i32], p: &mut [T], parallel: bool) {
    let (t, hw) = (s.tile, s.height * s.width);
    for_each_chunk(p, s.tile_block(), parallel, |slot, dst| {
        let id = ids[slot];
        if !s.is_valid_id(id) {
            dst.fill(T::ZERO);
            return;
        }
        let b = slot / s.kmax;
        let (y0, x0) = s.origin(id as usize);
        for (c, plane) in dst.chunks_exact_mut(t * t).enumerate() {
            let src = &f[(b * s.channels + c) * hw..][..hw];
            for (i, row) in plane.chunks_exact_mut(t).enumerate() {
                let start = (y0 + i) * s.width + x0;
                row.copy_from_slice(&src[start..start + t]);
            }
        }
    });
}

/// The f64 reference gather, written from the definition.
pub fn pack_reference<T: Element>(s: &TileShape, f: &[T], ids: &[i32]) -> Vec<f64> {
    use rayon::prelude::*;
    let t = s.tile;
    let mut p = vec![0.0; s.tiles_len()];
    // One slot per task (a one-row check has no batch rows to split).
    p.par_chunks_mut(s.tile_block())
        .enumerate()
        .for_each(|(slot, p)| {
            let id = ids[slot];
            if !s.is_valid_id(id) {
                return;
            }
            let b = slot / s.kmax;
            let (y0, x0) = s.origin(id as usize);
            for c in 0..s.channels {
                for i in 0..t {
                    for j in 0..t {
                        let src = ((b * s.channels + c) * s.height + y0 + i) * s.width + x0 + j;
                        p[(c * t + i) * t + j] = f[src].to_f64();
                    }
                }
            }
        });
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, small_shape},
    };
    use apex_plugin_api::ParamValue;

    #[test]
    fn pack_is_bit_exact_for_every_tile_size_pattern_and_precision() {
        let kernel = OpKernel::<TilePack>::default();
        for tile in [2, 8, 16, 32] {
            let grid = (64 / tile) * (64 / tile);
            for ids in ["sorted", "random", "overlap"] {
                let kmax = if ids == "overlap" { 12 } else { grid.min(12) };
                let mut o = small_shape(2, 3, 64, tile, kmax);
                o.push(("ids", ParamValue::Str(ids.into())));
                assert_cpu_checks(&kernel, &o, |_| Tolerance::EXACT);
            }
        }
    }

    #[test]
    fn empty_and_out_of_range_slots_are_written_as_zeros() {
        let shape = TileShape {
            batch: 1,
            channels: 2,
            height: 16,
            width: 16,
            tile: 8,
            kmax: 4,
        };
        let f: Vec<f32> = (0..shape.map_len()).map(|i| i as f32 + 1.0).collect();
        let ids = [-1, 4, 3, -7];
        let mut p = vec![f32::NAN; shape.tiles_len()];
        pack_cpu(&shape, &f, &ids, &mut p, true);
        let block = shape.tile_block();
        assert!(p[..block].iter().all(|&v| v == 0.0));
        assert!(p[block..2 * block].iter().all(|&v| v == 0.0));
        assert!(p[3 * block..].iter().all(|&v| v == 0.0));
        // Tile 3 of the 2x2 grid starts at (8, 8): channel 0, pixel (8, 8) is element 8*16+8.
        assert_eq!(p[2 * block], f[8 * 16 + 8]);
        assert_eq!(
            pack_reference(&shape, &f, &ids),
            p.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn runs_of_slots_span_256_bytes_and_the_grid_covers_the_last_partial_run() {
        let kernel = OpKernel::<TilePack>::default();
        // 3 slots (B=1, K=3) of 16-byte fp16 rows: runs of 16 slots, one partial run.
        let p = crate::harness::params(&kernel, &small_shape(1, 2, 32, 8, 3));
        let op = TilePack::plan(&p).unwrap();
        let tuning = op.tuning(Precision::Fp16);
        assert_eq!((tuning.run_slots, tuning.vectors_per_thread), (16, 1));
        // 16 padded slots x 2 channels x 8 rows, one vector each: 256 vectors, one block.
        assert_eq!(
            op.launch_config(Precision::Fp16, tuning).grid_dim,
            (1, 1, 1)
        );
        // A 64-byte fp32 row at t = 16: runs of 4 slots.
        let p = crate::harness::params(&kernel, &small_shape(1, 2, 64, 16, 4));
        let op = TilePack::plan(&p).unwrap();
        assert_eq!(op.tuning(Precision::Fp32).run_slots, 4);
    }

    #[test]
    fn unique_patterns_need_kmax_within_the_grid() {
        let kernel = OpKernel::<TilePack>::default();
        let p = crate::harness::params(&kernel, &small_shape(1, 1, 32, 16, 5));
        let err = TilePack::plan(&p).unwrap_err();
        assert!(err.message.contains("kmax = 5"), "{err}");
    }
}
