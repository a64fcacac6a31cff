//! [`RunSummary`]: `summary.json`, the unified report of one run (Apex-X top-level keys kept).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::{CaseResult, CaseStatus};

pub const SUMMARY_SCHEMA_VERSION: u32 = 1;
pub const SUITE_NAME: &str = "apex_bench";

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
    /// `ok` when every case is ok or skipped, `failed` when any case failed, `empty` when nothing ran.
    pub status: String,
    pub counts: BTreeMap<String, usize>,
    /// Every case of the plan by its id, skipped and failed ones included.
    pub benchmarks: BTreeMap<String, CaseResult>,
}

impl RunSummary {
    /// The overall status from the cases' statuses.
    pub fn status_of<'a>(cases: impl IntoIterator<Item = &'a CaseResult>) -> &'static str {
        let mut any_measured = false;
        for c in cases {
            match c.status {
                CaseStatus::Failed | CaseStatus::FailedAccuracy => return "failed",
                CaseStatus::Ok => any_measured = true,
                CaseStatus::Skipped => {}
            }
        }
        if any_measured { "ok" } else { "empty" }
    }
}
