//! `apex-host baseline emit`: writes a baseline template from a run's `summary.json` with the
//! seeds' default tolerances per kind of metric (`compare::default_tolerance`), to be tightened
//! by hand. The seeds' `--emit-baseline-template`.

use std::path::PathBuf;

use super::compare::load_run;
use super::exit_codes::ApexExitCode;
use crate::compare::{CompareError, KNOWN_STATS, TemplateOptions, emit_template_from_runs};
use crate::report::term::{errln, outln};
use crate::report::write_json_atomic;

#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub command: BaselineCommand,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum BaselineCommand {
    /// Write a baseline template from a run (values from the run, default tolerances).
    Emit(EmitArgs),
}

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Emit options")]
pub struct EmitArgs {
    /// The run to take values from (repeatable: several runs of the same build give each metric
    /// the median value and a ratio widened to the spread between them).
    #[arg(long, value_name = "FILE", default_value = "reports/summary.json")]
    pub from: Vec<PathBuf>,

    /// Where to write the baseline (overwritten atomically).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,

    /// Use this max_regression_ratio for every metric [default: per kind of metric].
    #[arg(long, value_name = "R")]
    pub ratio: Option<f64>,

    /// Use this max_regression_abs_ms for every metric [default: per kind of metric].
    #[arg(long, value_name = "A")]
    pub abs_ms: Option<f64>,

    /// Statistics to baseline per case (repeatable; `p50_ms`, `p95_ms`, `cold.p50_ms`, …) [default: p50_ms, p95_ms].
    #[arg(long = "stat", value_name = "STAT")]
    pub stats: Vec<String>,

    /// Replace the generated baseline_notes.
    #[arg(long, value_name = "TEXT")]
    pub notes: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum BaselineCliError {
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error(
        "`--{flag} {value}` must be a finite number >= 0\n(hint: ratio 0.75 allows 75 % over the baseline value)"
    )]
    Tolerance { flag: &'static str, value: f64 },
    #[error("`--stat {0}` is not a known statistic\n(hint: use one of {known}, optionally prefixed by a timing mode such as `cold.`)", known = KNOWN_STATS.join(", "))]
    Stat(String),
}

impl BaselineCliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Compare(CompareError::Write(_)) => ApexExitCode::INTERNAL,
            _ => ApexExitCode::CONFIG_ERROR,
        }
    }
}

pub fn exec(args: &BaselineArgs) -> Result<i32, BaselineCliError> {
    match &args.command {
        BaselineCommand::Emit(emit) => exec_emit(emit),
    }
}

/// [`exec`], with any error printed to stderr and mapped to its exit code.
pub fn exec_to_code(args: &BaselineArgs) -> i32 {
    match exec(args) {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            e.exit_code()
        }
    }
}

fn exec_emit(args: &EmitArgs) -> Result<i32, BaselineCliError> {
    for (flag, value) in [("ratio", args.ratio), ("abs-ms", args.abs_ms)] {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(BaselineCliError::Tolerance { flag, value: v });
        }
    }
    if let Some(bad) = args
        .stats
        .iter()
        .find(|s| !KNOWN_STATS.contains(&s.rsplit('.').next().unwrap_or(s)))
    {
        return Err(BaselineCliError::Stat(bad.clone()));
    }
    let runs = args
        .from
        .iter()
        .map(|p| load_run(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut opts = TemplateOptions {
        ratio: args.ratio,
        abs_ms: args.abs_ms,
        notes: args.notes.clone(),
        ..TemplateOptions::default()
    };
    if !args.stats.is_empty() {
        opts.stats = args.stats.clone();
    }
    let emitted = emit_template_from_runs(&runs, &opts);
    write_json_atomic(&args.output, &emitted.baseline).map_err(CompareError::from)?;
    show(args, emitted.baseline.metrics.len(), &emitted.left_out);
    Ok(ApexExitCode::OK)
}

fn show(args: &EmitArgs, metrics: usize, left_out: &[(String, crate::model::CaseStatus)]) {
    outln!(
        "wrote {} ({metrics} metrics from {})",
        args.output.display(),
        args.from
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (id, status) in left_out {
        outln!("left out {id}: status {}", status.as_str());
    }
    if metrics > 0 {
        outln!(
            "tighten the tolerances by hand for this machine (docs/protocol.md, \"Regression gate\")"
        );
    }
}

fn print_error(e: &BaselineCliError) {
    errln!("apex-host baseline emit: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Baseline;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: BaselineArgs,
    }

    fn parse(argv: &[&str]) -> Result<BaselineArgs, clap::Error> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("baseline").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn emit_writes_a_template_that_the_run_passes() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cpu.json");
        let args = parse(&[
            "emit",
            "--from",
            "tests/fixtures/attest/reports/summary.json",
            "--output",
            out.to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(exec(&args).unwrap(), ApexExitCode::OK);
        let b = Baseline::load(&out).unwrap();
        assert_eq!(b.metrics.len(), 2, "p50 and p95 of the one ok case");
        assert!(b.required_status.is_none(), "CPU-only template");
        assert!(b.metrics.values().all(|m| m.value_ms > 0.0));
    }

    #[test]
    fn bad_flags_are_config_errors() {
        let bad = parse(&["emit", "--output", "x.json", "--ratio=-1"]).unwrap();
        let err = exec(&bad).unwrap_err();
        assert_eq!(err.exit_code(), ApexExitCode::CONFIG_ERROR);
        assert!(err.to_string().contains("--ratio -1"), "{err}");
        let bad = parse(&["emit", "--output", "x.json", "--stat", "p42_ms"]).unwrap();
        assert!(exec(&bad).unwrap_err().to_string().contains("p42_ms"));
    }
}
