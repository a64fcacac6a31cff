//! The regression gate of `run`: `--compare FILE` or `--compare-to REF`, through `crate::compare`.
//! The baseline is read before anything runs (a missing file or ref is a configuration error, not
//! a wasted run); the gate's outputs (compare_summary.json, trend.json, regressions.md) go next to
//! the run's report.

use std::path::Path;

use super::exit_codes::ApexExitCode;
use super::run::RunArgs;
use crate::compare::{self, Baseline};
use crate::model::RunSummary;
use crate::report::term::errln;

/// What the gate decided, for the exit code and for summary.md.
pub struct GateResult {
    pub failed: bool,
    pub markdown: String,
    /// Every check, for the exports that show gate failures (JUnit).
    pub comparison: compare::Comparison,
}

/// The baseline of `--compare` or `--compare-to`, when one was asked for.
pub fn load_baseline(
    args: &RunArgs,
    root: Option<&Path>,
    facts: &crate::facts::Facts,
) -> Result<Option<Baseline>, (i32, String)> {
    let baseline = match (&args.compare, &args.compare_to) {
        (Some(path), _) if path.as_os_str() == AUTO => {
            let path = auto_baseline(args, root.unwrap_or(Path::new(".")), facts)?;
            say_which(&path);
            Baseline::load(&path)
        }
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

fn say_which(path: &Path) {
    errln!("--compare auto: gating against {}", path.display());
}

/// `--compare auto`.
pub const AUTO: &str = "auto";

/// The baseline `--compare auto` picks: `baselines/gpu-<class>.json` for the GPU of a run that
/// measures CUDA, `baselines/cpu.json` for a CPU-only run. A missing file is a configuration
/// error that names the class and the command that makes the file.
fn auto_baseline(
    args: &RunArgs,
    root: &Path,
    facts: &crate::facts::Facts,
) -> Result<std::path::PathBuf, (i32, String)> {
    let cuda_run = args
        .backends
        .as_ref()
        .is_none_or(|b| b.iter().any(|x| x.as_str() == "cuda"))
        && facts.cuda.available;
    if !cuda_run {
        return Ok(root.join("baselines/cpu.json"));
    }
    let name = facts.cuda.device_name.clone().unwrap_or_default();
    let class = crate::facts::device_class(&name).ok_or_else(|| {
        (
            ApexExitCode::CONFIG_ERROR,
            format!("--compare auto: cannot tell the class of GPU `{name}`; pass --compare FILE"),
        )
    })?;
    let path = root.join(format!("baselines/gpu-{class}.json"));
    if !path.is_file() {
        return Err((
            ApexExitCode::CONFIG_ERROR,
            format!(
                "--compare auto: no baseline for GPU class `{class}` ({name}): {} does not exist \
                 (hint: `apex-host run --backends cuda --quick --output-dir reports-{class}` on this GPU, then \
                 `apex-host baseline emit --from reports-{class}/summary.json --output {}`)",
                path.display(),
                path.display()
            ),
        ));
    }
    Ok(path)
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
        comparison,
    })
}
