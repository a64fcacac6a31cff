//! Terminal output that a closed reader ends quietly: the `out!`, `outln!` and `errln!` macros
//! every command prints with. `apex-host run … | head` or a CI step's `| grep -q` may close the
//! pipe before the command's last line; `println!` would then panic ("failed printing to stdout:
//! Broken pipe", exit 101) after the run's files were written, in place of the command's own exit
//! code. A write that fails is dropped here: the files, and the exit code, are the record.

use std::fmt;
use std::io::Write;

/// Writes `args` to stdout; a failed write (a closed pipe) is dropped.
pub fn stdout(args: fmt::Arguments<'_>) {
    if cfg!(test) {
        // libtest captures `print!`, not writes to `io::stdout()`: a unit test's output stays
        // with its test.
        #[expect(
            clippy::print_stdout,
            reason = "unit tests' output, captured by libtest"
        )]
        {
            print!("{args}");
        }
    } else {
        let _ = std::io::stdout().lock().write_fmt(args);
    }
}

/// Writes `args` to stderr; a failed write (a closed pipe) is dropped.
pub fn stderr(args: fmt::Arguments<'_>) {
    if cfg!(test) {
        #[expect(
            clippy::print_stderr,
            reason = "unit tests' output, captured by libtest"
        )]
        {
            eprint!("{args}");
        }
    } else {
        let _ = std::io::stderr().lock().write_fmt(args);
    }
}

/// `print!` through [`stdout`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::report::term::stdout(format_args!($($arg)*))
    };
}

/// `println!` through [`stdout`].
macro_rules! outln {
    () => {
        $crate::report::term::stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::report::term::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` through [`stderr`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::report::term::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
