//! [`GateOptions`]: the named thresholds of the noise-aware verdicts (never literals in code).

use serde::{Deserialize, Serialize};

use crate::stats::{BootstrapSettings, DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES};

/// Smallest relative change of a device (CUDA, TensorRT) median worth reporting as a regression
/// or an improvement: 5 %. Device timings repeat within about 1 % between runs.
pub const DEFAULT_PRACTICAL_THRESHOLD: f64 = 0.05;
/// The same for CPU medians: 20 %. On a shared 2-core machine the median of the same build moved
/// by up to 20 % between back-to-back runs (a slow period of the machine shifts every case), so a
/// smaller threshold flags A/A runs; a +25 % slowdown still clears it.
pub const DEFAULT_CPU_PRACTICAL_THRESHOLD: f64 = 0.20;
/// Tail quantiles (p90 and above) move more between runs than medians: their threshold is this
/// many times the median's.
pub const TAIL_THRESHOLD_FACTOR: f64 = 2.0;
/// Significance level of the Mann–Whitney test that must confirm a two-sample verdict.
pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;
/// Bootstrap seed of the gate's intervals (fixed, so a comparison is reproducible).
pub const DEFAULT_GATE_SEED: u64 = 0x00A9_E7BE_4C40;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GateOptions {
    /// Relative change of a device median below which a statistically real difference is still
    /// a `pass`.
    pub practical_threshold: f64,
    /// The same for CPU metrics.
    pub cpu_practical_threshold: f64,
    /// Mann–Whitney p-value needed to call a two-sample median shift.
    pub significance: f64,
    /// Resamples, confidence level and seed of every bootstrap interval the gate computes.
    pub bootstrap: BootstrapSettings,
    /// Also fail the gate on a `regress` verdict that the seed rule lets through (a slowdown
    /// inside a wide tolerance). Off by default: the seed rule alone decides, as the seeds did.
    pub fail_on_regress: bool,
    /// An over-limit metric fails the gate only when its two-sample verdict confirms it
    /// (`regress`): on a machine whose slow periods move one worker process of a case by 2x or
    /// more, the rule alone fails unchanged code. Metrics without samples on both sides keep the
    /// rule. Off by default.
    #[serde(default)]
    pub confirm: bool,
}

impl Default for GateOptions {
    fn default() -> Self {
        Self {
            practical_threshold: DEFAULT_PRACTICAL_THRESHOLD,
            cpu_practical_threshold: DEFAULT_CPU_PRACTICAL_THRESHOLD,
            significance: DEFAULT_SIGNIFICANCE,
            bootstrap: BootstrapSettings {
                resamples: DEFAULT_RESAMPLES,
                confidence_level: DEFAULT_CONFIDENCE_LEVEL,
                seed: DEFAULT_GATE_SEED,
            },
            fail_on_regress: false,
            confirm: false,
        }
    }
}

impl GateOptions {
    /// Both thresholds set to `t` (`compare --threshold`).
    pub fn with_threshold(mut self, t: f64) -> Self {
        self.practical_threshold = t;
        self.cpu_practical_threshold = t;
        self
    }

    /// The practical threshold of `metric` (`kernel/backend/precision/params/stat`) at quantile
    /// `q`: by backend, times [`TAIL_THRESHOLD_FACTOR`] above the median.
    pub fn threshold_for(&self, metric: &str, q: Option<f64>) -> f64 {
        let base = match metric.split('/').nth(1) {
            Some("cpu") => self.cpu_practical_threshold,
            _ => self.practical_threshold,
        };
        if q.is_some_and(|q| q > 0.5) {
            base * TAIL_THRESHOLD_FACTOR
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_by_backend_and_quantile() {
        let o = GateOptions::default();
        assert_eq!(
            o.threshold_for("k/cpu/fp32/-/p50_ms", Some(0.5)),
            DEFAULT_CPU_PRACTICAL_THRESHOLD
        );
        assert_eq!(
            o.threshold_for("k/cuda/fp16/-/p50_ms", Some(0.5)),
            DEFAULT_PRACTICAL_THRESHOLD
        );
        assert_eq!(
            o.threshold_for("k/cuda/fp16/-/p95_ms", Some(0.95)),
            2.0 * DEFAULT_PRACTICAL_THRESHOLD
        );
        assert_eq!(
            o.with_threshold(0.1)
                .threshold_for("k/cpu/fp32/-/p50_ms", Some(0.5)),
            0.1
        );
    }
}
