//! Deterministic inputs: the seeded random stream, the tile-id selection patterns
//! ([`IdPattern`]), priority levels, and (for TileUnpack) off-grid origins.
//!
//! The patterns exist because the original benchmark fed only unique, sorted ids, so its overlap
//! logic never ran (`spec/apex-x-kernels.md` §6.2 item 9). `overlap` mixes every hard case.

use apex_plugin_api::PluginError;

use crate::TileShape;

/// The seeded stream (SplitMix64) every input is drawn from: the shared one of
/// `apex-tile-math`, so the plugins that share inputs draw the same values from a seed.
pub use apex_tile_math::rng::Rng;
use apex_tile_math::rng::unit_of;

/// How the `K` slots of each batch row are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdPattern {
    /// `K` distinct ids, sorted ascending: what the original benchmark used (no overlap at all).
    Sorted,
    /// `K` distinct ids in random order.
    Random,
    /// Duplicated ids, `-1` empty slots and out-of-range ids, in random order. Any `K` works.
    Overlap,
}

impl IdPattern {
    pub const PARAM: &'static str = "ids";
    pub const HELP: &'static str = "tile-id selection: sorted (unique, ascending; the original's), random (unique, shuffled) or overlap (duplicates, -1 and out-of-range slots)";

    pub fn parse(s: &str) -> Result<Self, PluginError> {
        match s {
            "sorted" => Ok(Self::Sorted),
            "random" => Ok(Self::Random),
            "overlap" => Ok(Self::Overlap),
            other => Err(PluginError::invalid(format!(
                "ids = `{other}` is not a selection pattern (hint: use sorted, random or overlap)"
            ))),
        }
    }

    /// Rejects unique patterns that cannot fill `K` distinct slots.
    pub fn check(self, shape: &TileShape) -> Result<(), PluginError> {
        if self != Self::Overlap && shape.kmax > shape.grid() {
            return Err(PluginError::invalid(format!(
                "kmax = {} exceeds the {} tiles of the {}x{} grid, so ids = {self:?} cannot be unique \
                 (hint: set kmax <= {} or ids = overlap)",
                shape.kmax,
                shape.grid(),
                shape.grid_h(),
                shape.grid_w(),
                shape.grid()
            )));
        }
        Ok(())
    }

    /// `ids[B*K]`, one row per batch entry.
    pub fn generate(self, shape: &TileShape, rng: &mut Rng) -> Vec<i32> {
        let (g, k) = (shape.grid(), shape.kmax);
        let mut ids = Vec::with_capacity(shape.slots());
        let mut pool: Vec<i32> = (0..g as i32).collect();
        for _ in 0..shape.batch {
            match self {
                Self::Sorted | Self::Random => {
                    // Partial Fisher-Yates: the first k of the pool become a uniform k-subset.
                    for i in 0..k {
                        let j = i + rng.below(g - i);
                        pool.swap(i, j);
                    }
                    let row = &mut pool[..k];
                    if self == Self::Sorted {
                        row.sort_unstable();
                    }
                    ids.extend_from_slice(row);
                }
                Self::Overlap => {
                    let start = ids.len();
                    for slot in 0..k {
                        let r = rng.below(16);
                        let id = match r {
                            0 => -1,
                            1 => (g + rng.below(g)) as i32,
                            // A quarter of the slots repeat an earlier slot of the row.
                            2..=5 if slot > 0 => ids[start + rng.below(slot)],
                            _ => rng.below(g) as i32,
                        };
                        ids.push(id);
                    }
                }
            }
        }
        ids
    }
}

/// `levels[B*K]` uniform in `0..count`.
pub fn levels(shape: &TileShape, count: usize, rng: &mut Rng) -> Vec<i32> {
    (0..shape.slots())
        .map(|_| rng.below(count) as i32)
        .collect()
}

/// `origins[B*K*2]` as `(y0, x0)`: the grid origin of each id, with odd slots shifted by `t/2`
/// in both directions when `offgrid` is set. Empty slots get `(0, 0)`; they are skipped anyway.
pub fn origins(shape: &TileShape, ids: &[i32], offgrid: bool) -> Vec<i32> {
    let half = (shape.tile / 2) as i32;
    let mut out = Vec::with_capacity(ids.len() * 2);
    for (slot, &id) in ids.iter().enumerate() {
        if !shape.is_valid_id(id) {
            out.extend_from_slice(&[0, 0]);
            continue;
        }
        let (y0, x0) = shape.origin(id as usize);
        let shift = if offgrid && slot % shape.kmax % 2 == 1 {
            half
        } else {
            0
        };
        out.extend_from_slice(&[y0 as i32 + shift, x0 as i32 + shift]);
    }
    out
}

/// The value of one draw in `[lo, lo + span)`, as every input tensor stores it: computed in f64,
/// rounded once to f32, and that f32 stored in the case's type (`Element::store`, the rounding
/// the CUDA kernels use). So a device kernel drawing the same stream writes bit-identical values
/// (`cuda/check.cu`: `draw_uniform`), and no f64 -> f16 conversion rounds differently on CPUs with
/// and without F16C.
pub fn draw_value(bits: u64, lo: f64, span: f64) -> f32 {
    (lo + span * unit_of(bits)) as f32
}

/// Values uniform in `[lo, hi)`: the next `len` draws of `rng` (filled in parallel chunks, the
/// same values and the same `rng` state after as drawing them in order).
pub fn uniform<T: crate::Element>(len: usize, lo: f64, hi: f64, rng: &mut Rng) -> Vec<T> {
    let mut out = Vec::new();
    uniform_into(&mut out, len, lo, hi, rng);
    out
}

/// [`uniform`] written over `out`, whose buffer is reused when it already holds `len` values: a
/// fresh check of a large case then fills memory it already touched instead of faulting in new
/// pages (the large profile's maps are 134 M elements).
pub fn uniform_into<T: crate::Element>(
    out: &mut Vec<T>,
    len: usize,
    lo: f64,
    hi: f64,
    rng: &mut Rng,
) {
    uniform_range_into(out, 0, len, lo, hi, rng);
    rng.skip(len as u64);
}

/// Draws `start .. start + len` of `rng`'s stream (which does not advance) into `out`, resized
/// to `len`: one batch row of a tensor without the rows before it.
pub fn uniform_range_into<T: crate::Element>(
    out: &mut Vec<T>,
    start: u64,
    len: usize,
    lo: f64,
    hi: f64,
    rng: &Rng,
) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    const ROUND: usize = 256;
    if out.len() != len {
        *out = vec![T::ZERO; len];
    }
    let span = hi - lo;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut values = [0.0f32; ROUND];
            for (r, run) in chunk.chunks_mut(ROUND).enumerate() {
                let first = start + (c * CHUNK + r * ROUND) as u64;
                let values = &mut values[..run.len()];
                for (j, v) in values.iter_mut().enumerate() {
                    *v = draw_value(rng.peek(first + j as u64), lo, span);
                }
                T::store(values, run);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_uniform_draws_what_sequential_draws_would() {
        let len = (1 << 16) * 3 + 77;
        let mut a = Rng::new(42, 7);
        let mut b = Rng::new(42, 7);
        let par: Vec<f32> = uniform(len, -2.0, 2.0, &mut a);
        let seq: Vec<f32> = (0..len).map(|_| (-2.0 + 4.0 * b.unit()) as f32).collect();
        assert_eq!(par, seq);
        assert_eq!(a.next_u64(), b.next_u64(), "the state after is the same");
    }

    #[test]
    fn a_range_of_draws_is_that_slice_of_the_whole_stream() {
        use half::{bf16, f16};
        fn check<T: crate::Element>() {
            let len = (1 << 16) * 2 + 999;
            let all: Vec<T> = uniform(len, -2.0, 2.0, &mut Rng::new(5, 3));
            let mut part = vec![T::ZERO; 3];
            uniform_range_into(&mut part, 70_001, 50_000, -2.0, 2.0, &Rng::new(5, 3));
            assert!(part == all[70_001..120_001], "{:?}", T::PRECISION);
        }
        check::<f32>();
        check::<f16>();
        check::<bf16>();
    }

    #[test]
    fn half_precision_draws_round_once_from_f32() {
        use half::{bf16, f16};
        let draws: Vec<f32> = uniform(5000, -2.0, 2.0, &mut Rng::new(8, 1));
        let h: Vec<f16> = uniform(5000, -2.0, 2.0, &mut Rng::new(8, 1));
        let b: Vec<bf16> = uniform(5000, -2.0, 2.0, &mut Rng::new(8, 1));
        for ((&x, &h), &b) in draws.iter().zip(&h).zip(&b) {
            assert_eq!(h, f16::from_f32(x));
            assert_eq!(b, bf16::from_f32(x));
        }
    }

    fn shape(k: usize) -> TileShape {
        TileShape {
            batch: 3,
            channels: 2,
            height: 64,
            width: 64,
            tile: 8,
            kmax: k,
        }
    }

    #[test]
    fn sorted_ids_are_unique_ascending_and_on_the_grid() {
        let s = shape(20);
        let ids = IdPattern::Sorted.generate(&s, &mut Rng::new(1, 0));
        for row in ids.chunks(20) {
            assert!(row.windows(2).all(|w| w[0] < w[1]), "{row:?}");
            assert!(row.iter().all(|&i| s.is_valid_id(i)));
        }
    }

    #[test]
    fn overlap_ids_hold_every_hard_case() {
        let s = shape(64);
        let ids = IdPattern::Overlap.generate(&s, &mut Rng::new(2, 0));
        assert!(ids.contains(&-1));
        assert!(ids.iter().any(|&i| i >= s.grid() as i32));
        let row = &ids[..64];
        let mut valid: Vec<i32> = row.iter().copied().filter(|&i| s.is_valid_id(i)).collect();
        let n = valid.len();
        valid.sort_unstable();
        valid.dedup();
        assert!(valid.len() < n, "no duplicate in {row:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let s = shape(16);
        let a = IdPattern::Random.generate(&s, &mut Rng::new(9, 1));
        let b = IdPattern::Random.generate(&s, &mut Rng::new(9, 1));
        let c = IdPattern::Random.generate(&s, &mut Rng::new(10, 1));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn unique_patterns_reject_kmax_above_the_grid() {
        let err = IdPattern::Sorted.check(&shape(65)).unwrap_err();
        assert!(err.message.contains("hint"), "{err}");
        assert!(IdPattern::Overlap.check(&shape(65)).is_ok());
    }

    #[test]
    fn offgrid_origins_shift_odd_slots_by_half_a_tile() {
        let s = shape(2);
        let o = origins(&s, &[9, 9, -1, 3, 0, 0], true);
        assert_eq!(&o[..4], &[8, 8, 12, 12]);
        assert_eq!(&o[4..8], &[0, 0, 4, 28]);
    }
}
