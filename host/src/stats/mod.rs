//! Descriptive and two-sample statistics of timing samples: the numbers in every `Summary`, the
//! adaptive stopping rule's noise figure, and the evidence behind the gate's noise-aware verdicts.
//!
//! Everything here is a pure function of its inputs: no I/O, no clocks, and every random choice
//! comes from an explicit seed, so results are reproducible and property-testable.
//! `docs/protocol.md` ("## Statistics") states every method; the doc of each item repeats it.
//!
//! - [`Sample`]: validated samples (at least one point, all finite), kept sorted.
//! - [`quantile_sorted`]: Hyndman–Fan type 7 (linear interpolation between order statistics).
//! - [`bootstrap`]: seeded percentile bootstrap confidence intervals.
//! - [`tukey_outliers`]: Tukey fence counts.
//! - [`summarize`]: one [`crate::model::Summary`] from raw samples.
//! - [`two_sample`]: ratio-of-quantiles bootstrap and the Mann–Whitney U test.
//! - [`density`]: a Gaussian kernel density estimate (the HTML report's violins).
//! - [`change_points`]: level shifts in a metric's history (the HTML report's trends).

pub mod bootstrap;
mod change_points;
mod density;
mod outliers;
mod quantile;
mod sample;
mod settings;
mod summarize;
pub mod two_sample;

pub use bootstrap::{BootstrapSettings, ConfidenceInterval};
pub use change_points::change_points;
pub use density::density;
pub use outliers::tukey_outliers;
pub use quantile::quantile_sorted;
pub use sample::{Sample, SampleError};
pub use settings::{
    DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES, MEDIAN_SE_FACTOR, TUKEY_MILD_FENCE,
    TUKEY_SEVERE_FENCE,
};
pub use summarize::{relative_noise_of_median, summarize, summarize_sample};
