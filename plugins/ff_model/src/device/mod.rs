//! The CUDA side of a case: the frame's device buffers and the kernels that run it.
//!
//! `run` only enqueues on the host's stream, without allocating. The fast path enqueues kernels
//! only, so the host captures a batch of frames in one CUDA graph; the eager path also copies the
//! host's selection in, as the original does, so it runs as plain launches.
//!
//! ```text
//! layout.rs  one level's weights as the kernels read them (pointwise weights in mma fragment order)
//! state.rs   DeviceState: module, weights, Hilbert tables, scratch, buffer sets (DRAM-cold
//!            rotation), uploads, poisoning, downloads
//! fast.rs    the fast path's twelve launches of one call
//! eager.rs   the eager path: one launch per op, the selection on the host (its ids copied in)
//! ```

mod eager;
mod fast;
pub mod layout;
mod state;

pub use state::{DeviceOutputs, DeviceState};
