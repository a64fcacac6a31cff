//! Loading one library: a `libloading` pre-flight for a clean "cannot open" error, then
//! abi_stable's per-file `lib_header_from_path(..).init_root_module()` (never `load_from_file`,
//! which caches one module per type per process), then our own ABI-version check, then the
//! kernels' descriptors.

use std::path::{Path, PathBuf};

use abi_stable::library::{ROOT_MODULE_LOADER_NAME_WITH_NUL, lib_header_from_path};
use abi_stable::std_types::RResult;
use apex_plugin_api::ffi::FfiKernelBox;
use apex_plugin_api::{ABI_VERSION, ParamValue, PluginRoot_Ref};

use super::condense::{error_chain, library_error};
use crate::model::{KernelInfo, ParamInfo, tolerance_map};

/// A library that loaded: its plugin name and version and its kernels (FFI objects kept alive
/// for the process; libraries are never unloaded).
pub struct LoadedLibrary {
    pub path: PathBuf,
    pub name: String,
    pub version: String,
    pub kernels: Vec<(KernelInfo, FfiKernelBox)>,
}

/// Loads `path` as an apex plugin. `Err` is a one-line reason.
pub fn load_library(path: &Path, crate_dir: Option<&Path>) -> Result<LoadedLibrary, String> {
    preflight(path)?;
    let header = lib_header_from_path(path).map_err(|e| library_error(&e))?;
    let root: PluginRoot_Ref = header
        .init_root_module::<PluginRoot_Ref>()
        .map_err(|e| library_error(&e))?;
    let abi = root.abi_version();
    if abi != ABI_VERSION {
        return Err(format!(
            "incompatible plugin ABI version {abi}; this host speaks {ABI_VERSION} (hint: rebuild the plugin against this checkout's plugin-api)"
        ));
    }
    let name = root.plugin_name().to_string();
    let version = root.plugin_version().to_string();
    let kernels = match (root.kernels())() {
        RResult::ROk(k) => k,
        RResult::RErr(e) => {
            return Err(format!(
                "failed while registering its kernels: {}",
                e.message
            ));
        }
    };
    let mut out = Vec::new();
    for k in kernels {
        let d = match k.descriptor() {
            RResult::ROk(d) => d,
            RResult::RErr(e) => return Err(format!("a kernel's descriptor failed: {}", e.message)),
        };
        let info = KernelInfo {
            id: d.id.to_string(),
            description: d.description.to_string(),
            backends: d.backends.to_vec(),
            precisions: d.precisions.to_vec(),
            params: d
                .params
                .iter()
                .map(|p| ParamInfo {
                    name: p.name.to_string(),
                    default: param_json(&p.default),
                    description: p.description.to_string(),
                })
                .collect(),
            tolerances: d
                .precisions
                .iter()
                .map(|&p| (p.as_str().to_string(), tolerance_map(&d.tolerance_for(p))))
                .collect(),
            graph_capturable: d.graph_capturable,
            plugin: name.clone(),
            library: path.to_path_buf(),
            crate_dir: crate_dir.map(Path::to_path_buf),
        };
        out.push((info, k));
    }
    Ok(LoadedLibrary {
        path: path.to_path_buf(),
        name,
        version,
        kernels: out,
    })
}

/// Checks that the file opens as a shared library and exports a root module, so that a library
/// that is not a plugin gets a clean one-line reason.
fn preflight(path: &Path) -> Result<(), String> {
    // SAFETY: loading a library runs its initializers; that is what loading a plugin means. The
    // pre-flight handle is dropped (dlclose) before abi_stable opens the file again.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("cannot open library: {}", error_chain(&e)))?;
    // SAFETY: only the symbol's presence is checked; it is never called or dereferenced here.
    let has_root =
        unsafe { lib.get::<*const ()>(ROOT_MODULE_LOADER_NAME_WITH_NUL.as_bytes()) }.is_ok();
    if !has_root {
        return Err(
            "not an apex plugin: it exports no root module (hint: call apex_plugin_api::export_plugin!() in its lib.rs)"
                .into(),
        );
    }
    Ok(())
}

/// A declared default as JSON.
pub fn param_json(v: &ParamValue) -> serde_json::Value {
    match v {
        ParamValue::Int(i) => (*i).into(),
        ParamValue::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        ParamValue::Bool(b) => (*b).into(),
        ParamValue::Str(s) => s.as_str().into(),
        ParamValue::Shape(dims) => dims.iter().copied().collect::<Vec<i64>>().into(),
    }
}

/// One kernel of a loaded library, as a worker measures it.
#[derive(Clone, Copy)]
pub struct KernelRef<'a> {
    pub info: &'a KernelInfo,
    pub kernel: &'a FfiKernelBox,
}

impl LoadedLibrary {
    /// The kernel `id` of this library.
    pub fn kernel(&self, id: &str) -> Result<KernelRef<'_>, String> {
        self.kernels
            .iter()
            .find(|(info, _)| info.id == id)
            .map(|(info, kernel)| KernelRef { info, kernel })
            .ok_or_else(|| format!("kernel `{id}` is not in `{}`", self.path.display()))
    }
}
