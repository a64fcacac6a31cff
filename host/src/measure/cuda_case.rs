//! A CUDA case in the worker: open the device (primary context, one capturable stream), hand the
//! plugin its handles, then the two device measurements (cold, then batch), an NVML energy window,
//! peak device memory, and the accuracy check after a synchronize. A CUDA error at any point
//! becomes the case's reason with the CUDA error name; the worker process ends with the case, so
//! a sticky error never reaches the next case.

use abi_stable::std_types::ROption;
use apex_plugin_api::{Backend, Precision, SetupRequest, Tolerance};

use super::sampling::sample;
use super::wire::{WorkerReply, WorkerRequest, unix_now_s};
use super::worker::{
    Call, WorkerError, check_accuracy, peak_rss_mb, plugin_params, raw_mode, setup_instance,
    work_block,
};
use crate::cuda::nvml::Monitor;
use crate::cuda::{BatchTimer, ColdTimer, CudaError, Device, PeakMemory};
use crate::discovery::OpenedKernel;
use crate::model::EnergyBlock;

fn cuda(e: CudaError) -> WorkerError {
    WorkerError(e.case_reason())
}

/// Measures `opened` on the device of `request`, filling `reply`.
pub fn measure(
    request: &WorkerRequest,
    opened: &OpenedKernel,
    precision: Precision,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    let device = Device::open(request.device as usize).map_err(cuda)?;
    // The timers' own buffers (the L2 flush, the hold kernel) exist before the peak-memory
    // baseline is taken, so they are not counted as the case's memory.
    let mut cold = ColdTimer::new(&device).map_err(cuda)?;
    let mut batch = BatchTimer::new(&device, opened.info.graph_capturable).map_err(cuda)?;
    let mut peak = PeakMemory::start(&device).map_err(cuda)?;
    let setup = SetupRequest {
        params: plugin_params(&request.params),
        backend: Backend::Cuda,
        precision,
        seed: request.seed,
        cuda: ROption::RSome(device.handles()),
    };
    let mut instance = setup_instance(&opened.kernel, &setup)?;
    device
        .synchronize()
        .map_err(|e| WorkerError(format!("setup failed: {}", e.case_reason())))?;
    peak.observe().map_err(cuda)?;
    reply.ready_after_ms = (unix_now_s() - request.spawned_at_unix_s) * 1e3;
    reply.work = Some(work_block(&instance)?);

    let run_failed = |e: super::MeasureError| WorkerError(format!("run failed: {e}"));
    reply.modes.push(raw_mode(
        sample(&mut cold, &mut Call(&mut instance), &request.settings).map_err(run_failed)?,
    ));

    let batched =
        sample(&mut batch, &mut Call(&mut instance), &request.settings).map_err(run_failed)?;
    let calls_per_sample = batched.calls_per_sample;
    reply.modes.push(raw_mode(batched));

    reply.energy = Some(match device.info().map(|i| i.uuid) {
        Ok(uuid) => match Monitor::open(&uuid) {
            Ok(monitor) => monitor
                .energy_window(&mut batch, &mut Call(&mut instance), calls_per_sample, 1.0)
                .map_err(run_failed)?,
            Err(reason) => EnergyBlock {
                energy_unavailable: Some(reason),
                ..EnergyBlock::default()
            },
        },
        Err(e) => EnergyBlock {
            energy_unavailable: Some(e.case_reason()),
            ..EnergyBlock::default()
        },
    });

    let sync = || device.synchronize().map_err(cuda);
    reply.accuracy = Some(check_accuracy(
        &mut instance,
        request.seed,
        tolerance,
        sync,
    )?);
    reply.peak_device_memory_mb = Some(peak.finish().map_err(cuda)?);
    reply.peak_rss_mb = peak_rss_mb();
    Ok(())
}
