//! The regression gate of `run`: `--compare FILE` or `--compare-to REF`, through `crate::compare`.
//! Its outputs (compare_summary.json, trend.json, regressions.md) go next to the run's report.

use std::path::Path;

use super::exit_codes::ApexExitCode;
use super::run::RunArgs;
use crate::compare;
use crate::model::RunSummary;

/// What the gate decided, for the exit code and for summary.md.
pub struct GateResult {
    pub failed: bool,
    pub markdown: String,
}

/// Runs the gate when `--compare` or `--compare-to` was given.
pub fn run_gate(
    args: &RunArgs,
    root: Option<&Path>,
    summary: &RunSummary,
) -> Result<Option<GateResult>, (i32, String)> {
    let baseline = match (&args.compare, &args.compare_to) {
        (Some(path), _) => compare::Baseline::load(path),
        (None, Some(git_ref)) => compare::git::baseline_from_ref(
            root.unwrap_or(Path::new(".")),
            git_ref,
            &args.baseline_path,
        ),
        (None, None) => return Ok(None),
    }
    .map_err(|e| (ApexExitCode::CONFIG_ERROR, e.to_string()))?;
    let comparison = compare::gate(summary, &baseline, &compare::GateOptions::default());
    compare::write_outputs(&comparison, &args.output_dir)
        .map_err(|e| (ApexExitCode::INTERNAL, e.to_string()))?;
    Ok(Some(GateResult {
        failed: comparison.exit_code() != ApexExitCode::OK,
        markdown: compare::render_regressions_markdown(&comparison),
    }))
}
