//! [`RunSummary`]: `summary.json`, the unified report of one run (Apex-X top-level keys kept).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::{CaseResult, CaseStatus};

pub const SUMMARY_SCHEMA_VERSION: u32 = 1;
pub const SUITE_NAME: &str = "apex_bench";
/// The `status` of a run that Ctrl-C (or SIGTERM) stopped before every case finished.
pub const STATUS_INTERRUPTED: &str = "interrupted";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub schema_version: u32,
    pub suite: String,
    /// RFC 3339 UTC with `+00:00`, as the seeds write it.
    pub timestamp_utc: String,
    /// The contents of `env.json`.
    pub environment: serde_json::Value,
    /// The resolved run configuration (CLI flags, seed, protocol).
    pub config: serde_json::Value,
    /// `ok` when every case is ok or skipped, `failed` when any case failed, `empty` when the
    /// plan had no case, `interrupted` when Ctrl-C stopped the run (then `benchmarks` holds the
    /// cases that finished and `counts.not_run` the others).
    pub status: String,
    pub counts: BTreeMap<String, usize>,
    /// Every case of the plan by its id, skipped and failed ones included.
    pub benchmarks: BTreeMap<String, CaseResult>,
    /// Where the run's wall time went (absent in reports written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_accounting: Option<TimeAccounting>,
}

/// Where a run's wall time went: the measuring share and each phase summed over the cases.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeAccounting {
    /// From the first worker's start to the last case's end.
    pub wall_s: f64,
    /// Seconds spent taking timed samples (every mode of every case, warm-up excluded).
    pub sampling_s: f64,
    /// `sampling_s / wall_s` in percent. Cases run one at a time, so the phases add up to about
    /// the wall time.
    pub sampling_pct: f64,
    /// Each worker phase summed over the cases (see `protocol.phases_s` of a case).
    pub phases_s: BTreeMap<String, f64>,
}

impl TimeAccounting {
    /// The accounting of `cases` measured in `wall_s`.
    pub fn of<'a>(wall_s: f64, cases: impl IntoIterator<Item = &'a CaseResult>) -> Self {
        let mut t = Self {
            wall_s,
            ..Self::default()
        };
        for p in cases.into_iter().filter_map(|c| c.protocol.as_ref()) {
            t.sampling_s += p.measure_time_s;
            for (name, s) in &p.phases_s {
                *t.phases_s.entry(name.clone()).or_default() += s;
            }
        }
        t.sampling_pct = if wall_s > 0.0 {
            100.0 * t.sampling_s / wall_s
        } else {
            0.0
        };
        t
    }
}

impl RunSummary {
    /// The overall status from the cases' statuses: `failed` when any case failed, `empty`
    /// when the plan had no case at all, else `ok` (a run whose cases were all skipped, such as
    /// `--backends cuda` on a machine without a GPU, succeeded: a skip is a result).
    pub fn status_of<'a>(cases: impl IntoIterator<Item = &'a CaseResult>) -> &'static str {
        let mut any = false;
        for c in cases {
            any = true;
            if matches!(c.status, CaseStatus::Failed | CaseStatus::FailedAccuracy) {
                return "failed";
            }
        }
        if any { "ok" } else { "empty" }
    }
}
