//! `tile_ops.tile_unpack`: scatters `P[B,K,C,t,t]` back over a copy of `base[B,C,H,W]`
//! (model B of `spec/apex-x-kernels.md` §1.3), in `override` or `blend` mode, with priority levels.
//!
//! **Key rule** (one rule, every backend): `key = ((level - min_level) << order_bits) + k` with
//! `order_bits = max(1, bit_length(K - 1))`; tiles apply in ascending key order, so on an overlap
//! the **highest key wins** (a higher level wins; within a level the later slot wins). Blend
//! computes `out = (1 - alpha) * out + alpha * P` per tile in that order. Subtracting `min_level`
//! does not change the order, so implementations compare `(level, k)`; setup rejects level counts
//! whose keys would not fit in an `i32`.
//!
//! **Slots:** an id `< 0` or `>= G` is an empty slot and is skipped. A slot's origin is its grid
//! origin, shifted by `t/2` in y and x on odd slots when `offgrid` is set; the part of a window
//! beyond the map is dropped. Origins that are negative or not multiples of the cell (`t`, or
//! `t/2` with `offgrid`) are skipped too (the generator never makes them).

use crate::cpu_par::for_each_chunk;
use apex_plugin_api::cuda::cuda_error;
use apex_plugin_api::{
    KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work, WorkUnit,
};
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{
    Element, IdPattern, TileShape,
    device::{DeviceState, ROW_VECTORS_PER_THREAD, band_grid, channels_per_block, grid_1d},
    op::{CpuScratch, CudaProgram, Inputs, TileOp},
    program::{assemble, vec_elems},
    selection::{Rng, levels, origins, uniform},
};

const SOURCE: &str = include_str!("../cuda/tile_unpack.cu");

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

    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        let s = &self.shape;
        let ids = self.ids.generate(s, &mut Rng::new(seed, 1));
        let lv = levels(s, self.levels, &mut Rng::new(seed, 2));
        let org = origins(s, &ids, self.offgrid);
        let base = uniform(s.map_len(), -2.0, 2.0, &mut Rng::new(seed, 3));
        let p = uniform(s.tiles_len(), -2.0, 2.0, &mut Rng::new(seed, 4));
        Inputs {
            data: vec![base, p],
            ints: vec![ids, lv, org],
        }
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
        let mut out: Vec<f64> = base.iter().map(|v| v.to_f64()).collect();
        let t = s.tile;
        let bits = order_bits(s.kmax);
        for b in 0..s.batch {
            let row = b * s.kmax..(b + 1) * s.kmax;
            let min_level = row
                .clone()
                .filter(|&slot| ids_valid(s, ids, slot))
                .map(|slot| lv[slot])
                .min()
                .unwrap_or(0);
            // The key, exactly as documented; the sort is stable, keys are unique within a row.
            let mut keyed: Vec<(i64, usize)> = row
                .clone()
                .filter(|&slot| self.window(ids, org, slot).is_some())
                .map(|slot| {
                    (
                        (i64::from(lv[slot] - min_level) << bits) + (slot - b * s.kmax) as i64,
                        slot,
                    )
                })
                .collect();
            keyed.sort_by_key(|&(key, _)| key);
            for (_, slot) in keyed {
                let (y0, x0, rows, cols) = self.window(ids, org, slot).expect("filtered above");
                for c in 0..s.channels {
                    for i in 0..rows {
                        for j in 0..cols {
                            let o = ((b * s.channels + c) * s.height + y0 + i) * s.width + x0 + j;
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
            }
        }
        out
    }

    fn cuda_program(&self, precision: Precision, _sm_count: usize) -> CudaProgram {
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
        let alpha = match self.mode {
            UnpackMode::Override => {
                let mut b = stream.launch_builder(&functions[0]);
                b.arg(&data[0])
                    .arg(&data[1])
                    .arg(&ints[0])
                    .arg(&ints[1])
                    .arg(&ints[2])
                    .arg(&mut outputs[0]);
                let cfg = self.override_layout(precision).launch_config(&self.shape);
                // SAFETY: arguments match `tile_unpack_override`; one block per (batch, cell
                // row, channel group), each copying every vector of its rows.
                return unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error);
            }
            UnpackMode::Blend { alpha } => alpha,
        };
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
}

/// How `tile_unpack_override` lays one cell row's vectors over its threads.
///
/// The knobs, as apex-host measured them on an H200 (B=8, C=256, 256x256, K=256, batch mode, µs
/// per call, one device call per comparison): 256-byte runs against 64/128/512 (t=8 fp16 149.0
/// against 151.4/151.3/148.6, t=16 fp16 139.0 against 141.5/141.7/145.0, t=16 fp32 273.6
/// against 284.0/282.7/276.6); forcing six or eight blocks per SM changed nothing (147.1/147.6
/// against 147.3) and evict-first accesses were slower (t=8 fp16 155.8). Vectors per thread: see
/// [`ROW_VECTORS_PER_THREAD`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverrideLayout {
    /// Cells whose row vectors sit side by side in one warp: stores in runs of [`Self::RUN_BYTES`]
    /// (t = 8 in fp16: 16 cells of 16-byte rows), a power of two dividing the cells per row.
    pub run_cells: usize,
    /// Channels per block: [`ROW_VECTORS_PER_THREAD`] vectors per thread, all loaded before any
    /// is stored; the per-block winner search (`kmax` small loads) is hidden by other blocks.
    pub channels_per_block: usize,
    /// The cell edge (`t`, or `t/2` off grid): one block per cell row.
    pub cell: usize,
}

impl OverrideLayout {
    /// The store run the cell groups aim for, in bytes.
    pub const RUN_BYTES: usize = 256;

    fn new(shape: &TileShape, cell: usize, precision: Precision) -> Self {
        let row_bytes = cell * precision.size_bytes();
        let cells_per_row = shape.width / cell;
        let fit = (Self::RUN_BYTES / row_bytes).max(1);
        let mut run_cells = 1 << fit.ilog2();
        while !cells_per_row.is_multiple_of(run_cells) {
            run_cells /= 2;
        }
        // Vectors of one channel's cell row: `cell` rows of the map's width.
        let row_vecs = cell * shape.width / vec_elems(precision, cell);
        Self {
            run_cells,
            channels_per_block: channels_per_block(row_vecs, shape.channels),
            cell,
        }
    }

    /// One block per (batch, cell row) in x and per channel group in y.
    fn launch_config(&self, shape: &TileShape) -> LaunchConfig {
        band_grid(
            shape.batch * (shape.height / self.cell),
            shape.channels,
            self.channels_per_block,
        )
    }
}

impl TileUnpack {
    /// The thread layout of the override kernel for this shape and precision.
    pub fn override_layout(&self, precision: Precision) -> OverrideLayout {
        OverrideLayout::new(&self.shape, self.cell(), precision)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, small_shape},
    };
    use apex_plugin_api::ParamValue::{self, Bool, Float, Int, Str};

    fn with(
        mut o: Vec<(&'static str, ParamValue)>,
        extra: &[(&'static str, ParamValue)],
    ) -> Vec<(&'static str, ParamValue)> {
        o.extend(extra.iter().cloned());
        o
    }

    #[test]
    fn override_is_exact_with_duplicates_levels_empty_slots_and_offgrid_origins() {
        let kernel = OpKernel::<TileUnpack>::default();
        for tile in [4, 8, 16] {
            for offgrid in [false, true] {
                let o = with(
                    small_shape(2, 3, 64, tile, 24),
                    &[
                        ("ids", Str("overlap".into())),
                        ("levels", Int(3)),
                        ("offgrid", Bool(offgrid)),
                    ],
                );
                assert_cpu_checks(&kernel, &o, |_| Tolerance::EXACT);
            }
            let o = with(
                small_shape(2, 3, 64, tile, 8),
                &[("ids", Str("sorted".into()))],
            );
            assert_cpu_checks(&kernel, &o, |_| Tolerance::EXACT);
        }
    }

    #[test]
    fn blend_is_within_tolerance_with_overlaps() {
        let kernel = OpKernel::<TileUnpack>::default();
        for offgrid in [false, true] {
            let o = with(
                small_shape(2, 3, 32, 8, 20),
                &[
                    ("ids", Str("overlap".into())),
                    ("mode", Str("blend".into())),
                    ("alpha", Float(0.3)),
                    ("offgrid", Bool(offgrid)),
                ],
            );
            assert_cpu_checks(&kernel, &o, Tolerance::default_for);
        }
    }

    fn hand_case(mode: &str, ids: Vec<i32>, levels: Vec<i32>) -> (TileUnpack, Vec<f32>) {
        let kernel = OpKernel::<TileUnpack>::default();
        let o = with(
            small_shape(1, 1, 8, 4, ids.len() as i64),
            &[
                ("ids", Str("overlap".into())),
                ("mode", Str(mode.into())),
                ("alpha", Float(0.25)),
            ],
        );
        let op = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap();
        let s = op.shape;
        let org = origins(&s, &ids, false);
        // Slot k's tile holds the value k + 2 everywhere; base is 1.
        let p: Vec<f32> = (0..s.tiles_len())
            .map(|i| (i / s.tile_block()) as f32 + 2.0)
            .collect();
        let inputs = Inputs {
            data: vec![vec![1.0f32; s.map_len()], p],
            ints: vec![ids, levels, org],
        };
        let mut out = vec![vec![f32::NAN; s.map_len()]];
        op.run_cpu(&inputs, &mut out, &mut op.cpu_scratch());
        let reference = op.reference(&inputs);
        assert_eq!(
            out[0].iter().map(|&v| f64::from(v)).collect::<Vec<_>>(),
            reference
        );
        (op, out.remove(0))
    }

    #[test]
    fn the_highest_key_wins_a_higher_level_then_the_later_slot() {
        // Slots 0..3 all name tile 0 (pixels 0..4 of rows 0..4 in the 8x8 map); slot 4 is empty.
        let (_, out) = hand_case("override", vec![0, 0, 0, -1], vec![2, 1, 2, 5]);
        // Levels 2, 1, 2: slot 2 (level 2, later than slot 0) wins and writes 2 + 2.
        assert_eq!(out[0], 4.0);
        let (_, out) = hand_case("override", vec![0, 0, 1, 99], vec![3, 0, 0, 0]);
        assert_eq!(out[0], 2.0, "level 3 beats a later level-0 slot");
        assert_eq!(out[4], 4.0, "tile 1 written by slot 2");
        assert_eq!(
            out[4 * 8 + 4],
            1.0,
            "uncovered tile 3 keeps base; id 99 is skipped"
        );
    }

    #[test]
    fn blend_applies_tiles_in_ascending_key_order() {
        // A single tile: (1 - 0.25) * 1 + 0.25 * 2 = 1.25.
        let (_, out) = hand_case("blend", vec![0], vec![0]);
        assert_eq!(out[0], 1.25);
        // Two slots on tile 0, slot 0 at the higher level, so slot 1 (value 3) blends first:
        // 0.75 * 1 + 0.25 * 3 = 1.5, then slot 0 (value 2): 0.75 * 1.5 + 0.25 * 2 = 1.625.
        let (_, out) = hand_case("blend", vec![0, 0], vec![1, 0]);
        assert_eq!(out[0], 1.625);
    }

    #[test]
    fn override_layout_runs_fit_the_row_and_cover_every_channel() {
        let shape = |width, tile, channels| TileShape {
            batch: 8,
            channels,
            height: 256,
            width,
            tile,
            kmax: 256,
        };
        // t = 8 fp16: 16-byte cell rows, 16 of them per 256-byte run; 256 vectors per channel row.
        let l = OverrideLayout::new(&shape(256, 8, 256), 8, Precision::Fp16);
        assert_eq!((l.run_cells, l.channels_per_block), (16, 2));
        // t = 16 fp32: 64-byte rows, 4 per run; 1024 vectors per channel row: one channel.
        let l = OverrideLayout::new(&shape(256, 16, 256), 16, Precision::Fp32);
        assert_eq!((l.run_cells, l.channels_per_block), (4, 1));
        // Three cells per row: the run shrinks to a divisor; one channel caps the group.
        let l = OverrideLayout::new(&shape(24, 8, 1), 8, Precision::Fp16);
        assert_eq!((l.run_cells, l.channels_per_block), (1, 1));
        let cfg = l.launch_config(&shape(24, 8, 1));
        assert_eq!(cfg.grid_dim, (8 * 256 / 8, 1, 1));
    }

    #[test]
    fn order_bits_match_the_python_reference() {
        assert_eq!(order_bits(1), 1);
        assert_eq!(order_bits(2), 1);
        assert_eq!(order_bits(32), 5);
        assert_eq!(order_bits(33), 6);
    }

    #[test]
    fn keys_that_overflow_i32_are_rejected() {
        let kernel = OpKernel::<TileUnpack>::default();
        let o = with(small_shape(1, 1, 64, 8, 64), &[("levels", Int(1 << 26))]);
        let err = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap_err();
        assert!(err.message.contains("i32"), "{err}");
    }

    #[test]
    fn declared_bytes_follow_the_actual_selection() {
        let kernel = OpKernel::<TileUnpack>::default();
        // 64x64 at t = 16 is a 4x4 grid; 16 sorted unique ids cover every pixel: base is never read.
        let o = small_shape(1, 2, 64, 16, 16);
        let op = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap();
        let s = op.shape;
        let inputs = op.generate::<f32>(1);
        let w = op.work(&inputs);
        assert_eq!(w.bytes_read, (s.map_len() * 4 + 16 * s.slots()) as u64);
        assert_eq!(w.bytes_written, (s.map_len() * 4) as u64);
        // Half the slots empty: their pixels come from base, still one read per output element.
        let mut half = inputs.clone();
        half.ints[0][..8].fill(-1);
        let w = op.work(&half);
        assert_eq!(w.bytes_read, (s.map_len() * 4 + 16 * s.slots()) as u64);
        assert_eq!(w.items, 8.0);
        // Blend reads base everywhere plus every window.
        let b = with(o, &[("mode", Str("blend".into()))]);
        let op = TileUnpack::plan(&crate::harness::params(&kernel, &b)).unwrap();
        let w = op.work(&half);
        assert_eq!(
            w.bytes_read,
            ((s.map_len() * 3 / 2) * 4 + 16 * s.slots()) as u64
        );
    }
}
