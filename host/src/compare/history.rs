//! Run history: each run can be appended to a folder as one small record, and the trend of every
//! metric across the recorded runs is rendered as Markdown.
//!
//! A record (`<timestamp>-<content hash>.json`) keeps the run's suite, timestamp, status, git
//! commit (from `environment.git.commit` or `environment.git_commit` when the run recorded one)
//! and the headline `p50_ms` / `p95_ms` of every `ok` case by metric id; raw samples are not
//! kept, so the folder stays small enough to commit or cache in CI.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::CompareError;
use super::lookup::{Current, lookup};
use crate::model::{CaseStatus, RunSummary};
use crate::report::{to_sorted_json, write_atomic};

pub const HISTORY_SCHEMA_VERSION: u32 = 1;
/// Runs shown as columns by [`render_trend`] (the most recent ones).
pub const TREND_COLUMNS: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryRecord {
    pub schema_version: u32,
    pub suite: String,
    pub timestamp_utc: String,
    pub status: String,
    pub git_commit: Option<String>,
    /// Metric id to milliseconds.
    pub metrics: BTreeMap<String, f64>,
}

impl HistoryRecord {
    pub fn from_run(run: &RunSummary) -> Self {
        let mut metrics = BTreeMap::new();
        for (id, case) in &run.benchmarks {
            if case.status != CaseStatus::Ok {
                continue;
            }
            for stat in ["p50_ms", "p95_ms"] {
                let metric = format!("{id}/{stat}");
                if let Current::Value(v) = lookup(run, &metric) {
                    metrics.insert(metric, v.ms);
                }
            }
        }
        let env = &run.environment;
        let git_commit = env
            .pointer("/git/commit")
            .or_else(|| env.get("git_commit"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        Self {
            schema_version: HISTORY_SCHEMA_VERSION,
            suite: run.suite.clone(),
            timestamp_utc: run.timestamp_utc.clone(),
            status: run.status.clone(),
            git_commit,
            metrics,
        }
    }
}

/// Appends `run` to `history_dir` (created if needed) and returns the new record's path.
/// Appending the same run twice writes the same file name, so it is idempotent.
pub fn append(history_dir: &Path, run: &RunSummary) -> Result<PathBuf, CompareError> {
    let record = HistoryRecord::from_run(run);
    let text = to_sorted_json(&record).map_err(|source| crate::report::WriteError::Json {
        path: history_dir.to_path_buf(),
        source,
    })?;
    let hash = hex(&Sha256::digest(text.as_bytes()))[..12].to_string();
    let stamp: String = record
        .timestamp_utc
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let path = history_dir.join(format!("{stamp}-{hash}.json"));
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// Every record in `history_dir`, oldest first (by timestamp, then file name). Files that are not
/// `.json` are ignored; a `.json` file that is not a record is an error naming it.
pub fn load(history_dir: &Path) -> Result<Vec<HistoryRecord>, CompareError> {
    let entries = std::fs::read_dir(history_dir).map_err(|source| CompareError::History {
        path: history_dir.to_path_buf(),
        source,
    })?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| CompareError::History {
                path: history_dir.to_path_buf(),
                source,
            })?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).map_err(|e| CompareError::read(&path, e))?;
            let record: HistoryRecord = serde_json::from_str(&text).map_err(|e| {
                CompareError::parse(&path, "history folders hold only records written by `--history`; move other files out", e)
            })?;
            found.push((sort_key(&record.timestamp_utc), path, record));
        }
    }
    found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    Ok(found.into_iter().map(|(_, _, r)| r).collect())
}

/// Orders RFC 3339 timestamps by instant even when offsets differ; unparsable ones sort by text.
fn sort_key(ts: &str) -> (i128, String) {
    let nanos = ts
        .parse::<jiff::Timestamp>()
        .map(|t| t.as_nanosecond())
        .unwrap_or(i128::MIN);
    (nanos, ts.to_string())
}

/// Reads `history_dir` and renders [`render_trend`].
pub fn render_trend_markdown(history_dir: &Path) -> Result<String, CompareError> {
    Ok(render_trend(&load(history_dir)?))
}

/// A Markdown table per metric: the last [`TREND_COLUMNS`] runs as columns, and the change from
/// the first shown run to the last.
pub fn render_trend(records: &[HistoryRecord]) -> String {
    let mut md = String::from("# Performance trend\n\n");
    if records.is_empty() {
        md.push_str("No runs recorded yet (hint: `apex-host compare ... --history DIR` appends one per run).\n");
        return md;
    }
    let shown = &records[records.len().saturating_sub(TREND_COLUMNS)..];
    let _ = writeln!(
        md,
        "{} runs recorded, the last {} shown (p50 and p95 in ms).\n",
        records.len(),
        shown.len()
    );
    let mut header = String::from("| metric |");
    let mut rule = String::from("| --- |");
    for r in shown {
        let commit = r
            .git_commit
            .as_deref()
            .map(|c| &c[..c.len().min(8)])
            .unwrap_or("-");
        let date = r.timestamp_utc.get(..16).unwrap_or(&r.timestamp_utc);
        let _ = write!(header, " {date} `{commit}` |");
        rule.push_str(" ---: |");
    }
    header.push_str(" change |");
    rule.push_str(" ---: |");
    let _ = writeln!(md, "{header}\n{rule}");
    let metrics: BTreeSet<&String> = shown.iter().flat_map(|r| r.metrics.keys()).collect();
    for m in metrics {
        let values: Vec<Option<f64>> = shown.iter().map(|r| r.metrics.get(m).copied()).collect();
        let mut row = format!("| `{m}` |");
        for v in &values {
            let _ = write!(
                row,
                " {} |",
                v.map_or_else(|| "-".into(), |x| format!("{x:.4}"))
            );
        }
        let present: Vec<f64> = values.iter().flatten().copied().collect();
        let change = match (present.first(), present.last()) {
            (Some(&a), Some(&b)) if present.len() >= 2 && a > 0.0 => {
                format!("{:+.1}%", (b / a - 1.0) * 100.0)
            }
            _ => "-".into(),
        };
        let _ = writeln!(row, " {change} |");
        md.push_str(&row);
    }
    md
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
