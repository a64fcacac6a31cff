//! ONNX Runtime, loaded at run time through the `ort` crate's `load-dynamic` (never linked):
//!
//! - [`library`]: where `libonnxruntime` is looked for, in this order, and why it did not load;
//! - [`session`]: one model's session on a provider (CPU everywhere, CUDA where the installed
//!   runtime has it), its inputs and outputs, and one query.

pub mod library;
pub mod session;

pub use library::{OrtLibrary, load};
pub use session::{OrtEngine, OrtOutputs, Provider, to_host};
