//! Finding `libnvinfer`, once per process. The order, reported in the skip reason:
//!
//! 1. `$TENSORRT_ROOT/lib/libnvinfer.so.10`, `$TENSORRT_ROOT/lib/libnvinfer.so` (when set);
//! 2. `libnvinfer.so.10`, then `libnvinfer.so`, through the dynamic loader's search path
//!    (`LD_LIBRARY_PATH`, `/etc/ld.so.cache`, `/lib`, `/usr/lib`).
//!
//! The library is opened `RTLD_GLOBAL` (a TensorRT plugin library loaded later resolves its
//! symbols against it) and kept open for the life of the process. Only its `extern "C"` entry
//! points are looked up here: `createInferRuntime_INTERNAL` and `getPluginRegistry`; everything
//! else goes through the C++ objects they return, in the shim.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::skip::SkipReason;

/// The environment variable naming a TensorRT install (its `lib/` is tried first).
pub const ROOT_VAR: &str = "TENSORRT_ROOT";
pub const LOADER_NAMES: [&str; 2] = ["libnvinfer.so.10", "libnvinfer.so"];

/// The loaded library and its two C entry points.
pub struct NvInfer {
    pub path: PathBuf,
    /// `createInferRuntime_INTERNAL(void* logger, int32_t version)`.
    pub create_runtime: *mut c_void,
    /// `getPluginRegistry()`.
    pub plugin_registry: *mut c_void,
    _lib: libloading::os::unix::Library,
}

// SAFETY: the two pointers are addresses of functions in a library that stays loaded for the
// life of the process; TensorRT's runtime factory and registry getter are thread-safe.
unsafe impl Send for NvInfer {}
// SAFETY: as above; nothing here is mutated after loading.
unsafe impl Sync for NvInfer {}

static LOADED: OnceLock<Result<NvInfer, SkipReason>> = OnceLock::new();

/// The library, loaded on first use; the outcome is final for the process.
pub fn load() -> Result<&'static NvInfer, SkipReason> {
    LOADED
        .get_or_init(load_uncached)
        .as_ref()
        .map_err(Clone::clone)
}

/// Every candidate, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(root) = std::env::var_os(ROOT_VAR).filter(|v| !v.is_empty()) {
        for name in LOADER_NAMES {
            out.push(PathBuf::from(&root).join("lib").join(name));
        }
    }
    out.extend(LOADER_NAMES.iter().map(PathBuf::from));
    out
}

fn load_uncached() -> Result<NvInfer, SkipReason> {
    let mut looked = Vec::new();
    if std::env::var_os(ROOT_VAR).is_none_or(|v| v.is_empty()) {
        looked.push(format!("{ROOT_VAR} (unset)"));
    }
    for path in candidates() {
        // SAFETY: opening libnvinfer runs its initializers, the vendor's own; RTLD_GLOBAL so that
        // a TensorRT plugin library loaded later links against this copy.
        let opened = unsafe {
            libloading::os::unix::Library::open(
                Some(&path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        };
        let lib = match opened {
            Ok(l) => l,
            Err(e) => {
                looked.push(format!(
                    "dlopen({}): {}",
                    path.display(),
                    crate::skip::error_chain(&e)
                ));
                continue;
            }
        };
        // SAFETY: only the symbols' addresses are read here; the shim calls them with
        // TensorRT's declared signatures.
        let sym = |name: &[u8]| unsafe { lib.get::<*mut c_void>(name).map(|s| s.into_raw()).ok() };
        let (Some(create_runtime), Some(plugin_registry)) = (
            sym(b"createInferRuntime_INTERNAL\0"),
            sym(b"getPluginRegistry\0"),
        ) else {
            looked.push(format!(
                "{}: no createInferRuntime_INTERNAL / getPluginRegistry (not TensorRT's runtime)",
                path.display()
            ));
            continue;
        };
        return Ok(NvInfer {
            path,
            create_runtime,
            plugin_registry,
            _lib: lib,
        });
    }
    looked.push(crate::skip::loader_path());
    Err(SkipReason::RuntimeUnavailable {
        runtime: "tensorrt",
        library: "libnvinfer".into(),
        looked,
        hint: format!(
            "install TensorRT 10 (its wheels come from NVIDIA's own index) and set {ROOT_VAR} or LD_LIBRARY_PATH"
        ),
    })
}

/// One line for `discover --verbose`: the library, or why not.
pub fn describe() -> String {
    match load() {
        Ok(l) => format!("TensorRT ({})", l.path.display()),
        Err(e) => e.to_string(),
    }
}
