//! [`run_plan`]: every case of the plan through its worker processes, in two phases.
//!
//! 1. **Host cases** (CPU backends, and every skipped case) run one at a time, in rounds: round
//!    `r` runs process `r` of every case that has one, in plan order, so the processes of one
//!    case are spread over the whole phase: a slow period of the machine (another tenant, a
//!    frequency change) then touches one process of many cases instead of every process of one
//!    case, and the pooled samples of each case see it as spread, not as a shift.
//! 2. **Device cases** (CUDA) run one per GPU at a time: one thread per GPU of the pool takes the
//!    next case from a shared queue, so with several GPUs they measure concurrently while no GPU
//!    ever runs two measurements. No host case runs during this phase (a CPU measurement beside
//!    a GPU one would disturb both), and each GPU's workers are pinned to their own share of the
//!    cores ([`DeviceSlot::cpus`]). Consecutive CUDA cases of one plugin share a session worker
//!    ([`super::session`]) until one of them does not pass; `--worker-per-case` (and every
//!    other device backend) starts a worker per case. A GPU that fails is taken out of the pool
//!    ([`super::devices`]); if every GPU is out, the remaining device cases fail with the reasons.
//!
//! A case is finished, and handed to `on_event`, after its last process or its first failure.
//! An interrupt (Ctrl-C) stops the schedule: no process starts after it, the running ones are
//! killed (`isolation`), and the cases that had not finished are returned as [`Ran::not_run`];
//! the samples of their earlier processes are dropped, since a case is reported whole or not at
//! all.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;

use super::devices::{DeviceHealth, DeviceSlot, device_level_failure, probe};
use super::session::WorkerSession;
use super::wire::{WIRE_VERSION, WorkerRequest};
use super::{AssembleContext, WorkerOutcome, assemble, pool, run_in_worker};
use crate::interrupt::Interrupt;
use crate::model::{CaseKey, CaseResult, CaseStatus};
use crate::plan::{Plan, PlannedCase};

/// Run-wide inputs of the schedule.
pub struct ScheduleContext<'a> {
    /// The `apex-host` executable the workers run.
    pub exe: &'a Path,
    /// Each worker's request, reply and stderr go to `<scratch>/workers/<case>-<process>/`.
    pub scratch: &'a Path,
    pub seed: u64,
    /// The assembly context of host (CPU) cases.
    pub assemble: AssembleContext,
    /// The GPUs device cases run on (empty when the plan has none to run).
    pub devices: Vec<DeviceSlot>,
    /// Stops the schedule when requested (Ctrl-C); its tracked groups are the running workers.
    pub interrupt: &'a Interrupt,
    /// Whether consecutive CUDA cases of one plugin on one GPU share a session worker (else each
    /// case gets its own process, as host cases always do).
    pub session_workers: bool,
}

/// What [`run_plan`] did.
#[derive(Debug)]
pub struct Ran {
    /// The final result of every case that finished, in plan order.
    pub results: Vec<CaseResult>,
    /// The cases that did not finish because the run was interrupted, in plan order (empty
    /// when it was not).
    pub not_run: Vec<CaseKey>,
    /// The GPUs taken out of the pool during the run, with the reason.
    pub devices_out: Vec<(u32, String)>,
}

impl Ran {
    /// Whether an interrupt stopped the run before every case finished.
    pub fn interrupted(&self) -> bool {
        !self.not_run.is_empty()
    }
}

/// Whether `case` runs on a GPU (every backend but the host CPU).
fn on_device(case: &PlannedCase) -> bool {
    case.key.backend != "cpu"
}

/// The number of worker processes of a case: none when skipped; one for CUDA (device timings do
/// not depend on the host process's memory layout, and each process would add a CUDA context);
/// `protocol.processes` on the CPU.
fn processes_of(case: &PlannedCase) -> u32 {
    match (&case.skip, on_device(case)) {
        (Some(_), _) => 0,
        (None, false) => case.resolved.protocol.processes.max(1),
        (None, true) => 1,
    }
}

/// What [`run_plan`] reports as it goes.
pub enum ScheduleEvent<'a> {
    /// A case's first worker process is starting (or, for a skipped case, it is being recorded).
    Started(&'a CaseKey),
    /// A case's result is final.
    Finished(&'a CaseResult),
    /// A GPU was taken out of the pool; its queued cases go to the others.
    DeviceOut { ordinal: u32, reason: &'a str },
}

/// Runs `plan`, reporting each case's start and final result to `on_event` as they happen (an
/// error from it stops the run), until it ends or `ctx.interrupt` is requested.
pub fn run_plan<E>(
    plan: &Plan,
    ctx: &ScheduleContext<'_>,
    mut on_event: impl FnMut(ScheduleEvent<'_>) -> Result<(), E>,
) -> Result<Ran, E> {
    let mut results: Vec<Option<CaseResult>> = plan.cases.iter().map(|_| None).collect();
    let (host, device): (Vec<usize>, Vec<usize>) = (0..plan.cases.len())
        .partition(|&i| plan.cases[i].skip.is_some() || !on_device(&plan.cases[i]));
    run_host_cases(plan, &host, ctx, &mut results, &mut on_event)?;
    let health = if !ctx.interrupt.is_requested() && !device.is_empty() {
        run_device_cases(plan, device, ctx, &mut results, &mut on_event)?
    } else {
        DeviceHealth::default()
    };
    let not_run = plan
        .cases
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.is_none())
        .map(|(c, _)| c.key.clone())
        .collect();
    Ok(Ran {
        results: results.into_iter().flatten().collect(),
        not_run,
        devices_out: health
            .taken_out()
            .iter()
            .map(|(d, r)| (*d, r.clone()))
            .collect(),
    })
}

/// Phase 1: the host cases `cases` (plan indices), one process at a time, in rounds.
fn run_host_cases<E>(
    plan: &Plan,
    cases: &[usize],
    ctx: &ScheduleContext<'_>,
    results: &mut [Option<CaseResult>],
    on_event: &mut impl FnMut(ScheduleEvent<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let procs: Vec<u32> = plan.cases.iter().map(processes_of).collect();
    let mut outcomes: Vec<Vec<WorkerOutcome>> = plan.cases.iter().map(|_| Vec::new()).collect();
    let rounds = cases.iter().map(|&i| procs[i]).max().unwrap_or(0).max(1);
    for round in 0..rounds {
        for &i in cases {
            let case = &plan.cases[i];
            if ctx.interrupt.is_requested() {
                return Ok(());
            }
            if results[i].is_some() {
                continue;
            }
            if let (0, Some(reason)) = (round, &case.skip) {
                on_event(ScheduleEvent::Started(&case.key))?;
                let r = CaseResult::without_measurements(
                    case.key.clone(),
                    &case.kernel.plugin,
                    CaseStatus::Skipped,
                    reason.clone(),
                );
                on_event(ScheduleEvent::Finished(&r))?;
                results[i] = Some(r);
                continue;
            }
            if round >= procs[i] {
                continue;
            }
            if round == 0 {
                on_event(ScheduleEvent::Started(&case.key))?;
            }
            let scratch: PathBuf = ctx.scratch.join("workers").join(format!("{i}-{round}"));
            let request = request(case, procs[i], ctx.seed, 0);
            let outcome = run_in_worker(ctx.exe, &request, &scratch, ctx.interrupt, &[]);
            if outcome == WorkerOutcome::Interrupted {
                return Ok(());
            }
            // A failed or skipped process ends the case: its other processes would say the same.
            let failed = !matches!(&outcome, WorkerOutcome::Replied(r) if r.error.is_none() && r.skipped.is_none());
            outcomes[i].push(outcome);
            if failed || round + 1 == procs[i] {
                let pooled = pool(std::mem::take(&mut outcomes[i]));
                let mut r = assemble(case.key.clone(), &case.kernel.plugin, pooled, &ctx.assemble);
                if let Some(p) = r.protocol.as_mut() {
                    p.processes = round + 1;
                }
                on_event(ScheduleEvent::Finished(&r))?;
                results[i] = Some(r);
            }
        }
    }
    Ok(())
}

/// What a GPU's thread tells the schedule.
enum Message<'a> {
    Started(usize),
    Finished(usize, &'a DeviceSlot, WorkerOutcome),
    DeviceOut(u32, String),
}

/// Phase 2: the device cases `queue` (plan indices), one thread per GPU of `ctx.devices`, each
/// taking the next case when its GPU is free. `on_event` and the results stay on this thread.
/// Returns the pool's record of the GPUs (which ones were taken out, and why).
fn run_device_cases<E>(
    plan: &Plan,
    queue: Vec<usize>,
    ctx: &ScheduleContext<'_>,
    results: &mut [Option<CaseResult>],
    on_event: &mut impl FnMut(ScheduleEvent<'_>) -> Result<(), E>,
) -> Result<DeviceHealth, E> {
    let queue = Mutex::new(VecDeque::from(queue));
    let shared_health = Mutex::new(DeviceHealth::default());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut error = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Message<'_>>();
        for slot in &ctx.devices {
            let tx = tx.clone();
            let (queue, shared_health, stop) = (&queue, &shared_health, &stop);
            scope.spawn(move || {
                device_thread(plan, slot, ctx, queue, shared_health, stop, &tx);
            });
        }
        drop(tx);
        for message in rx {
            if error.is_some() {
                continue;
            }
            let handled = match message {
                Message::Started(i) => on_event(ScheduleEvent::Started(&plan.cases[i].key)),
                Message::Finished(i, slot, outcome) => {
                    let case = &plan.cases[i];
                    let mut r = assemble(
                        case.key.clone(),
                        &case.kernel.plugin,
                        outcome,
                        &slot.assemble,
                    );
                    r.ran_on.device = Some(slot.ordinal);
                    let done = on_event(ScheduleEvent::Finished(&r));
                    results[i] = Some(r);
                    done
                }
                Message::DeviceOut(ordinal, reason) => on_event(ScheduleEvent::DeviceOut {
                    ordinal,
                    reason: &reason,
                }),
            };
            if let Err(e) = handled {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                error = Some(e);
            }
        }
    });
    let health = shared_health
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(e) = error {
        return Err(e);
    }
    // Every GPU left the pool with cases still queued: each fails with the reasons.
    let left: Vec<usize> = queue.into_inner().unwrap_or_else(|p| p.into_inner()).into();
    if left.is_empty() || ctx.interrupt.is_requested() {
        return Ok(health);
    }
    let why = health
        .taken_out()
        .values()
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    let why = if why.is_empty() {
        "the run was given no GPU".to_string()
    } else {
        why
    };
    for i in left {
        let case = &plan.cases[i];
        on_event(ScheduleEvent::Started(&case.key))?;
        let r = CaseResult::without_measurements(
            case.key.clone(),
            &case.kernel.plugin,
            CaseStatus::Failed,
            format!("no GPU left in the pool to run it: {why}"),
        );
        on_event(ScheduleEvent::Finished(&r))?;
        results[i] = Some(r);
    }
    Ok(health)
}

/// One GPU's loop: the next queued case, measured in a worker on this GPU, until the queue is
/// empty, the run stops, or this GPU leaves the pool.
fn device_thread<'a>(
    plan: &Plan,
    slot: &'a DeviceSlot,
    ctx: &ScheduleContext<'_>,
    queue: &Mutex<VecDeque<usize>>,
    health: &Mutex<DeviceHealth>,
    stop: &std::sync::atomic::AtomicBool,
    tx: &mpsc::Sender<Message<'a>>,
) {
    let mut session: Option<WorkerSession<'_>> = None;
    let mut sessions = 0u32;
    loop {
        if ctx.interrupt.is_requested() || stop.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
        let Some(i) = next else { return };
        let case = &plan.cases[i];
        if tx.send(Message::Started(i)).is_err() {
            return;
        }
        let scratch = ctx.scratch.join("workers").join(format!("{i}-0"));
        let request = request(case, 1, ctx.seed, slot.ordinal);
        let shared = ctx.session_workers && case.key.backend == "cuda";
        if session
            .as_ref()
            .is_some_and(|s| !shared || s.library() != case.kernel.library)
        {
            session = None;
        }
        let outcome = if shared {
            run_in_session(
                &mut session,
                &mut sessions,
                case,
                slot,
                ctx,
                &request,
                &scratch,
            )
        } else {
            run_in_worker(ctx.exe, &request, &scratch, ctx.interrupt, &slot.cpus)
        };
        if outcome == WorkerOutcome::Interrupted {
            return;
        }
        let failure = device_level_failure(&outcome);
        // The probe runs outside the lock: the other GPUs go on meanwhile.
        let verdict = failure.as_ref().map(|_| probe(ctx.exe, slot.ordinal));
        let out = health.lock().unwrap_or_else(|p| p.into_inner()).record(
            slot.ordinal,
            failure.as_deref(),
            verdict,
        );
        if tx.send(Message::Finished(i, slot, outcome)).is_err() {
            return;
        }
        if let Some(reason) = out {
            let _ = tx.send(Message::DeviceOut(slot.ordinal, reason));
            return;
        }
    }
}

/// Runs `request` in the GPU's session worker, starting one (the `sessions`-th of this GPU) when
/// there is none; the session is kept only after a case that passed.
fn run_in_session<'a>(
    session: &mut Option<WorkerSession<'a>>,
    sessions: &mut u32,
    case: &PlannedCase,
    slot: &DeviceSlot,
    ctx: &ScheduleContext<'a>,
    request: &WorkerRequest,
    scratch: &Path,
) -> WorkerOutcome {
    let mut running = match session.take() {
        Some(s) => s,
        None => {
            *sessions += 1;
            let folder = ctx
                .scratch
                .join("workers")
                .join(format!("session-gpu{}-{sessions}", slot.ordinal));
            let started = WorkerSession::start(
                ctx.exe,
                &case.kernel.library,
                &folder,
                ctx.interrupt,
                &slot.cpus,
            );
            match started {
                Ok(s) => s,
                Err(outcome) => return outcome,
            }
        }
    };
    let (outcome, reusable) = running.run(request, scratch);
    if reusable {
        *session = Some(running);
    }
    outcome
}

/// The worker request of one process of `case` on GPU `device`, with its share of the sampling
/// budget.
fn request(case: &PlannedCase, processes: u32, seed: u64, device: u32) -> WorkerRequest {
    WorkerRequest {
        wire_version: WIRE_VERSION,
        library: case.kernel.library.clone(),
        kernel: case.kernel.id.clone(),
        params: case.resolved.params.clone(),
        backend: case.key.backend.clone(),
        precision: case.key.precision.clone(),
        seed,
        settings: case.resolved.protocol.share_of(processes),
        tolerance: crate::model::tolerance_map(&case.resolved.tolerance),
        graph_capturable: case.kernel.graph_capturable,
        device,
        spawned_at_unix_s: 0.0,
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
