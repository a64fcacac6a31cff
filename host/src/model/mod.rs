//! The plain data every stage hands to the next: case keys, per-case results and the run summary.
//! Serde types only; no I/O and no logic beyond naming. These are the shapes of `kernels/<id>.json`
//! and `summary.json` (schemas in `docs/schemas/`).

mod anchor;
mod case;
mod figure;
mod kernel;
mod protocol;
mod result;
mod summary;

pub use anchor::{AnchorFile, AnchorMatch, AnchorSummary, UnmatchedAnchor};
pub use case::{CaseKey, ParamMap, render_param_value};
pub use figure::{FigureBlock, SeriesStats};
pub use kernel::{KernelInfo, ParamInfo, tolerance_map};
pub use protocol::{ProtocolSettings, StoppingRule};
pub use result::{
    AccuracyBlock, CaseResult, CaseStatus, EnergyBlock, ModeTiming, Outliers, ProtocolInfo,
    Provenance, Resources, Summary, Throughput, WorkBlock,
};
pub use summary::{
    PartitionRecord, PlanRecord, RunSummary, STATUS_INCOMPLETE, STATUS_INTERRUPTED, SUITE_NAME,
    SUMMARY_SCHEMA_VERSION, ShardRecord, TimeAccounting,
};
