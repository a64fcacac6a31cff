//! Measurement: the per-case worker process, the sampling protocol and the CPU timer.
//! (being written)

mod timer;

pub use timer::{Timer, Workload};

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
