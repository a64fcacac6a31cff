//! The documented exit codes of `apex-host` (README "Exit codes"). One enum, no other literals.

/// Namespace for the exit codes; never instantiated.
pub enum ApexExitCode {}

impl ApexExitCode {
    /// Every case is `ok` or `skipped` (and the gate passed, when one was asked for).
    pub const OK: i32 = 0;
    /// At least one case is `failed` or `failed_accuracy`.
    pub const CASES_FAILED: i32 = 1;
    /// The regression gate failed (`--compare`, `--compare-to`, `compare`), as the seeds exit 2.
    pub const GATE_FAILED: i32 = 2;
    /// A configuration error (bench.yaml, flags, a missing file): nothing ran.
    pub const CONFIG_ERROR: i32 = 3;
    /// The plan had no case to run (everything filtered out or skipped).
    pub const NOTHING_RAN: i32 = 4;
    /// `calibrate` or a CUDA-only command on a machine without a usable GPU.
    pub const NO_DEVICE: i32 = 5;
    /// Bad command-line usage.
    pub const USAGE: i32 = 64;
    /// An internal error (an I/O failure writing reports, a bug).
    pub const INTERNAL: i32 = 70;
    /// `--no-wait` and another apex-host holds the output directory's lock: nothing was written
    /// (sysexits' EX_TEMPFAIL: try again later).
    pub const OUTPUT_LOCKED: i32 = 75;
    /// Ctrl-C (SIGINT) or SIGTERM stopped the run: the cases that finished are in the report
    /// (status `interrupted`); a second signal exits with it at once, writing nothing more
    /// (128 + SIGINT, the shell's convention).
    pub const INTERRUPTED: i32 = 130;
}
