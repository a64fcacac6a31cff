//! [`Failure`]: how a subcommand that stops early says why (an exit code and a one-line message),
//! and [`exit_code_of`], which prints it. Shared by `run` and `merge`.

use super::exit_codes::ApexExitCode;
use crate::report::term::errln;

/// An exit code and the message printed as `error: <message>`.
pub type Failure = (i32, String);

/// An internal error (an I/O failure, a bug): exit 70.
pub fn internal(e: impl std::fmt::Display) -> Failure {
    (ApexExitCode::INTERNAL, e.to_string())
}

/// The exit code of a subcommand's outcome, printing the message of a failure.
pub fn exit_code_of(outcome: Result<i32, Failure>) -> i32 {
    match outcome {
        Ok(code) => code,
        Err((code, message)) => {
            errln!("error: {message}");
            code
        }
    }
}
