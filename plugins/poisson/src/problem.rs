//! The right-hand side of every case: a manufactured solution, so the exact discrete solution is
//! known and the true error of a solve is measured, not estimated.
//!
//! `u*(x,y,z) = sin(pi*(x+1)/(nx+1)) * sin(pi*(y+1)/(ny+1)) * sin(pi*(z+1)/(nz+1)) + NOISE * w`,
//! `w` uniform in [-1, 1) from the seed, and `b = A u*` in f64 with the finest level's operator.
//! The system `A x = b` then has the exact solution `u*` (up to f64 rounding of `b`). The sine
//! alone is an eigenvector of `A`, which CG would solve in one step; the seeded part gives `b` a
//! full spectrum, so iteration counts are those of a generic right-hand side (plain CG needs
//! about 90 iterations at 64^3, 130 at 128^3) and every new seed is a new problem.

use crate::{
    grid::{Dims, Level},
    reference,
};

/// Amplitude of the seeded part of `u*`.
pub const NOISE: f64 = 0.25;

/// One problem: the exact solution and the right-hand side, in f64.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub dims: Dims,
    pub u_star: Vec<f64>,
    pub b: Vec<f64>,
}

impl Problem {
    pub fn generate(dims: Dims, seed: u64) -> Self {
        let mut rng = SplitMix64(seed ^ 0x5045_4f49_5353_4f4e);
        let sx: Vec<f64> = sines(dims.nx);
        let sy: Vec<f64> = sines(dims.ny);
        let sz: Vec<f64> = sines(dims.nz);
        let mut u_star = Vec::with_capacity(dims.len());
        for &fz in &sz {
            for &fy in &sy {
                for &fx in &sx {
                    u_star.push(fx * fy * fz + NOISE * rng.uniform_pm1());
                }
            }
        }
        let mut b = vec![0.0; dims.len()];
        reference::apply(&Level::finest(dims), &u_star, &mut b);
        Self { dims, u_star, b }
    }
}

fn sines(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (std::f64::consts::PI * (i + 1) as f64 / (n + 1) as f64).sin())
        .collect()
}

/// SplitMix64: a tiny seeded generator (the same stream for the same seed on every machine).
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn uniform_pm1(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manufactured_solution_solves_the_system_exactly() {
        let p = Problem::generate(Dims::new(6, 5, 4), 3);
        let mut r = vec![0.0; p.b.len()];
        reference::residual(&Level::finest(p.dims), &p.u_star, &p.b, &mut r);
        assert!(r.iter().all(|v| v.abs() < 1e-14));
        assert_ne!(p, Problem::generate(Dims::new(6, 5, 4), 4));
        assert_eq!(p, Problem::generate(Dims::new(6, 5, 4), 3));
        assert!(p.u_star.iter().all(|v| v.abs() <= 1.0 + NOISE));
    }
}
