//! Named statistical constants. Thresholds live here (and in `compare::GateOptions`), never as
//! literals in the code that uses them.

/// Bootstrap resamples per confidence interval. 1000 keeps the Monte-Carlo error of a 95 %
/// percentile bound well below the sampling error for the sample sizes the protocol collects.
pub const DEFAULT_RESAMPLES: usize = 1000;

/// Confidence level of every reported interval.
pub const DEFAULT_CONFIDENCE_LEVEL: f64 = 0.95;

/// Tukey's inner fence, in IQRs beyond the quartiles: points beyond it are mild outliers.
pub const TUKEY_MILD_FENCE: f64 = 1.5;

/// Tukey's outer fence, in IQRs beyond the quartiles: points beyond it are severe outliers.
pub const TUKEY_SEVERE_FENCE: f64 = 3.0;

/// Asymptotic standard error of the median of a normal sample is `sqrt(pi/2) * sigma / sqrt(n)`;
/// with the robust `sigma = 1.4826 * MAD` this is `MEDIAN_SE_FACTOR * MAD / sqrt(n)`.
pub const MEDIAN_SE_FACTOR: f64 = 1.253_314_137_315_500_3 * 1.482_602_218_505_602;
