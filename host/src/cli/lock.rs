//! The output-directory lock as the commands use it: the waiting message, `--no-wait`, and the
//! exit code of a lock that cannot be had.

use std::path::Path;

use super::exit_codes::ApexExitCode;
use crate::report::term::errln;
use crate::report::{LockError, OutputLock, Wait};

/// Locks `dir` for `command`, saying on stderr whom it waits for (unless `no_wait`, which fails
/// at once). `stop` ends the wait (a Ctrl-C caught by `run`).
pub fn lock_output_dir(
    dir: &Path,
    command: &str,
    no_wait: bool,
    stop: impl Fn() -> bool,
) -> Result<OutputLock, LockError> {
    let wait = if no_wait { Wait::No } else { Wait::Yes };
    OutputLock::acquire(dir, command, wait, announce_wait, stop)
}

fn announce_wait(busy: &crate::report::Busy) {
    errln!("waiting for {busy} to finish\n(hint: `--no-wait` exits instead of waiting)");
}

/// [`ApexExitCode::OUTPUT_LOCKED`] for a busy directory, [`ApexExitCode::INTERRUPTED`] for a wait
/// ended by Ctrl-C, [`ApexExitCode::INTERNAL`] for an I/O error.
pub fn exit_code(e: &LockError) -> i32 {
    match e {
        LockError::Busy(_) => ApexExitCode::OUTPUT_LOCKED,
        LockError::Interrupted(_) => ApexExitCode::INTERRUPTED,
        LockError::Io { .. } => ApexExitCode::INTERNAL,
    }
}
