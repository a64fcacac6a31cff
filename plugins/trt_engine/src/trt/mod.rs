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
