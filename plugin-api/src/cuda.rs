//! Helpers for CUDA plugins (feature `cuda`; not part of the ABI): attach to the host's device and
//! stream, open a device for a plugin's own GPU programs, compile CUDA C with NVRTC for the
//! device's architecture, and name CUDA errors; and the CUDA C a program of fp32, fp16 or bf16
//! storage starts with (the storage type and its conversions, [`STORAGE_CUH`]).
//!
//! The host creates the device's primary context and a stream and passes them in
//! [`CudaHandles`]. [`CudaSession::attach`] retains the same primary context
//! and wraps the host's stream without owning it, so every launch lands where the host times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx, compile_ptx_with_opts};

use crate::{CudaHandles, PluginError, Precision};

/// A plugin's view of the host's CUDA device and stream.
pub struct CudaSession {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub handles: CudaHandles,
}

impl CudaSession {
    /// Attaches to the device and stream in `handles`.
    pub fn attach(handles: &CudaHandles) -> Result<Self, PluginError> {
        if !driver_present() {
            return Err(PluginError::cuda(
                "cuda_unavailable: libcuda.so.1 not found",
            ));
        }
        let ctx = std::panic::catch_unwind(|| CudaContext::new(handles.device_ordinal as usize))
            .map_err(PluginError::from_panic)?
            .map_err(cuda_error)?;
        // One stream, synchronized by the host: cudarc's per-buffer event tracking would add work
        // to every launch, so it is turned off before anything is allocated.
        unsafe { ctx.disable_event_tracking() };
        // SAFETY: the host keeps the stream alive for the whole life of the instance and orders
        // all work on it.
        let stream = unsafe { ctx.wrap_borrowed_stream(handles.stream as _) };
        Ok(Self {
            ctx,
            stream,
            handles: *handles,
        })
    }

    /// `sm_XY` for this device.
    pub fn arch(&self) -> &'static str {
        let name = format!(
            "sm_{}{}",
            self.handles.compute_capability_major, self.handles.compute_capability_minor
        );
        // NVRTC's options take a `&'static str`; there are only a handful of distinct arches.
        Box::leak(name.into_boxed_str())
    }

    /// Compiles `source` with NVRTC for this device and loads it. Compile errors carry the log.
    pub fn compile(&self, name: &str, source: &str) -> Result<Arc<CudaModule>, PluginError> {
        let ptx = compile_ptx(name, source, self.arch())?;
        self.ctx.load_module(ptx).map_err(cuda_error)
    }

    /// Loads function `name` from `module`.
    pub fn function(
        &self,
        module: &Arc<CudaModule>,
        name: &str,
    ) -> Result<CudaFunction, PluginError> {
        module.load_function(name).map_err(cuda_error)
    }
}

/// A device opened by a plugin's own GPU program (a self-check, a bench, an export) that runs
/// without the host: the device's primary context, one stream of its own, and the handles a
/// kernel's `setup` takes. The program prints [`StandaloneGpu::open`]'s error and exits.
pub struct StandaloneGpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub handles: CudaHandles,
}

impl StandaloneGpu {
    /// Opens device `ordinal` and a stream on it. The error is one line: no libcuda, no usable
    /// device (with the CUDA error), or the stream.
    pub fn open(ordinal: u32) -> Result<Self, String> {
        Self::open_with(ordinal, true)
    }

    /// Device 0 for a plugin's GPU unit test, or `None` after printing `skipped: REASON` on stderr:
    /// a test on a machine without a GPU says so instead of passing silently.
    #[expect(
        clippy::print_stderr,
        reason = "a skipped GPU test must say so, not pass silently"
    )]
    pub fn for_test() -> Option<Self> {
        Self::open(0)
            .inspect_err(|e| eprintln!("skipped: {e}"))
            .ok()
    }

    /// [`StandaloneGpu::open`] with cudarc's per-buffer event tracking turned off before anything
    /// is allocated, for a program that orders all its work on the one stream itself (and
    /// captures it in CUDA graphs, where those events are illegal).
    pub fn open_untracked(ordinal: u32) -> Result<Self, String> {
        Self::open_with(ordinal, false)
    }

    fn open_with(ordinal: u32, event_tracking: bool) -> Result<Self, String> {
        const NO_DRIVER: &str = "libcuda.so.1 not found (run it on the GPU machine)";
        if !driver_present() {
            return Err(NO_DRIVER.into());
        }
        let ctx = match std::panic::catch_unwind(|| CudaContext::new(ordinal as usize)) {
            Ok(Ok(ctx)) => ctx,
            Ok(Err(e)) => {
                return Err(format!(
                    "no usable CUDA device {ordinal}: {}",
                    cuda_error(e)
                ));
            }
            Err(_) => return Err(NO_DRIVER.into()),
        };
        if !event_tracking {
            // SAFETY: nothing has been allocated on this context yet.
            unsafe { ctx.disable_event_tracking() };
        }
        let stream = ctx
            .new_stream()
            .map_err(|e| format!("new stream: {}", cuda_error(e)))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {}", cuda_error(e)))?;
        let handles = CudaHandles {
            device_ordinal: ordinal,
            stream: stream.cu_stream() as usize,
            compute_capability_major: major as u32,
            compute_capability_minor: minor as u32,
        };
        Ok(Self {
            ctx,
            stream,
            handles,
        })
    }

    /// Waits for everything enqueued on the stream (the host's synchronization before `verify`).
    pub fn sync(&self) -> Result<(), PluginError> {
        self.stream.synchronize().map_err(cuda_error)
    }

    /// `device: NAME (sm_XY)`, the first line such a program prints.
    pub fn describe(&self) -> String {
        format!(
            "device: {} (sm_{}{})",
            self.ctx.name().unwrap_or_default(),
            self.handles.compute_capability_major,
            self.handles.compute_capability_minor
        )
    }
}

/// Whether libcuda can be loaded (cudarc panics, rather than failing, when it cannot).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether libnvrtc can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The CUDA C of the storage type `S` and its conversions `to_f32` (exact) and `from_f32`
/// (round to nearest even), for a program to put after its `#define DTYPE` ([`dtype_code`]):
/// one definition for the tile ops, TileSSM, NN ops and FF model programs.
pub const STORAGE_CUH: &str = include_str!("cuda/storage.cuh");

/// `DTYPE` of [`STORAGE_CUH`] for `precision`: 0 fp32, 1 fp16, 2 bf16; `None` for a storage it
/// has no type for (fp8).
pub fn dtype_code(precision: Precision) -> Option<u32> {
    match precision {
        Precision::Fp32 => Some(0),
        Precision::Fp16 => Some(1),
        Precision::Bf16 => Some(2),
        Precision::Fp8 => None,
    }
}

/// A program's source specialised by `#define`s: `#define DTYPE` for `precision`, a line
/// `#define NAME VALUEu` for each of `defines` (unsigned, so constant products stay in 32-bit
/// unsigned range and C++ widens a literal that does not fit), [`STORAGE_CUH`], then `parts` in
/// order, each on a line of its own. `None` where `precision` has no [`dtype_code`].
pub fn specialised_source(
    precision: Precision,
    defines: &[(&str, usize)],
    parts: &[&str],
) -> Option<String> {
    let mut s = format!("#define DTYPE {}\n", dtype_code(precision)?);
    for (name, value) in defines {
        s.push_str(&format!("#define {name} {value}u\n"));
    }
    for part in std::iter::once(STORAGE_CUH).chain(parts.iter().copied()) {
        s.push_str(part);
        s.push('\n');
    }
    Some(s)
}

/// [`compile_ptx`] remembered for the life of the process, keyed by architecture and source: a
/// plugin that sets up many cases from a few sources (one per storage type, every shape a kernel
/// argument) asks NVRTC (or the disk cache) once per source in a worker.
pub fn compile_ptx_cached(
    name: &str,
    source: &str,
    arch: &'static str,
) -> Result<Ptx, PluginError> {
    static CACHE: Mutex<Vec<(&'static str, String, Ptx)>> = Mutex::new(Vec::new());
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, ptx)) = cache.iter().find(|(a, s, _)| *a == arch && s == source) {
        return Ok(ptx.clone());
    }
    let ptx = compile_ptx(name, source, arch)?;
    CACHED_MISSES.fetch_add(1, Ordering::Relaxed);
    cache.push((arch, source.to_string(), ptx.clone()));
    Ok(ptx)
}

static CACHED_MISSES: AtomicUsize = AtomicUsize::new(0);

/// How many sources [`compile_ptx_cached`] has compiled in this process (a check that a new
/// shape adds no compile reads it before and after).
pub fn cached_compiles() -> usize {
    CACHED_MISSES.load(Ordering::Relaxed)
}

/// NVRTC's options for every kernel source: C++17, plus line information (`--generate-line-info`,
/// so that Nsight Compute's source page maps samples to the `.cu` lines) where
/// `APEX_NVRTC_LINEINFO=1`. Line information leaves the generated code as it is.
/// `APEX_NVRTC_DEFINES="A B=2"` adds `-DA -DB=2`: a kernel experiment's switches, so that one
/// build runs every variant of an A/B on the GPU machine (the disk cache keys on the options).
fn nvrtc_options() -> Vec<String> {
    options_from(
        std::env::var_os("APEX_NVRTC_LINEINFO").is_some_and(|v| v == "1"),
        std::env::var("APEX_NVRTC_DEFINES").ok().as_deref(),
    )
}

/// [`nvrtc_options`] from the two variables' values.
fn options_from(line_info: bool, defines: Option<&str>) -> Vec<String> {
    let mut options = vec!["--std=c++17".to_string()];
    if line_info {
        options.push("--generate-line-info".to_string());
    }
    let defines = defines.unwrap_or_default().split_whitespace();
    options.extend(defines.map(|d| format!("-D{d}")));
    options
}

/// `Ok` where libnvrtc loads, else the error every NVRTC entry point returns.
fn require_nvrtc() -> Result<(), PluginError> {
    if nvrtc_present() {
        return Ok(());
    }
    Err(PluginError::cuda(
        "nvrtc_unavailable: libnvrtc.so not found (hint: install the CUDA toolkit, or the nvidia-cuda-nvrtc wheel and add its lib folder to LD_LIBRARY_PATH)",
    ))
}

/// For a test that needs NVRTC but no GPU: whether libnvrtc loads; where it does not, prints
/// `skipped: …` so the test says so instead of passing silently (as
/// [`StandaloneGpu::for_test`] does for a GPU).
#[expect(
    clippy::print_stderr,
    reason = "a skipped GPU-library test must say so, not pass silently"
)]
pub fn nvrtc_for_test() -> bool {
    let present = nvrtc_present();
    if !present {
        eprintln!("skipped: libnvrtc not found (libnvrtc.so / libnvrtc.so.13 not loadable)");
    }
    present
}

/// ptxas's resource report (`--ptxas-options=-v`: registers, spills, shared memory per entry
/// point) of `source` compiled by NVRTC for `arch` with [`compile_ptx`]'s options, so that a
/// plugin's tests can hold its kernels to a register budget without a GPU. The text is NVRTC's
/// log; a failed compile is an error carrying it.
pub fn ptxas_report(name: &str, source: &str, arch: &'static str) -> Result<String, PluginError> {
    use cudarc::nvrtc::result;
    require_nvrtc()?;
    let failed = |what: &str, e: &dyn std::fmt::Debug| {
        PluginError::cuda(format!("ptxas report of {name}: {what} failed: {e:?}"))
    };
    let src = std::ffi::CString::new(source).map_err(|e| failed("reading the source", &e))?;
    let options: Vec<String> = nvrtc_options()
        .into_iter()
        .chain([
            format!("--gpu-architecture={arch}"),
            "--ptxas-options=-v".to_string(),
        ])
        .collect();
    let prog = result::create_program(&src, None).map_err(|e| failed("create_program", &e))?;
    // SAFETY: `prog` is a live program until destroyed below; NVRTC's log is NUL-terminated.
    unsafe {
        let compiled = result::compile_program(prog, &options);
        let log = result::get_program_log(prog).map(|log| {
            std::ffi::CStr::from_ptr(log.as_ptr())
                .to_string_lossy()
                .into_owned()
        });
        let _ = result::destroy_program(prog);
        let log = log.map_err(|e| failed("get_program_log", &e))?;
        compiled
            .map_err(|_| PluginError::cuda(format!("NVRTC compile of {name} failed:\n{log}")))?;
        Ok(log)
    }
}

/// Compiles `source` to PTX for `arch` (`sm_90`, …). Needs NVRTC but no GPU, so tests can check
/// every kernel source on a machine without one; [`CudaSession::compile`] uses the same options.
pub fn compile_ptx(name: &str, source: &str, arch: &'static str) -> Result<Ptx, PluginError> {
    require_nvrtc()?;
    let options = nvrtc_options();
    let key = crate::kernel_cache::key(&[
        nvrtc_version().as_bytes(),
        arch.as_bytes(),
        options.join(" ").as_bytes(),
        name.as_bytes(),
        source.as_bytes(),
    ]);
    if let Some(ptx) = crate::kernel_cache::get(&key, "ptx").and_then(|b| String::from_utf8(b).ok())
    {
        return Ok(Ptx::from_src(ptx));
    }
    let opts = CompileOptions {
        arch: Some(arch),
        name: Some(format!("{name}.cu")),
        options,
        ..Default::default()
    };
    let ptx = std::panic::catch_unwind(|| compile_ptx_with_opts(source, opts))
        .map_err(PluginError::from_panic)?
        .map_err(|e| match e {
            CompileError::CompileError { log, .. } => PluginError::cuda(format!(
                "NVRTC compile of {name} failed:\n{}",
                log.to_string_lossy()
            )),
            other => PluginError::cuda(format!("NVRTC compile of {name} failed: {other:?}")),
        })?;
    crate::kernel_cache::put(&key, "ptx", ptx.to_src().as_bytes());
    Ok(ptx)
}

/// `major.minor` of the loaded NVRTC (part of the cache key: another NVRTC may emit other PTX).
fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; NVRTC is loaded (checked by the caller).
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor)
    }))
    .is_ok_and(|r| r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS);
    if ok {
        format!("{major}.{minor}")
    } else {
        "unknown".into()
    }
}

/// A CUDA driver error as a plugin error whose message starts with the CUDA error name.
pub fn cuda_error(e: DriverError) -> PluginError {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    PluginError::cuda(format!("{name}: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_options_take_line_info_and_each_define() {
        assert_eq!(options_from(false, None), ["--std=c++17"]);
        assert_eq!(
            options_from(true, Some(" WG_TRACE  WG_TRACE_FROM=3 ")),
            [
                "--std=c++17",
                "--generate-line-info",
                "-DWG_TRACE",
                "-DWG_TRACE_FROM=3"
            ]
        );
        assert_eq!(options_from(false, Some("")), ["--std=c++17"]);
    }

    /// Each storage `dtype_code` names compiles with `STORAGE_CUH` into a kernel that converts
    /// both ways; a code it has no type for stops the compile by name (needs NVRTC, not a GPU).
    #[test]
    fn the_storage_header_compiles_for_every_dtype_code() {
        assert_eq!(dtype_code(Precision::Fp8), None);
        if !nvrtc_for_test() {
            return;
        }
        let kernel = "extern \"C\" __global__ void round_trip(S* x) { x[0] = from_f32(2.0f * to_f32(x[0])); }";
        for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
            let code = dtype_code(precision).expect("a 32- or 16-bit storage has a DTYPE");
            let source = format!("#define DTYPE {code}\n{STORAGE_CUH}\n{kernel}");
            let log = ptxas_report("round_trip", &source, "sm_90")
                .unwrap_or_else(|e| panic!("{precision:?}: {}", e.message));
            assert!(log.contains("'round_trip'"), "{log}");
        }
        let err = ptxas_report(
            "round_trip",
            &format!("#define DTYPE 3\n{STORAGE_CUH}"),
            "sm_90",
        )
        .expect_err("DTYPE 3 compiles");
        assert!(err.message.contains("DTYPE must be 0"), "{}", err.message);
    }

    /// ptxas reports each entry point's registers; a source that does not compile is an error
    /// that carries NVRTC's log (needs NVRTC, not a GPU).
    #[test]
    fn ptxas_report_names_registers_and_compile_errors_carry_the_log() {
        if !nvrtc_for_test() {
            return;
        }
        let ok = "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }";
        let log = ptxas_report("twice", ok, "sm_90").unwrap_or_else(|e| panic!("{}", e.message));
        assert!(log.contains("Compiling entry function 'twice'"), "{log}");
        assert!(log.contains("registers"), "{log}");
        let bad = "extern \"C\" __global__ void broken(float* x) { x[threadIdx.x] = y; }";
        let err = ptxas_report("broken", bad, "sm_90").expect_err("an undefined name compiles");
        assert!(
            err.message.contains("NVRTC compile of broken failed"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("identifier \"y\" is undefined"),
            "{}",
            err.message
        );
    }
}
