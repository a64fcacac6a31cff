//! `apex-host __worker --request FILE --reply FILE`: one case, in this process;
//! `apex-host __worker --session`: a sequence of cases read from standard input.

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use crate::report::term::errln;

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[arg(long, required_unless_present = "session")]
    pub request: Option<PathBuf>,
    #[arg(long, required_unless_present = "session")]
    pub reply: Option<PathBuf>,
    /// Serve cases from standard input until it ends (the host's session workers).
    #[arg(long, conflicts_with_all = ["request", "reply"])]
    pub session: bool,
}

pub fn exec(args: &WorkerArgs) -> i32 {
    let served = match (&args.request, &args.reply) {
        (Some(request), Some(reply)) if !args.session => crate::measure::run_worker(request, reply),
        _ => crate::measure::run_session(),
    };
    match served {
        Ok(()) => ApexExitCode::OK,
        Err(e) => {
            errln!("apex-host worker: {e}");
            ApexExitCode::INTERNAL
        }
    }
}
