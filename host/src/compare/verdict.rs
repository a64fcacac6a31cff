//! Noise-aware verdicts (`pass` / `regress` / `improve` / `inconclusive`), reported beside the
//! seed rule's pass/fail. Pure functions of the samples and [`GateOptions`].
//!
//! - **Two samples** (the baseline is a run with raw samples, and so is the current run): the
//!   bootstrap interval of `ratio = q(current) / q(baseline)` for the metric's quantile `q`, and
//!   for medians also the Mann–Whitney test. With threshold `t`:
//!   `regress` when the interval lies above 1, the ratio exceeds `1 + t` and (medians) `p <
//!   significance`; `improve` symmetrically below `1 - t`; `pass` when the interval lies inside
//!   `[1 - t, 1 + t]` or the change is real but smaller than `t`; otherwise `inconclusive` (the
//!   interval contains 1 and reaches beyond the threshold: more samples are needed).
//! - **Baseline value only**: the current metric's interval `[lo, hi]` against the rule's
//!   `allowed_max`: `regress` when `lo > allowed_max`; `improve` when `hi < value * (1 - t)`;
//!   `pass` when `hi <= allowed_max`; `inconclusive` when the interval straddles `allowed_max`.
//! - **No interval** (a non-quantile metric without samples): the point estimate with the same
//!   limits.

use serde::{Deserialize, Serialize};

use super::GateOptions;
use crate::stats::two_sample::{hierarchical_ratio_ci, mann_whitney_u, ratio_of_quantiles_ci};
use crate::stats::{ConfidenceInterval, Sample};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Regress,
    Improve,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Regress => "regress",
            Self::Improve => "improve",
            Self::Inconclusive => "inconclusive",
        }
    }
}

/// Which evidence a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictMethod {
    /// Both runs' raw samples: bootstrap interval of the ratio (+ Mann–Whitney for medians).
    TwoSample,
    /// Both runs' raw samples from several worker processes each: the bootstrap resamples
    /// processes, then samples (no Mann–Whitney: samples of one process are not independent of
    /// its memory layout).
    TwoSampleByProcess,
    /// The current run's interval of the metric against the baseline's allowed max.
    CurrentInterval,
    /// The point estimate only (no samples, no interval available).
    PointEstimate,
}

/// A verdict and its evidence, as written into the compare summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictReport {
    pub verdict: Verdict,
    pub method: VerdictMethod,
    /// Interval of the current metric (ms), for [`VerdictMethod::CurrentInterval`].
    pub ci_low_ms: Option<f64>,
    pub ci_high_ms: Option<f64>,
    /// current / baseline of the metric, and its interval, for [`VerdictMethod::TwoSample`].
    pub ratio: Option<f64>,
    pub ratio_ci_low: Option<f64>,
    pub ratio_ci_high: Option<f64>,
    /// Two-sided Mann–Whitney p-value (two-sample median checks only).
    pub mann_whitney_p: Option<f64>,
    pub confidence_level: Option<f64>,
}

impl VerdictReport {
    fn bare(verdict: Verdict, method: VerdictMethod) -> Self {
        Self {
            verdict,
            method,
            ci_low_ms: None,
            ci_high_ms: None,
            ratio: None,
            ratio_ci_low: None,
            ratio_ci_high: None,
            mann_whitney_p: None,
            confidence_level: None,
        }
    }
}

/// Two-sample verdict for quantile `q` (0.5 for medians). `None` when the ratio is undefined
/// (the baseline's quantile is not positive).
pub fn two_sample_verdict(
    baseline: &Sample,
    current: &Sample,
    q: f64,
    threshold: f64,
    opts: &GateOptions,
) -> Option<VerdictReport> {
    let (ratio, ci) = ratio_of_quantiles_ci(baseline, current, q, &opts.bootstrap)?;
    let p = (q == 0.5).then(|| mann_whitney_u(baseline, current).p_two_sided);
    let significant = p.is_none_or(|p| p < opts.significance);
    let verdict = classify(ratio, &ci, threshold, significant);
    Some(VerdictReport {
        ratio: Some(ratio),
        ratio_ci_low: Some(ci.low),
        ratio_ci_high: Some(ci.high),
        mann_whitney_p: p,
        confidence_level: Some(ci.confidence_level),
        ..VerdictReport::bare(verdict, VerdictMethod::TwoSample)
    })
}

/// Two-sample verdict when both sides were measured in several worker processes: the interval
/// comes from [`hierarchical_ratio_ci`], and the same thresholds apply.
pub fn process_verdict(
    baseline: &[&[f64]],
    current: &[&[f64]],
    q: f64,
    threshold: f64,
    opts: &GateOptions,
) -> Option<VerdictReport> {
    let (ratio, ci) = hierarchical_ratio_ci(baseline, current, q, &opts.bootstrap)?;
    let verdict = classify(ratio, &ci, threshold, true);
    Some(VerdictReport {
        ratio: Some(ratio),
        ratio_ci_low: Some(ci.low),
        ratio_ci_high: Some(ci.high),
        confidence_level: Some(ci.confidence_level),
        ..VerdictReport::bare(verdict, VerdictMethod::TwoSampleByProcess)
    })
}

/// The verdict of a ratio and its interval against `threshold`. The whole interval must clear
/// half the threshold, not just 1: within-run samples understate between-run noise, so a shift
/// the interval barely separates from 1 is not called.
fn classify(ratio: f64, ci: &ConfidenceInterval, threshold: f64, significant: bool) -> Verdict {
    let (up, down) = (1.0 + threshold, 1.0 - threshold);
    if ci.low > 1.0 + threshold / 2.0 && ratio > up && significant {
        Verdict::Regress
    } else if ci.high < 1.0 - threshold / 2.0 && ratio < down && significant {
        Verdict::Improve
    } else if (ci.low >= down && ci.high <= up)
        || ((ci.low > 1.0 || ci.high < 1.0) && (down..=up).contains(&ratio))
    {
        Verdict::Pass
    } else {
        Verdict::Inconclusive
    }
}

/// Verdict from the current metric's interval against the baseline value and its allowed max.
pub fn interval_verdict(
    ci: &ConfidenceInterval,
    baseline_ms: f64,
    allowed_max_ms: f64,
    threshold: f64,
) -> VerdictReport {
    let improve_below = baseline_ms * (1.0 - threshold);
    let verdict = if ci.low > allowed_max_ms {
        Verdict::Regress
    } else if ci.high < improve_below {
        Verdict::Improve
    } else if ci.high <= allowed_max_ms {
        Verdict::Pass
    } else {
        Verdict::Inconclusive
    };
    VerdictReport {
        ci_low_ms: Some(ci.low),
        ci_high_ms: Some(ci.high),
        confidence_level: Some(ci.confidence_level),
        ..VerdictReport::bare(verdict, VerdictMethod::CurrentInterval)
    }
}

/// Verdict from the point estimate alone.
pub fn point_verdict(
    current_ms: f64,
    baseline_ms: f64,
    allowed_max_ms: f64,
    threshold: f64,
) -> VerdictReport {
    let verdict = if super::rule::exceeds(current_ms, allowed_max_ms) {
        Verdict::Regress
    } else if current_ms < baseline_ms * (1.0 - threshold) {
        Verdict::Improve
    } else {
        Verdict::Pass
    };
    VerdictReport::bare(verdict, VerdictMethod::PointEstimate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Log-normal-ish timings around `median` with about `cv` relative spread.
    fn timings(seed: u64, n: usize, median: f64, cv: f64) -> Sample {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let xs: Vec<f64> = (0..n)
            .map(|_| {
                // Sum of 12 uniforms minus 6 is a standard normal approximation.
                let z: f64 = (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0;
                median * (cv * z).exp()
            })
            .collect();
        Sample::new(&xs).unwrap()
    }

    /// The device median threshold.
    const T: f64 = crate::compare::DEFAULT_PRACTICAL_THRESHOLD;

    #[test]
    fn a_a_passes_shift_regresses_speedup_improves() {
        let opts = GateOptions::default();
        let base = timings(1, 200, 1.0, 0.05);
        let same = timings(2, 200, 1.0, 0.05);
        let slow = timings(3, 200, 1.25, 0.05);
        let fast = timings(4, 200, 0.75, 0.05);
        assert_eq!(
            two_sample_verdict(&base, &same, 0.5, T, &opts)
                .unwrap()
                .verdict,
            Verdict::Pass
        );
        let r = two_sample_verdict(&base, &slow, 0.5, T, &opts).unwrap();
        assert_eq!(r.verdict, Verdict::Regress, "{r:?}");
        assert!(r.mann_whitney_p.unwrap() < 1e-6);
        assert_eq!(
            two_sample_verdict(&base, &fast, 0.5, T, &opts)
                .unwrap()
                .verdict,
            Verdict::Improve
        );
    }

    #[test]
    fn a_a_on_a_noisy_machine_flags_nothing() {
        // 30 % spread and few samples: never regress or improve, across many seeds.
        let opts = GateOptions::default();
        for seed in 0..40 {
            let a = timings(100 + seed, 20, 1.0, 0.3);
            let b = timings(200 + seed, 20, 1.0, 0.3);
            let v = two_sample_verdict(&a, &b, 0.5, T, &opts).unwrap().verdict;
            assert!(
                matches!(v, Verdict::Pass | Verdict::Inconclusive),
                "seed {seed}: {v:?}"
            );
        }
    }

    #[test]
    fn small_real_change_is_a_pass() {
        // A 1 % shift with tiny noise is statistically real but below the 5 % threshold.
        let opts = GateOptions::default();
        let a = timings(7, 400, 1.0, 0.002);
        let b = timings(8, 400, 1.01, 0.002);
        let r = two_sample_verdict(&a, &b, 0.5, T, &opts).unwrap();
        assert!(r.ratio_ci_low.unwrap() > 1.0);
        assert_eq!(r.verdict, Verdict::Pass);
    }

    #[test]
    fn interval_and_point_verdicts() {
        let ci = |low, high| ConfidenceInterval {
            low,
            high,
            confidence_level: 0.95,
        };
        // Baseline 1.0 ms, allowed max 2.0 ms.
        assert_eq!(
            interval_verdict(&ci(2.1, 2.3), 1.0, 2.0, T).verdict,
            Verdict::Regress
        );
        assert_eq!(
            interval_verdict(&ci(1.9, 2.1), 1.0, 2.0, T).verdict,
            Verdict::Inconclusive
        );
        assert_eq!(
            interval_verdict(&ci(1.0, 2.0), 1.0, 2.0, T).verdict,
            Verdict::Pass
        );
        assert_eq!(
            interval_verdict(&ci(0.5, 0.9), 1.0, 2.0, T).verdict,
            Verdict::Improve
        );
        assert_eq!(point_verdict(2.0, 1.0, 2.0, T).verdict, Verdict::Pass);
        assert_eq!(
            point_verdict(2.0f64.next_up(), 1.0, 2.0, T).verdict,
            Verdict::Regress
        );
        assert_eq!(point_verdict(0.9, 1.0, 2.0, T).verdict, Verdict::Improve);
    }
}
