//! The regression gate: a run against a baseline, by the seeds' rule exactly, plus noise-aware
//! verdicts, and the files that record the outcome.
//!
//! ```text
//! baselines/*.json ─► Baseline ─┐            (or `git show REF:path`, or a run's summary.json)
//! summary.json ─► RunSummary ───┴─► gate() ─► Comparison ─► write_outputs()
//!                                                 │           compare_summary.json, trend.json,
//!                                                 │           regressions.md
//!                                                 └─► exit_code(): 0 pass, 2 gate failed
//! ```
//!
//! `gate` is pure (no I/O, no clock); only `write_outputs`, `history` and `git` touch files or
//! processes. The rule and the verdicts are documented in `docs/protocol.md` ("## Regression
//! gate") and in [`rule`] and [`verdict`].

mod baseline;
mod comparison;
mod error;
mod exit;
mod gate;
pub mod git;
pub mod history;
mod lookup;
mod options;
mod outputs;
mod rebase;
pub mod rule;
mod selection;
mod template;
pub mod verdict;

pub use baseline::{
    BASELINE_SCHEMA_VERSION, Baseline, BaselineMetric, DEFAULT_MAX_REGRESSION_ABS_MS,
    DEFAULT_MAX_REGRESSION_RATIO,
};
pub use comparison::{Check, CheckStatus, Comparison, GateCounts, SELECTION_METRIC, STATUS_METRIC};
pub use error::CompareError;
pub use exit::GateExitCode;
pub use gate::gate;
pub use lookup::{KNOWN_STATS, split_metric};
pub use options::{
    DEFAULT_GATE_SEED, DEFAULT_PRACTICAL_THRESHOLD, DEFAULT_SIGNIFICANCE, GateOptions,
};
pub use outputs::{
    COMPARE_SUMMARY_FILE, REGRESSIONS_FILE, TREND_FILE, check_lines, compare_summary_json,
    gate_notes, notes_of, render_regressions_markdown, trend_json, write_outputs,
};
pub use rebase::rebase;
pub use selection::Selection;
pub use template::{
    DEFAULT_TEMPLATE_STATS, EmittedTemplate, TemplateOptions, default_tolerance, emit_template,
    emit_template_from_runs,
};
pub use verdict::{Verdict, VerdictMethod, VerdictReport};
