//! TensorRT, loaded at run time: `libnvinfer` through `libloading` ([`library`]), and its C++
//! API through a small `extern "C"` shim (`shim/trt_shim.cpp`, [`shim`]) that `build.rs`
//! compiles only where TensorRT's headers are found. Without the headers the plugin still builds,
//! and a TensorRT case is skipped with a reason that says so. [`engine`] deserializes an engine,
//! binds its tensors in device memory and runs one query (H2D, `enqueueV3`, D2H, each timed with
//! CUDA events on the case's stream).

pub mod engine;
pub mod library;
pub mod shim;

pub use engine::TrtEngine;
pub use library::{NvInfer, load};

/// `libnvinfer` and the shim together, or the skip reason of the first that is missing.
pub fn runtime() -> Result<(&'static NvInfer, &'static shim::Shim), crate::skip::SkipReason> {
    let nv = load()?;
    let shim = shim::shim().map_err(crate::skip::SkipReason::ProviderUnavailable)?;
    Ok((nv, shim))
}
