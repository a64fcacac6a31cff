//! [`ColdTimer`]: the `cold` mode. Before each sample the L2 cache is flushed on the measurement
//! stream (outside the timed interval), then exactly one call is timed between two events. The
//! flush also keeps the GPU busy while the host enqueues the start event and the call, so the
//! host's launch latency does not land inside the interval.
//!
//! What remains inside the interval besides the call is the device's own fixed cost of an event
//! pair around a launch (the front end starting the kernel after the start event, and the end
//! event after it drains): about 3 µs on the H100 and H200, the same for every kernel. The timer
//! measures that floor once, with an empty kernel timed exactly like a call ([`LAUNCH_FLOOR_SAMPLES`]
//! flushed samples, median), and subtracts it from every sample, clamping at zero. The floor is
//! reported with the case, and the launch-inclusive latency is its own mode
//! ([`super::LaunchTimer`]).

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream};

use super::builtin::Builtins;
use super::events::EventPair;
use super::flush::L2Flush;
use super::{CudaError, Device};
use crate::measure::{MeasureError, Timer, Workload};

/// Flushed samples of the empty kernel whose median is the launch floor.
pub const LAUNCH_FLOOR_SAMPLES: usize = 21;

/// One flushed, single-call sample at a time, less the launch floor.
pub struct ColdTimer {
    stream: Arc<CudaStream>,
    events: EventPair,
    flush: L2Flush,
    floor_s: f64,
}

impl ColdTimer {
    /// Allocates the flush buffer (twice the device's L2) and the timing events, and measures the
    /// launch floor. Without NVRTC (no built-in kernels) the floor is 0 and samples keep it.
    pub fn new(device: &Device) -> Result<Self, CudaError> {
        super::guard::guarded("create the cold timer", || {
            let mut timer = Self {
                stream: device.stream().clone(),
                events: EventPair::new(device.context())?,
                flush: L2Flush::new(device.stream(), device.l2_bytes())?,
                floor_s: 0.0,
            };
            if let Ok(builtins) = device.builtins() {
                timer.floor_s = timer.measure_floor(&builtins)?;
            }
            Ok(timer)
        })
    }

    fn measure_floor(&mut self, builtins: &Arc<Mutex<Builtins>>) -> Result<f64, CudaError> {
        let mut scratch: CudaSlice<u64> = self
            .stream
            .alloc_zeros(2)
            .map_err(|e| CudaError::driver("allocate the launch floor's scratch", e))?;
        let mut empty = |stream: &Arc<CudaStream>| {
            builtins
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .spin(stream, 0, &mut scratch)
                .map_err(MeasureError::from)
        };
        let mut samples: Vec<f64> = Vec::with_capacity(LAUNCH_FLOOR_SAMPLES);
        // One unrecorded round first: the first launch of a module pays for loading it.
        for round in 0..=LAUNCH_FLOOR_SAMPLES {
            self.flush.enqueue(&self.stream)?;
            let s = self
                .events
                .time(&self.stream, || empty(&self.stream))
                .map_err(|e| CudaError::Unsupported(format!("measure the launch floor: {e}")))?;
            if round > 0 {
                samples.push(s);
            }
        }
        crate::stats::Sample::new(&samples)
            .map(|s| s.median())
            .map_err(|e| CudaError::Unsupported(format!("measure the launch floor: {e}")))
    }

    /// Bytes written by each flush.
    pub fn flush_bytes(&self) -> usize {
        self.flush.bytes()
    }

    /// The subtracted floor, in seconds.
    pub fn launch_floor_s(&self) -> f64 {
        self.floor_s
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

    /// Times `calls` single-call samples, each after its own flush, and returns their sum less
    /// the launch floor (the sampling loop passes 1, since [`Timer::batches`] is false).
    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        let mut total = 0.0;
        for _ in 0..calls {
            self.flush.enqueue(&self.stream)?;
            let interval = self.events.time(&self.stream, || work.call())?;
            total += (interval - self.floor_s).max(0.0);
        }
        Ok(total)
    }
}
