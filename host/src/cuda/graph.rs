//! CUDA graphs for batch samples: [`plan`] splits a sample of N calls into launches of one
//! captured graph (at most [`MAX_CALLS_PER_GRAPH`] calls each, so instantiation stays cheap) plus
//! one remainder graph, and [`GraphCache`] keeps each instantiated graph, keyed by the workload
//! and the number of calls it holds, so capture, instantiation and upload happen once per N and
//! never inside a timed interval.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaGraph, CudaStream, sys};

use super::error::driver_message;
use crate::measure::Workload;

/// The most calls captured into one graph.
pub const MAX_CALLS_PER_GRAPH: u64 = 1024;

/// How one sample of `calls` is issued as graph launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphPlan {
    /// Calls in the main graph.
    pub per_graph: u64,
    /// Launches of the main graph.
    pub launches: u64,
    /// Calls in the remainder graph (launched once), 0 for none.
    pub remainder: u64,
}

impl GraphPlan {
    /// Host-side launches the plan takes.
    pub fn host_launches(&self) -> u64 {
        self.launches + u64::from(self.remainder > 0)
    }
}

/// Splits `calls` into graph launches of at most `max_per_graph` calls.
pub fn plan(calls: u64, max_per_graph: u64) -> GraphPlan {
    let max = max_per_graph.max(1);
    if calls <= max {
        return GraphPlan {
            per_graph: calls,
            launches: u64::from(calls > 0),
            remainder: 0,
        };
    }
    GraphPlan {
        per_graph: max,
        launches: calls / max,
        remainder: calls % max,
    }
}

/// Values keyed by (workload identity, calls); switching to another workload drops them all,
/// because a graph replays the launches of the workload it was captured from.
pub struct Keyed<V> {
    workload: Option<usize>,
    entries: HashMap<u64, V>,
}

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Self {
            workload: None,
            entries: HashMap::new(),
        }
    }
}

impl<V> Keyed<V> {
    /// The entry for (`workload`, `calls`), made by `make` when missing.
    pub fn get_or_try_insert<E>(
        &mut self,
        workload: usize,
        calls: u64,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<&V, E> {
        if self.workload != Some(workload) {
            self.entries.clear();
            self.workload = Some(workload);
        }
        Ok(match self.entries.entry(calls) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(make()?),
        })
    }

    /// The entry for (`workload`, `calls`), if it was made.
    pub fn get(&self, workload: usize, calls: u64) -> Option<&V> {
        (self.workload == Some(workload))
            .then(|| self.entries.get(&calls))
            .flatten()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The identity of a workload object: its address. A timer serves one case at a time, so the
/// address changes exactly when the workload does.
pub fn workload_id(work: &dyn Workload) -> usize {
    std::ptr::from_ref(work).cast::<()>() as usize
}

/// Instantiated graphs for one timer.
pub type GraphCache = Keyed<CudaGraph>;

/// Captures `calls` calls of `work` on `stream` into a graph, instantiates and uploads it, and
/// replays it once (outside any timing) so the first timed launch pays no first-use cost.
/// `Err` carries why the workload cannot be captured; the stream is left out of capture mode.
pub fn capture(
    stream: &Arc<CudaStream>,
    work: &mut dyn Workload,
    calls: u64,
) -> Result<CudaGraph, String> {
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(|e| format!("begin stream capture: {}", driver_message(e)))?;
    let mut failed = None;
    for _ in 0..calls {
        if let Err(e) = work.call() {
            failed = Some(e.to_string());
            break;
        }
    }
    // Always end the capture, even after a failed call: a stream left capturing rejects
    // every later launch.
    let ended = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    if let Some(reason) = failed {
        return Err(format!("a call failed during stream capture: {reason}"));
    }
    let graph = ended
        .map_err(|e| format!("end stream capture: {}", driver_message(e)))?
        .ok_or_else(|| "stream capture recorded no work".to_string())?;
    graph
        .upload()
        .map_err(|e| format!("upload the graph: {}", driver_message(e)))?;
    graph
        .launch()
        .map_err(|e| format!("launch the graph: {}", driver_message(e)))?;
    stream
        .synchronize()
        .map_err(|e| format!("run the graph once: {}", driver_message(e)))?;
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::MeasureError;

    #[test]
    fn plans_cover_every_call_with_bounded_graphs() {
        assert_eq!(
            plan(0, 1024),
            GraphPlan {
                per_graph: 0,
                launches: 0,
                remainder: 0
            }
        );
        assert_eq!(plan(7, 1024).host_launches(), 1);
        let p = plan(2500, 1024);
        assert_eq!((p.per_graph, p.launches, p.remainder), (1024, 2, 452));
        assert_eq!(p.host_launches(), 3);
        for calls in [1u64, 1023, 1024, 1025, 4096, 100_001] {
            let p = plan(calls, MAX_CALLS_PER_GRAPH);
            assert_eq!(p.per_graph * p.launches + p.remainder, calls);
            assert!(p.per_graph <= MAX_CALLS_PER_GRAPH && p.remainder < MAX_CALLS_PER_GRAPH);
        }
    }

    struct Nop;
    impl Workload for Nop {
        fn call(&mut self) -> Result<(), MeasureError> {
            Ok(())
        }
    }

    #[test]
    fn the_cache_is_keyed_by_calls_and_cleared_for_another_workload() {
        let mut cache: Keyed<u64> = Keyed::default();
        let (a, b) = (Nop, Nop);
        let (ida, idb) = (workload_id(&a), workload_id(&b));
        assert_ne!(ida, idb);
        let mut made = 0;
        let mut get = |cache: &mut Keyed<u64>, id, n| {
            *cache
                .get_or_try_insert::<()>(id, n, || {
                    made += 1;
                    Ok(n * 10)
                })
                .unwrap()
        };
        assert_eq!(get(&mut cache, ida, 100), 1000);
        assert_eq!(get(&mut cache, ida, 100), 1000);
        assert_eq!(get(&mut cache, ida, 7), 70);
        assert_eq!(cache.len(), 2);
        assert_eq!(get(&mut cache, idb, 100), 1000);
        assert_eq!(cache.len(), 1);
        assert_eq!(made, 3);
        let err = cache.get_or_try_insert(idb, 5, || Err("no"));
        assert_eq!(err.err(), Some("no"));
        assert_eq!(cache.len(), 1);
    }
}
