//! The worker process (`apex-host __worker`): loads one plugin, sets up one case, runs the
//! protocol for the case's backend and writes a [`WorkerReply`]. A crash, abort, hang or sticky
//! CUDA error here costs this case only; the host maps it to a status in [`super::isolation`].
//!
//! A session worker (`__worker --session`, [`run_session`]) does the same for a sequence of CUDA
//! cases of one plugin on one GPU, keeping what [`WorkerState`] holds between them; the host ends
//! it after a case that did not pass ([`super::session`]).

use std::io::{BufRead, Write};
use std::path::Path;

use abi_stable::std_types::{ROption, RResult};
use apex_plugin_api::ffi::FfiInstanceBox;
use apex_plugin_api::{Backend, ParamValue, Params, Precision, SetupRequest, Tolerance};

use super::cuda_case::CudaRig;
use super::sampling::{Sampled, sample};
use super::wire::{RawFigure, RawMode, WIRE_VERSION, WorkerReply, WorkerRequest, unix_now_s};
use super::{CpuTimer, MeasureError, Workload};
use crate::discovery::{KernelRef, LoadedLibrary, load_library};
use crate::model::{AccuracyBlock, WorkBlock};

/// The seed of the accuracy check's fresh inputs: different from every measured input.
const CHECK_SEED_SALT: u64 = 0xA11C_E5EE_D000_0001;

/// A worker-side failure, already phrased as the case's reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WorkerError(pub String);

/// What a worker process keeps from one case to the next: the plugin library it loaded and the
/// device rig of its last CUDA case, and how many cases it has measured.
#[derive(Default)]
pub struct WorkerState {
    library: Option<LoadedLibrary>,
    rig: Option<CudaRig>,
    cases: u32,
}

/// What a session worker keeps between cases: the value in `slot` when `fits` says it serves
/// this case, else a new one from `make` (which replaces it).
pub(super) fn kept_or_new<T, E>(
    slot: &mut Option<T>,
    fits: impl FnOnce(&T) -> bool,
    make: impl FnOnce() -> Result<T, E>,
) -> Result<&mut T, E> {
    if slot.as_ref().is_some_and(|v| !fits(v)) {
        *slot = None;
    }
    match slot {
        Some(v) => Ok(v),
        empty => Ok(empty.insert(make()?)),
    }
}

/// Runs the case in `request_path` and writes the reply to `reply_path`.
pub fn run_worker(request_path: &Path, reply_path: &Path) -> Result<(), WorkerError> {
    die_with_parent();
    serve(&mut WorkerState::default(), request_path, reply_path)
}

/// A session: one case per line of standard input (the case's scratch folder, holding
/// `request.json`), each answered by `reply.json` in that folder and then a line on the original
/// standard output. Plugin code's own output goes to standard error, so the protocol's channel
/// carries nothing else. Ends at the end of input.
pub fn run_session() -> Result<(), WorkerError> {
    die_with_parent();
    let mut channel = protocol_channel()?;
    let mut state = WorkerState::default();
    for line in std::io::stdin().lock().lines() {
        let line =
            line.map_err(|e| WorkerError(format!("cannot read the session's input: {e}")))?;
        let folder = Path::new(line.trim_end());
        serve(
            &mut state,
            &folder.join("request.json"),
            &folder.join("reply.json"),
        )?;
        writeln!(channel, "done")
            .and_then(|()| channel.flush())
            .map_err(|e| WorkerError(format!("cannot answer the host: {e}")))?;
    }
    Ok(())
}

/// The original standard output as the session's answer channel, with file descriptor 1 pointed
/// at standard error from now on.
fn protocol_channel() -> Result<std::fs::File, WorkerError> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup and dup2 on this process's own descriptors 1 and 2; the duplicate is owned by
    // the returned File alone.
    unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(WorkerError(format!(
                "cannot set up the session's channel: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

/// One case: the request in `request_path`, the reply written to `reply_path`.
fn serve(
    state: &mut WorkerState,
    request_path: &Path,
    reply_path: &Path,
) -> Result<(), WorkerError> {
    let text = std::fs::read_to_string(request_path).map_err(|e| {
        WorkerError(format!(
            "cannot read worker request `{}`: {e}",
            request_path.display()
        ))
    })?;
    let request: WorkerRequest = serde_json::from_str(&text)
        .map_err(|e| WorkerError(format!("malformed worker request: {e}")))?;
    if request.wire_version != WIRE_VERSION {
        return Err(WorkerError(format!(
            "worker speaks wire version {WIRE_VERSION}, host sent {} (hint: rebuild apex-host)",
            request.wire_version
        )));
    }
    let mut reply = WorkerReply {
        wire_version: WIRE_VERSION,
        worker_case: state.cases,
        ..WorkerReply::default()
    };
    state.cases += 1;
    if let Err(e) = measure_case(state, &request, &mut reply) {
        reply.error = Some(e.0);
    }
    crate::report::write_json_atomic(reply_path, &reply).map_err(|e| WorkerError(e.to_string()))
}

fn measure_case(
    state: &mut WorkerState,
    request: &WorkerRequest,
    reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    let backend = Backend::parse(&request.backend)
        .ok_or_else(|| WorkerError(format!("unknown backend `{}`", request.backend)))?;
    let precision = Precision::parse(&request.precision)
        .ok_or_else(|| WorkerError(format!("unknown precision `{}`", request.precision)))?;
    let WorkerState { library, rig, .. } = state;
    let library = kept_or_new(
        library,
        |l| l.path == request.library,
        || load_library(&request.library, None).map_err(WorkerError),
    )?;
    let opened = library.kernel(&request.kernel).map_err(WorkerError)?;
    reply.loaded_after_ms = (unix_now_s() - request.spawned_at_unix_s) * 1e3;
    reply
        .phases
        .push(("worker_start".into(), reply.loaded_after_ms / 1e3));
    let tolerance = tolerance_from(&request.tolerance);
    match backend {
        Backend::Cpu => {
            let setup = setup_request(request, backend, precision, ROption::RNone);
            measure_host_clock(opened, &setup, request, &tolerance, reply)
        }
        Backend::Cuda => {
            super::cuda_case::measure(rig, request, opened, precision, &tolerance, reply)
        }
        // An engine runtime on the GPU (TensorRT, which enqueues on the host's stream; ONNX
        // Runtime's CUDA provider, on its own): each call is one synchronous query, timed on the
        // host clock like a CPU call; the runtime's own phase times come as figures.
        Backend::Trt => {
            let device = crate::cuda::Device::open(request.device as usize)
                .map_err(|e| WorkerError(format!("setup failed: {}", e.case_reason())))?;
            let setup = setup_request(
                request,
                backend,
                precision,
                ROption::RSome(device.handles()),
            );
            let outcome = measure_host_clock(opened, &setup, request, &tolerance, reply);
            drop(device);
            outcome
        }
    }
}

fn setup_request(
    request: &WorkerRequest,
    backend: Backend,
    precision: Precision,
    cuda: ROption<apex_plugin_api::CudaHandles>,
) -> SetupRequest {
    SetupRequest {
        params: plugin_params(&request.params),
        backend,
        precision,
        seed: request.seed,
        cuda,
    }
}

/// Asks the kernel whether the case can run here (`Kernel::unavailable`); a reason is the
/// case's skip reason, put in the reply.
pub fn unavailable(
    kernel: &apex_plugin_api::ffi::FfiKernelBox,
    setup: &SetupRequest,
    reply: &mut WorkerReply,
) -> bool {
    let reason = kernel.unavailable(setup).into_string();
    let skip = !reason.trim().is_empty();
    if skip {
        reply.skipped = Some(reason.trim().to_string());
    }
    skip
}

/// The host-clock protocol (CPU cases and engine queries): setup, sampling with [`CpuTimer`],
/// the accuracy check, the kernel's figures and notes.
fn measure_host_clock(
    opened: KernelRef<'_>,
    setup: &SetupRequest,
    request: &WorkerRequest,
    tolerance: &Tolerance,
    reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    if unavailable(opened.kernel, setup, reply) {
        return Ok(());
    }
    let mut since = std::time::Instant::now();
    let mut mark = |reply: &mut WorkerReply, name: &str| {
        let now = std::time::Instant::now();
        reply
            .phases
            .push((name.into(), (now - since).as_secs_f64()));
        since = now;
    };
    let mut instance = setup_instance(opened.kernel, setup)?;
    reply.ready_after_ms = (unix_now_s() - request.spawned_at_unix_s) * 1e3;
    reply.work = Some(work_block(&instance)?);
    mark(reply, "setup");
    let sampled = sample(&mut CpuTimer, &mut Call(&mut instance), &request.settings)
        .map_err(|e| WorkerError(format!("run failed: {e}")))?;
    reply.modes.push(raw_mode(sampled));
    mark(reply, "cpu");
    reply.accuracy = Some(check_accuracy(
        &mut instance,
        request.seed,
        tolerance,
        || Ok(()),
    )?);
    reply.figures = collect_figures(&instance)?;
    reply.notes = collect_notes(&instance)?;
    mark(reply, "verify");
    reply.peak_rss_mb = peak_rss_mb();
    Ok(())
}

/// The plugin's notes (`Instance::notes`), one line each: a note with a line break fails the
/// case by name, as a malformed figure does.
pub fn collect_notes(instance: &FfiInstanceBox) -> Result<Vec<String>, WorkerError> {
    let notes = match instance.notes() {
        RResult::ROk(n) => n,
        RResult::RErr(e) => return Err(WorkerError(format!("notes failed: {}", e.message))),
    };
    let mut out = Vec::with_capacity(notes.len());
    for note in notes {
        let note = note.into_string();
        if note.contains('\n') {
            return Err(WorkerError(format!(
                "notes: a note must be one line: `{}`",
                note.lines().next().unwrap_or("")
            )));
        }
        if !note.trim().is_empty() {
            out.push(note);
        }
    }
    Ok(out)
}

/// Turns the FFI instance into a [`Workload`].
pub struct Call<'a>(pub &'a mut FfiInstanceBox);

impl Workload for Call<'_> {
    fn call(&mut self) -> Result<(), MeasureError> {
        match self.0.run() {
            RResult::ROk(()) => Ok(()),
            RResult::RErr(e) => Err(MeasureError::Plugin(e.message.to_string())),
        }
    }
}

/// Sets up one instance; an error is phrased as `setup failed: ...`.
pub fn setup_instance(
    kernel: &apex_plugin_api::ffi::FfiKernelBox,
    setup: &SetupRequest,
) -> Result<FfiInstanceBox, WorkerError> {
    match kernel.setup(setup) {
        RResult::ROk(i) => Ok(i),
        RResult::RErr(e) => Err(WorkerError(format!("setup failed: {}", e.message))),
    }
}

/// The declared work of the instance.
pub fn work_block(instance: &FfiInstanceBox) -> Result<WorkBlock, WorkerError> {
    match instance.work() {
        RResult::ROk(w) => Ok(WorkBlock {
            bytes_read: w.bytes_read,
            bytes_written: w.bytes_written,
            flops: w.flops,
            items: w.items,
            unit: w.unit.as_str().into(),
        }),
        RResult::RErr(e) => Err(WorkerError(format!("work() failed: {}", e.message))),
    }
}

/// The accuracy protocol: fresh inputs from a new seed, poisoned outputs, one call, `sync`, then
/// the kernel's comparison with its higher-precision reference, re-checked here.
pub fn check_accuracy(
    instance: &mut FfiInstanceBox,
    seed: u64,
    tolerance: &Tolerance,
    sync: impl FnOnce() -> Result<(), WorkerError>,
) -> Result<AccuracyBlock, WorkerError> {
    if let RResult::RErr(e) = instance.prepare_check(seed ^ CHECK_SEED_SALT) {
        return Err(WorkerError(format!("prepare_check failed: {}", e.message)));
    }
    if let RResult::RErr(e) = instance.run() {
        return Err(WorkerError(format!(
            "run failed during the accuracy check: {}",
            e.message
        )));
    }
    sync()?;
    let acc = match instance.verify(tolerance) {
        RResult::ROk(a) => a,
        RResult::RErr(e) => return Err(WorkerError(format!("verify failed: {}", e.message))),
    };
    let passed = acc.within(tolerance);
    let note = if passed {
        None
    } else {
        Some(instance.verify_note().into_string()).filter(|n| !n.is_empty())
    };
    Ok(AccuracyBlock {
        passed,
        note,
        elements: acc.elements,
        rmse: acc.rmse,
        max_abs_error: acc.max_abs_error,
        max_rel_error: acc.max_rel_error,
        mismatch_ratio: acc.mismatch_ratio,
        non_finite: acc.non_finite,
        tolerance: crate::model::tolerance_map(tolerance),
    })
}

/// The plugin's figures (`Instance::figures`), checked: a malformed or repeated figure fails the
/// case with a reason that names it, so no report carries a figure nobody can read.
pub fn collect_figures(instance: &FfiInstanceBox) -> Result<Vec<RawFigure>, WorkerError> {
    let figures = match instance.figures() {
        RResult::ROk(f) => f,
        RResult::RErr(e) => return Err(WorkerError(format!("figures failed: {}", e.message))),
    };
    let mut out: Vec<RawFigure> = Vec::with_capacity(figures.len());
    for f in figures {
        if let Some(problem) = f.problem() {
            return Err(WorkerError(format!("figures: {problem}")));
        }
        if out.iter().any(|o| o.name == f.name.as_str()) {
            return Err(WorkerError(format!(
                "figures: `{}` is reported twice",
                f.name
            )));
        }
        out.push(RawFigure {
            name: f.name.into_string(),
            unit: f.unit.into_string(),
            values: f.values.into_vec(),
        });
    }
    Ok(out)
}

pub fn raw_mode(s: Sampled) -> RawMode {
    RawMode {
        mode: s.mode.into(),
        calls_per_sample: s.calls_per_sample,
        graph: s.graph,
        samples_per_process: vec![s.per_call_s.len()],
        per_call_ms: s.per_call_s.iter().map(|t| t * 1e3).collect(),
        warmup_calls: s.warmup_calls,
        stopped_by: s.stopped_by.into(),
        elapsed_s: s.elapsed_s,
        cache: None,
        buffer_sets: None,
        short_holds: None,
    }
}

/// Case parameters as the plugin API's typed values.
pub fn plugin_params(params: &crate::model::ParamMap) -> Params {
    let mut out = Params::default();
    for (name, v) in params {
        let value = match v {
            serde_json::Value::Bool(b) => ParamValue::Bool(*b),
            serde_json::Value::Number(n) if n.is_i64() => {
                ParamValue::Int(n.as_i64().unwrap_or_default())
            }
            serde_json::Value::Number(n) => ParamValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => ParamValue::Str(s.as_str().into()),
            // The config layer accepts a list only for a parameter declared as a shape.
            serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_i64) => {
                ParamValue::Shape(items.iter().filter_map(serde_json::Value::as_i64).collect())
            }
            other => ParamValue::Str(other.to_string().as_str().into()),
        };
        out.push(name, value);
    }
    out
}

pub fn tolerance_from(map: &std::collections::BTreeMap<String, f64>) -> Tolerance {
    let get = |k: &str| map.get(k).copied().unwrap_or(0.0);
    Tolerance {
        atol: get("atol"),
        rtol: get("rtol"),
        rmse: get("rmse"),
        max_mismatch_ratio: get("max_mismatch_ratio"),
    }
}

/// Peak resident set size of this process in MiB (`getrusage`, Linux reports KiB).
pub fn peak_rss_mb() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a plain struct into the pointer it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    // SAFETY: rc == 0 means the struct was filled.
    (rc == 0).then(|| unsafe { usage.assume_init() }.ru_maxrss as f64 / 1024.0)
}

/// Asks the kernel to kill this worker when the host dies, so a host killed with SIGKILL leaves
/// no orphan measuring on a shared machine.
fn die_with_parent() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
}
