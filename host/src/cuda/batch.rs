//! [`BatchTimer`]: the `batch` mode. N back-to-back calls are timed between two events and the
//! sample is their total (the sampling loop divides by N). When the kernel declares itself graph
//! capturable, the N calls are captured once into a CUDA graph (instantiated, uploaded and run
//! once outside the timed interval, cached by N) and the sample times the graph's replay, so the
//! per-launch CPU cost disappears. Otherwise, or when capture fails, the calls are launched
//! plainly. Either way a hold kernel first keeps the GPU busy while the host enqueues, so the
//! GPU runs the calls back to back instead of at the host's enqueue rate.

use std::sync::{Arc, Mutex};

use cudarc::driver::CudaStream;

use super::builtin::Builtins;
use super::events::EventPair;
use super::graph::{self, GraphCache, MAX_CALLS_PER_GRAPH};
use super::{CudaError, Device};
use crate::measure::{MeasureError, Timer, Workload};

/// The default shortest batch sample: event timing resolves about 0.5 µs, so 1 ms keeps the
/// clock's share of a sample below 0.1 %.
pub const DEFAULT_MIN_SAMPLE_S: f64 = 1e-3;

/// Host time assumed per enqueue when sizing the hold kernel (a plugin call crosses the FFI
/// boundary and cudarc's launch path; measured launches take 2.4 to 2.8 µs on the H200).
const HOLD_PER_ENQUEUE_NS: u64 = 5_000;
const HOLD_MIN_NS: u64 = 20_000;
const HOLD_MAX_NS: u64 = 20_000_000;

/// How long to hold the stream before a sample that takes `enqueues` host-side launches.
pub fn hold_ns(enqueues: u64) -> u64 {
    enqueues
        .saturating_mul(HOLD_PER_ENQUEUE_NS)
        .clamp(HOLD_MIN_NS, HOLD_MAX_NS)
}

/// Times N back-to-back calls, from a graph when possible.
pub struct BatchTimer {
    stream: Arc<CudaStream>,
    events: EventPair,
    graphs: GraphCache,
    capturable: bool,
    fallback: Option<String>,
    used_graph: bool,
    min_sample_s: f64,
    max_per_graph: u64,
    builtins: Option<Arc<Mutex<Builtins>>>,
}

impl BatchTimer {
    /// A batch timer for one workload; `graph_capturable` comes from the kernel's descriptor.
    /// Without NVRTC the hold kernel is skipped (samples then include the host's enqueue time
    /// when calls are shorter than a launch).
    pub fn new(device: &Device, graph_capturable: bool) -> Result<Self, CudaError> {
        super::guard::guarded("create the batch timer", || {
            Ok(Self {
                stream: device.stream().clone(),
                events: EventPair::new(device.context())?,
                graphs: GraphCache::default(),
                capturable: graph_capturable,
                fallback: None,
                used_graph: false,
                min_sample_s: DEFAULT_MIN_SAMPLE_S,
                max_per_graph: MAX_CALLS_PER_GRAPH,
                builtins: device.builtins().ok(),
            })
        })
    }

    /// Overrides [`DEFAULT_MIN_SAMPLE_S`].
    pub fn with_min_sample_s(mut self, seconds: f64) -> Self {
        self.min_sample_s = seconds;
        self
    }

    /// Why graph replay was abandoned for plain launches, if it was.
    pub fn graph_fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    fn hold(&self, enqueues: u64) -> Result<(), CudaError> {
        match &self.builtins {
            Some(b) => b
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .hold(&self.stream, hold_ns(enqueues)),
            None => Ok(()),
        }
    }

    /// Captures whatever graphs `calls` needs (outside timing); `Err` is the capture failure.
    fn prepare_graphs(
        &mut self,
        work: &mut dyn Workload,
        calls: u64,
    ) -> Result<graph::GraphPlan, String> {
        let plan = graph::plan(calls, self.max_per_graph);
        let id = graph::workload_id(work);
        let stream = self.stream.clone();
        for n in [plan.per_graph, plan.remainder] {
            if n > 0 {
                self.graphs
                    .get_or_try_insert(id, n, || graph::capture(&stream, work, n))?;
            }
        }
        Ok(plan)
    }

    fn sample_graph(&self, id: usize, plan: graph::GraphPlan) -> Result<f64, MeasureError> {
        let main = self.graphs.get(id, plan.per_graph);
        let rest = self.graphs.get(id, plan.remainder);
        if main.is_none() || (plan.remainder > 0 && rest.is_none()) {
            return Err(MeasureError::Cuda(
                "internal: a captured graph is missing from the cache".to_string(),
            ));
        }
        self.hold(plan.host_launches())?;
        self.events.time(&self.stream, || {
            for g in std::iter::repeat_n(main, plan.launches as usize)
                .chain([rest])
                .flatten()
            {
                g.launch()
                    .map_err(|e| CudaError::driver("launch the batch graph", e))?;
            }
            Ok(())
        })
    }
}

impl Timer for BatchTimer {
    fn mode(&self) -> &'static str {
        "batch"
    }

    fn batches(&self) -> bool {
        true
    }

    fn min_sample_s(&self) -> f64 {
        self.min_sample_s
    }

    fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
        if calls == 0 {
            return Ok(0.0);
        }
        if self.capturable && self.fallback.is_none() {
            match self.prepare_graphs(work, calls) {
                Ok(plan) => {
                    self.used_graph = true;
                    return self.sample_graph(graph::workload_id(work), plan);
                }
                Err(reason) => self.fallback = Some(reason),
            }
        }
        self.used_graph = false;
        self.hold(calls)?;
        self.events.time(&self.stream, || {
            for _ in 0..calls {
                work.call()?;
            }
            Ok(())
        })
    }

    fn used_graph(&self) -> bool {
        self.used_graph
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_covers_the_enqueue_time_within_bounds() {
        assert_eq!(hold_ns(1), HOLD_MIN_NS);
        assert_eq!(hold_ns(1000), 5_000_000);
        assert_eq!(hold_ns(1_000_000), HOLD_MAX_NS);
        assert_eq!(hold_ns(u64::MAX), HOLD_MAX_NS);
    }
}
