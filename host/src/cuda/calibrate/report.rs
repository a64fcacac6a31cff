//! [`CalibrationReport`]: what `apex-host calibrate` measured, and the error arithmetic.

use serde::{Deserialize, Serialize};

use super::CopyBandwidth;
use crate::cuda::{DeviceInfo, TimerResolution};

/// Everything one calibration run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    pub device: DeviceInfo,
    /// How often `%globaltimer` advances on this GPU.
    pub globaltimer: TimerResolution,
    pub rows: Vec<CalibrationRow>,
    pub copy: CopyBandwidth,
    /// The L2-resident copy line (GB/s), against which `l2_hot` batch figures are put.
    pub l2_line_gbps: f64,
    /// The launch floor the cold mode subtracts (µs): an empty kernel timed like a cold call.
    pub launch_floor_us: f64,
    /// Samples per row.
    pub samples: usize,
}

/// One (mode, kernel, duration) measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    /// `cold` or `batch`.
    pub mode: String,
    /// `paced` (holds the stream exactly `true_us` per call) or `isolated` (spins `true_us` from
    /// its own start, so the launch gap adds to it).
    pub kernel: String,
    pub true_us: f64,
    /// Median over samples of the time per call.
    pub measured_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// `100 * (measured - true) / true`.
    pub error_pct: f64,
    /// The design target for this row, when there is one (see [`target_pct`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_target: Option<bool>,
    pub calls_per_sample: u64,
    pub used_graph: bool,
    /// Why the batch timer fell back from graphs to plain launches, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_fallback: Option<String>,
}

impl CalibrationRow {
    /// Builds a row from per-call times in seconds.
    pub fn from_samples(
        mode: &str,
        kernel: &str,
        true_us: f64,
        per_call_s: &[f64],
        calls_per_sample: u64,
        used_graph: bool,
    ) -> Self {
        let mut us: Vec<f64> = per_call_s.iter().map(|s| s * 1e6).collect();
        let measured_us = median(&mut us);
        let min_us = us.iter().copied().fold(f64::INFINITY, f64::min);
        let max_us = us.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let error_pct = error_pct(measured_us, true_us);
        let target = if kernel == "paced" {
            target_pct(mode, true_us)
        } else {
            None
        };
        Self {
            mode: mode.to_string(),
            kernel: kernel.to_string(),
            true_us,
            measured_us,
            min_us,
            max_us,
            error_pct,
            target_pct: target,
            within_target: target.map(|t| error_pct.abs() <= t),
            calls_per_sample,
            used_graph,
            graph_fallback: None,
        }
    }

    /// For isolated rows: what the launch adds to the kernel body, in µs.
    pub fn launch_gap_us(&self) -> f64 {
        self.measured_us - self.true_us
    }
}

/// Signed relative error in percent.
pub fn error_pct(measured: f64, truth: f64) -> f64 {
    100.0 * (measured - truth) / truth
}

/// The median (mean of the two middle values for an even count); NaN for no values. Sorts.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// The design targets (|error| in %) for the paced kernel: batch ≤ 5 % at 1 µs, ≤ 1 % at
/// 10 µs, ≤ 0.5 % at 100 µs and above; cold (launch floor subtracted) ≤ 10 % at 10 µs and
/// ≤ 1 % at 100 µs and above. A 1 µs cold call has no target: it is the size of the floor's own
/// jitter. The `launch` mode has none either: it includes the launch by definition.
pub fn target_pct(mode: &str, true_us: f64) -> Option<f64> {
    match mode {
        "batch" if true_us >= 100.0 => Some(0.5),
        "batch" if true_us >= 10.0 => Some(1.0),
        "batch" if true_us >= 1.0 => Some(5.0),
        "cold" if true_us >= 100.0 => Some(1.0),
        "cold" if true_us >= 10.0 => Some(10.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_and_median_arithmetic() {
        assert!((error_pct(1.68, 1.0) - 68.0).abs() < 1e-9);
        assert!((error_pct(99.5, 100.0) + 0.5).abs() < 1e-9);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn targets_follow_the_design_table() {
        assert_eq!(target_pct("batch", 1.0), Some(5.0));
        assert_eq!(target_pct("batch", 10.0), Some(1.0));
        assert_eq!(target_pct("batch", 100.0), Some(0.5));
        assert_eq!(target_pct("batch", 1000.0), Some(0.5));
        assert_eq!(target_pct("cold", 100.0), Some(1.0));
        assert_eq!(target_pct("cold", 10.0), Some(10.0));
        assert_eq!(target_pct("cold", 1.0), None);
        assert_eq!(target_pct("launch", 100.0), None);
        assert_eq!(target_pct("batch", 0.5), None);
    }

    #[test]
    fn rows_judge_only_the_paced_kernel() {
        // torch graph replay of an isolated 1 µs spin on the H200 (timing_truth.py): 1.68 µs.
        let iso = CalibrationRow::from_samples(
            "batch",
            "isolated",
            1.0,
            &[1.68e-6, 1.70e-6, 1.66e-6],
            1000,
            true,
        );
        assert!((iso.measured_us - 1.68).abs() < 1e-9);
        assert!((iso.launch_gap_us() - 0.68).abs() < 1e-9);
        assert_eq!(iso.within_target, None);
        let paced = CalibrationRow::from_samples(
            "batch",
            "paced",
            10.0,
            &[10.1e-6, 10.3e-6, 10.0e-6],
            100,
            true,
        );
        assert!((paced.error_pct - 1.0).abs() < 1e-6);
        assert_eq!(paced.within_target, Some(true));
        assert!((paced.min_us - 10.0).abs() < 1e-9 && (paced.max_us - 10.3).abs() < 1e-9);
        let bad = CalibrationRow::from_samples("cold", "paced", 100.0, &[106e-6], 1, false);
        assert_eq!(bad.within_target, Some(false));
    }
}
