//! `apex-host __worker --request FILE --reply FILE`: one case, in this process.

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[arg(long)]
    pub request: PathBuf,
    #[arg(long)]
    pub reply: PathBuf,
}

#[expect(
    clippy::print_stderr,
    reason = "the worker's stderr is captured by the host as the crash context"
)]
pub fn exec(args: &WorkerArgs) -> i32 {
    match crate::measure::run_worker(&args.request, &args.reply) {
        Ok(()) => ApexExitCode::OK,
        Err(e) => {
            eprintln!("apex-host worker: {e}");
            ApexExitCode::INTERNAL
        }
    }
}
