//! [`density`]: a Gaussian kernel density estimate of a sample, for the HTML report's violin
//! plots. The bandwidth is Silverman's rule of thumb, `0.9 · min(σ, IQR/1.34) · n^(-1/5)`,
//! floored at a small fraction of the sample's scale so that identical samples still draw.

use super::Sample;

/// The density of `sample` at `points` evenly spaced abscissae from `lo` to `hi` (inclusive),
/// as `(x, density)` pairs. The density integrates to one over the real line.
pub fn density(sample: &Sample, lo: f64, hi: f64, points: usize) -> Vec<(f64, f64)> {
    let h = bandwidth(sample);
    let n = sample.n() as f64;
    let norm = 1.0 / (n * h * (2.0 * std::f64::consts::PI).sqrt());
    let steps = points.max(2) - 1;
    (0..=steps)
        .map(|i| {
            let x = lo + (hi - lo) * i as f64 / steps as f64;
            let sum: f64 = sample
                .sorted()
                .iter()
                .map(|&v| {
                    let z = (x - v) / h;
                    (-0.5 * z * z).exp()
                })
                .sum();
            (x, sum * norm)
        })
        .collect()
}

/// Silverman's bandwidth, never below 1e-3 of the sample's magnitude (or 1e-12).
pub fn bandwidth(sample: &Sample) -> f64 {
    let n = sample.n() as f64;
    let spread = sample
        .std_dev()
        .min((sample.quantile(0.75) - sample.quantile(0.25)) / 1.34);
    let spread = if spread > 0.0 {
        spread
    } else {
        sample.std_dev()
    };
    let floor = (sample.median().abs() * 1e-3).max(1e-12);
    (0.9 * spread * n.powf(-0.2)).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_density_integrates_to_about_one_and_peaks_at_the_mode() {
        // A sum of three sawtooth "uniforms": bell-shaped around 10.
        let values: Vec<f64> = (0..1001)
            .map(|i| 10.0 + 0.05 * ((i % 7 + i % 11 + i % 13) as f64 - 14.0))
            .collect();
        let s = Sample::new(&values).unwrap();
        let d = density(&s, 8.0, 12.0, 401);
        let dx = 4.0 / 400.0;
        let area: f64 = d.iter().map(|(_, y)| y * dx).sum();
        assert!((area - 1.0).abs() < 0.01, "area {area}");
        let peak = d.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
        assert!((peak - 10.0).abs() < 0.1, "peak at {peak}");
    }

    #[test]
    fn identical_samples_still_have_a_finite_density() {
        let s = Sample::new(&[2.0; 10]).unwrap();
        let d = density(&s, 1.99, 2.01, 11);
        assert!(d.iter().all(|(_, y)| y.is_finite()));
        assert!(d[5].1 > d[0].1);
    }
}
