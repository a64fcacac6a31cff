//! [`Rng`]: the seeded random stream every input is drawn from (SplitMix64: tiny, and identical on
//! every platform, so a seed names the same inputs on every machine and backend).

use crate::Element;

/// SplitMix64, one independent stream per (`seed`, `stream`).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, stream: u64) -> Self {
        Self(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// `len` values uniform in `[lo, hi)`, rounded to `T`.
pub fn uniform<T: Element>(len: usize, lo: f64, hi: f64, rng: &mut Rng) -> Vec<T> {
    (0..len).map(|_| T::from_f64(rng.range(lo, hi))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::new(7, 1).next_u64(), Rng::new(7, 2).next_u64());
        let mut r = Rng::new(1, 1);
        assert!((0..1000).all(|_| {
            let v = r.range(-2.0, 2.0);
            (-2.0..2.0).contains(&v) && r.below(5) < 5
        }));
    }
}
