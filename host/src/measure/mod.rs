//! Measurement: each case runs in worker processes (the host re-executes itself) that load only
//! its plugin, sample with one protocol for every backend, check accuracy on fresh inputs and
//! write a reply; the host turns every way a worker can end into a case result.
//!
//! ```text
//! host: schedule::run_plan (CPU cases in rounds: process r of every case, then r + 1;
//!         │                  then CUDA cases, one thread per GPU of the pool: devices)
//!         ├─ isolation::run_in_worker ──spawn──► apex-host __worker ── worker::run_worker
//!         │                                         │ setup → sampling::sample(Timer) → check_accuracy
//!         └─ session::WorkerSession (CUDA) ─stdin──► apex-host __worker --session ── worker::run_session
//!                                                   │ the same per case; the device rig kept
//!       pool::pool → assemble::assemble ◄──reply.json / signal / timeout──┘
//! ```
//! The timers: [`CpuTimer`] here, the CUDA cold and batch timers in `crate::cuda`.

mod assemble;
mod cpu_timer;
mod cuda_case;
mod devices;
mod isolation;
mod pool;
pub mod rotation;
mod sampling;
mod schedule;
mod session;
mod timer;
pub mod wire;
mod worker;

pub use assemble::{AssembleContext, assemble};
pub use cpu_timer::CpuTimer;
pub use devices::{DeviceSlot, PROBE_SUBCOMMAND, allowed_cpus, split_cpus};
pub use isolation::{WORKER_SUBCOMMAND, WorkerOutcome, run_in_worker, signal_name};
pub use pool::pool;
pub use sampling::{Sampled, sample};
pub use schedule::{Ran, ScheduleContext, ScheduleEvent, run_plan};
pub use session::WorkerSession;
pub use timer::{Counted, Timer, Workload};
pub use worker::{WorkerError, run_session, run_worker};

/// A failure while measuring one case.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The plugin returned an error (or panicked) during a call.
    #[error("{0}")]
    Plugin(String),
    /// A CUDA call made by the host failed; starts with the CUDA error name.
    #[error("{0}")]
    Cuda(String),
}
