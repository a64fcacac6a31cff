//! `tile_ops.fused_stage`: pack → pointwise op → unpack in one pass (`spec/apex-x-kernels.md`
//! §1.6): pixels inside selected tiles become `(vs*x + vb) * max(gs*x + gb, 0)`, all others keep
//! `F`. The op reads `F`, so duplicated ids are harmless (the same value is written twice) and the
//! original's unique-id requirement is not needed; empty slots (`-1`, `>= G`) are skipped.

use crate::cpu_par::for_each_chunk;
use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    KernelDescriptor, ParamSpec, Params, PluginError, Precision, Work, WorkUnit,
};
use cudarc::driver::PushKernelArg;

use crate::{
    Element, IdPattern, TileShape,
    device::{DeviceState, ROW_VECTORS_PER_THREAD, band_grid, channels_per_block},
    device_check::{f, grid, upload_slot_origins},
    op::{CpuScratch, CudaProgram, DataSpec, Inputs, TileOp, tiled_map_specs},
    program::{assemble, vec_elems},
};

const SOURCE: &str = include_str!("../cuda/fused_stage.cu");

/// A validated fused-stage case.
#[derive(Debug, Clone)]
pub struct FusedStage {
    pub shape: TileShape,
    pub ids: IdPattern,
    /// `value_scale, value_bias, gate_scale, gate_bias`.
    pub coef: [f32; 4],
}

impl TileOp for FusedStage {
    fn descriptor() -> KernelDescriptor {
        let d = crate::op::base_descriptor(
            "tile_ops.fused_stage",
            "out = F except inside selected tiles, where x -> (vs*x + vb) * relu(gs*x + gb); one pass",
        );
        // Defaults are the PyTorch anchor's op, so both time the same arithmetic.
        d.param(ParamSpec::str(IdPattern::PARAM, "sorted", IdPattern::HELP))
            .param(ParamSpec::float("value_scale", 1.1, "vs"))
            .param(ParamSpec::float("value_bias", 0.1, "vb"))
            .param(ParamSpec::float("gate_scale", 0.9, "gs"))
            .param(ParamSpec::float("gate_bias", -0.05, "gb"))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let shape = TileShape::from_params(params)?;
        let ids = IdPattern::parse(params.str(IdPattern::PARAM)?)?;
        ids.check(&shape)?;
        let mut coef = [0.0f32; 4];
        for (c, name) in
            coef.iter_mut()
                .zip(["value_scale", "value_bias", "gate_scale", "gate_bias"])
        {
            let v = params.float(name)?;
            if !v.is_finite() {
                return Err(PluginError::invalid(format!(
                    "{name} = {v} is not finite (hint: use a finite number)"
                )));
            }
            *c = v as f32;
        }
        Ok(Self { shape, ids, coef })
    }

    fn work<T: Element>(&self, inputs: &Inputs<T>) -> Work {
        let s = &self.shape;
        let es = std::mem::size_of::<T>() as u64;
        let ids = &inputs.ints[0];
        // Distinct valid tiles per batch row: duplicates write the same pixels, empty slots nothing.
        let mut tiles = 0usize;
        let mut seen = vec![false; s.grid()];
        for row in ids.chunks(s.kmax) {
            seen.fill(false);
            for &id in row.iter().filter(|&&id| s.is_valid_id(id)) {
                tiles += usize::from(!std::mem::replace(&mut seen[id as usize], true));
            }
        }
        let valid = ids.iter().filter(|&&id| s.is_valid_id(id)).count();
        Work {
            // Every output pixel is F or op(F): the whole map is read and written once.
            bytes_read: s.map_len() as u64 * es + 4 * s.slots() as u64,
            bytes_written: s.map_len() as u64 * es,
            // 6 per transformed element (two FMAs, a max, a multiply).
            flops: 6.0 * (tiles * s.tile_block()) as f64,
            items: valid as f64,
            unit: WorkUnit::Tiles,
        }
    }

    fn output_lens(&self) -> Vec<usize> {
        vec![self.shape.map_len()]
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
        scratch: &mut CpuScratch,
    ) {
        let s = &self.shape;
        let (f, ids) = (&inputs.data[0], &inputs.ints[0]);
        let [vs, vb, gs, gb] = self.coef;
        let (t, hw) = (s.tile, s.height * s.width);
        for_each_chunk(&mut outputs[0], hw, scratch.parallel, |plane, out| {
            let b = plane / s.channels;
            let src = &f[plane * hw..][..hw];
            out.copy_from_slice(src);
            let mut x = [0.0f32; 64];
            for &id in &ids[b * s.kmax..(b + 1) * s.kmax] {
                if !s.is_valid_id(id) {
                    continue;
                }
                let (y0, x0) = s.origin(id as usize);
                for i in 0..t {
                    let at = (y0 + i) * s.width + x0;
                    T::load(&src[at..at + t], &mut x);
                    for v in &mut x[..t] {
                        *v = (vs * *v + vb) * (gs * *v + gb).max(0.0);
                    }
                    T::store(&x[..t], &mut out[at..at + t]);
                }
            }
        });
    }

    fn reference<T: Element>(&self, inputs: &Inputs<T>) -> Vec<f64> {
        let s = &self.shape;
        let (f, ids) = (&inputs.data[0], &inputs.ints[0]);
        let [vs, vb, gs, gb] = self.coef.map(f64::from);
        use rayon::prelude::*;
        let hw = s.height * s.width;
        let mut out = vec![0.0f64; f.len()];
        // One (batch row, channel) plane per task.
        out.par_chunks_mut(hw).enumerate().for_each(|(plane, out)| {
            let b = plane / s.channels;
            let f = &f[plane * hw..(plane + 1) * hw];
            for (o, v) in out.iter_mut().zip(f) {
                *o = v.to_f64();
            }
            for &id in &ids[b * s.kmax..(b + 1) * s.kmax] {
                if !s.is_valid_id(id) {
                    continue;
                }
                let (y0, x0) = s.origin(id as usize);
                for i in 0..s.tile {
                    for j in 0..s.tile {
                        let o = (y0 + i) * s.width + x0 + j;
                        let x = f[o].to_f64();
                        out[o] = (vs * x + vb) * (gs * x + gb).max(0.0);
                    }
                }
            }
        });
        out
    }

    fn cuda_program(&self, precision: Precision) -> CudaProgram {
        let s = &self.shape;
        let defines = [
            ("BATCH", s.batch),
            ("CH", s.channels),
            ("HEIGHT", s.height),
            ("WIDTH", s.width),
            ("TILE", s.tile),
            ("KMAX", s.kmax),
            ("VEC", vec_elems(precision, s.tile)),
            ("CPB", self.channels_per_block(precision)),
            ("UNROLL", ROW_VECTORS_PER_THREAD),
        ];
        CudaProgram {
            name: "fused_stage",
            source: assemble(precision, &defines, SOURCE),
            functions: &["fused_stage"],
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
        let [vs, vb, gs, gb] = self.coef;
        let mut b = session.stream.launch_builder(&functions[0]);
        b.arg(&data[0])
            .arg(&ints[0])
            .arg(&mut outputs[0])
            .arg(&vs)
            .arg(&vb)
            .arg(&gs)
            .arg(&gb);
        let s = &self.shape;
        let cfg = band_grid(
            s.batch * s.grid_h(),
            s.channels,
            self.channels_per_block(precision),
        );
        // SAFETY: arguments match `fused_stage`; one block per (batch, tile row, channel group),
        // each writing every vector of its band.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }

    /// F widened into the reference, then the selected tiles transformed over it.
    fn launch_reference(
        &self,
        ints: &[Vec<i32>],
        device: &mut DeviceState,
    ) -> Result<(), PluginError> {
        let s = &self.shape;
        let stream = device.stream().clone();
        let origins = upload_slot_origins(&stream, s, &ints[0])?;
        let (n, slots, [kmax, ch, h, w, t]) = (s.map_len() as u64, s.slots() as u64, s.dims_u32());
        let [vs, vb, gs, gb] = self.coef.map(f64::from);
        let DeviceState { data, check, .. } = device;
        let (functions, reference) = check.launch_parts()?;
        let mut widen = stream.launch_builder(&functions[f::REF_WIDEN]);
        widen.arg(&data[0]).arg(&mut *reference).arg(&n);
        // SAFETY: arguments match `ref_widen`; the reference holds the map's values.
        unsafe { widen.launch(grid(s.map_len())) }.map_err(cuda_error)?;
        let mut b = stream.launch_builder(&functions[f::REF_FUSED_TILES]);
        b.arg(&data[0]).arg(&origins).arg(reference).arg(&slots);
        b.arg(&kmax).arg(&ch).arg(&h).arg(&w).arg(&t);
        b.arg(&vs).arg(&vb).arg(&gs).arg(&gb);
        // SAFETY: arguments match `ref_fused_tiles`; every tile element lies inside the map.
        unsafe { b.launch(grid(s.tiles_len())) }
            .map(drop)
            .map_err(cuda_error)
    }
}

impl FusedStage {
    /// Channels per block: a band is `t` map rows of one channel.
    fn channels_per_block(&self, precision: Precision) -> usize {
        let s = &self.shape;
        channels_per_block(s.tile * s.width / vec_elems(precision, s.tile), s.channels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, small_shape},
    };
    use apex_plugin_api::{ParamValue::Str, Tolerance};

    #[test]
    fn fused_stage_matches_the_reference_with_unique_and_overlapping_ids() {
        let kernel = OpKernel::<FusedStage>::default();
        for tile in [4, 8, 16, 32] {
            for ids in ["sorted", "overlap"] {
                let grid = (64 / tile) * (64 / tile);
                let kmax = if ids == "overlap" { 12 } else { grid.min(12) };
                let mut o = small_shape(2, 3, 64, tile, kmax);
                o.push(("ids", Str(ids.into())));
                assert_cpu_checks(&kernel, &o, Tolerance::default_for);
            }
        }
    }
}
