//! [`CaseResult`]: everything measured about one case, as written to `kernels/<id>.json` and
//! inside `summary.json`. Optional blocks are absent when they do not apply (never faked).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::CaseKey;

/// The outcome of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// Measured and verified.
    Ok,
    /// Not run; `reason` says why (a skip condition, no device, not requested).
    Skipped,
    /// Crashed, timed out or returned an error; `reason` says which.
    Failed,
    /// Ran, but the output is outside the tolerance: the timing is not a valid result.
    FailedAccuracy,
}

impl CaseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
            Self::FailedAccuracy => "failed_accuracy",
        }
    }
}

/// Order statistics and dispersion of one timing mode, in milliseconds per call.
/// Methods: `docs/protocol.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
    pub std_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Coefficient of variation, std / mean.
    pub cv: f64,
    pub iqr_ms: f64,
    /// Bootstrap confidence interval of the median.
    pub median_ci_low_ms: f64,
    pub median_ci_high_ms: f64,
    pub ci_level: f64,
    pub outliers: Outliers,
}

/// Tukey fence counts: mild beyond 1.5 IQR, severe beyond 3 IQR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

/// One timing mode of a case: `cpu` (wall clock), `cold` (CUDA, L2 flushed, one launch per
/// sample) or `batch` (CUDA, back-to-back launches, graph-captured where allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeTiming {
    /// Calls timed together in one sample (the sample is divided by it).
    pub calls_per_sample: u64,
    /// Whether the calls of a sample were replayed from a CUDA graph.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graph: bool,
    /// Batch mode: `dram_cold` (the calls of a sample rotated over at least 3 × L2 of buffers)
    /// or `l2_hot` (less: part of each call's data may come from L2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// Batch mode: how many buffer sets the calls rotated over (1: the plugin does not rotate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_sets: Option<u32>,
    /// Batch mode: how many samples had the host still enqueueing when the hold before them
    /// ended, so the GPU may have waited for the host inside the timed interval; absent when none
    /// did (or no hold ran: no NVRTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_holds: Option<u64>,
    pub stats: Summary,
    /// Per-call times of every sample, in ms; only with `--save-samples`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_ms: Option<Vec<f64>>,
    /// With `samples_ms`, when the samples come from several worker processes: how many of them
    /// (in order) each process took. The gate's verdicts resample processes, then samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_per_process: Option<Vec<usize>>,
}

/// Declared work per call (from the kernel's cost model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkBlock {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub flops: f64,
    pub items: f64,
    pub unit: String,
}

/// Throughput at the headline p50. Only the key of the declared unit is present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elements_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_per_s: Option<f64>,
    pub gbps: f64,
    pub tflops: f64,
    /// `gbps` against the device's measured bandwidth line for the call's read:write mix,
    /// `line_gbps` (CUDA only, when calibrated), only from a DRAM-cold figure (a cold sample, or
    /// a `dram_cold` batch). At a 1:1 mix or fewer reads the line is the copy line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_of_copy_bandwidth: Option<f64>,
    /// The 100 % of `pct_of_copy_bandwidth`: the copy line, the add line (2 reads : 1 write), the
    /// read line (reads only), or between two of them by the call's read fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_gbps: Option<f64>,
    /// An `l2_hot` batch figure against the device's measured L2-resident copy line instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_of_l2_line: Option<f64>,
}

/// The accuracy check of a case: a fresh call on fresh inputs into a poisoned output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyBlock {
    pub passed: bool,
    pub elements: u64,
    #[serde(with = "non_finite_as_null")]
    pub rmse: f64,
    #[serde(with = "non_finite_as_null")]
    pub max_abs_error: f64,
    #[serde(with = "non_finite_as_null")]
    pub max_rel_error: f64,
    pub mismatch_ratio: f64,
    pub non_finite: u64,
    pub tolerance: BTreeMap<String, f64>,
    /// The kernel's own sentence on a failed check (`Instance::verify_note`), e.g. a solver
    /// that did not converge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// NVML energy and clocks over the measurement window (CUDA only).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EnergyBlock {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_per_call_mj: Option<f64>,
    /// `energy_counter` (NVML's counter over a window of at least 1 s) or `power_readings`
    /// (the mean of the power readings inside a shorter window, times the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_method: Option<String>,
    /// Why energy is unavailable, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_unavailable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_power_w: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle_reasons: Vec<String>,
    #[serde(default)]
    pub throttled_samples: usize,
}

/// Memory and power used by a case.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resources {
    /// Peak resident set size of the worker process (CPU cases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_mb: Option<f64>,
    /// Peak device memory of the case (CUDA cases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_device_memory_mb: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyBlock>,
}

/// How the samples were taken.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProtocolInfo {
    pub warmup_calls: u64,
    /// `fixed`, `converged`, `time_cap` or `max_samples`.
    pub stopped_by: String,
    pub measure_time_s: f64,
    /// Wall time from spawning the worker to the plugin being loaded and set up.
    pub worker_start_ms: f64,
    pub seed: u64,
    /// Worker processes whose samples were pooled.
    #[serde(default = "one_process")]
    pub processes: u32,
    /// Wall time of each phase of the case in the worker (`device`, `setup`, `cold`, `launch`,
    /// `rotate`, `batch`, `verify`, `teardown`; `cpu` and `verify` for CPU cases), plus
    /// `worker_start` as the host saw it, in seconds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phases_s: BTreeMap<String, f64>,
    /// CUDA: the launch floor subtracted from every cold sample, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_floor_us: Option<f64>,
    /// How many cases the worker process measured before this one (0: a fresh process; a
    /// session worker's later CUDA cases reuse its process, plugin and device rig).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub worker_case: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn one_process() -> u32 {
    1
}

/// Everything about one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub key: CaseKey,
    pub plugin: String,
    pub status: CaseStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The headline mode (`cpu` for CPU cases, `batch` for CUDA) whose p50 the leaderboard uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
    /// Apex-X names at the headline mode. Absent unless `status` is `ok` or `failed_accuracy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub timing: BTreeMap<String, ModeTiming>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<WorkBlock>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracyBlock>,
    /// Figures the kernel reported about its calls (`Instance::figures`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, super::FigureBlock>,
    /// The kernel's sentences about its calls (`Instance::notes`): an engine runtime's warnings
    /// in trtexec's words, the fields it cannot measure and why, what the output was verified
    /// against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default)]
    pub resources: Resources,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<ProtocolInfo>,
    /// Where the case ran, when the run spread over several GPUs or machines.
    #[serde(default, skip_serializing_if = "Provenance::is_empty")]
    pub ran_on: Provenance,
    /// Other implementations' times for this case (`--anchor-results`), in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<super::AnchorMatch>,
}

/// Where a case ran: the GPU of a multi-GPU run (`--devices`) and, in a merged report, the shard
/// and host that ran it. Every field is absent when it does not apply.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// The CUDA device ordinal the case was measured on (CUDA cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// The shard (`hash:2/4`) whose run measured the case (merged reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The host name of the machine that measured the case (merged reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Provenance {
    pub fn is_empty(&self) -> bool {
        self == &Provenance::default()
    }
}

impl CaseResult {
    /// A case that did not produce measurements (skipped or failed before measuring).
    pub fn without_measurements(
        key: CaseKey,
        plugin: &str,
        status: CaseStatus,
        reason: String,
    ) -> Self {
        Self {
            id: key.id(),
            key,
            plugin: plugin.into(),
            status,
            reason: Some(reason),
            headline: None,
            p50_ms: None,
            p95_ms: None,
            peak_memory_mb: None,
            timing: BTreeMap::new(),
            throughput: None,
            work: None,
            accuracy: None,
            figures: BTreeMap::new(),
            notes: Vec::new(),
            resources: Resources::default(),
            protocol: None,
            ran_on: Provenance::default(),
            anchors: Vec::new(),
        }
    }
}

/// JSON has no infinity or NaN: an error figure that is not finite (a NaN output, an error
/// against a zero reference) is written as `null` and read back as infinity.
mod non_finite_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }
}
