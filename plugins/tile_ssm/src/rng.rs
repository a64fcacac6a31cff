//! [`Rng`]: the seeded random stream every input is drawn from (SplitMix64: tiny, and identical on
//! every platform, so a seed names the same inputs on every machine and backend).

use crate::Element;

/// SplitMix64, one independent stream per (`seed`, `stream`): the shared one of `apex-tile-math`.
pub use apex_tile_math::rng::Rng;

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
