//! The worker's wire format: the request the host writes for one case and the reply the worker
//! writes back, both JSON files in the case's scratch folder (never the worker's stdout, which
//! plugin code may write to). Versioned by [`WIRE_VERSION`].

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::model::{AccuracyBlock, EnergyBlock, ParamMap, ProtocolSettings, WorkBlock};

/// Bumped on any change to these types; host and worker are the same binary, so a mismatch
/// means a stale worker executable.
pub const WIRE_VERSION: u32 = 5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRequest {
    pub wire_version: u32,
    pub library: PathBuf,
    pub kernel: String,
    pub params: ParamMap,
    pub backend: String,
    pub precision: String,
    pub seed: u64,
    pub settings: ProtocolSettings,
    pub tolerance: BTreeMap<String, f64>,
    pub graph_capturable: bool,
    /// CUDA device ordinal for CUDA cases.
    pub device: u32,
    /// Wall-clock time (UNIX seconds) at which the host spawned the worker, to measure start-up.
    pub spawned_at_unix_s: f64,
}

/// One sampled timing mode, raw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawMode {
    pub mode: String,
    pub calls_per_sample: u64,
    pub graph: bool,
    pub per_call_ms: Vec<f64>,
    /// How many of `per_call_ms` each worker process took, in order (one entry per process).
    #[serde(default)]
    pub samples_per_process: Vec<usize>,
    pub warmup_calls: u64,
    pub stopped_by: String,
    pub elapsed_s: f64,
    /// Batch mode: `dram_cold` or `l2_hot` (see `measure::rotation`).
    #[serde(default)]
    pub cache: Option<String>,
    /// Batch mode: the buffer sets the calls rotated over (1: none).
    #[serde(default)]
    pub buffer_sets: Option<u32>,
    /// Batch mode: the samples whose host-side enqueue outlasted the hold before them (absent:
    /// none; `cuda::batch` explains).
    #[serde(default)]
    pub short_holds: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WorkerReply {
    pub wire_version: u32,
    /// Set when the case could not be measured: `setup failed: ...`, `run failed: ...`.
    pub error: Option<String>,
    pub modes: Vec<RawMode>,
    pub accuracy: Option<AccuracyBlock>,
    pub work: Option<WorkBlock>,
    pub peak_rss_mb: Option<f64>,
    pub peak_device_memory_mb: Option<f64>,
    pub energy: Option<EnergyBlock>,
    /// Milliseconds from spawn to the plugin being loaded, and to the case being set up.
    pub loaded_after_ms: f64,
    pub ready_after_ms: f64,
    /// Seconds spent in each phase of the case, in order (`load`, `setup`, `cold`, …).
    #[serde(default)]
    pub phases: Vec<(String, f64)>,
    /// The cold mode's subtracted launch floor, in µs.
    #[serde(default)]
    pub launch_floor_us: Option<f64>,
    /// The plugin's figures (`Instance::figures`), already checked by the worker.
    #[serde(default)]
    pub figures: Vec<RawFigure>,
    /// The plugin's notes (`Instance::notes`).
    #[serde(default)]
    pub notes: Vec<String>,
    /// How many cases this worker process measured before this one (0: its first; a session
    /// worker's later cases reuse its process, plugin library and device rig).
    #[serde(default)]
    pub worker_case: u32,
    /// Set when the kernel said the case cannot run here (`Kernel::unavailable`): the case is
    /// `skipped` with this reason, and nothing else in the reply is set.
    #[serde(default)]
    pub skipped: Option<String>,
}

/// One plugin figure as the worker read it; the values of several processes are concatenated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawFigure {
    pub name: String,
    pub unit: String,
    pub values: Vec<f64>,
}

/// Seconds since the UNIX epoch, as f64.
pub fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
