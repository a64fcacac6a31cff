//! `apex-host __probe-device --device N`: exits 0 when this process can use GPU N (a context,
//! a 64 MiB fill, a kernel, a synchronize); otherwise prints the failing step and exits 1. The
//! pool of a multi-GPU run decides with it whether a GPU that just failed a case stays.

use super::exit_codes::ApexExitCode;
use crate::report::term::errln;

#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    #[arg(long)]
    pub device: u32,
}

pub fn exec(args: &ProbeArgs) -> i32 {
    match crate::cuda::probe(args.device as usize) {
        Ok(()) => ApexExitCode::OK,
        Err(e) => {
            errln!("{}", e.case_reason());
            ApexExitCode::CASES_FAILED
        }
    }
}
