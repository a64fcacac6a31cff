//! The bench: each row verified once, then timed as apex-host's batch mode times it (DRAM-cold
//! buffer sets, one captured graph, the median of the replays per call).

use std::sync::Arc;

use apex_plugin_api::{CudaHandles, Instance, PluginError, Precision, cuda::cuda_error};
use apex_plugin_ff_model::{FfCase, device::Refine, problem};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaStream,
    sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

use crate::cases::{BENCH_SHAPES, Overrides, is_eager, plan, setup, shapes};

/// What a bench row times (`--stage`).
#[derive(Clone, Copy)]
pub enum Stage {
    /// Whole frames.
    Frame,
    /// Only the two levels' refine blocks of each call.
    Refines,
}

impl Stage {
    /// One call of the case at this stage.
    fn call(self) -> fn(&mut FfCase) -> Result<(), PluginError> {
        match self {
            Self::Frame => FfCase::run,
            Self::Refines => FfCase::run_refines,
        }
    }

    /// What the bench's lines add to say so.
    fn note(self) -> &'static str {
        match self {
            Self::Frame => "",
            Self::Refines => " (the refine blocks alone)",
        }
    }
}

/// Times `calls` of the fast path as apex-host's batch mode does: DRAM-cold buffer sets, one
/// captured graph, the median of the replays per call.
pub struct Timer<'a> {
    pub ctx: &'a Arc<CudaContext>,
    pub stream: &'a Arc<CudaStream>,
    pub l2: u64,
    /// The seed of the inputs every row times (`--seed`).
    pub seed: u64,
    /// What runs between the verified call and the capture (`--order`).
    pub order: Order,
}

/// The calls before a bench row's capture (`--order`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The rotation, then a frame and three calls of the row.
    Bench,
    /// apex-host's: [`HOST_ORDER_CALLS`] calls on one buffer set, each on a drained stream, then
    /// the rotation, then the capture.
    Host,
}

/// The plain calls `--order host` runs before the rotation (apex-host's cold and launch modes run
/// a few hundred; 300 reproduced its figures, thirty-fifth session).
const HOST_ORDER_CALLS: usize = 300;

impl Order {
    /// What the bench's header adds to say so.
    fn note(self) -> &'static str {
        match self {
            Self::Bench => "",
            Self::Host => ", in apex-host's order",
        }
    }
}

/// One bench row's figures.
struct Timing {
    us: f64,
    sets: u32,
    calls: usize,
}

const REPLAYS: usize = 10;

impl Timer<'_> {
    fn event(&self) -> Result<CudaEvent, String> {
        self.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| cuda_error(e).to_string())
    }

    /// Times `call` (one call of the case: a frame, or its refines alone).
    fn time(
        &self,
        case: &mut FfCase,
        call: fn(&mut FfCase) -> Result<(), PluginError>,
    ) -> Result<Timing, String> {
        let work = case.work();
        let bytes = (work.bytes_read + work.bytes_written).max(1);
        let want = (3 * self.l2).div_ceil(bytes).clamp(1, 256) as u32;
        if self.order == Order::Host {
            for _ in 0..HOST_ORDER_CALLS {
                self.stream.synchronize().map_err(|e| e.to_string())?;
                call(case).map_err(|e| format!("run: {e}"))?;
            }
        }
        let sets = case.rotate(want).map_err(|e| format!("rotate: {e}"))?;
        let calls = 50usize.div_ceil(sets as usize) * sets as usize;
        if self.order == Order::Bench {
            // A frame first: it leaves the state a refines-only call reads.
            case.run().map_err(|e| format!("run: {e}"))?;
            for _ in 0..3 {
                call(case).map_err(|e| format!("run: {e}"))?;
            }
        }
        self.stream.synchronize().map_err(|e| e.to_string())?;
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| format!("begin capture: {e}"))?;
        let mut captured = Ok(());
        for _ in 0..calls {
            if let Err(e) = call(case) {
                captured = Err(format!("run in capture: {e}"));
                break;
            }
        }
        // Always end the capture: a stream left capturing rejects every later launch.
        let graph = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(|e| format!("end capture: {e}"))?;
        captured?;
        let graph = graph.ok_or("the capture recorded no work")?;
        graph.launch().map_err(|e| format!("graph: {e}"))?;
        let mut per_call = Vec::with_capacity(REPLAYS);
        for _ in 0..REPLAYS {
            let (s, e) = (self.event()?, self.event()?);
            s.record(self.stream).map_err(|e| e.to_string())?;
            graph.launch().map_err(|e| format!("graph: {e}"))?;
            e.record(self.stream).map_err(|e| e.to_string())?;
            let ms = s.elapsed_ms(&e).map_err(|e| e.to_string())?;
            per_call.push(f64::from(ms) * 1e3 / calls as f64);
        }
        per_call.sort_by(f64::total_cmp);
        Ok(Timing {
            us: per_call[REPLAYS / 2],
            sets,
            calls,
        })
    }
}

/// Verifies once on fresh inputs, then times: the row's line, its frames/s and whether it
/// verified.
fn bench_row(
    timer: &Timer<'_>,
    overrides: &Overrides,
    handles: CudaHandles,
    refine: Refine,
    stage: Stage,
    precision: Precision,
) -> Result<(String, f64, bool), String> {
    let tol = problem::descriptor().tolerance_for(precision);
    let mut case = setup(overrides, precision, handles, Some(refine))?;
    case.prepare_check(timer.seed)
        .map_err(|e| format!("prepare: {e}"))?;
    case.run().map_err(|e| format!("run: {e}"))?;
    timer.stream.synchronize().map_err(|e| e.to_string())?;
    let acc = case.verify(&tol).map_err(|e| format!("verify: {e}"))?;
    let ok = acc.within(&tol) && acc.non_finite == 0;
    let t = timer.time(&mut case, stage.call())?;
    let fps = case.problem().batch as f64 * 1e6 / t.us;
    let line = format!(
        "{:<20} {:>9.2} {:>10.0}   {:>2} x {:<3}  {}",
        plan(&case),
        t.us,
        fps,
        t.sets,
        t.calls / t.sets as usize,
        if ok { "ok" } else { "FAIL" }
    );
    Ok((line, fps, ok))
}

/// The bench of one storage: a row per shape and refine path, then B=8's frames/s over B=1's
/// per path. Returns the rows that failed.
pub fn bench_precision(
    timer: &Timer<'_>,
    only: Option<&[String]>,
    refines: &[Refine],
    handles: CudaHandles,
    stage: Stage,
    precision: Precision,
) -> usize {
    let mut failures = 0;
    println!(
        "bench {precision}{}, DRAM-cold batch (sets x calls a set in one graph, median of \
         {REPLAYS} replays){}",
        stage.note(),
        timer.order.note()
    );
    println!(
        "{:<12} {:<20} {:>9} {:>10}   {:<8}  verify",
        "shape", "refine", "us/call", "frames/s", "graph"
    );
    let mut fps = Vec::new();
    for (label, overrides) in shapes() {
        let benched = match only {
            Some(o) => o.iter().any(|x| x == label),
            None => BENCH_SHAPES.contains(&label),
        };
        if !benched || is_eager(&overrides) {
            continue;
        }
        for &refine in refines {
            match bench_row(timer, &overrides, handles, refine, stage, precision) {
                Ok((line, f, ok)) => {
                    failures += usize::from(!ok);
                    fps.push((label, refine, f));
                    println!("{label:<12} {line}");
                }
                Err(e) => {
                    failures += 1;
                    println!("{label:<12} {refine:?}: error: {e}");
                }
            }
        }
    }
    for &refine in refines {
        let at = |shape: &str| {
            fps.iter()
                .find(|(l, r, _)| *l == shape && *r == refine)
                .map(|f| f.2)
        };
        if let (Some(one), Some(eight)) = (at("profile"), at("B=8")) {
            println!(
                "scaling {precision} {refine:?}: B=8 frames/s / B=1 frames/s = {:.2}x{}",
                eight / one,
                stage.note()
            );
        }
    }
    failures
}
