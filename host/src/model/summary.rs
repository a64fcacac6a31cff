//! [`RunSummary`]: `summary.json`, the unified report of one run (Apex-X top-level keys kept).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::{CaseResult, CaseStatus};

pub const SUMMARY_SCHEMA_VERSION: u32 = 1;
pub const SUITE_NAME: &str = "apex_bench";
/// The `status` of a run that Ctrl-C (or SIGTERM) stopped before every case finished.
pub const STATUS_INTERRUPTED: &str = "interrupted";
/// The `status` of a merged report that lacks cases of its plan (a shard did not run, or was
/// not given to `apex-host merge`); `counts.missing` says how many.
pub const STATUS_INCOMPLETE: &str = "incomplete";

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
    /// The plan this run is (a shard of): what `apex-host merge` checks shards against (absent
    /// in reports written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRecord>,
    /// The anchor files of `--anchor-results` and the rows that matched no case (absent without
    /// the flag); the matched rows are in each case's `anchors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchors: Option<super::AnchorSummary>,
}

/// The identity of a run's plan, the same on every shard of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    /// SHA-256 of the plan's case ids in plan order, before partitioning.
    pub digest: String,
    /// SHA-256 of what shapes the measurements besides the case ids: the run's flags (less the
    /// device and the partition) and the suite files' contents.
    pub config_digest: String,
    /// Every case id of the plan, before partitioning.
    pub case_ids: Vec<String>,
    /// The shard this run measured; absent when it measured the whole plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionRecord>,
    /// A merged report: the shards it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<ShardRecord>,
    /// A merged report: the case ids of the plan that no shard ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// One shard of a plan (`--partition`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRecord {
    /// `hash:2/4`.
    pub label: String,
    pub index: u32,
    pub total: u32,
    /// `--partition` or the scheduler variables `auto` read.
    pub source: String,
    /// How many of the plan's cases this shard ran.
    pub cases: usize,
}

/// A shard inside a merged report: which run it was and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// The folder the shard was read from.
    pub dir: String,
    /// `hash:2/4`, or `whole plan` for a run without `--partition`.
    pub partition: String,
    pub host: Option<String>,
    pub gpu: Option<String>,
    pub timestamp_utc: String,
    pub cases: usize,
    pub wall_s: Option<f64>,
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
    /// The commit the run was built from (`env.json`'s `git.commit`), `+dirty` appended when
    /// the working tree had changes; `None` outside a git checkout.
    pub fn git_commit(&self) -> Option<String> {
        let git = self.environment.get("git")?;
        let commit = git.get("commit")?.as_str()?;
        let dirty = git.get("dirty").and_then(serde_json::Value::as_bool) == Some(true);
        Some(format!("{commit}{}", if dirty { "+dirty" } else { "" }))
    }

    /// Whether a debug build of apex-host measured the run (`env.json`'s `tool.build_profile`):
    /// it builds and loads the plugins' debug builds, so its timings are not the kernels'.
    pub fn debug_build(&self) -> bool {
        self.environment.pointer("/tool/build_profile") == Some(&"debug".into())
    }

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
