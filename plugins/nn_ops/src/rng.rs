//! Deterministic inputs: SplitMix64 streams, one per (seed, tensor, block of [`FILL_BLOCK`]
//! elements), so a tensor of a billion elements fills on all cores and still depends only on the
//! seed.

use rayon::prelude::*;

use crate::Element;

/// Elements drawn from one SplitMix64 stream.
pub const FILL_BLOCK: usize = 1 << 16;

/// SplitMix64: small, fast and good enough for test inputs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Stream `stream` of `seed`; different streams are independent for test purposes.
    pub fn new(seed: u64, stream: u64) -> Self {
        Self(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 24 random bits (exact in f32).
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: u64) -> u64 {
        (((self.next_u64() >> 32) * n) >> 32).min(n.saturating_sub(1))
    }
}

/// `len` values uniform in `[lo, hi)`, rounded to `T`; tensor `tensor` of `seed`.
pub fn uniform<T: Element>(len: usize, lo: f32, hi: f32, seed: u64, tensor: u64) -> Vec<T> {
    let mut out = vec![T::ZERO; len];
    out.par_chunks_mut(FILL_BLOCK)
        .enumerate()
        .for_each(|(block, chunk)| {
            let mut rng = Rng::new(seed, (tensor << 40) ^ block as u64);
            let mut buf = [0.0f32; 256];
            for piece in chunk.chunks_mut(256) {
                for v in &mut buf[..piece.len()] {
                    *v = lo + (hi - lo) * rng.unit_f32();
                }
                T::store(&buf[..piece.len()], piece);
            }
        });
    out
}

/// Class targets in `[0, classes)`, each replaced by `ignore_index` with probability
/// `ignore_ratio` (1.0: every target is ignored).
pub fn targets(
    len: usize,
    classes: usize,
    ignore_ratio: f64,
    ignore_index: i64,
    seed: u64,
    tensor: u64,
) -> Vec<i64> {
    let mut out = vec![0i64; len];
    out.par_chunks_mut(FILL_BLOCK)
        .enumerate()
        .for_each(|(block, chunk)| {
            let mut rng = Rng::new(seed, (tensor << 40) ^ block as u64);
            for t in chunk {
                let ignored = f64::from(rng.unit_f32()) < ignore_ratio;
                let class = rng.below(classes as u64) as i64;
                *t = if ignored { ignore_index } else { class };
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_are_deterministic_in_range_and_seed_dependent() {
        let a = uniform::<f32>(FILL_BLOCK + 77, -2.0, 2.0, 5, 1);
        assert_eq!(a, uniform::<f32>(FILL_BLOCK + 77, -2.0, 2.0, 5, 1));
        assert_ne!(a, uniform::<f32>(FILL_BLOCK + 77, -2.0, 2.0, 6, 1));
        assert_ne!(a, uniform::<f32>(FILL_BLOCK + 77, -2.0, 2.0, 5, 2));
        assert!(a.iter().all(|v| (-2.0..2.0).contains(v)));
        let t = targets(1000, 7, 0.25, -100, 5, 3);
        assert!(t.iter().all(|&v| v == -100 || (0..7).contains(&v)));
        let ignored = t.iter().filter(|&&v| v == -100).count();
        assert!((150..350).contains(&ignored), "{ignored}");
        assert!(targets(100, 7, 1.0, -100, 5, 3).iter().all(|&v| v == -100));
        assert!(targets(100, 7, 0.0, -100, 5, 3).iter().all(|&v| v >= 0));
    }
}
