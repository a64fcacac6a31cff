//! The host's CUDA layer, over cudarc with run-time loading (one build runs with and without a
//! GPU; without libcuda every entry point returns [`CudaError::Unavailable`] and nothing panics).
//!
//! ```text
//! Device::open ── primary context, one capturable stream, event tracking off
//!   ├─ handles() ─────────► plugin (CudaSession::attach enqueues on the same stream)
//!   ├─ ColdTimer ── L2Flush ─ events ─ 1 call − launch floor   (mode `cold`)
//!   ├─ LaunchTimer ─ drained stream ─ events ─ 1 call        (mode `launch`, launch-inclusive)
//!   ├─ BatchTimer ─ hold ─ events ─ graph(N) or N calls      (mode `batch`; DRAM-cold when the
//!   │                                                          plugin rotates buffer sets)
//!   ├─ PeakMemory ─ pool high-water + free-memory drop
//!   ├─ nvml::Monitor ─ energy over the batch window, power, clock, throttling (by UUID)
//!   └─ calibrate ─ %globaltimer spins of known length, copy bandwidth
//! ```
//!
//! `docs/cuda.md` explains the timing method and the traps it avoids.

mod batch;
mod builtin;
pub mod calibrate;
mod cold;
mod device;
mod error;
mod events;
mod flush;
#[cfg(test)]
mod gpu_tests;
mod graph;
pub mod guard;
mod info;
mod launch;
mod memory;
pub mod nvml;
pub mod nvrtc;
mod probe;

pub use batch::{BatchTimer, DEFAULT_MIN_SAMPLE_S};
pub use builtin::{Builtins, CopyVariant, SOURCE as BUILTIN_SOURCE, TimerResolution};
pub use cold::{ColdTimer, LAUNCH_FLOOR_SAMPLES};
pub use device::{Device, device_count};
pub use error::{CudaError, driver_message};
pub use flush::flush_bytes;
pub use graph::MAX_CALLS_PER_GRAPH;
pub use info::DeviceInfo;
pub use launch::LaunchTimer;
pub use memory::PeakMemory;
pub use probe::probe;
