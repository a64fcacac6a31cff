//! `index.html`: one self-contained HTML report of a run (inline SVG charts drawn with plotters,
//! inline CSS, no script, no request leaves the file), written with every run, by `report` and
//! by `merge`.
//!
//! - [`page`]: the shell, the sections in order, escaping.
//! - [`charts`]: the plotters glue (embedded font, palette, SVG into a string).
//! - [`anchors`]: the side-by-side table of anchors (`--anchor-results`) with ratio bars.
//! - [`case_plots`]: per case, the sample distribution with Tukey fences, the iteration times,
//!   and the timing modes side by side.
//! - [`sweeps`]: time and throughput against each swept parameter (seed 004's views).
//! - [`copy_line`]: `% of the copy line` bars (L2-hot figures against the L2 line).
//! - [`compare_table`]: the gate in nvbench's compare shape.
//! - [`trend`]: a history folder's trends with change points.

mod anchors;
mod case_plots;
mod charts;
mod compare_table;
mod copy_line;
mod page;
mod sweeps;
mod trend;

use std::path::{Path, PathBuf};

use crate::compare::history::HistoryRecord;
use crate::compare::{COMPARE_SUMMARY_FILE, Check, Comparison};
use crate::model::RunSummary;

pub use charts::ChartError;

/// What the page shows: the run, and optionally its gate result and the history it joined.
#[derive(Debug, Clone, Copy)]
pub struct HtmlInput<'a> {
    pub summary: &'a RunSummary,
    pub gate: Option<&'a GateView>,
    /// The records of a history folder, oldest first.
    pub history: Option<&'a [HistoryRecord]>,
}

/// The gate result the page shows: from the run's own comparison, or read back from the
/// `compare_summary.json` a run or `compare` left in the folder.
#[derive(Debug, Clone, PartialEq)]
pub struct GateView {
    /// The baseline's suite name.
    pub baseline: String,
    /// `pass` or `fail`.
    pub status: String,
    pub checks: Vec<Check>,
    /// The gate's notes (`compare::gate_notes`): a selection's unchecked metrics, a debug build.
    pub notes: Vec<String>,
}

impl GateView {
    pub fn of(comparison: &Comparison) -> Self {
        Self {
            baseline: comparison.baseline_suite.clone(),
            status: comparison.overall_status().to_string(),
            checks: comparison.checks.clone(),
            notes: crate::compare::gate_notes(comparison),
        }
    }

    /// `<dir>/compare_summary.json` as a gate view, `None` when the folder has none.
    pub fn read(dir: &Path) -> Result<Option<Self>, HtmlError> {
        let path = dir.join(COMPARE_SUMMARY_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(HtmlError::Gate {
                    path,
                    message: e.to_string(),
                });
            }
        };
        #[derive(serde::Deserialize)]
        struct File {
            baseline_suite: String,
            status: String,
            checks: Vec<Check>,
            #[serde(default)]
            selection: String,
            #[serde(default)]
            unselected_metrics: usize,
            #[serde(default)]
            build_profile: Option<String>,
        }
        let file: File = serde_json::from_str(&text).map_err(|e| HtmlError::Gate {
            path: path.clone(),
            message: format!("line {} column {}: {e}", e.line(), e.column()),
        })?;
        Ok(Some(Self {
            baseline: file.baseline_suite,
            status: file.status,
            notes: crate::compare::notes_of(
                &file.selection,
                file.unselected_metrics,
                file.build_profile.as_deref() == Some("debug"),
            ),
            checks: file.checks,
        }))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Write(#[from] super::WriteError),
    #[error(transparent)]
    History(#[from] crate::compare::CompareError),
    #[error(
        "failed to read the gate result `{path}`: {message}\n(hint: it is written by `run \
         --compare` or `compare`; delete it or re-run the comparison)"
    )]
    Gate { path: PathBuf, message: String },
}

/// The page as a string.
pub fn render(input: &HtmlInput<'_>) -> Result<String, HtmlError> {
    page::render(input)
}

/// Writes `<dir>/index.html` atomically and returns its path.
pub fn write_index(dir: &Path, input: &HtmlInput<'_>) -> Result<PathBuf, HtmlError> {
    let path = dir.join(super::paths::INDEX_HTML);
    super::write_atomic(&path, render(input)?.as_bytes())?;
    Ok(path)
}

/// [`write_index`] for `summary`, with its gate result and the records of `history_dir` (read
/// here, oldest first) when given.
pub fn write_report(
    dir: &Path,
    summary: &RunSummary,
    gate: Option<&GateView>,
    history_dir: Option<&Path>,
) -> Result<PathBuf, HtmlError> {
    let history = history_dir.map(crate::compare::history::load).transpose()?;
    write_index(
        dir,
        &HtmlInput {
            summary,
            gate,
            history: history.as_deref(),
        },
    )
}
