//! The `apex-host` binary: parse the command line, run it, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    apex_host::cli::main()
}
