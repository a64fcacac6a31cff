//! Finding and loading `libonnxruntime`, once per process. The order, reported in every skip
//! reason:
//!
//! 1. `ORT_DYLIB_PATH` (the `ort` crate's own variable; `.ci/run` exports it from the pip
//!    wheel's `onnxruntime/capi/libonnxruntime.so.1.*`), which must name an existing file;
//! 2. `libonnxruntime.so`, then `libonnxruntime.so.1`, through the dynamic loader's search path
//!    (`LD_LIBRARY_PATH`, `/etc/ld.so.cache`, `/lib`, `/usr/lib`).
//!
//! Each candidate is opened with `libloading` first and must export `OrtGetApiBase` and report a
//! version at least the ORT API this build speaks ([`ort::MINOR_VERSION`]); only then is it
//! handed to `ort::init_from`. Every call into `ort` runs under `catch_unwind`: `ort` panics
//! when a library it loads turns out unusable, and no panic may cross the plugin boundary.

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::skip::SkipReason;

/// The environment variable `ort` reads the library path from.
pub const ENV_VAR: &str = "ORT_DYLIB_PATH";
/// The names tried through the dynamic loader when the variable is unset.
pub const LOADER_NAMES: [&str; 2] = ["libonnxruntime.so", "libonnxruntime.so.1"];

/// The loaded runtime: where it came from, its version and the process's environment.
pub struct OrtLibrary {
    pub path: PathBuf,
    pub version: String,
    pub env: ort::environment::Environment,
}

static LOADED: OnceLock<Result<OrtLibrary, SkipReason>> = OnceLock::new();

/// The runtime, loaded on first use; the outcome is final for the process.
pub fn load() -> Result<&'static OrtLibrary, SkipReason> {
    LOADED
        .get_or_init(load_uncached)
        .as_ref()
        .map_err(Clone::clone)
}

/// The candidates, in order, with what was decided about each before opening it.
fn candidates() -> (Vec<PathBuf>, Vec<String>) {
    match std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()) {
        Some(v) => {
            let p = PathBuf::from(&v);
            if p.is_file() {
                (vec![p], Vec::new())
            } else {
                (
                    Vec::new(),
                    vec![format!("{ENV_VAR}={} (no such file)", p.display())],
                )
            }
        }
        None => (
            LOADER_NAMES.iter().map(PathBuf::from).collect(),
            vec![format!("{ENV_VAR} (unset)")],
        ),
    }
}

fn load_uncached() -> Result<OrtLibrary, SkipReason> {
    let (paths, mut looked) = candidates();
    for path in paths {
        match probe(&path) {
            Ok(version) => {
                let init = catch_unwind(AssertUnwindSafe(|| {
                    ort::init_from(&path)
                        .map_err(|e| e.to_string())?
                        .with_name("apex-trt-engine")
                        .build()
                        .map_err(|e| e.to_string())
                }));
                match init {
                    Ok(Ok(env)) => {
                        return Ok(OrtLibrary { path, version, env });
                    }
                    Ok(Err(e)) => looked.push(format!("{}: {e}", path.display())),
                    Err(_) => {
                        looked.push(format!("{}: ort panicked while loading it", path.display()))
                    }
                }
                // `ort` keeps the first library it loaded: trying another would not take effect.
                break;
            }
            Err(e) => looked.push(e),
        }
    }
    if std::env::var_os(ENV_VAR).is_none_or(|v| v.is_empty()) {
        looked.push(crate::skip::loader_path());
    }
    Err(SkipReason::RuntimeUnavailable {
        runtime: "onnxruntime",
        library: "libonnxruntime".into(),
        looked,
        hint: format!(
            "pip install onnxruntime, then export {ENV_VAR}=<site-packages>/onnxruntime/capi/libonnxruntime.so.1.<version>"
        ),
    })
}

/// Opens `path`, checks that it is ONNX Runtime of a version this build can use, and closes it.
fn probe(path: &std::path::Path) -> Result<String, String> {
    // SAFETY: opening a library runs its initializers; ONNX Runtime's are its own, and this is
    // the only way to learn whether it is usable.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
        format!(
            "dlopen({}): {}",
            path.display(),
            crate::skip::error_chain(&e)
        )
    })?;
    type GetApiBase = unsafe extern "C" fn() -> *const ort::sys::OrtApiBase;
    // SAFETY: `OrtGetApiBase` has this signature in every ONNX Runtime release.
    let get: libloading::Symbol<GetApiBase> = unsafe { lib.get(b"OrtGetApiBase\0") }
        .map_err(|_| format!("{}: no `OrtGetApiBase` (not ONNX Runtime)", path.display()))?;
    // SAFETY: the function takes nothing and returns a static table or null.
    let base = unsafe { get() };
    if base.is_null() {
        return Err(format!("{}: `OrtGetApiBase` returned null", path.display()));
    }
    // SAFETY: `base` is ONNX Runtime's static table; GetVersionString returns a static C string.
    let version_ptr: *const c_char = unsafe { ((*base).GetVersionString)() };
    if version_ptr.is_null() {
        return Err(format!("{}: no version string", path.display()));
    }
    // SAFETY: a NUL-terminated static string (checked non-null above).
    let version = unsafe { CStr::from_ptr(version_ptr) }
        .to_string_lossy()
        .into_owned();
    let minor = version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(0);
    if minor < ort::MINOR_VERSION {
        return Err(format!(
            "{}: ONNX Runtime {version} is older than 1.{} (the API this build speaks)",
            path.display(),
            ort::MINOR_VERSION
        ));
    }
    Ok(version)
}

/// One line for `discover --verbose` and the notes: the library and version, or why not.
pub fn describe() -> String {
    match load() {
        Ok(l) => format!("ONNX Runtime {} ({})", l.version, l.path.display()),
        Err(e) => e.to_string(),
    }
}
