//! CUDA cases in the worker (WIP: wired to crate::cuda once it lands).
use super::wire::{WorkerReply, WorkerRequest};
use super::worker::WorkerError;
use crate::discovery::OpenedKernel;
use apex_plugin_api::{Precision, Tolerance};

pub fn measure(
    _r: &WorkerRequest,
    _k: &OpenedKernel,
    _p: Precision,
    _t: &Tolerance,
    _reply: &mut WorkerReply,
) -> Result<(), WorkerError> {
    Err(WorkerError("WIP".into()))
}
