//! The CUDA side of a case: the frame's device buffers and the kernels that run it.
//!
//! `run` only enqueues on the host's stream, without allocating. The fast path enqueues kernels
//! only (and the events that fork its side streams from the host's stream and join them back),
//! so the host captures a batch of frames in one CUDA graph; the eager path also copies the
//! host's selection in, as the original does, so it runs as plain launches.
//!
//! ```text
//! layout.rs  one level's weights as the kernels read them (pointwise weights in mma fragment order)
//! state.rs   DeviceState: module, weights, Hilbert tables, scratch, buffer sets (DRAM-cold
//!            rotation), uploads, poisoning, downloads
//! sizing.rs  what the kernels need of a shape: shared memory per kernel, limits, check_shape
//! refine.rs  how a level runs its refine block: fused or lean (one thread-block cluster per tile)
//!            or split
//! streams.rs the fast path's concurrency inside a call: the batch's runs of frames, each on a
//!            stream of its own; the side streams' fork and join
//! fast.rs    the fast path's launches of one call (twelve, fourteen with both levels split; the
//!            fused refine's through plugin-api's `launch::LaunchEx`, with a cluster dimension)
//! eager.rs   the eager path: one launch per op, the selection on the host (its ids copied in)
//! ```

mod eager;
mod fast;
pub mod layout;
mod refine;
mod sizing;
mod state;
mod streams;

pub use refine::Refine;
pub use state::{DeviceOutputs, DeviceState};
