//! [`Rng`]: the seeded random stream the plugins draw their inputs from. SplitMix64: tiny,
//! seedable, and identical on every platform, so a seed names the same inputs on every machine
//! and backend. It is counter-based (the `i`-th draw is a function of the state and `i`), so a
//! long run of draws can be filled in parallel ([`Rng::peek`], [`Rng::skip`]) with exactly the
//! values, and the state after, of drawing them one by one.

/// SplitMix64, one independent stream per (`seed`, `stream`).
pub struct Rng(u64);

/// The SplitMix64 increment.
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `[0, 1)` value of a draw, with 53 random bits.
pub fn unit_of(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

impl Rng {
    pub fn new(seed: u64, stream: u64) -> Self {
        Self(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    /// The value the `i`-th next call (0-based) of [`Rng::next_u64`] would return.
    pub fn peek(&self, i: u64) -> u64 {
        mix(self.0.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA)))
    }

    /// The raw state: draw `i` (0-based) from here is `mix(state + (i + 1) * GAMMA)`, which is how
    /// a device kernel draws the same values ([`GAMMA`], [`mix`]).
    pub fn state(&self) -> u64 {
        self.0
    }

    /// Advances past `n` draws.
    pub fn skip(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n.wrapping_mul(GAMMA));
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        unit_of(self.next_u64())
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Standard normal (Box–Muller on two draws; the first draw is kept away from 0).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_and_skip_match_sequential_draws() {
        let mut a = Rng::new(42, 7);
        let b = Rng::new(42, 7);
        let seq: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let peeked: Vec<u64> = (0..5).map(|i| b.peek(i)).collect();
        assert_eq!(seq, peeked);
        let mut c = Rng::new(42, 7);
        c.skip(5);
        assert_eq!(a.next_u64(), c.next_u64());
    }

    #[test]
    fn normal_draws_have_unit_moments() {
        let mut r = Rng::new(1, 2);
        let n = 200_000;
        let v: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.02, "{var}");
        assert!(v.iter().all(|x| x.is_finite()));
    }
}
