//! `trt_engine.tilessm_plugin`: the TileSSM TensorRT-plugin microbenchmark (apex-x-kernels.md
//! §3.2, reported by the seed as `benchmarks.tilessm.tensorrt_plugin`). The plugin library comes
//! from the `plugin_lib` parameter (`--trt-plugin-lib`), else `APEXX_TRT_PLUGIN_LIB`; it is
//! loaded `RTLD_GLOBAL` so TensorRT finds its creators, and the case then measures the engine
//! given in `engine` (an engine that uses the `TileSSMScan` plugin, built with it) like any
//! TensorRT engine (`crate::engine`).
//!
//! Skip reasons, in the seed's order: TensorRT missing (which library, where it looked),
//! `missing_plugin_library`, `cdll_load_failed:<err>`, `tilessm_plugin_creator_not_registered`;
//! then the engine's own (`missing_trt_engine_path`, …).

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use apex_plugin_api::{
    Backend, Instance, Kernel, KernelDescriptor, ParamSpec, PluginError, Precision, SetupRequest,
    register_kernel,
};

use crate::engine::{self, engine_params};
use crate::skip::SkipReason;
use crate::spec::EngineSpec;
use crate::trt;

/// The environment variable the seed reads the plugin library from.
pub const ENV_VAR: &str = "APEXX_TRT_PLUGIN_LIB";
/// The creator the seed looks up: `TileSSMScan`, version "1", namespace "apexx".
pub const CREATOR: (&str, &str, &str) = ("TileSSMScan", "1", "apexx");

#[derive(Default)]
pub struct TileSsmPlugin;

register_kernel!(TileSsmPlugin);

impl Kernel for TileSsmPlugin {
    fn descriptor(&self) -> KernelDescriptor {
        engine_params(
            KernelDescriptor::new(
                "trt_engine.tilessm_plugin",
                "the TileSSM TensorRT plugin (APEXX_TRT_PLUGIN_LIB) in an engine that uses it; trtexec's fields",
            )
            .backends(&[Backend::Trt])
            .precisions(&[Precision::Fp16, Precision::Fp32]),
        )
        .param(ParamSpec::str(
            "plugin_lib",
            "",
            "the plugin library (--trt-plugin-lib); empty: APEXX_TRT_PLUGIN_LIB",
        ))
    }

    fn unavailable(&self, request: &SetupRequest) -> Option<String> {
        plugin_check(request)
            .or_else(|| {
                let spec = EngineSpec::from_params(&request.params).ok()?;
                engine::check(&spec, request)
            })
            .map(|r| r.to_string())
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        if let Some(reason) = plugin_check(request) {
            return Err(PluginError::invalid(reason.to_string()));
        }
        let spec = EngineSpec::from_params(&request.params)?;
        Ok(Box::new(engine::open(&spec, request)?))
    }
}

/// The plugin library this case names: the parameter, else the environment; where it looked.
fn plugin_path(request: &SetupRequest) -> Result<PathBuf, String> {
    let param = request
        .params
        .str("plugin_lib")
        .unwrap_or("")
        .trim()
        .to_string();
    if !param.is_empty() {
        let p = crate::spec::resolve_path(&param);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("--trt-plugin-lib {} (no such file)", p.display()))
        };
    }
    match std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()) {
        Some(v) if PathBuf::from(&v).is_file() => Ok(PathBuf::from(v)),
        Some(v) => Err(format!(
            "{ENV_VAR}={} (no such file)",
            PathBuf::from(v).display()
        )),
        None => Err(format!("neither --trt-plugin-lib nor {ENV_VAR} is set")),
    }
}

/// Libraries opened RTLD_GLOBAL stay open for the process (TensorRT keeps their creators).
static OPENED: OnceLock<Mutex<Vec<libloading::os::unix::Library>>> = OnceLock::new();

fn plugin_check(request: &SetupRequest) -> Option<SkipReason> {
    let (nv, shim) = match trt::runtime() {
        Ok(both) => both,
        Err(e) => return Some(e),
    };
    let path = match plugin_path(request) {
        Ok(p) => p,
        Err(looked) => return Some(SkipReason::MissingPluginLibrary(looked)),
    };
    // SAFETY: the user's TensorRT plugin library; its initializers register its creators.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(&path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
        )
    };
    match lib {
        Ok(l) => {
            if let Ok(mut v) = OPENED.get_or_init(|| Mutex::new(Vec::new())).lock() {
                v.push(l);
            }
        }
        Err(e) => return Some(SkipReason::PluginLoadFailed(crate::skip::error_chain(&e))),
    }
    let (name, version, ns) = CREATOR;
    let c = |s: &str| CString::new(s).unwrap_or_default();
    // SAFETY: `plugin_registry` is libnvinfer's `getPluginRegistry`; the strings outlive the call.
    let found = unsafe {
        (shim.plugin_creator_registered)(
            nv.plugin_registry,
            c(name).as_ptr(),
            c(version).as_ptr(),
            c(ns).as_ptr(),
        )
    };
    match found {
        1 => None,
        0 => Some(SkipReason::CreatorNotRegistered(format!(
            "{} registers no creator {name} version {version} in namespace {ns}",
            path.display()
        ))),
        _ => Some(SkipReason::CreatorNotRegistered(format!(
            "the plugin registry could not be read: {}",
            shim.last_error()
        ))),
    }
}
