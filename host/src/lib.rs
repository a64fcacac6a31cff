//! apex-host: discovers kernel plugins, runs one measurement protocol on CPU and CUDA, verifies
//! every output, and writes one report and one regression verdict.
//!
//! ```text
//! bench.yaml + bench.yaml.d ─► config ─┐
//! plugins/ ─► discovery ───────────────┼─► plan (+ skip) ─► measure (one worker per case)
//! facts (cuda, nvml, os, env) ─────────┘                        │ raw samples, accuracy
//!                                   stats ◄─────────────────────┘
//!                                     └─► report (JSON + Markdown) ─► compare (baseline gate)
//! ```
//!
//! `docs/ARCHITECTURE.md` states the invariants of each stage.

pub mod anchors;
pub mod attest;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cuda;
pub mod discovery;
pub mod facts;
pub mod interrupt;
pub mod measure;
pub mod merge;
pub mod model;
pub mod plan;
pub mod report;
pub mod scaffold;
pub mod skip;
pub mod stats;
