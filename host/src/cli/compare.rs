//! `apex-host compare CURRENT BASELINE`: gates a finished run's `summary.json` against a baseline
//! (a file, another run's summary, or `--compare-to REF`), writes `compare_summary.json`,
//! `trend.json` and `regressions.md`, optionally appends the run to a history folder, and exits
//! 2 when the gate fails.

use std::path::{Path, PathBuf};

use super::exit_codes::ApexExitCode;
use crate::compare::{
    self, Baseline, CompareError, Comparison, GateOptions, check_lines, compare_summary_json,
    gate_notes, trend_json,
};
use crate::model::RunSummary;
use crate::report::term::{errln, outln};
use crate::report::write_json_atomic;

/// Default baseline path inside the repository for `--compare-to`.
pub const DEFAULT_BASELINE_PATH: &str = "baselines/cpu.json";
/// The trend across the history folder, written beside the compare outputs with `--history`.
pub const HISTORY_TREND_FILE: &str = "history_trend.md";

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Compare options")]
pub struct CompareArgs {
    /// The current run's summary.json.
    #[arg(value_name = "CURRENT")]
    pub current: PathBuf,

    /// A baseline file (baselines/*.json), or another run's summary.json: with raw samples
    /// (`run --save-samples`) on both sides the verdicts use both runs' samples.
    #[arg(value_name = "BASELINE", required_unless_present = "compare_to")]
    pub baseline: Option<PathBuf>,

    /// Read the baseline as committed at this git ref (`git show REF:PATH`) instead of BASELINE.
    #[arg(long, value_name = "REF", conflicts_with = "baseline")]
    pub compare_to: Option<String>,

    /// The baseline's path inside the repository, for --compare-to.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_BASELINE_PATH)]
    pub baseline_path: String,

    /// A run summary.json saved with --save-samples, used as the reference for two-sample
    /// verdicts when BASELINE is a baseline file.
    #[arg(long, value_name = "FILE")]
    pub reference_run: Option<PathBuf>,

    /// Take each metric's value from --reference-run (a run of the baseline's reference build on
    /// this machine) and keep the baseline's tolerances: gates a machine the baseline was not
    /// measured on (baselines/README.md, "Another machine").
    #[arg(long, requires = "reference_run")]
    pub rebase: bool,

    /// Where to write compare_summary.json, trend.json and regressions.md [default: CURRENT's folder].
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Also write the compare summary here (the seeds' `--summary`).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// Also write the trend artifact here (the seeds' `--trend-output`).
    #[arg(long, value_name = "FILE")]
    pub trend_output: Option<PathBuf>,

    /// Append the current run to this history folder and render the trend across runs.
    #[arg(long, value_name = "DIR", env = "APEX_HISTORY_DIR")]
    pub history: Option<PathBuf>,

    /// Smallest relative change of a median reported as a regression or an improvement, for
    /// every backend [default: 0.05 on devices, 0.20 on the CPU; twice that for tail quantiles].
    #[arg(long, value_name = "RATIO")]
    pub threshold: Option<f64>,

    /// Also fail on a noise-aware `regress` verdict inside the baseline's tolerance.
    #[arg(long)]
    pub fail_on_regress: bool,

    /// Fail an over-limit metric only when its two-sample verdict confirms the slowdown
    /// (`regress`; needs --save-samples runs on both sides): for machines whose slow periods move
    /// one worker process by 2x (baselines/README.md, "Another machine").
    #[arg(long)]
    pub confirm: bool,

    /// Exit at once (code 75) when another apex-host holds the output directory, instead of
    /// waiting for it.
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CompareCliError {
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error("`--threshold {0}` is not a ratio in [0, 1)\n(hint: 0.05 means 5 %)")]
    Threshold(f64),
    #[error(transparent)]
    Lock(#[from] crate::report::LockError),
}

impl CompareCliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Compare(CompareError::Write(_) | CompareError::History { .. }) => {
                ApexExitCode::INTERNAL
            }
            Self::Lock(e) => super::lock::exit_code(e),
            _ => ApexExitCode::CONFIG_ERROR,
        }
    }
}

/// Reads a run's `summary.json`.
pub fn load_run(path: &Path) -> Result<RunSummary, CompareError> {
    let text = std::fs::read_to_string(path).map_err(|e| CompareError::read(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        CompareError::parse(
            path,
            "CURRENT must be the summary.json written by `apex-host run`",
            e,
        )
    })
}

/// Runs the comparison and writes its files; returns [`ApexExitCode::GATE_FAILED`] on failure.
pub fn exec(args: &CompareArgs) -> Result<i32, CompareCliError> {
    if let Some(t) = args.threshold.filter(|t| !(0.0..1.0).contains(t)) {
        return Err(CompareCliError::Threshold(t));
    }
    let out_dir = args
        .output_dir
        .clone()
        .or_else(|| args.current.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    // Locked before CURRENT is read: when a run is writing that folder, the gate waits for its
    // final summary.json instead of writing the previous run's verdict beside it. (A missing
    // CURRENT is an error below; no folder is created for it.)
    let _lock = if args.current.is_file() {
        Some(super::lock::lock_output_dir(
            &out_dir,
            "compare",
            args.no_wait,
            || false,
        )?)
    } else {
        None
    };
    let current = load_run(&args.current)?;
    let mut baseline = match (&args.baseline, &args.compare_to) {
        (Some(path), _) => Baseline::load(path)?,
        (None, Some(git_ref)) => compare::git::baseline_from_ref(
            Path::new("."),
            git_ref,
            Path::new(&args.baseline_path),
        )?,
        (None, None) => unreachable!("clap requires BASELINE unless --compare-to is given"),
    };
    if let Some(reference) = &args.reference_run {
        let run = load_run(reference)?;
        baseline = if args.rebase {
            compare::rebase(&baseline, run, reference)?
        } else {
            baseline.with_reference(run)
        };
    }
    let mut opts = GateOptions {
        fail_on_regress: args.fail_on_regress,
        confirm: args.confirm,
        ..GateOptions::default()
    };
    if let Some(t) = args.threshold {
        opts = opts.with_threshold(t);
    }
    let cmp = compare::gate(&current, &baseline, &opts);
    let mut written = compare::write_outputs(&cmp, &out_dir)?;
    if let Some(p) = &args.summary {
        write_json_atomic(p, &compare_summary_json(&cmp)).map_err(CompareError::from)?;
        written.push(p.clone());
    }
    if let Some(p) = &args.trend_output {
        write_json_atomic(p, &trend_json(&cmp)).map_err(CompareError::from)?;
        written.push(p.clone());
    }
    if let Some(dir) = &args.history {
        written.push(compare::history::append(dir, &current)?);
        let md = compare::history::render_trend_markdown(dir)?;
        let p = out_dir.join(HISTORY_TREND_FILE);
        crate::report::write_atomic(&p, md.as_bytes()).map_err(CompareError::from)?;
        written.push(p);
    }
    show(&cmp, &written);
    Ok(cmp.exit_code())
}

/// [`exec`], with any error printed to stderr and mapped to its exit code.
pub fn exec_to_code(args: &CompareArgs) -> i32 {
    match exec(args) {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            e.exit_code()
        }
    }
}

fn show(cmp: &Comparison, written: &[PathBuf]) {
    for line in check_lines(cmp) {
        outln!("{line}");
    }
    let c = cmp.counts();
    outln!(
        "gate: {} ({} checks: {} passed, {} over limit, {} missing, {} case not ok, {} failed accuracy; verdicts: {} regress, {} improve, {} inconclusive)",
        cmp.overall_status(),
        c.total,
        c.passed,
        c.over_limit,
        c.missing,
        c.case_not_ok,
        c.failed_accuracy,
        c.verdict_regress,
        c.verdict_improve,
        c.verdict_inconclusive
    );
    for note in gate_notes(cmp) {
        outln!("{}", note.replace("**", ""));
    }
    for p in written {
        outln!("wrote {}", p.display());
    }
}

fn print_error(e: &CompareCliError) {
    errln!("apex-host compare: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::GateExitCode;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn parse(argv: &[&str]) -> Result<CompareArgs, clap::Error> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("compare").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn flags_parse_and_clap_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let a = parse(&[
            "reports/summary.json",
            "baselines/cpu.json",
            "--history",
            "h",
        ])
        .unwrap();
        assert_eq!(a.baseline.as_deref(), Some(Path::new("baselines/cpu.json")));
        let a = parse(&["reports/summary.json", "--compare-to", "origin/main"]).unwrap();
        assert_eq!(
            (a.baseline, a.compare_to.as_deref()),
            (None, Some("origin/main"))
        );
        assert_eq!(a.baseline_path, DEFAULT_BASELINE_PATH);
        assert!(
            parse(&["reports/summary.json"]).is_err(),
            "a baseline source is required"
        );
        assert!(parse(&["s.json", "b.json", "--compare-to", "main"]).is_err());
    }

    #[test]
    fn exec_gates_the_fixture_run_and_writes_every_output() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new("tests/fixtures/attest");
        let out = dir.path().join("out");
        let history = dir.path().join("history");
        let (o, h, t) = (
            out.to_str().unwrap(),
            history.to_str().unwrap(),
            dir.path().join("t.json"),
        );
        let args = parse(&[
            "tests/fixtures/attest/reports/summary.json",
            "tests/fixtures/attest/baseline.json",
            "--output-dir",
            o,
            "--history",
            h,
            "--trend-output",
            t.to_str().unwrap(),
        ])
        .unwrap();
        // The fixture run has a skipped CUDA case the baseline requires: the gate fails.
        assert_eq!(exec(&args).unwrap(), ApexExitCode::GATE_FAILED);
        for f in [
            "compare_summary.json",
            "trend.json",
            "regressions.md",
            HISTORY_TREND_FILE,
        ] {
            assert!(out.join(f).is_file(), "{f}");
        }
        assert_eq!(
            std::fs::read_to_string(out.join("compare_summary.json")).unwrap(),
            std::fs::read_to_string(fixtures.join("reports/compare_summary.json")).unwrap()
        );
        assert!(t.is_file());
        assert_eq!(std::fs::read_dir(&history).unwrap().count(), 1);
        // A missing file is a configuration error, not a gate failure.
        let args = parse(&[
            "no/such/summary.json",
            "tests/fixtures/attest/baseline.json",
        ])
        .unwrap();
        let err = exec(&args).unwrap_err();
        assert_eq!(err.exit_code(), ApexExitCode::CONFIG_ERROR);
        assert!(err.to_string().contains("no/such/summary.json"), "{err}");
    }

    #[test]
    fn gate_exit_code_is_the_apps() {
        assert_eq!(GateExitCode::GATE_FAILED, ApexExitCode::GATE_FAILED);
        assert_eq!(GateExitCode::PASS, ApexExitCode::OK);
    }
}
