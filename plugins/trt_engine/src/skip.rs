//! Why an engine case cannot run here: the seed's checks, in the seed's order (apex-x-kernels.md
//! §3.1, §3.2), each one line, with the seed's reason string first and what we know after it.
//! The first that applies is the case's reason; the host reports the case `skipped` with it.
//!
//! Order for an engine: no engine path, engine file missing, runtime library not found,
//! deserialization failed (TensorRT), unresolved dynamic dimension, unsupported dtype. For the
//! TileSSM plugin microbenchmark: TensorRT missing, no plugin library, the library does not load,
//! the creator is not registered.

use std::fmt;

/// Where `dlopen` looks for a bare library name, as one entry of a skip reason's list.
pub fn loader_path() -> String {
    let ld = std::env::var("LD_LIBRARY_PATH")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unset".into());
    format!("the loader's path (LD_LIBRARY_PATH={ld}, /etc/ld.so.cache, /lib, /usr/lib)")
}

/// An error with its sources, on one line (libloading's `dlopen failed` keeps the loader's own
/// text, the one a user needs, in its source).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(&format!(": {inner}"));
        src = inner.source();
    }
    s
}
use std::path::PathBuf;

/// One skip reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The case names no engine (`--trt-engine-path` not given).
    MissingEnginePath,
    /// The engine file does not exist (absolute path).
    EngineNotFound(PathBuf),
    /// The runtime's library did not load: which library, and every place that was tried.
    RuntimeUnavailable {
        runtime: &'static str,
        library: String,
        looked: Vec<String>,
        hint: String,
    },
    /// The runtime loaded but cannot run this case here (ONNX Runtime without a CUDA provider,
    /// TensorRT without the shim, no GPU handed to the case).
    ProviderUnavailable(String),
    /// TensorRT refused to deserialize the engine (the seed's `engine_deserialize_failed`):
    /// usually an engine built by another TensorRT version or for another GPU.
    DeserializeFailed(String),
    /// An input with a dynamic dimension and no `name=AxB` for it. Never silently 1.
    UnresolvedShape { tensor: String, dims: String },
    /// An input whose element type the plugin does not generate.
    UnsupportedDtype { tensor: String, dtype: String },
    /// The model's floating-point inputs are of another precision than the case's.
    PrecisionMismatch { model: String, case: String },
    /// TileSSM plugin: neither `--trt-plugin-lib` nor `APEXX_TRT_PLUGIN_LIB` names an existing file.
    MissingPluginLibrary(String),
    /// TileSSM plugin: `dlopen(RTLD_GLOBAL)` failed.
    PluginLoadFailed(String),
    /// TileSSM plugin: the library registered no `TileSSMScan` creator.
    CreatorNotRegistered(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingEnginePath => f.write_str(
                "missing_trt_engine_path: no engine given (pass --trt-engine-path FILE, or set `engine` in bench.yaml)",
            ),
            Self::EngineNotFound(p) => write!(f, "engine_not_found:{}", p.display()),
            Self::RuntimeUnavailable {
                runtime,
                library,
                looked,
                hint,
            } => write!(
                f,
                "{runtime}_unavailable: {library} not found; looked in: {} (hint: {hint})",
                looked.join("; ")
            ),
            Self::ProviderUnavailable(why) => f.write_str(why),
            Self::DeserializeFailed(msg) => write!(f, "engine_deserialize_failed: {msg}"),
            Self::UnresolvedShape { tensor, dims } => write!(
                f,
                "unresolved_tensor_shape:{tensor} (dims {dims}; pass --trt-input-shape {tensor}=AxB… with every dimension)"
            ),
            Self::UnsupportedDtype { tensor, dtype } => {
                write!(f, "unsupported_dtype:{dtype} (input `{tensor}`)")
            }
            Self::PrecisionMismatch { model, case } => write!(
                f,
                "precision_mismatch: the engine's floating-point inputs are {model}, this case is {case} (run with --precision {model})"
            ),
            Self::MissingPluginLibrary(looked) => write!(f, "missing_plugin_library: {looked}"),
            Self::PluginLoadFailed(e) => write!(f, "cdll_load_failed:{e}"),
            Self::CreatorNotRegistered(what) => {
                write!(f, "tilessm_plugin_creator_not_registered: {what}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_start_with_the_seeds_strings() {
        assert!(
            SkipReason::MissingEnginePath
                .to_string()
                .starts_with("missing_trt_engine_path")
        );
        assert_eq!(
            SkipReason::EngineNotFound("/x/y.engine".into()).to_string(),
            "engine_not_found:/x/y.engine"
        );
        let r = SkipReason::RuntimeUnavailable {
            runtime: "onnxruntime",
            library: "libonnxruntime.so".into(),
            looked: vec![
                "ORT_DYLIB_PATH (unset)".into(),
                "dlopen(libonnxruntime.so): no such file".into(),
            ],
            hint: "pip install onnxruntime".into(),
        }
        .to_string();
        assert!(r.starts_with("onnxruntime_unavailable: libonnxruntime.so not found; looked in: ORT_DYLIB_PATH (unset); dlopen"), "{r}");
        assert!(
            SkipReason::UnresolvedShape {
                tensor: "x".into(),
                dims: "[-1, 32]".into()
            }
            .to_string()
            .starts_with("unresolved_tensor_shape:x ")
        );
        assert!(
            SkipReason::UnsupportedDtype {
                tensor: "s".into(),
                dtype: "String".into()
            }
            .to_string()
            .starts_with("unsupported_dtype:String")
        );
        assert!(!SkipReason::MissingEnginePath.to_string().contains('\n'));
    }
}
