//! The plan: every case the run will report, in order. Kernels × sweep points × backends ×
//! precisions, filtered by `--filter`, each carrying its resolved protocol and tolerance and, for
//! a case that will not run, its skip reason; with `--partition`, this machine's share of it.
//!
//! **Invariant:** a skipped case stays in the plan (and so in every report) with its reason; a
//! skip is a result, never an error. A case outside this shard is not skipped: it belongs to
//! another shard's report, and `apex-host merge` puts them together.

mod build;
mod identity;
mod partition;

pub use build::{Filter, Plan, PlannedCase, build};
pub use identity::{PlanIdentity, config_digest};
pub use partition::{Partition, PartitionError, PartitionSpec, Strategy};
