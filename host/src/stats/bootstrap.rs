//! Seeded percentile bootstrap: resample with replacement, recompute the statistic, and take the
//! type-7 quantiles at `(1 - level) / 2` and `(1 + level) / 2` of the resampled statistics.
//!
//! The generator is `Xoshiro256PlusPlus::seed_from_u64(seed)` and indices are drawn with
//! `random_range(0..n)` on `u64`, so an interval depends only on the sorted sample, the seed and
//! the settings, never on the platform or on the order the samples arrived in.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::Sample;
use super::quantile::quantile_sorted;
use super::settings::{DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES};

/// A two-sided confidence interval and the level it was computed at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceInterval {
    pub low: f64,
    pub high: f64,
    pub confidence_level: f64,
}

impl ConfidenceInterval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Half the width of the interval.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// How a bootstrap interval is computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapSettings {
    pub resamples: usize,
    pub confidence_level: f64,
    pub seed: u64,
}

impl BootstrapSettings {
    /// [`DEFAULT_RESAMPLES`] resamples at [`DEFAULT_CONFIDENCE_LEVEL`].
    pub fn with_seed(seed: u64) -> Self {
        Self {
            resamples: DEFAULT_RESAMPLES,
            confidence_level: DEFAULT_CONFIDENCE_LEVEL,
            seed,
        }
    }
}

/// Percentile-bootstrap interval of the type-7 quantile `q` of `sample` (the median at 0.5).
///
/// The interval is widened, if needed, to contain the sample's own quantile: with very few or
/// heavily tied points a percentile interval can exclude its point estimate, and a reported
/// interval that does not contain the reported value would only confuse. A single point gives
/// the degenerate interval `[x, x]`.
pub fn quantile_ci(sample: &Sample, q: f64, settings: &BootstrapSettings) -> ConfidenceInterval {
    let point = sample.quantile(q);
    let stats = resampled(sample, settings, |buf| quantile_unsorted(buf, q));
    percentile_interval(stats, point, settings.confidence_level)
}

/// [`quantile_ci`] at 0.5.
pub fn median_ci(sample: &Sample, settings: &BootstrapSettings) -> ConfidenceInterval {
    quantile_ci(sample, 0.5, settings)
}

/// Recomputes `stat` on `settings.resamples` resamples of `sample` drawn from one generator.
pub(crate) fn resampled(
    sample: &Sample,
    settings: &BootstrapSettings,
    mut stat: impl FnMut(&mut [f64]) -> f64,
) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let mut buf = vec![0.0; sample.n()];
    draw_many(sample, settings.resamples, &mut rng, &mut buf, &mut stat)
}

pub(crate) fn draw_many(
    sample: &Sample,
    resamples: usize,
    rng: &mut Xoshiro256PlusPlus,
    buf: &mut [f64],
    stat: &mut impl FnMut(&mut [f64]) -> f64,
) -> Vec<f64> {
    let src = sample.sorted();
    let n = src.len() as u64;
    (0..resamples.max(1))
        .map(|_| {
            for slot in buf.iter_mut() {
                *slot = src[rng.random_range(0..n) as usize];
            }
            stat(buf)
        })
        .collect()
}

/// The central `level` interval of bootstrap `stats`, widened to contain `point`.
pub(crate) fn percentile_interval(
    mut stats: Vec<f64>,
    point: f64,
    level: f64,
) -> ConfidenceInterval {
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - level).clamp(0.0, 1.0);
    let low = quantile_sorted(&stats, alpha / 2.0).min(point);
    let high = quantile_sorted(&stats, 1.0 - alpha / 2.0).max(point);
    ConfidenceInterval {
        low,
        high,
        confidence_level: level,
    }
}

/// Type-7 quantile of an unsorted buffer in expected linear time (reorders `buf`).
pub(crate) fn quantile_unsorted(buf: &mut [f64], q: f64) -> f64 {
    let h = (buf.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let (_, &mut a, right) = buf.select_nth_unstable_by(lo, f64::total_cmp);
    let f = h - lo as f64;
    if f == 0.0 || right.is_empty() {
        return a;
    }
    let b = right.iter().copied().fold(f64::INFINITY, f64::min);
    if a == b {
        return a;
    }
    ((1.0 - f) * a + f * b).clamp(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn same_seed_same_interval_and_seed_matters() {
        let s = Sample::new(
            &(1..=101)
                .map(|i| f64::from(i % 17) + 1.0)
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let a = median_ci(&s, &BootstrapSettings::with_seed(1));
        let b = median_ci(&s, &BootstrapSettings::with_seed(1));
        assert_eq!(a, b);
        assert!(a.low < a.high);
        assert_eq!(a.confidence_level, DEFAULT_CONFIDENCE_LEVEL);
    }

    #[test]
    fn single_point_is_degenerate() {
        let s = Sample::new(&[3.5]).unwrap();
        let ci = median_ci(&s, &BootstrapSettings::with_seed(9));
        assert_eq!((ci.low, ci.high), (3.5, 3.5));
    }

    #[test]
    fn interval_shrinks_with_more_data() {
        let make = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| 10.0 + ((i * 7919) % 100) as f64 / 100.0)
                .collect()
        };
        let small = median_ci(
            &Sample::new(&make(20)).unwrap(),
            &BootstrapSettings::with_seed(3),
        );
        let large = median_ci(
            &Sample::new(&make(2000)).unwrap(),
            &BootstrapSettings::with_seed(3),
        );
        assert!(large.half_width() < small.half_width());
    }

    proptest! {
        #[test]
        fn unsorted_quantile_matches_sorted(xs in prop::collection::vec(-1e3f64..1e3, 1..100), q in 0.0f64..=1.0) {
            let s = Sample::new(&xs).unwrap();
            let mut buf = xs.clone();
            prop_assert_eq!(quantile_unsorted(&mut buf, q), s.quantile(q));
        }

        #[test]
        fn ci_contains_median_and_ignores_order(xs in prop::collection::vec(0.01f64..100.0, 1..60), seed in any::<u64>()) {
            let settings = BootstrapSettings { resamples: 200, confidence_level: 0.95, seed };
            let s = Sample::new(&xs).unwrap();
            let ci = median_ci(&s, &settings);
            prop_assert!(ci.contains(s.median()));
            let mut rev = xs.clone();
            rev.reverse();
            prop_assert_eq!(ci, median_ci(&Sample::new(&rev).unwrap(), &settings));
        }
    }
}
