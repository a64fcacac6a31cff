//! f64 sums of f32 slices in eight independent lanes: the lanes break the chain of dependent
//! additions (one f64 add latency per element otherwise), so the sums vectorize, and f64 keeps
//! the GroupNorm statistics and token means accurate however long the slice.

const LANES: usize = 8;

/// `Σ f(v[i])` in f64.
#[inline(always)]
fn lanes(v: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let chunks = v.chunks_exact(LANES);
    let tail: f64 = chunks.remainder().iter().map(|&x| f(f64::from(x))).sum();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += f(f64::from(x));
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// `Σ v[i]`.
#[inline(always)]
pub fn sum(v: &[f32]) -> f64 {
    lanes(v, |x| x)
}

/// `Σ (v[i] - mean)²`.
#[inline(always)]
pub fn squared_deviations(v: &[f32], mean: f64) -> f64 {
    lanes(v, |x| (x - mean) * (x - mean))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_sums_match_the_serial_sums() {
        let v: Vec<f32> = (0..1037)
            .map(|i| ((i * 7919) % 1000) as f32 * 0.01 - 5.0)
            .collect();
        let serial: f64 = v.iter().map(|&x| f64::from(x)).sum();
        assert!((sum(&v) - serial).abs() < 1e-9);
        let mean = serial / v.len() as f64;
        let dev: f64 = v.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum();
        assert!((squared_deviations(&v, mean) - dev).abs() < 1e-9 * dev);
        assert_eq!(sum(&[]), 0.0);
    }
}
