//! [`Timer`]: how one sample is taken. The sampling loop in [`super::sampling`] is the same for every
//! backend; a timer decides how calls are issued and what clock reads them. The CPU timer lives in
//! [`super::cpu_timer`]; the CUDA cold and batch timers in `crate::cuda::timers`.

use super::MeasureError;

/// The code under measurement: one call of the kernel.
pub trait Workload {
    /// Performs (for CUDA: enqueues) one call.
    fn call(&mut self) -> Result<(), MeasureError>;
}

/// Takes one sample of `calls` back-to-back calls and returns the elapsed time of all of them,
/// in seconds. Implementations must keep setup work (allocation, compilation, L2 flushes, graph
/// instantiation) outside the timed interval.
pub trait Timer {
    /// The mode name in reports: `cpu`, `cold`, `launch` or `batch`.
    fn mode(&self) -> &'static str;

    /// Whether several calls may be timed together and divided (false for `cold`: one launch per
    /// sample is the definition of that mode).
    fn batches(&self) -> bool;

    /// The shortest sample worth taking, in seconds: below it the clock's resolution and the
    /// timer's own overhead dominate. Calls are batched until a sample is at least this long.
    fn min_sample_s(&self) -> f64;

    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError>;

    /// Whether the last sample's calls were replayed from a CUDA graph.
    fn used_graph(&self) -> bool {
        false
    }
}

/// Wraps a timer and counts the calls it times (graph replays included, which a counting
/// [`Workload`] would miss), so energy over a sampling window can be divided per call.
pub struct Counted<'a> {
    pub inner: &'a mut dyn Timer,
    pub calls: u64,
}

impl<'a> Counted<'a> {
    pub fn new(inner: &'a mut dyn Timer) -> Self {
        Self { inner, calls: 0 }
    }
}

impl Timer for Counted<'_> {
    fn mode(&self) -> &'static str {
        self.inner.mode()
    }
    fn batches(&self) -> bool {
        self.inner.batches()
    }
    fn min_sample_s(&self) -> f64 {
        self.inner.min_sample_s()
    }
    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        let t = self.inner.sample(work, calls)?;
        self.calls += calls;
        Ok(t)
    }
    fn used_graph(&self) -> bool {
        self.inner.used_graph()
    }
}
