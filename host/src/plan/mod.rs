//! The plan: every case the run will report, in order. Kernels × sweep points × backends ×
//! precisions, filtered by `--filter`, each carrying its resolved protocol and tolerance and, for
//! a case that will not run, its skip reason.
//!
//! **Invariant:** a skipped case stays in the plan (and so in every report) with its reason; a
//! skip is a result, never an error.

mod build;

pub use build::{Filter, Plan, PlannedCase, build};
