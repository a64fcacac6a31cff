//! The engine backends of the `trt_engine` plugin as this machine offers them, for `discover
//! --verbose`: TensorRT (`libnvinfer`), ONNX Runtime with its CPU provider, and with its CUDA
//! provider. Each is available, with the library it found, or not, with every place it looked.
//!
//! The lookup orders are the plugin's (`plugins/trt_engine/src/{trt,ort_runtime}/library.rs`):
//! TensorRT from `$TENSORRT_ROOT/lib`, then `libnvinfer.so.10` and `libnvinfer.so` through the
//! dynamic loader; ONNX Runtime from `ORT_DYLIB_PATH`, else `libonnxruntime.so` and
//! `libonnxruntime.so.1` through the loader. ONNX Runtime's CUDA provider is the shared library
//! `libonnxruntime_providers_cuda.so` that `onnxruntime-gpu` installs beside the runtime; it
//! also needs CUDA. Nothing in a library is called except ONNX Runtime's version string.

use std::ffi::{CStr, c_char, c_void};
use std::path::{Path, PathBuf};

/// One engine backend: whether it is usable here, and what was found or why not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EngineBackend {
    pub name: &'static str,
    pub available: bool,
    pub detail: String,
}

/// ONNX Runtime's `OrtApiBase`: the only two functions it exports by table.
#[repr(C)]
struct OrtApiBase {
    get_api: unsafe extern "C" fn(u32) -> *const c_void,
    get_version_string: unsafe extern "C" fn() -> *const c_char,
}

/// An error with its sources (libloading's `dlopen failed` keeps the loader's text in its source).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(&format!(": {inner}"));
        src = inner.source();
    }
    s
}

/// The file a symbol of an opened library lives in (`dladdr`), for a library opened by name.
fn file_of(symbol: *const c_void) -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the address and fills the struct.
    let rc = unsafe { libc::dladdr(symbol, info.as_mut_ptr()) };
    // SAFETY: rc != 0 means the struct was filled; dli_fname is then a C string or null.
    let info = unsafe { info.assume_init() };
    (rc != 0 && !info.dli_fname.is_null()).then(|| {
        // SAFETY: checked non-null; the loader owns the string.
        PathBuf::from(
            unsafe { CStr::from_ptr(info.dli_fname) }
                .to_string_lossy()
                .into_owned(),
        )
    })
}

/// TensorRT: the first `libnvinfer` that opens.
fn tensorrt() -> EngineBackend {
    let mut looked = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    match std::env::var_os("TENSORRT_ROOT").filter(|v| !v.is_empty()) {
        Some(root) => {
            for n in ["libnvinfer.so.10", "libnvinfer.so"] {
                candidates.push(Path::new(&root).join("lib").join(n));
            }
        }
        None => looked.push("TENSORRT_ROOT (unset)".to_string()),
    }
    candidates.extend(["libnvinfer.so.10", "libnvinfer.so"].map(PathBuf::from));
    for c in candidates {
        // SAFETY: opening libnvinfer runs the vendor's initializers; this is the only way to
        // learn whether it is installed.
        match unsafe { libloading::Library::new(&c) } {
            Ok(_) => {
                return EngineBackend {
                    name: "TensorRT",
                    available: true,
                    detail: format!(
                        "{} (the trt_engine plugin also needs its shim, built where TensorRT's headers are)",
                        c.display()
                    ),
                };
            }
            Err(e) => looked.push(format!("dlopen({}): {}", c.display(), chain(&e))),
        }
    }
    EngineBackend {
        name: "TensorRT",
        available: false,
        detail: format!("libnvinfer not found; looked in: {}", looked.join("; ")),
    }
}

/// ONNX Runtime: the library that loads first, its version and the file it is.
fn onnxruntime() -> Result<(PathBuf, String), String> {
    let mut looked = Vec::new();
    let candidates: Vec<PathBuf> =
        match std::env::var_os("ORT_DYLIB_PATH").filter(|v| !v.is_empty()) {
            Some(p) => vec![PathBuf::from(p)],
            None => {
                looked.push("ORT_DYLIB_PATH (unset)".to_string());
                ["libonnxruntime.so", "libonnxruntime.so.1"]
                    .map(PathBuf::from)
                    .to_vec()
            }
        };
    for c in candidates {
        // SAFETY: as for libnvinfer; ONNX Runtime's initializers are its own.
        let lib = match unsafe { libloading::Library::new(&c) } {
            Ok(l) => l,
            Err(e) => {
                looked.push(format!("dlopen({}): {}", c.display(), chain(&e)));
                continue;
            }
        };
        // SAFETY: `OrtGetApiBase` takes nothing and returns ONNX Runtime's static table.
        let get = match unsafe {
            lib.get::<unsafe extern "C" fn() -> *const OrtApiBase>(b"OrtGetApiBase\0")
        } {
            Ok(g) => g,
            Err(_) => {
                looked.push(format!(
                    "{}: no OrtGetApiBase (not ONNX Runtime)",
                    c.display()
                ));
                continue;
            }
        };
        // SAFETY: see above.
        let base = unsafe { get() };
        if base.is_null() {
            looked.push(format!("{}: OrtGetApiBase returned null", c.display()));
            continue;
        }
        // SAFETY: a static table whose second entry returns a static C string.
        let v = unsafe { ((*base).get_version_string)() };
        let version = if v.is_null() {
            "unknown".to_string()
        } else {
            // SAFETY: non-null, static, NUL-terminated.
            unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
        };
        let file = file_of(*get as *const c_void).unwrap_or(c);
        return Ok((file, version));
    }
    Err(format!(
        "libonnxruntime not found; looked in: {}",
        looked.join("; ")
    ))
}

/// Every engine backend on the machine `facts` describe (its CUDA decides the CUDA provider).
pub fn probe_with(facts: &super::Facts) -> Vec<EngineBackend> {
    probe(if facts.cuda.available {
        Ok(())
    } else {
        Err(facts
            .cuda
            .reason
            .clone()
            .unwrap_or_else(|| "no usable GPU".into()))
    })
}

/// Every engine backend, in the order `discover --verbose` prints them. `cuda` is the CUDA
/// probe's reason when there is no usable GPU.
pub fn probe(cuda: Result<(), String>) -> Vec<EngineBackend> {
    let ort = onnxruntime();
    let cpu = match &ort {
        Ok((file, version)) => EngineBackend {
            name: "ONNX Runtime CPU",
            available: true,
            detail: format!("ONNX Runtime {version} ({})", file.display()),
        },
        Err(why) => EngineBackend {
            name: "ONNX Runtime CPU",
            available: false,
            detail: why.clone(),
        },
    };
    let gpu = match (&ort, cuda) {
        (Err(why), _) => EngineBackend {
            name: "ONNX Runtime CUDA",
            available: false,
            detail: why.clone(),
        },
        (Ok((file, version)), cuda) => {
            let provider = file.with_file_name("libonnxruntime_providers_cuda.so");
            match (provider.is_file(), cuda) {
                (true, Ok(())) => EngineBackend {
                    name: "ONNX Runtime CUDA",
                    available: true,
                    detail: format!("{}", provider.display()),
                },
                (true, Err(why)) => EngineBackend {
                    name: "ONNX Runtime CUDA",
                    available: false,
                    detail: format!(
                        "the provider is installed ({}), but {why}",
                        provider.display()
                    ),
                },
                (false, _) => EngineBackend {
                    name: "ONNX Runtime CUDA",
                    available: false,
                    detail: format!(
                        "ONNX Runtime {version} has no CUDA provider ({} is absent: the CPU package; onnxruntime-gpu installs it)",
                        provider.display()
                    ),
                },
            }
        }
    };
    vec![tensorrt(), cpu, gpu]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_says_available_or_why_not() {
        let b = probe(Err("cuda_unavailable: libcuda.so.1 not found".into()));
        assert_eq!(
            b.iter().map(|x| x.name).collect::<Vec<_>>(),
            ["TensorRT", "ONNX Runtime CPU", "ONNX Runtime CUDA"]
        );
        for x in &b {
            assert!(!x.detail.is_empty(), "{x:?}");
            if !x.available {
                assert!(
                    x.detail.contains("looked in")
                        || x.detail.contains("CUDA")
                        || x.detail.contains("cuda"),
                    "{x:?}"
                );
            }
        }
        assert!(!b[2].available, "no GPU: never an available CUDA provider");
    }
}
