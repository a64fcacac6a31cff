//! [`ColdTimer`]: the `cold` mode. Before each sample the L2 cache is flushed on the measurement
//! stream (outside the timed interval), then exactly one call is timed between two events. The
//! flush also keeps the GPU busy while the host enqueues the start event and the call, so the
//! host's launch latency does not land inside the interval.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::events::EventPair;
use super::flush::L2Flush;
use super::{CudaError, Device};
use crate::measure::{MeasureError, Timer, Workload};

/// One flushed, single-call sample at a time.
pub struct ColdTimer {
    stream: Arc<CudaStream>,
    events: EventPair,
    flush: L2Flush,
}

impl ColdTimer {
    /// Allocates the flush buffer (twice the device's L2) and the timing events.
    pub fn new(device: &Device) -> Result<Self, CudaError> {
        super::guard::guarded("create the cold timer", || {
            Ok(Self {
                stream: device.stream().clone(),
                events: EventPair::new(device.context())?,
                flush: L2Flush::new(device.stream(), device.l2_bytes())?,
            })
        })
    }

    /// Bytes written by each flush.
    pub fn flush_bytes(&self) -> usize {
        self.flush.bytes()
    }
}

impl Timer for ColdTimer {
    fn mode(&self) -> &'static str {
        "cold"
    }

    fn batches(&self) -> bool {
        false
    }

    /// Cold samples are never batched, so no minimum applies.
    fn min_sample_s(&self) -> f64 {
        0.0
    }

    /// Times `calls` single-call samples, each after its own flush, and returns their sum
    /// (the sampling loop passes 1, since [`Timer::batches`] is false).
    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        let mut total = 0.0;
        for _ in 0..calls {
            self.flush.enqueue(&self.stream)?;
            total += self.events.time(&self.stream, || work.call())?;
        }
        Ok(total)
    }
}
