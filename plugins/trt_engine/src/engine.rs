//! The `trt_engine.engine` kernel: one case per engine × input shapes (a `--shape-case` is one
//! case with its label), on the `cpu` backend (ONNX Runtime's CPU provider) or the `trt` backend
//! (the GPU: TensorRT for a serialized engine, ONNX Runtime's CUDA provider for an ONNX model).
//!
//! [`check`] applies the seed's skip reasons in the seed's order (`crate::skip`); [`open`] sets a
//! case up: the runtime, the shapes, the inputs per dtype, one untimed query (the seed's
//! `first_out`); [`EngineCase`] runs one query per `run`, keeps the query trace, verifies against
//! the committed model's f64 reference, a second execution path, or says it cannot.

use std::path::Path;
use std::time::Instant;

use apex_plugin_api::cuda::CudaSession;
use apex_plugin_api::{
    Accuracy, Backend, Figure, Instance, Kernel, KernelDescriptor, ParamSpec, PluginError,
    Precision, SetupRequest, Tolerance, Work, WorkUnit, compare_outputs, register_kernel,
};

use crate::inputs::{self, HostTensor};
use crate::ort_runtime::{self, OrtEngine, OrtOutputs, Provider};
use crate::reference;
use crate::skip::SkipReason;
use crate::spec::{EngineSpec, RuntimeChoice};
use crate::tensor::{self, IoSpec, Resolution, ResolvedInput};
use crate::trace::{Query, Trace, TraceKind};
use crate::trt::{self, TrtEngine, engine::TrtQuery};

/// The kernel.
#[derive(Default)]
pub struct EngineKernel;

register_kernel!(EngineKernel);

/// The parameters every engine kernel declares (the TileSSM plugin kernel adds its own).
pub fn engine_params(d: KernelDescriptor) -> KernelDescriptor {
    d.param(ParamSpec::str(
        "engine",
        "",
        "the engine: a serialized TensorRT engine or an ONNX model (`@models/…`: the plugin's committed models); --trt-engine-path",
    ))
    .param(ParamSpec::str(
        "input_shapes",
        "",
        "input shapes, `name=AxB;name2=CxD` (--trt-input-shape, --shape-case); required for every dynamic dimension",
    ))
    .param(ParamSpec::str(
        "shape_case",
        "default",
        "the case's label in a shape sweep (`default`, `case_001_1_3_256_256`, …)",
    ))
    .param(ParamSpec::str(
        "batch_dim",
        "",
        "the batch dimension `input:axis` that frames_per_s counts (--trt-batch-dim); empty: no frames_per_s",
    ))
    .param(ParamSpec::str(
        "runtime",
        "auto",
        "auto (by the file: .onnx is ONNX Runtime, anything else TensorRT), onnxruntime or tensorrt",
    ))
    .param(ParamSpec::str(
        "reference",
        "",
        "the f64 reference of a committed model (mlp, fusion_gate); empty: verified against a second execution path where one exists",
    ))
}

impl Kernel for EngineKernel {
    fn descriptor(&self) -> KernelDescriptor {
        engine_params(
            KernelDescriptor::new(
                "trt_engine.engine",
                "an engine (TensorRT or ONNX) run through its runtime, loaded at run time; trtexec's fields",
            )
            .backends(&[Backend::Cpu, Backend::Trt])
            .precisions(&[Precision::Fp32, Precision::Fp16, Precision::Bf16]),
        )
    }

    fn unavailable(&self, request: &SetupRequest) -> Option<String> {
        let spec = EngineSpec::from_params(&request.params).ok()?;
        check(&spec, request).map(|r| r.to_string())
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        let spec = EngineSpec::from_params(&request.params)?;
        Ok(Box::new(open(&spec, request)?))
    }
}

/// The seed's checks, in its order; `None` when the case can run (or fails in setup with the
/// runtime's message, which is a failure, not a skip).
pub fn check(spec: &EngineSpec, request: &SetupRequest) -> Option<SkipReason> {
    if spec.engine_text.is_empty() {
        return Some(SkipReason::MissingEnginePath);
    }
    if !spec.engine.is_file() {
        return Some(SkipReason::EngineNotFound(spec.engine.clone()));
    }
    let io = match spec.runtime() {
        RuntimeChoice::TensorRt => {
            if request.backend != Backend::Trt {
                return Some(SkipReason::ProviderUnavailable(format!(
                    "tensorrt_needs_gpu: a serialized TensorRT engine runs on the trt backend only (this case is {})",
                    request.backend
                )));
            }
            let (nv, shim) = match trt::runtime() {
                Ok(both) => both,
                Err(e) => return Some(e),
            };
            let bytes = match std::fs::read(&spec.engine) {
                Ok(b) => b,
                Err(_) => return None,
            };
            match TrtEngine::deserialize(nv, shim, &bytes) {
                Ok(e) => e.inputs.clone(),
                Err(msg) => return Some(SkipReason::DeserializeFailed(msg)),
            }
        }
        RuntimeChoice::OnnxRuntime | RuntimeChoice::Auto => {
            let lib = match ort_runtime::load() {
                Ok(l) => l,
                Err(e) => return Some(e),
            };
            let provider = match provider_for(request) {
                Ok(p) => p,
                Err(e) => return Some(e),
            };
            if let Err(e) = ort_runtime::session::provider_available(lib, provider) {
                return Some(e);
            }
            // A model the runtime refuses fails in setup with the runtime's message.
            match OrtEngine::open(lib, &spec.engine, Provider::Cpu, true) {
                Ok(e) => e.inputs,
                Err(_) => return None,
            }
        }
    };
    match tensor::resolve_inputs(&io, &spec.shapes) {
        Resolution::Skip(reason) => Some(reason),
        Resolution::Invalid(_) => None,
        Resolution::Ready(inputs) => precision_mismatch(&inputs, request.precision),
    }
}

/// The provider an ONNX case runs on: CPU on `cpu`, CUDA on `trt` (the GPU the host hands it).
fn provider_for(request: &SetupRequest) -> Result<Provider, SkipReason> {
    match request.backend {
        Backend::Cpu => Ok(Provider::Cpu),
        Backend::Trt => match request.cuda.as_ref() {
            abi_stable::std_types::ROption::RSome(h) => Ok(Provider::Cuda(h.device_ordinal as i32)),
            abi_stable::std_types::ROption::RNone => Err(SkipReason::ProviderUnavailable(
                "no_gpu_handed: the host gave this trt case no CUDA device".into(),
            )),
        },
        Backend::Cuda => Err(SkipReason::ProviderUnavailable(
            "engine cases run on the cpu or trt backend, not cuda".into(),
        )),
    }
}

/// The case's precision must be the one the engine's floating-point inputs compute in.
fn precision_mismatch(inputs: &[ResolvedInput], precision: Precision) -> Option<SkipReason> {
    let model = inputs.iter().find_map(|i| i.dtype.precision())?;
    (model != precision.as_str()).then(|| SkipReason::PrecisionMismatch {
        model: model.to_string(),
        case: precision.as_str().to_string(),
    })
}

/// A query's outputs: as ONNX Runtime allocated them, or read back from the device.
enum Outputs {
    Ort(OrtOutputs),
    Host(Vec<HostTensor>),
}

impl Outputs {
    fn to_host(&self) -> Result<Vec<HostTensor>, PluginError> {
        match self {
            Self::Ort(o) => ort_runtime::to_host(o).map_err(PluginError::other),
            Self::Host(h) => Ok(h.clone()),
        }
    }
}

/// The runtime a case runs on.
enum Runner {
    Ort(Box<OrtEngine>),
    Trt(Box<TrtQuery>),
}

/// What the accuracy check compares with.
enum Check {
    /// A committed model's f64 reference.
    Reference(String),
    /// The same model in ONNX Runtime with every graph optimization off, on the CPU provider.
    Unoptimized(Box<OrtEngine>),
    /// Nothing independent exists (a TensorRT engine without a reference): a second run of the
    /// same engine on the same inputs, which only shows determinism.
    RerunOnly,
}

/// Sets a case up (the host has already asked [`check`]; asked again here so a direct caller
/// gets the same reason as an error).
pub fn open(spec: &EngineSpec, request: &SetupRequest) -> Result<EngineCase, PluginError> {
    if let Some(reason) = check(spec, request) {
        return Err(PluginError::invalid(reason.to_string()));
    }
    let resolve = |io: &[IoSpec]| match tensor::resolve_inputs(io, &spec.shapes) {
        Resolution::Ready(r) => Ok(r),
        Resolution::Skip(s) => Err(PluginError::invalid(s.to_string())),
        Resolution::Invalid(e) => Err(PluginError::invalid(format!(
            "{e} (engine {})",
            spec.engine.display()
        ))),
    };
    let runtime_note;
    let (runner, inputs, kind, check) = match spec.runtime() {
        RuntimeChoice::TensorRt => {
            let nv = trt::load().map_err(|e| PluginError::other(e.to_string()))?;
            let shim = trt::shim::shim().map_err(PluginError::other)?;
            let handles = match request.cuda.as_ref() {
                abi_stable::std_types::ROption::RSome(h) => *h,
                abi_stable::std_types::ROption::RNone => {
                    return Err(PluginError::invalid(
                        "a TensorRT case needs the host's CUDA device",
                    ));
                }
            };
            let bytes = std::fs::read(&spec.engine).map_err(|e| {
                PluginError::other(format!("cannot read {}: {e}", spec.engine.display()))
            })?;
            let mut engine = TrtEngine::deserialize(nv, shim, &bytes)
                .map_err(|m| PluginError::other(format!("engine_deserialize_failed: {m}")))?;
            let inputs = resolve(&engine.inputs)?;
            let outputs = engine.set_shapes(&inputs).map_err(PluginError::other)?;
            let cuda = CudaSession::attach(&handles)?;
            let host = inputs::generate(&inputs, request.seed);
            let query = TrtQuery::new(engine, cuda, host, outputs).map_err(PluginError::cuda)?;
            runtime_note = format!(
                "runtime: TensorRT ({}), enqueueV3 on the host's stream",
                nv.path.display()
            );
            let check = if spec.reference.is_empty() {
                Check::RerunOnly
            } else {
                Check::Reference(spec.reference.clone())
            };
            (
                Runner::Trt(Box::new(query)),
                inputs,
                TraceKind::TensorRt,
                check,
            )
        }
        RuntimeChoice::OnnxRuntime | RuntimeChoice::Auto => {
            let lib = ort_runtime::load().map_err(|e| PluginError::other(e.to_string()))?;
            let provider =
                provider_for(request).map_err(|e| PluginError::invalid(e.to_string()))?;
            let mut engine = OrtEngine::open(lib, &spec.engine, provider, true).map_err(|m| {
                PluginError::other(format!(
                    "ONNX Runtime refused {}: {m}",
                    spec.engine.display()
                ))
            })?;
            let inputs = resolve(&engine.inputs)?;
            engine
                .bind(&inputs::generate(&inputs, request.seed))
                .map_err(PluginError::other)?;
            runtime_note = format!(
                "runtime: ONNX Runtime {} ({}), {}",
                lib.version,
                lib.path.display(),
                provider.name()
            );
            let check = if !spec.reference.is_empty() {
                Check::Reference(spec.reference.clone())
            } else {
                let second =
                    OrtEngine::open(lib, &spec.engine, Provider::Cpu, false).map_err(|m| {
                        PluginError::other(format!("the unoptimized cross-check session: {m}"))
                    })?;
                Check::Unoptimized(Box::new(second))
            };
            let kind = match provider {
                Provider::Cpu => TraceKind::OrtCpu,
                Provider::Cuda(_) => TraceKind::OrtCuda,
            };
            (Runner::Ort(Box::new(engine)), inputs, kind, check)
        }
    };
    if let Check::Reference(name) = &check
        && !reference::KNOWN.contains(&name.as_str())
    {
        return Err(PluginError::invalid(format!(
            "reference `{name}` is not one of {}",
            reference::KNOWN.join(", ")
        )));
    }
    let batch = match &spec.batch_dim {
        None => None,
        Some(b) => {
            let input = inputs.iter().find(|i| i.name == b.input).ok_or_else(|| {
                PluginError::invalid(format!(
                    "batch_dim names input `{}`, which the engine does not have",
                    b.input
                ))
            })?;
            Some(*input.dims.get(b.axis).ok_or_else(|| {
                PluginError::invalid(format!(
                    "batch_dim `{}:{}`: the input has {} dimensions",
                    b.input,
                    b.axis,
                    input.dims.len()
                ))
            })?)
        }
    };
    let mut case = EngineCase {
        runner,
        host_inputs: inputs::generate(&inputs, request.seed),
        inputs,
        outputs: None,
        trace: Trace::new(kind),
        check,
        batch,
        output_bytes: 0,
        spec: spec.clone(),
        runtime_note,
        last_failure: String::new(),
    };
    // The seed's `first_out`: one untimed query, which also gives the outputs' sizes.
    case.query()?;
    case.output_bytes = match &case.outputs {
        Some(o) => o
            .to_host()?
            .iter()
            .map(|t| t.data.len() * bytes_of(&t.data))
            .sum(),
        None => 0,
    };
    case.trace = Trace::new(kind);
    Ok(case)
}

fn bytes_of(d: &inputs::HostData) -> usize {
    use inputs::HostData::*;
    match d {
        F64(_) | I64(_) => 8,
        F32(_) | I32(_) => 4,
        F16(_) | Bf16(_) => 2,
        I8(_) | U8(_) | Bool(_) => 1,
    }
}

/// One set-up engine case.
pub struct EngineCase {
    runner: Runner,
    inputs: Vec<ResolvedInput>,
    host_inputs: Vec<HostTensor>,
    outputs: Option<Outputs>,
    trace: Trace,
    check: Check,
    batch: Option<usize>,
    output_bytes: usize,
    spec: EngineSpec,
    runtime_note: String,
    last_failure: String,
}

impl EngineCase {
    /// One query, traced; keeps its outputs.
    fn query(&mut self) -> Result<(), PluginError> {
        let start = Instant::now();
        let (outputs, phases) = match &mut self.runner {
            Runner::Ort(e) => (Outputs::Ort(e.run().map_err(PluginError::other)?), None),
            Runner::Trt(q) => {
                let phases = q.run().map_err(PluginError::other)?;
                (
                    Outputs::Host(q.outputs().map_err(PluginError::other)?),
                    Some(phases),
                )
            }
        };
        let end = Instant::now();
        self.trace.push(Query { start, end, phases });
        self.outputs = Some(outputs);
        Ok(())
    }

    /// The outputs `check` expects for the current inputs, and what they are.
    fn expected(&mut self) -> Result<Vec<(String, Vec<f64>)>, PluginError> {
        match &mut self.check {
            Check::Reference(name) => {
                reference::expected(name, &self.host_inputs).map_err(PluginError::invalid)
            }
            Check::Unoptimized(second) => {
                second.bind(&self.host_inputs).map_err(PluginError::other)?;
                let out = second.run().map_err(PluginError::other)?;
                let out = ort_runtime::to_host(&out).map_err(PluginError::other)?;
                Ok(out.into_iter().map(|t| (t.name, t.data.to_f64())).collect())
            }
            Check::RerunOnly => {
                self.trace.frozen = true;
                let Runner::Trt(q) = &mut self.runner else {
                    return Err(PluginError::other("rerun check on a non-TensorRT case"));
                };
                q.run().map_err(PluginError::other)?;
                let again = q.outputs().map_err(PluginError::other)?;
                Ok(again
                    .into_iter()
                    .map(|t| (t.name, t.data.to_f64()))
                    .collect())
            }
        }
    }

    fn check_sentence(&self) -> String {
        match &self.check {
            Check::Reference(name) => format!(
                "verified against: the f64 reference `{name}` (the committed model's math and weight formulas, src/reference.rs)"
            ),
            Check::Unoptimized(_) => "verified against: the same model in ONNX Runtime with every graph optimization disabled, on the CPU provider (a second execution path, not an independent reference)".to_string(),
            Check::RerunOnly => "unverified: a TensorRT engine without a reference has no second runtime here; the check only compares a second run of the engine with the first (determinism)".to_string(),
        }
    }
}

impl Instance for EngineCase {
    fn work(&self) -> Work {
        let bytes_read: usize = self
            .host_inputs
            .iter()
            .map(|t| t.data.len() * bytes_of(&t.data))
            .sum();
        let (items, unit) = match self.batch {
            Some(b) => (b as f64, WorkUnit::Frames),
            None => (
                self.inputs
                    .iter()
                    .map(ResolvedInput::elements)
                    .sum::<usize>() as f64,
                WorkUnit::Elements,
            ),
        };
        Work {
            bytes_read: bytes_read as u64,
            bytes_written: self.output_bytes as u64,
            flops: match &self.check {
                Check::Reference(name) => reference::flops(name, &self.inputs),
                _ => 0.0,
            },
            items,
            unit,
        }
    }

    fn run(&mut self) -> Result<(), PluginError> {
        self.query()
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.trace.frozen = true;
        self.host_inputs = inputs::generate(&self.inputs, seed);
        match &mut self.runner {
            Runner::Ort(e) => e.bind(&self.host_inputs).map_err(PluginError::other)?,
            Runner::Trt(q) => {
                q.set_inputs(self.host_inputs.clone());
                q.poison_outputs();
            }
        }
        self.outputs = None;
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        let Some(outputs) = &self.outputs else {
            return Err(PluginError::other(
                "no query ran since the inputs were regenerated",
            ));
        };
        // Read back before the check may run the engine again.
        let outputs = outputs.to_host()?;
        let expected = self.expected()?;
        let (mut out, mut reference) = (Vec::new(), Vec::new());
        for (name, values) in &expected {
            let got = outputs.iter().find(|t| &t.name == name).ok_or_else(|| {
                PluginError::other(format!("the engine has no output `{name}` to compare"))
            })?;
            let got = got.data.to_f64();
            if got.len() != values.len() {
                return Err(PluginError::other(format!(
                    "output `{name}` has {} elements, the reference {}",
                    got.len(),
                    values.len()
                )));
            }
            out.extend(got);
            reference.extend_from_slice(values);
        }
        let acc = compare_outputs(&out, &reference, tolerance);
        self.last_failure = if acc.within(tolerance) {
            String::new()
        } else {
            format!(
                "the outputs ({}) differ from {}",
                expected
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                self.check_sentence()
                    .trim_start_matches("verified against: ")
            )
        };
        Ok(acc)
    }

    fn verify_note(&self) -> String {
        self.last_failure.clone()
    }

    fn figures(&self) -> Vec<Figure> {
        self.trace.report().figures
    }

    fn notes(&self) -> Vec<String> {
        let shapes: Vec<String> = self
            .inputs
            .iter()
            .map(|i| {
                let dims: Vec<String> = i.dims.iter().map(usize::to_string).collect();
                format!("{}={} ({})", i.name, dims.join("x"), i.dtype)
            })
            .collect();
        let mut notes = vec![
            self.runtime_note.clone(),
            format!(
                "engine: {}; shape case `{}`: {}",
                self.spec.engine.display(),
                self.spec.label,
                shapes.join(", ")
            ),
            match (&self.spec.batch_dim, self.batch) {
                (Some(b), Some(n)) => format!(
                    "frames_per_s counts {n} frame(s) per query: dimension {} of `{}`, as named",
                    b.axis, b.input
                ),
                _ => "frames_per_s: absent: no batch dimension named (--trt-batch-dim input:axis); elements_per_s counts input elements".to_string(),
            },
            self.check_sentence(),
        ];
        notes.extend(self.trace.report().notes);
        notes
    }
}

/// Whether `path` is an ONNX model by its name (for messages).
pub fn is_onnx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
}
