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
    device::{BLOCK, DeviceState, grid_1d},
    op::{CudaProgram, Inputs, TileOp},
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

    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        Inputs::map_and_ids(&self.shape, &self.ids, seed)
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

    fn cuda_program(&self, precision: Precision, _sm_count: usize) -> CudaProgram {
        CudaProgram {
            name: "tile_pack",
            source: self.source(precision, self.tuning(precision)),
            functions: &["tile_pack", "tile_pack_rows"],
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
        let rows = self.uses_rows(precision, tuning);
        let mut b = session.stream.launch_builder(&functions[usize::from(rows)]);
        b.arg(&data[0]).arg(&ints[0]).arg(&mut outputs[0]);
        let cfg = self.launch_config(precision, tuning);
        // SAFETY: both kernels take (f, ids, p) and `launch_config` covers every vector of P.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }
}

/// The CUDA knobs of `tile_pack.cu`: vectors per thread (`NV`), the cache policy (`HINT`, see
/// `common.cuh`) and whether rows of one vector use the slot-major `tile_pack_rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackTuning {
    pub vectors_per_thread: usize,
    pub hint: usize,
    pub slot_major: bool,
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
        ];
        assemble(precision, &defines, SOURCE)
    }

    /// The knobs for this shape, as apex-host measured them on an H200 (B=8, C=256, 256x256,
    /// batch mode, µs per call): two plain vectors per thread from t=16 (t=16 fp16 151.4 against
    /// 164.4 with one, t=32 140.8 against 146.7, t=16 fp32 287.6 against 302.0), one below (t=8:
    /// 70.7 against 72.7 fp16, 100.7 against 106.9 fp32). Four vectors, evict-first accesses and
    /// `tile_pack_rows` were slower everywhere.
    pub fn tuning(&self, _precision: Precision) -> PackTuning {
        PackTuning {
            vectors_per_thread: if self.shape.tile >= 16 { 2 } else { 1 },
            hint: 0,
            slot_major: false,
        }
    }

    /// Whether `tuning` launches `tile_pack_rows` (function 1) rather than `tile_pack`.
    pub fn uses_rows(&self, precision: Precision, tuning: PackTuning) -> bool {
        tuning.slot_major && vec_elems(precision, self.shape.tile) == self.shape.tile
    }

    /// `tile_pack`: one block per `256 * NV` vectors of `P`. `tile_pack_rows` (rows of one
    /// vector only): one block per channel of `256 / t` slots.
    pub fn launch_config(&self, precision: Precision, tuning: PackTuning) -> LaunchConfig {
        let s = &self.shape;
        let vec = vec_elems(precision, s.tile);
        if self.uses_rows(precision, tuning) {
            let groups = s.slots().div_ceil(BLOCK as usize / s.tile);
            return LaunchConfig {
                grid_dim: ((groups * s.channels) as u32, 1, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
        }
        grid_1d((s.tiles_len() / vec).div_ceil(tuning.vectors_per_thread))
    }
}

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
    let t = s.tile;
    let mut p = vec![0.0; s.tiles_len()];
    for b in 0..s.batch {
        for k in 0..s.kmax {
            let id = ids[b * s.kmax + k];
            if !s.is_valid_id(id) {
                continue;
            }
            let (y0, x0) = s.origin(id as usize);
            for c in 0..s.channels {
                for i in 0..t {
                    for j in 0..t {
                        let src = ((b * s.channels + c) * s.height + y0 + i) * s.width + x0 + j;
                        p[(((b * s.kmax + k) * s.channels + c) * t + i) * t + j] = f[src].to_f64();
                    }
                }
            }
        }
    }
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
    fn unique_patterns_need_kmax_within_the_grid() {
        let kernel = OpKernel::<TilePack>::default();
        let p = crate::harness::params(&kernel, &small_shape(1, 1, 32, 16, 5));
        let err = TilePack::plan(&p).unwrap_err();
        assert!(err.message.contains("kmax = 5"), "{err}");
    }
}
