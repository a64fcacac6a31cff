//! A CUDA case in the worker: the device rig (primary context, one capturable stream, the cold and
//! launch timers, the NVML monitor: opened by the process's first CUDA case and kept for the next
//! ones of a session worker), the plugin's handles, then the device measurements in order — `cold` (flushed, one call, less
//! the launch floor), `launch` (launch-inclusive latency), `batch` (back-to-back calls rotating
//! over DRAM-cold buffer sets when the plugin supports it, with NVML energy read over the same
//! window) — peak device memory, and the accuracy check after a synchronize. Every phase's wall
//! time goes into the reply. A CUDA error at any point becomes the case's reason with the CUDA
//! error name; the worker process ends with a failed case, so a sticky error never reaches the next
//! case.

use std::time::Instant;

use abi_stable::std_types::{ROption, RResult};
use apex_plugin_api::ffi::FfiInstanceBox;
use apex_plugin_api::{Backend, Precision, SetupRequest, Tolerance};

use super::rotation::{HOT_BATCH_MODE, buffer_sets, cache_state};
use super::sampling::sample;
use super::timer::Counted;
use super::wire::{WorkerReply, WorkerRequest, unix_now_s};
use super::worker::{
    Call, WorkerError, check_accuracy, collect_figures, collect_notes, kept_or_new, peak_rss_mb,
    plugin_params, raw_mode, setup_instance, unavailable, work_block,
};
use crate::cuda::nvml::Monitor;
use crate::cuda::{BatchTimer, ColdTimer, CudaError, Device, LaunchTimer, PeakMemory};
use crate::discovery::KernelRef;
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

/// What a worker keeps of the device between its CUDA cases: the device (primary context, stream,
/// built-in kernels), the cold timer (its L2 flush buffer and the launch floor it measured), the
/// launch timer and the NVML monitor. Nothing of a case lives here: the batch timer (whose graphs
/// hold the case's buffers) and the peak-memory baseline are made per case.
pub struct CudaRig {
    ordinal: u32,
    device: Device,
    cold: ColdTimer,
    launch: LaunchTimer,
    monitor: Result<Monitor, String>,
}

impl CudaRig {
    fn open(ordinal: u32) -> Result<Self, CudaError> {
        let device = Device::open(ordinal as usize)?;
        let cold = ColdTimer::new(&device)?;
        let launch = LaunchTimer::new(&device)?;
        let monitor = device
            .info()
            .map_err(|e| e.case_reason())
            .and_then(|i| Monitor::open(&i.uuid));
        Ok(Self {
            ordinal,
            device,
            cold,
            launch,
            monitor,
        })
    }
}

/// Measures `kernel` on the device of `request` with the worker's `rig` (opened here when the
/// process has none for that GPU yet), filling `reply`.
pub fn measure(
    rig: &mut Option<CudaRig>,
    request: &WorkerRequest,
    kernel: KernelRef<'_>,
    precision: Precision,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    let mut phases = Phases::new();
    // The worker's rig when it is this GPU's, else a new one.
    let outcome = kept_or_new(
        rig,
        |r| r.ordinal == request.device,
        || CudaRig::open(request.device),
    )
    .map_err(cuda)
    .and_then(|rig| {
        measure_phases(
            rig,
            request,
            kernel,
            precision,
            tolerance,
            reply,
            &mut phases,
        )
    });
    reply.phases.append(&mut phases.list);
    outcome
}

fn measure_phases(
    rig: &mut CudaRig,
    request: &WorkerRequest,
    kernel: KernelRef<'_>,
    precision: Precision,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
    phases: &mut Phases,
) -> Result<(), WorkerError> {
    let CudaRig {
        device,
        cold,
        launch,
        monitor,
        ..
    } = rig;
    // The timers' own buffers (the L2 flush, the hold kernel) exist before the peak-memory
    // baseline is taken, so they are not counted as the case's memory.
    let mut batch = BatchTimer::new(device, kernel.info.graph_capturable).map_err(cuda)?;
    let mut peak = PeakMemory::start(device).map_err(cuda)?;
    reply.launch_floor_us = Some(cold.launch_floor_s() * 1e6);
    phases.mark("device");
    let setup = SetupRequest {
        params: plugin_params(&request.params),
        backend: Backend::Cuda,
        precision,
        seed: request.seed,
        cuda: ROption::RSome(device.handles()),
    };
    if unavailable(kernel.kernel, &setup, reply) {
        return Ok(());
    }
    let mut instance = setup_instance(kernel.kernel, &setup)?;
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
        sample(cold, &mut Call(&mut instance), &request.settings).map_err(run_failed)?,
    ));
    phases.mark("cold");
    reply.modes.push(raw_mode(
        sample(launch, &mut Call(&mut instance), &request.settings).map_err(run_failed)?,
    ));
    phases.mark("launch");
    // The case's own memory, before the rotation's copies.
    reply.peak_device_memory_mb = Some(peak.finish().map_err(cuda)?);

    let l2 = device.l2_bytes() as u64;
    let bytes_per_call = work.bytes_read + work.bytes_written;
    if request.settings.l2_hot_batch {
        // Before the rotation, on the case's one buffer set, with a timer of its own (a timer
        // keeps the graphs it captured, and those would replay this set).
        let mut hot = BatchTimer::new(device, kernel.info.graph_capturable).map_err(cuda)?;
        let sampled =
            sample(&mut hot, &mut Call(&mut instance), &request.settings).map_err(run_failed)?;
        let state = cache_state(
            l2,
            bytes_per_call,
            1,
            sampled.calls_per_sample,
            sampled.graph,
        );
        let short_holds = hot.short_holds(sampled.per_call_s.len());
        let mut mode = raw_mode(sampled);
        mode.mode = HOT_BATCH_MODE.into();
        mode.short_holds = short_holds;
        mode.cache = Some(state.as_str().to_string());
        mode.buffer_sets = Some(1);
        reply.modes.push(mode);
        phases.mark(HOT_BATCH_MODE);
    }
    let free = device
        .context()
        .mem_get_info()
        .map_or(0, |(free, _)| free as u64);
    let sets = rotate(&mut instance, buffer_sets(l2, bytes_per_call, free))?;
    device
        .synchronize()
        .map_err(|e| WorkerError(format!("rotate failed: {}", e.case_reason())))?;
    phases.mark("rotate");

    let window = monitor.as_ref().ok().map(Monitor::start);
    let mut counted = Counted::new(&mut batch);
    let batched =
        sample(&mut counted, &mut Call(&mut instance), &request.settings).map_err(run_failed)?;
    let calls = counted.calls;
    reply.energy = Some(match window {
        Some(w) => w.stop(calls),
        None => EnergyBlock {
            energy_unavailable: monitor.as_ref().err().cloned(),
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
    let short_holds = batch.short_holds(batched.per_call_s.len());
    let mut mode = raw_mode(batched);
    mode.cache = Some(state.as_str().to_string());
    mode.buffer_sets = Some(sets);
    mode.short_holds = short_holds;
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
    // The case's own release: its buffers (stream-ordered frees), its graphs, and the device
    // drained, so a session worker's next case does not pay for them in its setup.
    drop(instance);
    drop(batch);
    device.synchronize().map_err(cuda)?;
    phases.mark("teardown");
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
