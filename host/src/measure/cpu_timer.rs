//! [`CpuTimer`]: the monotonic wall clock around `calls` back-to-back calls.

use std::time::Instant;

use super::{MeasureError, Timer, Workload};

/// Times CPU calls with `Instant` (CLOCK_MONOTONIC on Linux, ~20–30 ns per read).
#[derive(Debug, Default)]
pub struct CpuTimer;

impl Timer for CpuTimer {
    fn mode(&self) -> &'static str {
        "cpu"
    }

    fn batches(&self) -> bool {
        true
    }

    /// Half a millisecond: the two clock reads then cost under 0.01% of a sample.
    fn min_sample_s(&self) -> f64 {
        5e-4
    }

    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        let start = Instant::now();
        for _ in 0..calls {
            work.call()?;
        }
        Ok(start.elapsed().as_secs_f64())
    }
}
