//! bench.yaml configuration (product.md §4; every key is in `docs/config-reference.md`).
//!
//! ```text
//! plugins/<crate>/bench.yaml ─┐                      ┌─ SuiteConfig::check(kernels)   (before running)
//! bench.yaml.d/*.yaml ────────┼─ load() ─► SuiteConfig ─ SuiteConfig::expand(kernel, CliOverrides)
//!   (lexical order)           │  yaml → Reader → Entry      └─► Vec<ResolvedCase> (+ provenance)
//! ```
//!
//! * [`load`] reads every file into a located YAML tree (`yaml.rs`), validates it into entries
//!   (`entry.rs` with `tolerance.rs`, `protocol.rs`, `skip_conditions.rs`) and returns **all**
//!   errors of all files together as [`ConfigErrors`], each `file:line:col: key.path: message` plus a
//!   `(hint: ...)` line.
//! * [`SuiteConfig::expand`] (`resolve.rs`) layers kernel defaults < plugin bench.yaml <
//!   bench.yaml.d (later file wins) < CLI, expands sweeps (`sweep.rs`) and records
//!   [`Provenance`] for each value.
//! * `check.rs` holds the checks that need every discovered kernel.
//! * [`shape_spec`] parses the `name=AxBxC` shape strings of the TensorRT flags.

mod axes;
mod check;
mod entry;
mod errors;
mod overrides;
mod protocol;
mod provenance;
mod reader;
mod resolve;
pub mod shape_spec;
mod skip_conditions;
pub(crate) mod suggest;
mod suite;
mod sweep;
mod tolerance;
mod yaml;

#[cfg(test)]
mod tests;

pub use errors::{ConfigError, ConfigErrorKind, ConfigErrors, Loc};
pub use overrides::CliOverrides;
pub use provenance::{Provenance, Source};
pub use resolve::{MAX_CASES_PER_KERNEL, ResolvedCase};
pub use suite::{ConfigFile, FileKind, SuiteConfig, load};
