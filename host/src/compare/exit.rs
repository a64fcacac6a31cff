//! [`GateExitCode`]: the documented exit codes of `apex-host compare` and `run --compare`.

/// Exit codes as constants on an uninhabited type (nextest's `NextestExitCode` pattern).
///
/// | code | meaning |
/// | --- | --- |
/// | 0 | every check passed (improvements and inconclusive verdicts do not fail) |
/// | 2 | the gate failed: a metric over its allowed max, a missing metric, a case not `ok`, a failed accuracy check, the run status not the baseline's `required_status`, or (with `--fail-on-regress`) a noise-aware `regress` verdict |
///
/// Errors before a verdict exists (unreadable or invalid files, unknown git ref) are returned as
/// `Err` and mapped by the CLI's top-level error handler, never as 2, so CI can tell "slower"
/// from "broken".
pub enum GateExitCode {}

impl GateExitCode {
    /// Every check passed.
    pub const PASS: i32 = 0;
    /// The gate failed (the seeds' `perf_regression.py` uses 2 as well).
    pub const GATE_FAILED: i32 = 2;
}
