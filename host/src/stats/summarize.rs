//! [`summarize`]: raw per-call samples to the [`Summary`] every report carries, and
//! [`relative_noise_of_median`], the figure the adaptive stopping rule drives down.

use super::Sample;
use super::bootstrap::{BootstrapSettings, median_ci};
use super::outliers::tukey_outliers;
use super::settings::MEDIAN_SE_FACTOR;
use crate::model::Summary;

/// Summarizes per-call times in milliseconds; `None` when there is no sample or any value is
/// NaN or infinite (a broken timer must not yield numbers).
///
/// Methods (`docs/protocol.md`): type-7 quantiles, sample standard deviation (`n - 1`),
/// `cv = std / mean` (0 when the mean is 0), `IQR = p75 - p25`, a 95 % percentile-bootstrap
/// interval of the median from 1000 resamples seeded with `bootstrap_seed`, Tukey fence counts.
pub fn summarize(samples_ms: &[f64], bootstrap_seed: u64) -> Option<Summary> {
    let sample = Sample::new(samples_ms).ok()?;
    Some(summarize_sample(
        &sample,
        &BootstrapSettings::with_seed(bootstrap_seed),
    ))
}

/// [`summarize`] for an already validated sample and explicit bootstrap settings.
pub fn summarize_sample(sample: &Sample, bootstrap: &BootstrapSettings) -> Summary {
    let mean = sample.mean();
    let std = sample.std_dev();
    let ci = median_ci(sample, bootstrap);
    Summary {
        n: sample.n(),
        p50_ms: sample.median(),
        p90_ms: sample.quantile(0.90),
        p95_ms: sample.quantile(0.95),
        p99_ms: sample.quantile(0.99),
        mean_ms: mean,
        std_ms: std,
        min_ms: sample.min(),
        max_ms: sample.max(),
        cv: if mean == 0.0 { 0.0 } else { std / mean },
        iqr_ms: sample.quantile(0.75) - sample.quantile(0.25),
        median_ci_low_ms: ci.low,
        median_ci_high_ms: ci.high,
        ci_level: ci.confidence_level,
        outliers: tukey_outliers(sample),
    }
}

/// The estimated relative standard error of the median: `MEDIAN_SE_FACTOR * MAD / (sqrt(n) *
/// median)`, where `MAD` is the median absolute deviation from the median and the factor is
/// `sqrt(pi/2) * 1.4826` (the normal-theory standard error of a median, with the robust MAD
/// estimate of sigma, so a few outliers do not stall convergence).
///
/// Linear time (selection, no bootstrap), so the stopping rule can call it after every batch.
/// Returns `f64::INFINITY` when it cannot yet be estimated: fewer than 2 samples, a non-finite
/// value, or a median that is not positive. With `MAD = 0` (all samples equal up to half of
/// them) it is 0: the median is exactly determined.
pub fn relative_noise_of_median(samples_ms: &[f64]) -> f64 {
    if samples_ms.len() < 2 || samples_ms.iter().any(|x| !x.is_finite()) {
        return f64::INFINITY;
    }
    let mut buf = samples_ms.to_vec();
    let median = super::bootstrap::quantile_unsorted(&mut buf, 0.5);
    if median <= 0.0 {
        return f64::INFINITY;
    }
    for x in &mut buf {
        *x = (*x - median).abs();
    }
    let mad = super::bootstrap::quantile_unsorted(&mut buf, 0.5);
    MEDIAN_SE_FACTOR * mad / ((samples_ms.len() as f64).sqrt() * median)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn none_for_empty_or_nan() {
        assert!(summarize(&[], 1).is_none());
        assert!(summarize(&[1.0, f64::NAN], 1).is_none());
        let one = summarize(&[2.0], 1).unwrap();
        assert_eq!(
            (one.n, one.p50_ms, one.p99_ms, one.std_ms),
            (1, 2.0, 2.0, 0.0)
        );
    }

    #[test]
    fn known_values() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0], 7).unwrap();
        assert_eq!(s.p50_ms, 3.0);
        assert_eq!(s.min_ms, 1.0);
        assert_eq!(s.max_ms, 5.0);
        assert_eq!(s.mean_ms, 3.0);
        assert!((s.std_ms - 2.5f64.sqrt()).abs() < 1e-15);
        assert_eq!(s.iqr_ms, 2.0);
        assert!((s.p95_ms - 4.8).abs() < 1e-12);
        assert!((s.cv - 2.5f64.sqrt() / 3.0).abs() < 1e-15);
        assert_eq!(s.ci_level, 0.95);
    }

    #[test]
    fn relative_noise_behaves() {
        assert_eq!(relative_noise_of_median(&[1.0]), f64::INFINITY);
        assert_eq!(relative_noise_of_median(&[1.0, f64::NAN]), f64::INFINITY);
        assert_eq!(relative_noise_of_median(&[2.0; 8]), 0.0);
        let noisy: Vec<f64> = (0..100).map(|i| 10.0 + f64::from(i % 10) / 10.0).collect();
        let many: Vec<f64> = noisy.iter().cycle().take(10_000).copied().collect();
        let a = relative_noise_of_median(&noisy);
        let b = relative_noise_of_median(&many);
        // Ten times the samples, a tenth of the noise (1/sqrt(100)).
        assert!((a / b - 10.0).abs() < 1e-9, "{a} {b}");
        // Median 10.45, MAD 0.25: 1.858 * 0.25 / (10 * 10.45).
        assert!(
            (a - MEDIAN_SE_FACTOR * 0.25 / (10.0 * 10.45)).abs() < 1e-12,
            "{a}"
        );
    }

    proptest! {
        #[test]
        fn order_does_not_matter(xs in prop::collection::vec(0.001f64..50.0, 1..80), seed in any::<u64>()) {
            let mut shuffled = xs.clone();
            shuffled.rotate_left(xs.len() / 3);
            shuffled.reverse();
            prop_assert_eq!(summarize(&xs, seed), summarize(&shuffled, seed));
        }

        #[test]
        fn invariants_hold(xs in prop::collection::vec(0.001f64..50.0, 1..80), seed in any::<u64>()) {
            let s = summarize(&xs, seed).unwrap();
            prop_assert!(s.min_ms <= s.p50_ms && s.p50_ms <= s.p90_ms && s.p90_ms <= s.p95_ms);
            prop_assert!(s.p95_ms <= s.p99_ms && s.p99_ms <= s.max_ms);
            prop_assert!(s.median_ci_low_ms <= s.p50_ms && s.p50_ms <= s.median_ci_high_ms);
            prop_assert!(s.iqr_ms >= 0.0 && s.std_ms >= 0.0);
            let sample = Sample::new(&xs).unwrap();
            prop_assert_eq!(s.p50_ms, sample.median());
        }
    }
}
