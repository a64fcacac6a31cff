//! [`EventPair`]: the start and end events of one timed interval on the measurement stream.
//! Created with `CU_EVENT_DEFAULT`: cudarc's default (`None`) disables timing, and
//! `cuEventElapsedTime` then fails.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, sys};

use super::CudaError;
use crate::measure::MeasureError;

/// Two timing events, reused across samples.
pub struct EventPair {
    start: CudaEvent,
    end: CudaEvent,
}

impl EventPair {
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self, CudaError> {
        let make = || {
            ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| CudaError::driver("create a timing event", e))
        };
        Ok(Self {
            start: make()?,
            end: make()?,
        })
    }

    /// Records the start event, runs `enqueue` (which only enqueues work on `stream`), records
    /// the end event, waits for it and returns the GPU time between the two, in seconds. A fault
    /// of the enqueued work surfaces as `MeasureError::Cuda("CUDA_ERROR_...")`.
    pub fn time(
        &self,
        stream: &CudaStream,
        enqueue: impl FnOnce() -> Result<(), MeasureError>,
    ) -> Result<f64, MeasureError> {
        self.start
            .record(stream)
            .map_err(|e| CudaError::driver("record the start event", e))?;
        enqueue()?;
        self.end
            .record(stream)
            .map_err(|e| CudaError::driver("record the end event", e))?;
        self.end
            .synchronize()
            .map_err(|e| CudaError::driver("wait for the timed calls", e))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(|e| CudaError::driver("read the event time", e))?;
        Ok(f64::from(ms) * 1e-3)
    }
}
