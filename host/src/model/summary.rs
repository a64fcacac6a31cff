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
