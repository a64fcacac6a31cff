//! NVRTC for the host's own kernels (calibration, hold, L2 tools): load the library once,
//! compile CUDA C to a CUBIN for the device's exact `sm_XY`, and report the version and the file
//! actually mapped. A CUBIN is used rather than PTX so a newer NVRTC than the driver still loads
//! (no driver JIT of a too-new PTX ISA).
//!
//! Which NVRTC cudarc loads depends on the loader (it tries `libnvrtc.so` first, then
//! `libnvrtc.so.13`, ...). When none is on the loader path, [`ensure_loaded`] pre-loads one by
//! absolute path (`$APEX_NVRTC`, `$CUDA_HOME`, `/usr/local/cuda*`, pip wheels `nvidia/cu13/lib`);
//! glibc then satisfies cudarc's later `dlopen("libnvrtc.so.13")` by SONAME. A wheel's libnvrtc has
//! no RUNPATH, so its `libnvrtc-builtins` is pre-loaded from the same folder first.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::{result, sys};

use super::CudaError;
use super::guard::{loaded_library, panic_text};

/// The NVRTC in use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NvrtcInfo {
    /// `13.0`.
    pub version: String,
    /// The mapped `libnvrtc` file(s), from `/proc/self/maps`.
    pub library: Option<String>,
    /// How it was found (`loader path`, `$APEX_NVRTC`, `pre-loaded from DIR`).
    pub found_by: String,
}

/// Loads NVRTC once per process (see the module docs for the search order).
pub fn ensure_loaded() -> Result<NvrtcInfo, CudaError> {
    static LOADED: OnceLock<Result<NvrtcInfo, String>> = OnceLock::new();
    LOADED
        .get_or_init(load)
        .clone()
        .map_err(|reason| CudaError::NvrtcUnavailable { reason })
}

fn load() -> Result<NvrtcInfo, String> {
    let found_by = if let Some(path) = std::env::var_os("APEX_NVRTC") {
        let path = PathBuf::from(path);
        preload(&path)?;
        format!("$APEX_NVRTC={}", path.display())
    } else if present() {
        "loader path".to_string()
    } else {
        let dirs = candidate_dirs();
        let hit = dirs.iter().find_map(|dir| {
            ["libnvrtc.so.13", "libnvrtc.so.12"]
                .iter()
                .map(|name| dir.join(name))
                .find(|p| p.exists() && preload(p).is_ok() && present())
        });
        match hit {
            Some(p) => format!("pre-loaded {}", p.display()),
            None => {
                return Err(format!(
                    "libnvrtc.so.13 is not on the loader path nor in {} searched folders",
                    dirs.len()
                ));
            }
        }
    };
    let version = std::panic::catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are valid for the call.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map(|()| format!("{major}.{minor}"))
            .map_err(|e| format!("nvrtcVersion failed: {e:?}"))
    })
    .map_err(|p| format!("NVRTC could not be loaded: {}", panic_text(p.as_ref())))??;
    Ok(NvrtcInfo {
        version,
        library: loaded_library("libnvrtc.so"),
        found_by,
    })
}

fn present() -> bool {
    // SAFETY: the probe only dlopens and drops candidate libraries.
    unsafe { sys::is_culib_present() }
}

fn preload(path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // `libnvrtc-builtins.so.13.0`: exactly the file the library asks for by bare name.
            if name.starts_with("libnvrtc-builtins.so.") && name.matches('.').count() == 3 {
                // SAFETY: loading a shared library runs its initializers; NVRTC's are benign.
                if let Ok(lib) = unsafe { libloading::Library::new(entry.path()) } {
                    std::mem::forget(lib);
                }
            }
        }
    }
    // SAFETY: as above.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("failed to load `{}`: {e}", path.display()))?;
    // Kept for the life of the process: cudarc resolves its symbols from it by SONAME later.
    std::mem::forget(lib);
    Ok(())
}

fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(root) = std::env::var_os(var) {
            for sub in ["lib64", "lib", "targets/x86_64-linux/lib"] {
                dirs.push(Path::new(&root).join(sub));
            }
        }
    }
    let mut roots = vec![PathBuf::from("/usr/local/cuda")];
    roots.extend(sorted_children("/usr/local", "cuda-").into_iter().rev());
    for root in roots {
        for sub in ["lib64", "targets/x86_64-linux/lib"] {
            dirs.push(root.join(sub));
        }
    }
    let mut site: Vec<PathBuf> = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        for py in sorted_children(Path::new(&venv).join("lib"), "python3") {
            site.push(py.join("site-packages"));
        }
    }
    for base in ["/usr/lib", "/usr/local/lib"] {
        for py in sorted_children(base, "python3") {
            site.push(py.join("site-packages"));
            site.push(py.join("dist-packages"));
        }
    }
    for opt in sorted_children("/opt", "") {
        for py in sorted_children(opt.join(".venv/lib"), "python3") {
            site.push(py.join("site-packages"));
        }
    }
    for s in site {
        for sub in ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"] {
            dirs.push(s.join(sub));
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.dedup();
    dirs
}

fn sorted_children(dir: impl AsRef<Path>, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The NVRTC options for `sm_{major}{minor}`.
pub fn compile_options(major: i32, minor: i32) -> Vec<String> {
    vec![
        format!("--gpu-architecture=sm_{major}{minor}"),
        "--std=c++17".to_string(),
    ]
}

/// Compiles `source` (file name `name`, for messages) to a CUBIN for `sm_{major}{minor}`.
pub fn compile_cubin(
    name: &str,
    source: &str,
    (major, minor): (i32, i32),
) -> Result<Vec<u8>, CudaError> {
    ensure_loaded()?;
    let arch = format!("sm_{major}{minor}");
    let fail = |message: String, log: String| CudaError::Compile {
        name: name.to_string(),
        arch: arch.clone(),
        message,
        log,
    };
    let src = CString::new(source)
        .map_err(|_| fail("the source has a NUL byte".into(), String::new()))?;
    let file =
        CString::new(name).map_err(|_| fail("the name has a NUL byte".into(), String::new()))?;
    std::panic::catch_unwind(|| {
        let prog = result::create_program(&src, Some(&file))
            .map_err(|e| fail(format!("nvrtcCreateProgram: {e:?}"), String::new()))?;
        // SAFETY: `prog` is live until `destroy_program` below.
        let out = unsafe { compile_and_extract(prog, major, minor) }
            .map_err(|(message, log)| fail(message, log));
        // SAFETY: created above and not destroyed before.
        let _ = unsafe { result::destroy_program(prog) };
        out
    })
    .map_err(|p| {
        fail(
            format!("NVRTC panicked: {}", panic_text(p.as_ref())),
            String::new(),
        )
    })?
}

/// # Safety
/// `prog` must be a live program.
unsafe fn compile_and_extract(
    prog: sys::nvrtcProgram,
    major: i32,
    minor: i32,
) -> Result<Vec<u8>, (String, String)> {
    // SAFETY: the caller guarantees `prog` is live.
    if let Err(e) = unsafe { result::compile_program(prog, &compile_options(major, minor)) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(prog) }.unwrap_or_default();
        let log: String = log
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8 as char)
            .collect();
        return Err((format!("{e:?}"), log));
    }
    let mut size = 0usize;
    // SAFETY: as above; `size` is valid for writing.
    unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) }
        .result()
        .map_err(|e| (format!("nvrtcGetCUBINSize: {e:?}"), String::new()))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the size NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| (format!("nvrtcGetCUBIN: {e:?}"), String::new()))?;
    Ok(cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_exact_architecture() {
        assert_eq!(
            compile_options(9, 0),
            ["--gpu-architecture=sm_90", "--std=c++17"]
        );
    }

    #[test]
    fn a_broken_source_gives_the_log_with_the_line() {
        if ensure_loaded().is_err() {
            return;
        }
        let err = compile_cubin(
            "broken.cu",
            "extern \"C\" __global__ void k() { int x = ; }",
            (9, 0),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("failed to compile `broken.cu` with NVRTC for sm_90"),
            "{text}"
        );
        assert!(text.contains("broken.cu(1)"), "{text}");
    }
}
