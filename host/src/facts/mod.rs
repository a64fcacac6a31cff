//! What the host measures about this machine before planning: CUDA (through cudarc's run-time
//! loading), NVML, TensorRT, OS, architecture and the environment; [`engine_backends`] says which
//! engine runtimes the `trt_engine` plugin finds here (for `discover --verbose`). The main type is [`Facts`],
//! made by [`gather`]; skip conditions (`crate::skip`) read it and reports serialize it.
//!
//! Probing never panics and never fails: an absent library is a fact with a reason, e.g.
//! `cuda_unavailable: libcuda.so.1 not found`.

mod cuda_probe;
mod device_class;
pub mod engine_backends;
mod env;
mod gather;
mod nvml_probe;
mod record;
mod trt_probe;

pub use cuda_probe::LIB_ABSENT as CUDA_LIB_ABSENT;
pub use device_class::device_class;
pub use env::EnvSnapshot;
pub use gather::gather;
pub use record::{CudaFacts, Facts, NvmlFacts, TrtFacts};
pub use trt_probe::LIB_ABSENT as TRT_LIB_ABSENT;
