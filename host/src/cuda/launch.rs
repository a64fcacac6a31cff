//! [`LaunchTimer`]: the `launch` mode, the launch-inclusive latency of one call as a caller that
//! launches it on an idle GPU sees it (what `triton.testing.do_bench` and event-bracketed Python
//! loops report). The stream is drained, then the start event, the call and the end event are
//! enqueued with nothing in front of them, so the host's enqueue time and the device's launch
//! latency fall inside the interval. No L2 flush: this mode measures the launch path, and the
//! `cold` mode is the kernel's own cold time.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::events::EventPair;
use super::{CudaError, Device};
use crate::measure::{MeasureError, Timer, Workload};

/// One call per sample on a drained stream.
pub struct LaunchTimer {
    stream: Arc<CudaStream>,
    events: EventPair,
}

impl LaunchTimer {
    pub fn new(device: &Device) -> Result<Self, CudaError> {
        super::guard::guarded("create the launch timer", || {
            Ok(Self {
                stream: device.stream().clone(),
                events: EventPair::new(device.context())?,
            })
        })
    }
}

impl Timer for LaunchTimer {
    fn mode(&self) -> &'static str {
        "launch"
    }

    fn batches(&self) -> bool {
        false
    }

    fn min_sample_s(&self) -> f64 {
        0.0
    }

    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        let mut total = 0.0;
        for _ in 0..calls {
            self.stream
                .synchronize()
                .map_err(|e| CudaError::driver("drain the stream before a launch sample", e))?;
            total += self.events.time(&self.stream, || work.call())?;
        }
        Ok(total)
    }
}
