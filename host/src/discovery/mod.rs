//! Discovery: finds plugin libraries with no list anywhere, builds stale plugin crates, loads each
//! library on its own and copies its kernel descriptors out as [`KernelInfo`](crate::model::KernelInfo).
//!
//! ```text
//! scan (plugins/ crates, --plugin-dir, APEX_PLUGIN_PATH) ─► build (cargo, only stale crates)
//!   ─► load (libloading pre-flight, abi_stable per-file root module, ABI handshake, descriptors)
//!   ─► Registry { plugins, failures }   (duplicate kernel ids become failures)
//! ```
//!
//! **Invariant:** one broken crate or library never stops the others; every failure is one
//! [`LoadFailure`] with a one-line reason.

mod build;
mod condense;
mod load;
mod registry;
mod scan;

pub use build::{BuildOutcome, build_stale};
pub use load::{KernelRef, LoadedLibrary, load_library};
pub use registry::{DiscoverOptions, LoadFailure, LoadedPlugin, Registry, discover};
pub use scan::{Candidate, CrateInfo, ScanResult, find_project_root, scan};
