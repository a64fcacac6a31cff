//! Library probes and an offline NVRTC compile, for the self-check and its tests: what
//! `apex_plugin_api::cuda` does not offer (it compiles only for an attached device and loads the
//! module at once). Everything that runs a case goes through `apex_plugin_api::cuda::CudaSession`.

use apex_plugin_api::PluginError;
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx, compile_ptx_with_opts};

/// Whether libcuda can be loaded (cudarc panics instead of failing when it cannot).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether libnvrtc can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles `source` to PTX for `arch` (e.g. `sm_90`) without a GPU, with the same options as
/// `CudaSession::compile`, so a source that fails here fails there too.
pub fn compile_ptx(name: &str, source: &str, arch: &'static str) -> Result<Ptx, PluginError> {
    if !nvrtc_present() {
        return Err(PluginError::cuda(
            "nvrtc_unavailable: libnvrtc.so not found (hint: install the CUDA toolkit or the nvidia-cuda-nvrtc wheel and add its lib folder to LD_LIBRARY_PATH)",
        ));
    }
    let opts = CompileOptions {
        arch: Some(arch),
        name: Some(format!("{name}.cu")),
        options: vec!["--std=c++17".into()],
        ..Default::default()
    };
    std::panic::catch_unwind(|| compile_ptx_with_opts(source, opts))
        .map_err(PluginError::from_panic)?
        .map_err(|e| match e {
            CompileError::CompileError { log, .. } => PluginError::cuda(format!(
                "NVRTC compile of {name} failed:\n{}",
                log.to_string_lossy()
            )),
            other => PluginError::cuda(format!("NVRTC compile of {name} failed: {other:?}")),
        })
}
