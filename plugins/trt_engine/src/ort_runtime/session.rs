//! One ONNX model in an ONNX Runtime session: its inputs and outputs as [`IoSpec`]s, the inputs
//! of a case bound once, and one synchronous query ([`OrtEngine::run`]).
//!
//! Providers: the CPU provider everywhere; the CUDA provider only where the installed runtime
//! was built with it (`onnxruntime-gpu`), registered with `error_on_failure` so a case that asks
//! for CUDA never runs silently on the CPU.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use ort::ep::ExecutionProvider;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{DynValue, Tensor, TensorElementType, ValueType};

use super::library::OrtLibrary;
use crate::inputs::{HostData, HostTensor};
use crate::skip::SkipReason;
use crate::tensor::{DType, IoSpec};

/// Where a session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Cpu,
    /// The CUDA provider on this device ordinal.
    Cuda(i32),
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "CPUExecutionProvider",
            Self::Cuda(_) => "CUDAExecutionProvider",
        }
    }
}

/// Whether the loaded runtime can run `provider` here; the reason when not.
pub fn provider_available(lib: &OrtLibrary, provider: Provider) -> Result<(), SkipReason> {
    match provider {
        Provider::Cpu => Ok(()),
        Provider::Cuda(_) => {
            let has = catch_unwind(ort::ep::CUDA::is_available)
                .map_err(|_| "ort panicked asking for the providers".to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            match has {
                Ok(true) => Ok(()),
                Ok(false) => Err(SkipReason::ProviderUnavailable(format!(
                    "onnxruntime_cuda_unavailable: ONNX Runtime {} ({}) has no CUDAExecutionProvider (the CPU package; install onnxruntime-gpu and point ORT_DYLIB_PATH at its library)",
                    lib.version,
                    lib.path.display()
                ))),
                Err(e) => Err(SkipReason::ProviderUnavailable(format!(
                    "onnxruntime_cuda_unavailable: cannot list ONNX Runtime's providers: {e}"
                ))),
            }
        }
    }
}

/// The runtime's element type as ours, or its name when the plugin does not generate it.
fn dtype_of(ty: TensorElementType) -> Result<DType, String> {
    Ok(match ty {
        TensorElementType::Float32 => DType::F32,
        TensorElementType::Float16 => DType::F16,
        TensorElementType::Bfloat16 => DType::Bf16,
        TensorElementType::Float64 => DType::F64,
        TensorElementType::Int8 => DType::I8,
        TensorElementType::Uint8 => DType::U8,
        TensorElementType::Int32 => DType::I32,
        TensorElementType::Int64 => DType::I64,
        TensorElementType::Bool => DType::Bool,
        other => return Err(format!("{other:?}")),
    })
}

fn io_spec(name: &str, ty: &ValueType) -> IoSpec {
    match ty {
        ValueType::Tensor { ty, shape, .. } => IoSpec {
            name: name.to_string(),
            dtype: dtype_of(*ty),
            dims: shape.to_vec(),
        },
        ValueType::Sequence(_) => IoSpec {
            name: name.to_string(),
            dtype: Err("Sequence".into()),
            dims: Vec::new(),
        },
        _ => IoSpec {
            name: name.to_string(),
            dtype: Err("Map".into()),
            dims: Vec::new(),
        },
    }
}

/// A model in a session.
pub struct OrtEngine {
    session: Session,
    pub provider: Provider,
    pub inputs: Vec<IoSpec>,
    pub outputs: Vec<IoSpec>,
    bound: Vec<(String, DynValue)>,
}

/// Runs `f`, turning an `ort` panic into an error message.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(format!("ort panicked while {what}")))
}

impl OrtEngine {
    /// Opens `path` on `provider`. `optimized: false` turns every graph optimization off: the
    /// second execution path that verifies a model without a reference. An error is the
    /// runtime's own message.
    pub fn open(
        lib: &OrtLibrary,
        path: &Path,
        provider: Provider,
        optimized: bool,
    ) -> Result<Self, String> {
        guarded("opening the model", || {
            let mut builder = Session::builder(&lib.env).map_err(|e| e.to_string())?;
            if !optimized {
                builder = builder
                    .with_optimization_level(GraphOptimizationLevel::Disable)
                    .map_err(|e| e.to_string())?;
            }
            if let Provider::Cuda(device) = provider {
                builder = builder
                    .with_execution_providers([ort::ep::CUDA::default()
                        .with_device_id(device)
                        .build()
                        .error_on_failure()])
                    .map_err(|e| e.to_string())?;
            }
            let session = builder.commit_from_file(path).map_err(|e| e.to_string())?;
            let inputs = session
                .inputs()
                .iter()
                .map(|o| io_spec(o.name(), o.dtype()))
                .collect();
            let outputs = session
                .outputs()
                .iter()
                .map(|o| io_spec(o.name(), o.dtype()))
                .collect();
            Ok(Self {
                session,
                provider,
                inputs,
                outputs,
                bound: Vec::new(),
            })
        })
    }

    /// Binds the inputs every following query reads (created once: a query allocates no input).
    pub fn bind(&mut self, tensors: &[HostTensor]) -> Result<(), String> {
        guarded("binding the inputs", || {
            self.bound = tensors
                .iter()
                .map(|t| Ok((t.name.clone(), to_value(t).map_err(|e| e.to_string())?)))
                .collect::<Result<_, String>>()?;
            Ok(())
        })
    }

    /// One query on the bound inputs; the outputs as the runtime allocated them, in the
    /// engine's output order (read back with [`to_host`] only when they are checked, so a
    /// query's time holds no copy the runtime would not make).
    pub fn run(&mut self) -> Result<OrtOutputs, String> {
        let (session, bound) = (&mut self.session, &self.bound);
        guarded("running the model", || {
            let inputs: Vec<(&str, &DynValue)> =
                bound.iter().map(|(n, v)| (n.as_str(), v)).collect();
            let outputs = session.run(inputs).map_err(|e| e.to_string())?;
            Ok(outputs
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect())
        })
    }
}

/// A query's outputs, owned, by name.
pub type OrtOutputs = Vec<(String, DynValue)>;

/// The outputs as host tensors.
pub fn to_host(outputs: &OrtOutputs) -> Result<Vec<HostTensor>, String> {
    guarded("reading the outputs", || {
        outputs.iter().map(|(n, v)| from_value(n, v)).collect()
    })
}

fn to_value(t: &HostTensor) -> ort::Result<DynValue> {
    let dims: Vec<i64> = t.dims.iter().map(|&d| d as i64).collect();
    Ok(match &t.data {
        HostData::F32(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::F16(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::Bf16(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::F64(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::I8(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::U8(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::I32(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::I64(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
        HostData::Bool(v) => Tensor::from_array((dims, v.clone()))?.into_dyn(),
    })
}

fn from_value(name: &str, value: &DynValue) -> Result<HostTensor, String> {
    let ValueType::Tensor { ty, .. } = value.dtype() else {
        return Err(format!("output `{name}` is not a tensor"));
    };
    macro_rules! take {
        ($t:ty, $variant:ident) => {{
            let (shape, data) = value
                .try_extract_tensor::<$t>()
                .map_err(|e| format!("output `{name}`: {e}"))?;
            (shape.to_vec(), HostData::$variant(data.to_vec()))
        }};
    }
    let (shape, data) = match ty {
        TensorElementType::Float32 => take!(f32, F32),
        TensorElementType::Float16 => take!(half::f16, F16),
        TensorElementType::Bfloat16 => take!(half::bf16, Bf16),
        TensorElementType::Float64 => take!(f64, F64),
        TensorElementType::Int8 => take!(i8, I8),
        TensorElementType::Uint8 => take!(u8, U8),
        TensorElementType::Int32 => take!(i32, I32),
        TensorElementType::Int64 => take!(i64, I64),
        TensorElementType::Bool => take!(bool, Bool),
        other => {
            return Err(format!(
                "output `{name}` has element type {other:?}, which the plugin cannot read"
            ));
        }
    };
    Ok(HostTensor {
        name: name.to_string(),
        dims: shape.iter().map(|&d| d.max(0) as usize).collect(),
        data,
    })
}
