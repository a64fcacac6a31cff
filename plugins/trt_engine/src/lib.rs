//! `trt_engine`: engine benchmarks. A case is an engine, a serialized TensorRT engine or an ONNX
//! model, run through a runtime that is loaded at run time and never linked, and reported with
//! trtexec's fields (`docs/engines.md`).
//!
//! ```text
//! case params ─► spec (engine path, shapes, label, batch dim) ─► availability (the seed's skip
//!   reasons, in its order) ─► runtime: ONNX Runtime (`ort`, dlopen) │ TensorRT (shim + dlopen)
//!   ─► EngineCase: inputs per dtype, one query per `run`, a query trace ─► figures + notes
//! ```
//!
//! Modules, one concept each:
//! - [`spec`]: the case's parameters, parsed (`name=AxB` shapes, the batch dimension, the model path);
//! - [`skip`]: the skip reasons, in the seed's order, one line each;
//! - [`tensor`]: an engine's input/output description and the resolution of dynamic dimensions;
//! - [`inputs`]: inputs generated per dtype as the seed does, and host tensors;
//! - [`trace`]: the per-query trace and trtexec's report (fields, totals, warnings);
//! - [`reference`]: the f64 references of the committed test models;
//! - [`ort_runtime`]: ONNX Runtime, loaded from `ORT_DYLIB_PATH` or the loader's path;
//! - [`trt`]: TensorRT, through the C++ shim (built only where TensorRT's headers are) and libnvinfer;
//! - [`engine`]: the `trt_engine.engine` kernel and its cases;
//! - [`tilessm_plugin`]: the TileSSM TensorRT-plugin microbenchmark (`APEXX_TRT_PLUGIN_LIB`).

pub mod engine;
pub mod inputs;
pub mod ort_runtime;
pub mod reference;
pub mod skip;
pub mod spec;
pub mod tensor;
pub mod tilessm_plugin;
pub mod trace;
pub mod trt;

apex_plugin_api::export_plugin!();
