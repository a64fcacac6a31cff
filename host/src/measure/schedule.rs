//! [`run_plan`]: every case of the plan through its worker processes, in rounds. Round `r` runs
//! process `r` of every case that has one, in plan order, so the processes of one case are spread
//! over the whole run: a slow period of the machine (another tenant, a frequency change) then
//! touches one process of many cases instead of every process of one case, and the pooled
//! samples of each case see it as spread, not as a shift. A case is finished, and handed to
//! `finished`, after its last process or its first failure.
//!
//! An interrupt (Ctrl-C) stops the schedule: no process starts after it, the running one is
//! killed (`isolation`), and the cases that had not finished are returned as [`Ran::not_run`];
//! the samples of their earlier processes are dropped, since a case is reported whole or not at
//! all.

use std::path::{Path, PathBuf};

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
    pub device: u32,
    pub assemble: AssembleContext,
    /// Stops the schedule when requested (Ctrl-C); its tracked groups are the running workers.
    pub interrupt: &'a Interrupt,
}

/// What [`run_plan`] did.
#[derive(Debug)]
pub struct Ran {
    /// The final result of every case that finished, in plan order.
    pub results: Vec<CaseResult>,
    /// The cases that did not finish because the run was interrupted, in plan order (empty
    /// when it was not).
    pub not_run: Vec<CaseKey>,
}

impl Ran {
    /// Whether an interrupt stopped the run before every case finished.
    pub fn interrupted(&self) -> bool {
        !self.not_run.is_empty()
    }
}

/// The number of worker processes of a case: none when skipped; one for CUDA (device timings do
/// not depend on the host process's memory layout, and each process would add a CUDA context);
/// `protocol.processes` on the CPU.
fn processes_of(case: &PlannedCase) -> u32 {
    match (&case.skip, case.key.backend.as_str()) {
        (Some(_), _) => 0,
        (None, "cpu") => case.resolved.protocol.processes.max(1),
        (None, _) => 1,
    }
}

/// What [`run_plan`] reports as it goes.
pub enum ScheduleEvent<'a> {
    /// A case's first worker process is starting (or, for a skipped case, it is being recorded).
    Started(&'a CaseKey),
    /// A case's result is final.
    Finished(&'a CaseResult),
}

/// Runs `plan`, reporting each case's start and final result to `on_event` as they happen (an
/// error from it stops the run), until it ends or `ctx.interrupt` is requested.
pub fn run_plan<E>(
    plan: &Plan,
    ctx: &ScheduleContext<'_>,
    mut on_event: impl FnMut(ScheduleEvent<'_>) -> Result<(), E>,
) -> Result<Ran, E> {
    let procs: Vec<u32> = plan.cases.iter().map(processes_of).collect();
    let mut outcomes: Vec<Vec<WorkerOutcome>> = plan.cases.iter().map(|_| Vec::new()).collect();
    let mut results: Vec<Option<CaseResult>> = plan.cases.iter().map(|_| None).collect();
    let rounds = procs.iter().copied().max().unwrap_or(0).max(1);
    'rounds: for round in 0..rounds {
        for (i, case) in plan.cases.iter().enumerate() {
            if ctx.interrupt.is_requested() {
                break 'rounds;
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
            let outcome = run_in_worker(
                ctx.exe,
                &request(case, procs[i], ctx),
                &scratch,
                ctx.interrupt,
            );
            if outcome == WorkerOutcome::Interrupted {
                break 'rounds;
            }
            let failed = !matches!(&outcome, WorkerOutcome::Replied(r) if r.error.is_none());
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
    })
}

/// The worker request of one process of `case`, with its share of the sampling budget.
fn request(case: &PlannedCase, processes: u32, ctx: &ScheduleContext<'_>) -> WorkerRequest {
    WorkerRequest {
        wire_version: WIRE_VERSION,
        library: case.kernel.library.clone(),
        kernel: case.kernel.id.clone(),
        params: case.resolved.params.clone(),
        backend: case.key.backend.clone(),
        precision: case.key.precision.clone(),
        seed: ctx.seed,
        settings: case.resolved.protocol.share_of(processes),
        tolerance: crate::model::tolerance_map(&case.resolved.tolerance),
        graph_capturable: case.kernel.graph_capturable,
        device: ctx.device,
        spawned_at_unix_s: 0.0,
    }
}
