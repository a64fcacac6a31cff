//! A CUDA case in the worker: open the device (primary context, one capturable stream), hand the
//! plugin its handles, then the device measurements in order — `cold` (flushed, one call, less
//! the launch floor), `launch` (launch-inclusive latency), `batch` (back-to-back calls rotating
//! over DRAM-cold buffer sets when the plugin supports it, with NVML energy read over the same
//! window) — peak device memory, and the accuracy check after a synchronize. Every phase's wall
//! time goes into the reply. A CUDA error at any point becomes the case's reason with the CUDA
//! error name; the worker process ends with the case, so a sticky error never reaches the next
//! case.

use std::time::Instant;

use abi_stable::std_types::{ROption, RResult};
use apex_plugin_api::ffi::FfiInstanceBox;
use apex_plugin_api::{Backend, Precision, SetupRequest, Tolerance};

use super::rotation::{buffer_sets, cache_state};
use super::sampling::sample;
use super::timer::Counted;
use super::wire::{WorkerReply, WorkerRequest, unix_now_s};
use super::worker::{
    Call, WorkerError, check_accuracy, collect_figures, collect_notes, peak_rss_mb, plugin_params,
    raw_mode, setup_instance, unavailable, work_block,
};
use crate::cuda::nvml::Monitor;
use crate::cuda::{BatchTimer, ColdTimer, CudaError, Device, LaunchTimer, PeakMemory};
use crate::discovery::OpenedKernel;
use crate::model::EnergyBlock;

fn cuda(e: CudaError) -> WorkerError {
    WorkerError(e.case_reason())
}

/// Wall time of the phases of one case, in order.
struct Phases {
    list: Vec<(String, f64)>,
    since: Instant,
}

impl Phases {
    fn new() -> Self {
        Self {
            list: Vec::new(),
            since: Instant::now(),
        }
    }

    /// Ends the current phase under `name` and starts the next.
    fn mark(&mut self, name: &str) {
        let now = Instant::now();
        self.list
            .push((name.to_string(), (now - self.since).as_secs_f64()));
        self.since = now;
    }
}

/// Measures `opened` on the device of `request`, filling `reply`.
pub fn measure(
    request: &WorkerRequest,
    opened: &OpenedKernel,
    precision: Precision,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    let mut phases = Phases::new();
    let outcome = measure_phases(request, opened, precision, tolerance, reply, &mut phases);
    reply.phases.append(&mut phases.list);
    outcome
}

fn measure_phases(
    request: &WorkerRequest,
    opened: &OpenedKernel,
    precision: Precision,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
    phases: &mut Phases,
) -> Result<(), WorkerError> {
    let device = Device::open(request.device as usize).map_err(cuda)?;
    // The timers' own buffers (the L2 flush, the hold kernel) exist before the peak-memory
    // baseline is taken, so they are not counted as the case's memory.
    let mut cold = ColdTimer::new(&device).map_err(cuda)?;
    let mut launch = LaunchTimer::new(&device).map_err(cuda)?;
    let mut batch = BatchTimer::new(&device, opened.info.graph_capturable).map_err(cuda)?;
    let mut peak = PeakMemory::start(&device).map_err(cuda)?;
    reply.launch_floor_us = Some(cold.launch_floor_s() * 1e6);
    phases.mark("device");
    let setup = SetupRequest {
        params: plugin_params(&request.params),
        backend: Backend::Cuda,
        precision,
        seed: request.seed,
        cuda: ROption::RSome(device.handles()),
    };
    if unavailable(&opened.kernel, &setup, reply) {
        return Ok(());
    }
    let mut instance = setup_instance(&opened.kernel, &setup)?;
    device
        .synchronize()
        .map_err(|e| WorkerError(format!("setup failed: {}", e.case_reason())))?;
    peak.observe().map_err(cuda)?;
    reply.ready_after_ms = (unix_now_s() - request.spawned_at_unix_s) * 1e3;
    let work = work_block(&instance)?;
    reply.work = Some(work.clone());
    phases.mark("setup");

    let run_failed = |e: super::MeasureError| WorkerError(format!("run failed: {e}"));
    reply.modes.push(raw_mode(
        sample(&mut cold, &mut Call(&mut instance), &request.settings).map_err(run_failed)?,
    ));
    phases.mark("cold");
    reply.modes.push(raw_mode(
        sample(&mut launch, &mut Call(&mut instance), &request.settings).map_err(run_failed)?,
    ));
    phases.mark("launch");
    // The case's own memory, before the rotation's copies.
    reply.peak_device_memory_mb = Some(peak.finish().map_err(cuda)?);

    let l2 = device.l2_bytes() as u64;
    let bytes_per_call = work.bytes_read + work.bytes_written;
    let free = device
        .context()
        .mem_get_info()
        .map_or(0, |(free, _)| free as u64);
    let sets = rotate(&mut instance, buffer_sets(l2, bytes_per_call, free))?;
    device
        .synchronize()
        .map_err(|e| WorkerError(format!("rotate failed: {}", e.case_reason())))?;
    phases.mark("rotate");

    let monitor = device
        .info()
        .map_err(|e| e.case_reason())
        .and_then(|i| Monitor::open(&i.uuid));
    let window = monitor.as_ref().ok().map(Monitor::start);
    let mut counted = Counted::new(&mut batch);
    let batched =
        sample(&mut counted, &mut Call(&mut instance), &request.settings).map_err(run_failed)?;
    let calls = counted.calls;
    reply.energy = Some(match window {
        Some(w) => w.stop(calls),
        None => EnergyBlock {
            energy_unavailable: monitor.err(),
            ..EnergyBlock::default()
        },
    });
    let state = cache_state(
        l2,
        bytes_per_call,
        sets,
        batched.calls_per_sample,
        batched.graph,
    );
    let mut mode = raw_mode(batched);
    mode.cache = Some(state.as_str().to_string());
    mode.buffer_sets = Some(sets);
    reply.modes.push(mode);
    phases.mark("batch");

    let sync = || device.synchronize().map_err(cuda);
    reply.accuracy = Some(check_accuracy(
        &mut instance,
        request.seed,
        tolerance,
        sync,
    )?);
    reply.figures = collect_figures(&instance)?;
    reply.notes = collect_notes(&instance)?;
    phases.mark("verify");
    reply.peak_rss_mb = peak_rss_mb();
    Ok(())
}

/// Asks the instance for `sets` buffer sets; a plugin built before ABI 2 lacks the method (its
/// vtable entry panics when called), which means one set.
fn rotate(instance: &mut FfiInstanceBox, sets: u32) -> Result<u32, WorkerError> {
    if sets <= 1 {
        return Ok(1);
    }
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| instance.rotate(sets)));
    match called {
        Err(_) => Ok(1),
        Ok(RResult::ROk(n)) => Ok(n.clamp(1, sets)),
        Ok(RResult::RErr(e)) => Err(WorkerError(format!("rotate failed: {}", e.message))),
    }
}
