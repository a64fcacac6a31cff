//! The regression gate of `run`: `--compare FILE` or `--compare-to REF`, through `crate::compare`.
//! The baseline is read before anything runs (a missing file or ref is a configuration error, not
//! a wasted run); the gate's outputs (compare_summary.json, trend.json, regressions.md) go next to
//! the run's report.

use std::path::Path;

use super::exit_codes::ApexExitCode;
use super::run::RunArgs;
use crate::compare::{self, Baseline};
use crate::model::RunSummary;

/// What the gate decided, for the exit code and for summary.md.
pub struct GateResult {
    pub failed: bool,
    pub markdown: String,
}

/// The baseline of `--compare` or `--compare-to`, when one was asked for.
pub fn load_baseline(
    args: &RunArgs,
    root: Option<&Path>,
) -> Result<Option<Baseline>, (i32, String)> {
    let baseline = match (&args.compare, &args.compare_to) {
        (Some(path), _) => Baseline::load(path),
        (None, Some(git_ref)) => compare::git::baseline_from_ref(
            root.unwrap_or(Path::new(".")),
            git_ref,
            &args.baseline_path,
        ),
        (None, None) => return Ok(None),
    };
    baseline
        .map(Some)
        .map_err(|e| (ApexExitCode::CONFIG_ERROR, e.to_string()))
}

/// Gates `summary` against `baseline` and writes the gate's outputs into `out_dir`.
pub fn run_gate(
    baseline: &Baseline,
    summary: &RunSummary,
    out_dir: &Path,
) -> Result<GateResult, (i32, String)> {
    let comparison = compare::gate(summary, baseline, &compare::GateOptions::default());
    compare::write_outputs(&comparison, out_dir)
        .map_err(|e| (ApexExitCode::INTERNAL, e.to_string()))?;
    Ok(GateResult {
        failed: comparison.exit_code() != ApexExitCode::OK,
        markdown: compare::render_regressions_markdown(&comparison),
    })
}
