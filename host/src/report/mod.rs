//! Report writing: the only module that writes results to files and the terminal.
//!
//! ```text
//! run ─► Progress (live bar / CI lines) ─────────────────────────────► stderr
//!    └─► RunWriter::begin ─► record(case)… ─► finish(summary, manifest, env)
//!           .partial/<run_id>/cases.jsonl      env.json, kernel_manifest.json,
//!                                              kernels/<id>.json, summary.json, summary.md
//! ```
//!
//! - [`throughput`]: rates from a kernel's declared work at a p50, against the bandwidth line of
//!   its read:write mix ([`BandwidthLines`]).
//! - [`env::collect`]: the host part of `env.json`.
//! - [`RunWriter`]: streaming, crash-safe writer of one run's report ([`read_partial`] reads
//!   back what a killed run finished).
//! - [`OutputLock`]: the advisory lock that gives an output directory one writer at a time.
//! - [`render_summary_markdown`]: `summary.md` (its `## Kernel figures` section:
//!   `figures_section`), with findings derived from the data
//!   ([`findings::analyze`]) and a params column that shows what varies ([`param_columns`]);
//!   its `## Side by side with anchors` section: `anchors_section`; its Environment table, shared
//!   with index.html: `environment_table`.
//! - [`progress::Progress`] and [`final_table`]: what the terminal shows during and after a run;
//!   [`term`]: the `out!`/`outln!`/`errln!` macros every command prints with (a closed pipe ends
//!   the output quietly instead of panicking).
//! - [`exports`]: `--format csv|junit|bmf|github-action-benchmark`, the results for other tools.
//! - [`html`]: `index.html`, the self-contained report with its charts.
//!
//! JSON Schemas of every file: `docs/schemas/`.

pub(crate) mod anchors_section;
mod atomic;
pub mod calibration;
pub(crate) mod case_view;
pub mod env;
pub(crate) mod environment_table;
pub mod exports;
mod figures_section;
mod final_table;
pub mod findings;
pub mod fmt;
pub mod html;
pub mod lock;
pub(crate) mod markdown;
mod notes_section;
mod param_columns;
pub mod paths;
pub mod progress;
mod table;
pub(crate) mod term;
#[cfg(test)]
pub(crate) mod test_support;
mod throughput;
mod writer;

pub use atomic::{WriteError, to_sorted_json, write_atomic, write_json_atomic};
pub use final_table::{TOP_CASES, final_table, print_final};
pub use lock::{Busy, LockError, OutputLock, Wait};
pub use markdown::render_summary_markdown;
pub use progress::Progress;
pub use throughput::{BandwidthLines, throughput, unit_rate};
pub use writer::{
    KERNEL_REPORT_SCHEMA_VERSION, ReadPartialError, RunWriter, kernel_reports, read_partial,
    write_summary_markdown,
};
