//! [`TileUnpack`]: the validated case, its key rule and slot policy on every backend (module docs
//! of [`super`]), the f64 reference, the CPU path and the CUDA launches.

use crate::cpu_par::for_each_chunk;
use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work, WorkUnit,
};
use cudarc::driver::PushKernelArg;

use super::OverrideLayout;

use crate::{
    Element, IdPattern, TileShape,
    device::{DeviceState, ROW_VECTORS_PER_THREAD, grid_1d},
    device_check::{f, grid},
    op::{CpuScratch, CudaProgram, DataSpec, Inputs, TileOp, map_spec},
    program::{assemble, vec_elems},
    selection::{Rng, levels, origins},
};

const SOURCE: &str = include_str!("../../cuda/tile_unpack.cu");

/// How an incoming tile combines with what is already in the output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnpackMode {
    Override,
    Blend { alpha: f32 },
}

/// A validated TileUnpack case.
#[derive(Debug, Clone)]
pub struct TileUnpack {
    pub shape: TileShape,
    pub ids: IdPattern,
    pub mode: UnpackMode,
    pub levels: usize,
    pub offgrid: bool,
}

impl TileOp for TileUnpack {
    fn descriptor() -> KernelDescriptor {
        let d = crate::op::base_descriptor(
            "tile_ops.tile_unpack",
            "scatter P[B,K,C,t,t] over a copy of base[B,C,H,W]; overlaps: key (level-min)<<bits + k, highest wins (override) or blended in key order",
        );
        d.param(ParamSpec::str(IdPattern::PARAM, "sorted", IdPattern::HELP))
            .param(ParamSpec::str("mode", "override", "override (the winner's value) or blend ((1-alpha)*out + alpha*P per tile, in key order)"))
            .param(ParamSpec::float("alpha", 0.5, "blend weight in [0, 1] (mode = blend)"))
            .param(ParamSpec::int("levels", 3, "priority levels: each slot's level is drawn from 0..levels"))
            .param(ParamSpec::bool("offgrid", false, "shift odd slots by t/2 in y and x (overlapping, off-grid origins)"))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let shape = TileShape::from_params(params)?;
        let ids = IdPattern::parse(params.str(IdPattern::PARAM)?)?;
        ids.check(&shape)?;
        let alpha = params.float("alpha")?;
        let mode = match params.str("mode")? {
            "override" => UnpackMode::Override,
            "blend" if (0.0..=1.0).contains(&alpha) => UnpackMode::Blend {
                alpha: alpha as f32,
            },
            "blend" => {
                return Err(PluginError::invalid(format!(
                    "alpha = {alpha} is outside [0, 1] (hint: set alpha between 0 and 1)"
                )));
            }
            other => {
                return Err(PluginError::invalid(format!(
                    "mode = `{other}` is unknown (hint: use override or blend)"
                )));
            }
        };
        let levels = params.usize("levels")?;
        let order_bits = order_bits(shape.kmax);
        let max_key = ((levels.max(1) - 1) << order_bits) + shape.kmax - 1;
        if levels == 0 || order_bits >= 31 || max_key > i32::MAX as usize {
            return Err(PluginError::invalid(format!(
                "levels = {levels} with kmax = {} gives keys beyond i32 (hint: use 1 <= levels <= {})",
                shape.kmax,
                ((i32::MAX as usize - shape.kmax + 1) >> order_bits) + 1
            )));
        }
        Ok(Self {
            shape,
            ids,
            mode,
            levels,
            offgrid: params.bool("offgrid")?,
        })
    }

    fn work<T: Element>(&self, inputs: &Inputs<T>) -> Work {
        let s = &self.shape;
        let es = std::mem::size_of::<T>() as u64;
        let (ids, org) = (&inputs.ints[0], &inputs.ints[2]);
        // Pixels (per channel) that some active window covers, and the summed window areas.
        let (mut covered, mut area, mut active) = (0usize, 0usize, 0usize);
        let mut cover = vec![false; s.height * s.width];
        for b in 0..s.batch {
            cover.fill(false);
            for slot in b * s.kmax..(b + 1) * s.kmax {
                let Some((y0, x0, rows, cols)) = self.window(ids, org, slot) else {
                    continue;
                };
                active += 1;
                area += rows * cols;
                for y in y0..y0 + rows {
                    for c in &mut cover[y * s.width + x0..][..cols] {
                        covered += usize::from(!std::mem::replace(c, true));
                    }
                }
            }
        }
        let ch = s.channels;
        // Override reads base only where no window lands and one tile value (the winner's)
        // where one does; blend reads base everywhere and every window's tile data.
        let (map_read, tile_read, flops) = match self.mode {
            UnpackMode::Override => (s.pixels() - covered, covered, 0.0),
            UnpackMode::Blend { .. } => (s.pixels(), area, 3.0 * (area * ch) as f64),
        };
        Work {
            bytes_read: ((map_read + tile_read) * ch) as u64 * es + 16 * s.slots() as u64,
            bytes_written: s.map_len() as u64 * es,
            flops,
            items: active as f64,
            unit: WorkUnit::Tiles,
        }
    }

    fn output_lens(&self) -> Vec<usize> {
        vec![self.shape.map_len()]
    }

    crate::batch_rows_of_shape!();

    fn data_specs(&self) -> Vec<DataSpec> {
        vec![
            map_spec(self.shape.map_len(), 3),
            map_spec(self.shape.tiles_len(), 4),
        ]
    }

    fn generate_host<T: Element>(&self, seed: u64, inputs: &mut Inputs<T>) {
        let s = &self.shape;
        let ids = self.ids.generate(s, &mut Rng::new(seed, 1));
        let lv = levels(s, self.levels, &mut Rng::new(seed, 2));
        let org = origins(s, &ids, self.offgrid);
        inputs.shape_for(2, 3);
        inputs.ints = vec![ids, lv, org];
    }

    fn cpu_scratch(&self) -> CpuScratch {
        CpuScratch {
            order: Vec::with_capacity(self.shape.slots()),
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
        let (base, p) = (&inputs.data[0], &inputs.data[1]);
        let (ids, lv, org) = (&inputs.ints[0], &inputs.ints[1], &inputs.ints[2]);
        let order = &mut scratch.order;
        order.clear();
        order.extend(
            (0..s.slots() as u32).filter(|&slot| self.window(ids, org, slot as usize).is_some()),
        );
        order.sort_unstable_by_key(|&slot| (slot as usize / s.kmax, lv[slot as usize], slot));
        let order = &order[..];
        let (t, hw) = (s.tile, s.height * s.width);
        let parallel = scratch.parallel;
        for_each_chunk(&mut outputs[0], hw, parallel, |plane, out| {
            let (b, c) = (plane / s.channels, plane % s.channels);
            out.copy_from_slice(&base[plane * hw..][..hw]);
            let lo = order.partition_point(|&slot| (slot as usize) < b * s.kmax);
            let hi = order.partition_point(|&slot| (slot as usize) < (b + 1) * s.kmax);
            let mut acc = [0.0f32; 64];
            let mut inc = [0.0f32; 64];
            for &slot in &order[lo..hi] {
                let slot = slot as usize;
                let Some((y0, x0, rows, cols)) = self.window(ids, org, slot) else {
                    continue;
                };
                let tile = &p[(slot * s.channels + c) * t * t..][..t * t];
                for i in 0..rows {
                    let dst = &mut out[(y0 + i) * s.width + x0..][..cols];
                    let src = &tile[i * t..][..cols];
                    match self.mode {
                        UnpackMode::Override => dst.copy_from_slice(src),
                        UnpackMode::Blend { alpha } => {
                            T::load(dst, &mut acc);
                            T::load(src, &mut inc);
                            for (a, &x) in acc[..cols].iter_mut().zip(&inc[..cols]) {
                                *a += alpha * (x - *a);
                            }
                            T::store(&acc[..cols], dst);
                        }
                    }
                }
            }
        });
    }

    fn reference<T: Element>(&self, inputs: &Inputs<T>) -> Vec<f64> {
        let s = &self.shape;
        let (base, p) = (&inputs.data[0], &inputs.data[1]);
        let (ids, lv, org) = (&inputs.ints[0], &inputs.ints[1], &inputs.ints[2]);
        use rayon::prelude::*;
        let t = s.tile;
        let hw = s.height * s.width;
        let orders: Vec<Vec<usize>> = (0..s.batch)
            .map(|b| self.row_order(ids, lv, org, b))
            .collect();
        let mut out = vec![0.0f64; base.len()];
        // One (batch row, channel) plane per task: a slot writes its own row's planes only.
        out.par_chunks_mut(hw).enumerate().for_each(|(plane, out)| {
            let (b, c) = (plane / s.channels, plane % s.channels);
            for (o, v) in out.iter_mut().zip(&base[plane * hw..(plane + 1) * hw]) {
                *o = v.to_f64();
            }
            for &slot in &orders[b] {
                let (y0, x0, rows, cols) = self
                    .window(ids, org, slot)
                    .expect("ordered slots have windows");
                for i in 0..rows {
                    for j in 0..cols {
                        let o = (y0 + i) * s.width + x0 + j;
                        let x = p[((slot * s.channels + c) * t + i) * t + j].to_f64();
                        out[o] = match self.mode {
                            UnpackMode::Override => x,
                            UnpackMode::Blend { alpha } => {
                                let a = f64::from(alpha);
                                (1.0 - a) * out[o] + a * x
                            }
                        };
                    }
                }
            }
        });
        out
    }

    fn cuda_program(&self, precision: Precision) -> CudaProgram {
        let s = &self.shape;
        let cell = self.cell();
        let layout = self.override_layout(precision);
        let defines = [
            ("BATCH", s.batch),
            ("CH", s.channels),
            ("HEIGHT", s.height),
            ("WIDTH", s.width),
            ("TILE", s.tile),
            ("KMAX", s.kmax),
            ("CELL", cell),
            ("VEC", vec_elems(precision, cell)),
            ("RUN_CELLS", layout.run_cells),
            ("CPB", layout.channels_per_block),
            ("UNROLL", ROW_VECTORS_PER_THREAD),
        ];
        let span = s.tile / cell;
        // Only blend keeps per-cell lists on the device.
        let scratch_i32 = match self.mode {
            UnpackMode::Override => vec![],
            UnpackMode::Blend { .. } => vec![
                s.batch * (s.height / cell) * (s.width / cell),
                s.slots() * span * span,
            ],
        };
        CudaProgram {
            name: "tile_unpack",
            source: assemble(precision, &defines, SOURCE),
            functions: &[
                "tile_unpack_override",
                "tile_unpack_link",
                "tile_unpack_blend",
            ],
            scratch_i32,
        }
    }

    fn launch(&self, precision: Precision, device: &mut DeviceState) -> Result<(), PluginError> {
        match self.mode {
            UnpackMode::Override => self.launch_override(precision, device),
            UnpackMode::Blend { alpha } => self.launch_blend(precision, device, alpha),
        }
    }

    /// Base widened into the reference, then one launch per rank of the key order, every batch
    /// row's window of that rank in the same launch.
    fn launch_reference(
        &self,
        ints: &[Vec<i32>],
        device: &mut DeviceState,
    ) -> Result<(), PluginError> {
        let s = &self.shape;
        let stream = device.stream().clone();
        let (ranks, table) = self.rank_windows(ints);
        let windows = stream.clone_htod(&table).map_err(cuda_error)?;
        let n = s.map_len() as u64;
        let [_, ch, h, w, t] = s.dims_u32();
        let batch = s.batch as u32;
        let (alpha, blend) = match self.mode {
            UnpackMode::Override => (0.0f64, 0i32),
            UnpackMode::Blend { alpha } => (f64::from(alpha), 1),
        };
        let DeviceState { data, check, .. } = device;
        let (functions, reference) = check.launch_parts()?;
        let mut widen = stream.launch_builder(&functions[f::REF_WIDEN]);
        widen.arg(&data[0]).arg(&mut *reference).arg(&n);
        // SAFETY: arguments match `ref_widen`; the reference holds the map's values.
        unsafe { widen.launch(grid(s.map_len())) }.map_err(cuda_error)?;
        for r in 0..ranks {
            let rank = windows.slice(r * s.batch * 5..(r + 1) * s.batch * 5);
            let mut b = stream.launch_builder(&functions[f::REF_UNPACK_RANK]);
            b.arg(&data[1]).arg(&rank).arg(&mut *reference);
            b.arg(&batch)
                .arg(&ch)
                .arg(&h)
                .arg(&w)
                .arg(&t)
                .arg(&alpha)
                .arg(&blend);
            // SAFETY: arguments match `ref_unpack_rank`; every window lies inside the map.
            unsafe { b.launch(grid(s.batch * s.tile_block())) }.map_err(cuda_error)?;
        }
        Ok(())
    }
}

impl TileUnpack {
    /// `tile_unpack_override` (function 0): one launch.
    fn launch_override(
        &self,
        precision: Precision,
        device: &mut DeviceState,
    ) -> Result<(), PluginError> {
        let DeviceState {
            session,
            functions,
            data,
            ints,
            outputs,
            ..
        } = device;
        let mut b = session.stream.launch_builder(&functions[0]);
        b.arg(&data[0])
            .arg(&data[1])
            .arg(&ints[0])
            .arg(&ints[1])
            .arg(&ints[2])
            .arg(&mut outputs[0]);
        let cfg = self.override_layout(precision).launch_config(&self.shape);
        // SAFETY: arguments match `tile_unpack_override`; one block per (batch, cell row,
        // channel group), each copying every vector of its rows.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }

    /// A memset of the list heads, `tile_unpack_link` (function 1), `tile_unpack_blend` (2).
    fn launch_blend(
        &self,
        precision: Precision,
        device: &mut DeviceState,
        alpha: f32,
    ) -> Result<(), PluginError> {
        let DeviceState {
            session,
            functions,
            data,
            ints,
            outputs,
            scratch,
            ..
        } = device;
        let stream = &session.stream;
        let span = self.shape.tile / self.cell();
        let (head, next) = scratch.split_at_mut(1);
        stream.memset_zeros(&mut head[0]).map_err(cuda_error)?;
        let mut link = stream.launch_builder(&functions[1]);
        link.arg(&ints[0])
            .arg(&ints[2])
            .arg(&mut head[0])
            .arg(&mut next[0]);
        // SAFETY: arguments match `tile_unpack_link`; one thread per (slot, cell) pair.
        unsafe { link.launch(grid_1d(self.shape.slots() * span * span)) }.map_err(cuda_error)?;
        let mut map = stream.launch_builder(&functions[2]);
        map.arg(&data[0])
            .arg(&data[1])
            .arg(&ints[1])
            .arg(&ints[2])
            .arg(&head[0])
            .arg(&next[0]);
        map.arg(&mut outputs[0]).arg(&alpha);
        let vectors = self.shape.map_len() / vec_elems(precision, self.cell());
        // SAFETY: arguments match `tile_unpack_blend`; one thread per output vector.
        unsafe { map.launch(grid_1d(vectors)) }
            .map(drop)
            .map_err(cuda_error)
    }

    /// The thread layout of the override kernel for this shape and precision.
    pub fn override_layout(&self, precision: Precision) -> OverrideLayout {
        OverrideLayout::new(&self.shape, self.cell(), precision)
    }

    /// The active slots of batch row `b` in key order, lowest first (the last one written wins):
    /// the key `(level - min_level) << order_bits + k` exactly as documented, the sort stable,
    /// keys unique within a row. The CPU reference and the device reference's rank table both
    /// follow it.
    fn row_order(&self, ids: &[i32], lv: &[i32], org: &[i32], b: usize) -> Vec<usize> {
        let s = &self.shape;
        let bits = order_bits(s.kmax);
        let row = b * s.kmax..(b + 1) * s.kmax;
        let min_level = row
            .clone()
            .filter(|&slot| ids_valid(s, ids, slot))
            .map(|slot| lv[slot])
            .min()
            .unwrap_or(0);
        let mut keyed: Vec<(i64, usize)> = row
            .filter(|&slot| self.window(ids, org, slot).is_some())
            .map(|slot| {
                (
                    (i64::from(lv[slot] - min_level) << bits) + (slot - b * s.kmax) as i64,
                    slot,
                )
            })
            .collect();
        keyed.sort_by_key(|&(key, _)| key);
        keyed.into_iter().map(|(_, slot)| slot).collect()
    }

    /// The window table of `ref_unpack_rank`: for each rank r (of the longest row's), for each
    /// batch row b, `(slot, y0, x0, rows, cols)` of row b's r-th window in key order, or a slot
    /// of -1 where row b has fewer.
    fn rank_windows(&self, ints: &[Vec<i32>]) -> (usize, Vec<i32>) {
        let (ids, lv, org) = (&ints[0], &ints[1], &ints[2]);
        let b_count = self.shape.batch;
        let orders: Vec<Vec<usize>> = (0..b_count)
            .map(|b| self.row_order(ids, lv, org, b))
            .collect();
        let ranks = orders.iter().map(Vec::len).max().unwrap_or(0);
        let mut table = vec![-1i32; ranks * b_count * 5];
        for (b, order) in orders.iter().enumerate() {
            for (r, &slot) in order.iter().enumerate() {
                let (y0, x0, rows, cols) = self
                    .window(ids, org, slot)
                    .expect("ordered slots have windows");
                let at = (r * b_count + b) * 5;
                table[at..at + 5].copy_from_slice(&[slot, y0, x0, rows, cols].map(|v| v as i32));
            }
        }
        (ranks, table)
    }

    /// The granularity of origins: `t`, or `t/2` when odd slots are shifted by half a tile.
    fn cell(&self) -> usize {
        if self.offgrid {
            self.shape.tile / 2
        } else {
            self.shape.tile
        }
    }

    /// The clipped window `(y0, x0, rows, cols)` of an active slot; `None` for an empty slot.
    fn window(
        &self,
        ids: &[i32],
        org: &[i32],
        slot: usize,
    ) -> Option<(usize, usize, usize, usize)> {
        let s = &self.shape;
        if !ids_valid(s, ids, slot) {
            return None;
        }
        let (oy, ox) = (org[2 * slot], org[2 * slot + 1]);
        let cell = self.cell() as i32;
        if oy < 0 || ox < 0 || oy % cell != 0 || ox % cell != 0 {
            return None;
        }
        let (y0, x0) = (oy as usize, ox as usize);
        if y0 >= s.height || x0 >= s.width {
            return None;
        }
        Some((y0, x0, s.tile.min(s.height - y0), s.tile.min(s.width - x0)))
    }
}

fn ids_valid(s: &TileShape, ids: &[i32], slot: usize) -> bool {
    s.is_valid_id(ids[slot])
}

/// `max(1, bit_length(K - 1))`, as in the original's Python reference (5 for K = 32).
pub fn order_bits(kmax: usize) -> u32 {
    let bit_length = usize::BITS - (kmax.saturating_sub(1)).leading_zeros();
    bit_length.max(1)
}

/// Overlap-free unpack is a copy: exact. Blend rounds once per tile on the CPU: default tolerance.
pub fn tolerance(mode: UnpackMode, precision: Precision) -> Tolerance {
    match mode {
        UnpackMode::Override => Tolerance::EXACT,
        UnpackMode::Blend { .. } => Tolerance::default_for(precision),
    }
}
