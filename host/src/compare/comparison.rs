//! [`Comparison`]: the result of gating one run against one baseline: every [`Check`], the
//! overall status and the exit code. Plain data; `outputs` renders it.

use serde::{Deserialize, Serialize};

use super::verdict::{Verdict, VerdictMethod, VerdictReport};
use super::{GateExitCode, GateOptions};

/// The metric name of the run-status check (as in the seeds).
pub const STATUS_METRIC: &str = "__status__";
/// The metric name of the check that fails a gate whose run selected none of the baseline's
/// cases (`--filter`, `--backends`, `--precision`).
pub const SELECTION_METRIC: &str = "__selection__";

/// The outcome of one check under the seed rule. Each kind is counted on its own (the seeds
/// lumped them together, `spec/apex-x-kernels.md` §6.2 item 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// `current_ms <= allowed_max_ms`.
    Pass,
    /// `current_ms > allowed_max_ms`.
    Fail,
    /// The baseline names a metric the run does not have.
    Missing,
    /// The case ran but was `skipped` or `failed`.
    CaseNotOk,
    /// The case's output is outside its tolerance: its timing is not a valid result.
    FailedAccuracy,
    /// The run's status is not the baseline's `required_status` (written as `fail`, as the
    /// seeds' `__status__` entry).
    StatusMismatch,
}

impl CheckStatus {
    /// The name written into JSON and Markdown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail | Self::StatusMismatch => "fail",
            Self::Missing => "missing",
            Self::CaseNotOk => "case_not_ok",
            Self::FailedAccuracy => "failed_accuracy",
        }
    }
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub metric: String,
    pub status: CheckStatus,
    pub baseline_ms: Option<f64>,
    pub allowed_max_ms: Option<f64>,
    pub current_ms: Option<f64>,
    pub regression_ratio: Option<f64>,
    /// The noise-aware verdict, when the metric has a value.
    pub verdict: Option<VerdictReport>,
    /// Why a check is not a pass (status and reason of the case, the missing piece).
    pub reason: Option<String>,
    /// For [`CheckStatus::StatusMismatch`]: the required and the actual run status.
    pub expected: Option<String>,
    pub current: Option<String>,
}

impl Check {
    pub(crate) fn empty(metric: String, status: CheckStatus) -> Self {
        Self {
            metric,
            status,
            baseline_ms: None,
            allowed_max_ms: None,
            current_ms: None,
            regression_ratio: None,
            verdict: None,
            reason: None,
            expected: None,
            current: None,
        }
    }

    pub fn verdict_kind(&self) -> Option<Verdict> {
        self.verdict.as_ref().map(|v| v.verdict)
    }

    /// Over its limit, while both runs' samples say the slowdown is not established (a
    /// two-sample verdict other than `regress`).
    pub fn unconfirmed_over_limit(&self) -> bool {
        self.status == CheckStatus::Fail
            && self.verdict.as_ref().is_some_and(|v| {
                matches!(
                    v.method,
                    VerdictMethod::TwoSample | VerdictMethod::TwoSampleByProcess
                ) && v.verdict != Verdict::Regress
            })
    }
}

/// Counts by kind, for summaries and trend files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateCounts {
    pub total: usize,
    pub passed: usize,
    /// Every check whose status is not `pass` (the seeds' `failed_metrics`).
    pub failed: usize,
    pub over_limit: usize,
    pub missing: usize,
    pub case_not_ok: usize,
    pub failed_accuracy: usize,
    pub status_mismatch: usize,
    pub verdict_pass: usize,
    pub verdict_regress: usize,
    pub verdict_improve: usize,
    pub verdict_inconclusive: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The current run's suite.
    pub suite: String,
    pub baseline_suite: String,
    pub baseline_notes: String,
    /// The current run's timestamp (the comparison reads no clock, so it is reproducible).
    pub timestamp_utc: String,
    pub required_status: Option<String>,
    pub current_status: String,
    /// The status check first (when there is one), then every metric check sorted by metric.
    pub checks: Vec<Check>,
    /// Cases measured `ok` that no baseline metric covers (candidates for `baseline emit`).
    pub unbaselined_cases: Vec<String>,
    /// The flags with which the run selected part of the suite (`--filter 'g' --backends cuda`)
    /// where they left out baseline metrics; empty otherwise.
    #[serde(default)]
    pub selection: String,
    /// Baseline metrics of cases the selection left out, not checked.
    #[serde(default)]
    pub unselected_metrics: usize,
    /// The run was measured by a debug build of apex-host, which builds and loads the plugins'
    /// debug builds: its timings are not comparable with a baseline of release builds.
    #[serde(default)]
    pub debug_build: bool,
    pub options: GateOptions,
}

impl Comparison {
    pub fn counts(&self) -> GateCounts {
        let mut c = GateCounts {
            total: self.checks.len(),
            ..GateCounts::default()
        };
        for check in &self.checks {
            match check.status {
                CheckStatus::Pass => c.passed += 1,
                CheckStatus::Fail => c.over_limit += 1,
                CheckStatus::Missing => c.missing += 1,
                CheckStatus::CaseNotOk => c.case_not_ok += 1,
                CheckStatus::FailedAccuracy => c.failed_accuracy += 1,
                CheckStatus::StatusMismatch => c.status_mismatch += 1,
            }
            match check.verdict_kind() {
                Some(Verdict::Pass) => c.verdict_pass += 1,
                Some(Verdict::Regress) => c.verdict_regress += 1,
                Some(Verdict::Improve) => c.verdict_improve += 1,
                Some(Verdict::Inconclusive) => c.verdict_inconclusive += 1,
                None => {}
            }
        }
        c.failed = c.total - c.passed;
        c
    }

    /// Whether the gate passes: every check passes under the seed rule (with `confirm`, an
    /// over-limit check the samples do not confirm counts as passing), and with
    /// `fail_on_regress` no verdict is `regress`.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| {
            (c.status == CheckStatus::Pass || self.excused(c))
                && !(self.options.fail_on_regress && c.verdict_kind() == Some(Verdict::Regress))
        })
    }

    /// Whether `check` is over its limit but does not fail the gate: `confirm` is on and the
    /// samples do not confirm the slowdown ([`Check::unconfirmed_over_limit`]).
    pub fn excused(&self, check: &Check) -> bool {
        self.options.confirm && check.unconfirmed_over_limit()
    }

    /// `pass` or `fail`, the seeds' overall status.
    pub fn overall_status(&self) -> &'static str {
        if self.passed() { "pass" } else { "fail" }
    }

    /// [`GateExitCode::PASS`] or [`GateExitCode::GATE_FAILED`].
    pub fn exit_code(&self) -> i32 {
        if self.passed() {
            GateExitCode::PASS
        } else {
            GateExitCode::GATE_FAILED
        }
    }
}
