//! The stable ABI between `apex-host` and its kernel plugins.
//!
//! This crate is the **API boundary** of apex-bench: the only crate both sides link. It holds
//! types that cross the boundary (through [`abi_stable`]), the plain-Rust traits plugin authors
//! implement ([`Kernel`], [`Instance`]), and the macros that turn those into an exported root
//! module ([`export_plugin!`], [`register_kernel!`]). It has no host logic and does no I/O.
//!
//! ```text
//! plugin crate                         plugin-api                          apex-host
//! impl Kernel for MyOp  ─register_kernel!─► inventory registry
//! export_plugin!()      ─────────────────► PluginRoot (prefix type) ◄── lib_header_from_path
//!                                           FfiKernel / FfiInstance      + init_root_module
//!                                           (every call catch_unwind)
//! ```
//!
//! Evolution rules (see `docs/plugin-authoring.md`): fields and methods are only ever appended
//! after the `last_prefix_field` markers; anything else bumps [`ABI_VERSION`] and the crate's
//! minor version, and the host refuses plugins built against another one with a one-line reason.

// The sabi_trait and StableAbi derives expand to items these lints flag; they are not our code.
#![allow(non_local_definitions, non_camel_case_types)]

mod accuracy;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "element")]
pub mod element;
mod error;
mod export;
pub mod ffi;
mod figure;
pub mod harness;
mod kernel;
#[cfg(feature = "cuda")]
pub mod kernel_cache;
#[cfg(feature = "cuda")]
pub mod launch;
#[cfg(feature = "par")]
pub mod par;
mod params;
mod registry;
mod root;
pub mod tuning;
mod types;

pub use abi_stable;
pub use accuracy::{Accuracy, compare_outputs};
pub use error::{ErrorKind, PluginError};
pub use figure::Figure;
pub use kernel::{Instance, Kernel};
pub use params::{ParamSpec, ParamValue, Params};
pub use registry::KernelRegistration;
pub use root::{ABI_VERSION, PluginRoot, PluginRoot_Ref};
pub use types::{
    Backend, CudaHandles, KernelDescriptor, Precision, SetupRequest, Tolerance, Work, WorkUnit,
};

#[doc(hidden)]
pub use inventory;
