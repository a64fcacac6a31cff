//! The CUDA side of a case: the frame's device buffers and the kernels that run it.
//!
//! `run` only enqueues on the host's stream: no host synchronisation, no allocation, no copy, so
//! the host captures a batch of frames in one CUDA graph.
//!
//! ```text
//! layout.rs  one level's weights as the kernels read them (pointwise weights in mma fragment order)
//! state.rs   DeviceState: module, weights, Hilbert tables, scratch, buffer sets (DRAM-cold
//!            rotation), uploads, poisoning, downloads
//! fast.rs    the fast path's ten launches of one call
//! ```

mod fast;
pub mod layout;
mod state;

pub use state::{DeviceOutputs, DeviceState};
