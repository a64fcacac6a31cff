//! `tile_ops`: the Apex-X tile operators (`spec/apex-x-kernels.md` §1.2–1.6) as apex-bench kernels.
//!
//! ```text
//! ops/<op>.rs   TileOp impl: descriptor, cost model, inputs, fast CPU path, f64 reference, CUDA launches
//! cuda/*.cu     the CUDA C of each op (NVRTC at setup; shape and dtype specialised by #define)
//! case.rs       OpKernel<O> / OpCase<O, T>: any TileOp becomes a Kernel with cpu + cuda cases
//! device.rs     DeviceState: a CUDA case's module, buffers, uploads, draws, poisoning
//! device_check.rs + cuda/check.cu
//!               CheckKit: inputs drawn on the device, f64 reference kernels, on-device compare
//! row_check.rs  the device reference against the CPU reference on the last batch row
//! ```
//!
//! Policies shared by every backend (README.md states them for users): an id `< 0` or `>= G` is an
//! empty slot (TilePack writes zeros, TileUnpack and the fused stage skip it); overlaps in
//! TileUnpack are resolved by the key `(level - min_level) << order_bits + k`, highest key wins.

pub mod case;
mod compare;
pub mod cpu_par;
pub mod device;
pub mod device_check;
pub mod harness;
pub mod op;
pub mod ops;
pub mod program;
mod row_check;
pub mod selection;
pub mod self_check;
mod shape;

pub use apex_plugin_api::element::Element;
pub use selection::IdPattern;
pub use shape::{MapShape, TileShape};

apex_plugin_api::export_plugin!();
