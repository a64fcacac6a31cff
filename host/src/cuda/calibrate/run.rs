//! [`run`]: the calibration procedure. For each duration T and each (mode, kernel): estimate the
//! time per call, size the sample so a batch sample lasts at least the timer's minimum, take one
//! untimed sample at that size (captures the graph), then `samples` samples, each preceded by a
//! reset of the paced kernel's chain.

use super::{
    CalibrationReport, CalibrationRow, SpinKind, SpinWorkload, copy_bandwidth, l2_line_gbps,
};
use crate::cuda::guard::guarded;
use crate::cuda::{BatchTimer, ColdTimer, CudaError, Device, LaunchTimer};
use crate::measure::{MeasureError, Timer};

/// What to calibrate.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// Known durations, in µs.
    pub durations_us: Vec<f64>,
    /// Samples per row.
    pub samples: usize,
    /// Timed copies for the bandwidth.
    pub copy_repetitions: usize,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        Self {
            durations_us: vec![1.0, 10.0, 100.0, 1000.0],
            samples: 30,
            copy_repetitions: super::copy::COPY_REPETITIONS,
        }
    }
}

/// Calls per sample so that a sample lasts at least `min_sample_s`, from an estimate per call.
pub fn calls_for(min_sample_s: f64, per_call_s: f64) -> u64 {
    if per_call_s.is_nan() || per_call_s <= 0.0 || min_sample_s <= 0.0 {
        return 1;
    }
    // The relative slack keeps an exact ratio (1 ms / 1 µs) from rounding up past itself.
    ((min_sample_s / per_call_s * (1.0 - 1e-12)).ceil() as u64).max(1)
}

/// Runs the whole calibration on `device`.
pub fn run(device: &Device, options: &CalibrateOptions) -> Result<CalibrationReport, CudaError> {
    guarded("calibrate", || {
        let info = device.info()?;
        let globaltimer = {
            let b = device.builtins()?;
            let b = b.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            b.timer_resolution(device.stream())?
        };
        let samples = options.samples.max(1);
        let mut rows = Vec::new();
        let launch_floor_us = ColdTimer::new(device)?.launch_floor_s() * 1e6;
        for &us in &options.durations_us {
            let ns = (us * 1e3).round() as u64;
            let mut cold = ColdTimer::new(device)?;
            rows.push(measure_row(
                device,
                &mut cold,
                SpinKind::Paced,
                us,
                ns,
                samples,
            )?);
            let mut launch = LaunchTimer::new(device)?;
            rows.push(measure_row(
                device,
                &mut launch,
                SpinKind::Isolated,
                us,
                ns,
                samples,
            )?);
            for kind in [SpinKind::Paced, SpinKind::Isolated] {
                let mut batch = BatchTimer::new(device, true)?;
                let mut row = measure_row(device, &mut batch, kind, us, ns, samples)?;
                row.graph_fallback = batch.graph_fallback_reason().map(str::to_string);
                rows.push(row);
            }
        }
        let copy = copy_bandwidth(
            device,
            options.copy_repetitions,
            info.theoretical_peak_bw_gbps,
        )?;
        let l2_line_gbps = l2_line_gbps(device, options.copy_repetitions)?;
        Ok(CalibrationReport {
            device: info,
            globaltimer,
            rows,
            copy,
            l2_line_gbps,
            launch_floor_us,
            samples,
        })
    })
}

fn measure_row(
    device: &Device,
    timer: &mut dyn Timer,
    kind: SpinKind,
    true_us: f64,
    ns: u64,
    samples: usize,
) -> Result<CalibrationRow, CudaError> {
    let mut work = SpinWorkload::new(device, kind, ns)?;
    let sample = |timer: &mut dyn Timer, work: &mut SpinWorkload, calls: u64| {
        work.reset()?;
        timer.sample(work, calls).map_err(measure_error)
    };
    let mut calls = 1;
    if timer.batches() {
        // Two rounds: the first estimate includes one launch's overhead, the second does not.
        for _ in 0..2 {
            let per_call = sample(timer, &mut work, calls)? / calls as f64;
            calls = calls_for(timer.min_sample_s(), per_call);
        }
    }
    sample(timer, &mut work, calls)?;
    let mut per_call = Vec::with_capacity(samples);
    for _ in 0..samples {
        per_call.push(sample(timer, &mut work, calls)? / calls as f64);
    }
    let seen = work.calls_seen()?;
    if seen != calls {
        return Err(CudaError::Unsupported(format!(
            "the spin kernel ran {seen} times in the last sample instead of {calls}; the timing cannot be trusted"
        )));
    }
    Ok(CalibrationRow::from_samples(
        timer.mode(),
        kind.as_str(),
        true_us,
        &per_call,
        calls,
        timer.used_graph(),
    ))
}

fn measure_error(e: MeasureError) -> CudaError {
    match e {
        MeasureError::Cuda(message) | MeasureError::Plugin(message) => CudaError::Driver {
            call: "take a calibration sample",
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_sized_to_the_minimum() {
        assert_eq!(calls_for(1e-3, 1e-6), 1000);
        assert_eq!(calls_for(1e-3, 1.7e-6), 589);
        assert_eq!(calls_for(1e-3, 2e-3), 1);
        assert_eq!(calls_for(0.0, 1e-6), 1);
        assert_eq!(calls_for(1e-3, 0.0), 1);
        assert_eq!(calls_for(1e-3, f64::NAN), 1);
    }
}
