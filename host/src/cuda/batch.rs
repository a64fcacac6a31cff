//! [`BatchTimer`]: the `batch` mode. N back-to-back calls are timed between two events and the
//! sample is their total (the sampling loop divides by N). When the kernel declares itself graph
//! capturable, the N calls are captured once into a CUDA graph (instantiated, uploaded and run
//! once outside the timed interval, cached by N) and the sample times the graph's replay, so the
//! per-launch CPU cost disappears. Otherwise, or when capture fails, the calls are launched
//! plainly. Either way a hold kernel first keeps the GPU busy while the host enqueues, so the
//! GPU runs the calls back to back instead of at the host's enqueue rate. The hold is sized from
//! the launches a sample takes, and from the host's measured enqueue time of the last sample of
//! the same size where that was longer: a graph launch costs the host per node (~0.5 µs), so a
//! graph of many multi-kernel calls can outlast a hold sized per launch. A sample whose enqueue
//! outlasted its hold anyway is counted ([`BatchTimer::short_holds`]), and the report says so.

use std::sync::{Arc, Mutex};
use std::time::Instant;

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

/// The hold before a sample of `enqueues` launches whose last sample of the same size took the
/// host `enqueued_ns` to enqueue (if one ran): [`hold_ns`], or that time and half again where
/// longer (enqueue times vary from sample to sample), at most the cap.
pub fn hold_for(enqueues: u64, enqueued_ns: Option<u64>) -> u64 {
    let measured = enqueued_ns.map_or(0, |ns| ns.saturating_add(ns / 2));
    hold_ns(enqueues).max(measured).min(HOLD_MAX_NS)
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
    holds: Holds,
}

/// The holds of one timer's samples: what the last enqueue took, and which samples it outlasted.
#[derive(Default)]
struct Holds {
    /// The last sample's calls and the host's time to enqueue them (ns), for the next hold.
    enqueued: Option<(u64, u64)>,
    /// Per sample taken, in order: whether its enqueue outlasted the hold before it.
    short: Vec<bool>,
}

impl Holds {
    /// Times one sample of `calls` calls that `enqueue` puts on `stream` in `enqueues` host-side
    /// launches: the hold (where the built-in kernels exist), then `events` around the enqueue;
    /// notes how long the enqueue took.
    fn time(
        &mut self,
        (events, stream): (&EventPair, &Arc<CudaStream>),
        builtins: Option<&Arc<Mutex<Builtins>>>,
        (calls, enqueues): (u64, u64),
        enqueue: impl FnOnce() -> Result<(), MeasureError>,
    ) -> Result<f64, MeasureError> {
        let last = self.enqueued.filter(|&(n, _)| n == calls).map(|(_, ns)| ns);
        let hold = hold_for(enqueues, last);
        if let Some(b) = builtins {
            b.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .hold(stream, hold)?;
        }
        let mut enqueued_ns = 0;
        let seconds = events.time(stream, || {
            let started = Instant::now();
            enqueue()?;
            enqueued_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
            Ok(())
        })?;
        self.enqueued = Some((calls, enqueued_ns));
        self.short.push(builtins.is_some() && enqueued_ns > hold);
        Ok(seconds)
    }
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
                holds: Holds::default(),
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

    /// How many of the last `samples` samples had their host-side enqueue outlast the hold
    /// before them, so the GPU may have waited for the host inside the timed interval (the
    /// timed samples are the last ones the sampling protocol takes); `None` where none did.
    pub fn short_holds(&self, samples: usize) -> Option<u64> {
        let short = &self.holds.short;
        let n = short[short.len().saturating_sub(samples)..]
            .iter()
            .filter(|&&s| s)
            .count() as u64;
        (n > 0).then_some(n)
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

    fn sample_graph(
        &mut self,
        id: usize,
        calls: u64,
        plan: graph::GraphPlan,
    ) -> Result<f64, MeasureError> {
        let main = self.graphs.get(id, plan.per_graph);
        let rest = self.graphs.get(id, plan.remainder);
        if main.is_none() || (plan.remainder > 0 && rest.is_none()) {
            return Err(MeasureError::Cuda(
                "internal: a captured graph is missing from the cache".to_string(),
            ));
        }
        let timing = (&self.events, &self.stream);
        let size = (calls, plan.host_launches());
        self.holds.time(timing, self.builtins.as_ref(), size, || {
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
                    return self.sample_graph(graph::workload_id(work), calls, plan);
                }
                Err(reason) => self.fallback = Some(reason),
            }
        }
        self.used_graph = false;
        let timing = (&self.events, &self.stream);
        self.holds
            .time(timing, self.builtins.as_ref(), (calls, calls), || {
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

    /// A graph whose launch took the host longer than the launch-count hold gets a hold half as
    /// long again as that enqueue; a quick one keeps the launch-count hold; the cap holds.
    #[test]
    fn the_hold_outlasts_the_last_measured_enqueue() {
        assert_eq!(hold_for(1, None), HOLD_MIN_NS);
        assert_eq!(hold_for(1, Some(5_000)), HOLD_MIN_NS);
        assert_eq!(hold_for(1, Some(200_000)), 300_000);
        assert_eq!(hold_for(1000, Some(1_000_000)), 5_000_000);
        assert_eq!(hold_for(1, Some(u64::MAX)), HOLD_MAX_NS);
    }
}
