//! The clap application and the dispatch from subcommand to its `exec`.

use clap::{Parser, Subcommand};

use super::exit_codes::ApexExitCode;

/// apex-host: one trustworthy number per kernel, shape and precision.
#[derive(Debug, Parser)]
#[command(name = "apex-host", version, about, long_about = None, max_term_width = 100)]
pub struct App {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Discover, plan and measure every case; write reports/ (and gate against a baseline).
    // Boxed: its flags make it several times the size of every other variant.
    Run(Box<super::run::RunArgs>),
    /// List plugins, load failures, kernels, configs and skip conditions on this machine.
    Discover(super::discover::DiscoverArgs),
    /// Gate a run's summary.json against a baseline (the seeds' rule, plus noise-aware verdicts).
    Compare(super::compare::CompareArgs),
    /// Baseline files: `baseline emit` writes a template from a run.
    Baseline(super::baseline::BaselineArgs),
    /// Re-render summary.md from the JSON of a finished run.
    Report(super::report::ReportArgs),
    /// Measure a kernel of known duration and the device's copy bandwidth (CUDA).
    Calibrate(super::calibrate::CalibrateArgs),
    /// Release attestation and replay manifest over a run's artifacts.
    Attest(super::attest::AttestArgs),
    /// Scaffold a new plugin crate under plugins/NAME (CPU kernel, f64 reference, optional CUDA).
    New(super::new::NewArgs),
    /// Join the reports of `--partition` shards (or of any runs of one plan) into one report.
    Merge(super::merge::MergeArgs),
    /// Internal: run one case in this process (the host re-executes itself).
    #[command(name = "__worker", hide = true)]
    Worker(super::worker::WorkerArgs),
    /// Internal: can this process use GPU N? (the multi-GPU pool's health probe)
    #[command(name = "__probe-device", hide = true)]
    ProbeDevice(super::probe::ProbeArgs),
}

/// Parses the command line, runs the subcommand, maps the outcome to an exit code.
pub fn main() -> std::process::ExitCode {
    let app = match App::try_parse() {
        Ok(app) => app,
        Err(e) => {
            let code = if e.use_stderr() {
                ApexExitCode::USAGE
            } else {
                ApexExitCode::OK
            };
            let _ = e.print();
            return exit(code);
        }
    };
    let code = match app.command {
        Command::Run(args) => super::run::exec(&args),
        Command::Discover(args) => super::discover::exec(&args),
        Command::Compare(args) => super::compare::exec_to_code(&args),
        Command::Baseline(args) => super::baseline::exec_to_code(&args),
        Command::Report(args) => super::report::exec_to_code(&args),
        Command::Calibrate(args) => super::calibrate::exec_to_code(&args),
        Command::Attest(args) => super::attest::exec_to_code(&args),
        Command::Merge(args) => super::merge::exec(&args),
        Command::New(args) => super::new::exec(&args),
        Command::Worker(args) => super::worker::exec(&args),
        Command::ProbeDevice(args) => super::probe::exec(&args),
    };
    exit(code)
}

fn exit(code: i32) -> std::process::ExitCode {
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}
