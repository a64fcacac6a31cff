//! [`GateOptions`]: the named thresholds of the noise-aware verdicts (never literals in code).

use serde::{Deserialize, Serialize};

use crate::stats::{BootstrapSettings, DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES};

/// Smallest relative change worth reporting as a regression or an improvement: 5 %.
pub const DEFAULT_PRACTICAL_THRESHOLD: f64 = 0.05;
/// Significance level of the Mann–Whitney test that must confirm a two-sample verdict.
pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;
/// Bootstrap seed of the gate's intervals (fixed, so a comparison is reproducible).
pub const DEFAULT_GATE_SEED: u64 = 0x00A9_E7BE_4C40;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GateOptions {
    /// Relative change below which a statistically real difference is still a `pass`.
    pub practical_threshold: f64,
    /// Mann–Whitney p-value needed to call a two-sample median shift.
    pub significance: f64,
    /// Resamples, confidence level and seed of every bootstrap interval the gate computes.
    pub bootstrap: BootstrapSettings,
    /// Also fail the gate on a `regress` verdict that the seed rule lets through (a slowdown
    /// inside a wide tolerance). Off by default: the seed rule alone decides, as the seeds did.
    pub fail_on_regress: bool,
}

impl Default for GateOptions {
    fn default() -> Self {
        Self {
            practical_threshold: DEFAULT_PRACTICAL_THRESHOLD,
            significance: DEFAULT_SIGNIFICANCE,
            bootstrap: BootstrapSettings {
                resamples: DEFAULT_RESAMPLES,
                confidence_level: DEFAULT_CONFIDENCE_LEVEL,
                seed: DEFAULT_GATE_SEED,
            },
            fail_on_regress: false,
        }
    }
}
