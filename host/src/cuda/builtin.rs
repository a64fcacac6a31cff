//! [`Builtins`]: the host's own CUDA kernels, compiled once per device with NVRTC: the
//! `%globaltimer` spin kernels that calibration uses as a known duration, the hold kernel that
//! keeps the GPU busy while the host enqueues a sample, and a probe of the timer's resolution.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::{CudaError, nvrtc};

/// CUDA C of the built-in kernels. One thread each: a single thread reading `%globaltimer` ends
/// its spin at the first reading past the deadline, and nothing else runs on the SM to delay it.
pub const SOURCE: &str = r#"
__device__ __forceinline__ unsigned long long apex_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for `ns` from its own start; out[0] = the spin it saw, out[1] counts calls.
extern "C" __global__ void apex_spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long t0 = apex_globaltimer();
    unsigned long long t;
    do { t = apex_globaltimer(); } while (t - t0 < ns);
    out[0] = t - t0;
    out[1] += 1;
}

// A metronome: holds the stream until the previous call's deadline plus `ns`. After the host
// zeroes state[0] (before each sample) the first call starts the chain at its own start. N calls
// then end exactly N*ns after the first one began, whatever the launch gaps, as long as each gap
// is shorter than `ns`; longer gaps make the chain fall behind and show up as measured time.
extern "C" __global__ void apex_spin_paced(unsigned long long ns, unsigned long long* state) {
    volatile unsigned long long* s = state;
    unsigned long long now = apex_globaltimer();
    unsigned long long prev = s[0];
    unsigned long long deadline = (prev == 0 ? now : prev) + ns;
    while (apex_globaltimer() < deadline) { }
    s[0] = deadline;
    s[1] += 1;
}

// Reads the timer `reads` times: out[0] = smallest step seen, out[1] = number of steps,
// out[2] = span in ns. span/steps is the typical update interval.
extern "C" __global__ void apex_timer_resolution(unsigned long long* out, unsigned int reads) {
    unsigned long long first = apex_globaltimer();
    unsigned long long prev = first;
    unsigned long long min_step = ~0ull;
    unsigned long long steps = 0;
    for (unsigned int i = 0; i < reads; ++i) {
        unsigned long long t = apex_globaltimer();
        if (t != prev) {
            if (t - prev < min_step) min_step = t - prev;
            steps += 1;
            prev = t;
        }
    }
    out[0] = min_step;
    out[1] = steps;
    out[2] = prev - first;
}
"#;

const ONE_THREAD: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (1, 1, 1),
    shared_mem_bytes: 0,
};

/// The loaded built-in kernels and a small scratch buffer for the hold kernel.
pub struct Builtins {
    _module: Arc<CudaModule>,
    spin: CudaFunction,
    paced: CudaFunction,
    resolution: CudaFunction,
    scratch: CudaSlice<u64>,
}

/// What the resolution probe saw, in ns.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimerResolution {
    pub min_step_ns: u64,
    pub mean_step_ns: f64,
}

impl Builtins {
    /// Compiles [`SOURCE`] for the device and loads it.
    pub fn load(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        cc: (i32, i32),
    ) -> Result<Self, CudaError> {
        let cubin = nvrtc::compile_cubin("apex_builtin.cu", SOURCE, cc)?;
        let module = ctx
            .load_module(Ptx::from_binary(cubin))
            .map_err(|e| CudaError::driver("load the built-in kernels", e))?;
        let get = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| CudaError::driver("find a built-in kernel", e))
        };
        Ok(Self {
            spin: get("apex_spin")?,
            paced: get("apex_spin_paced")?,
            resolution: get("apex_timer_resolution")?,
            scratch: stream
                .alloc_zeros::<u64>(4)
                .map_err(|e| CudaError::driver("allocate the hold kernel's scratch", e))?,
            _module: module,
        })
    }

    /// Enqueues a spin of `ns` from the kernel's own start; `out` needs 2 elements.
    pub fn spin(
        &self,
        stream: &Arc<CudaStream>,
        ns: u64,
        out: &mut CudaSlice<u64>,
    ) -> Result<(), CudaError> {
        let mut launch = stream.launch_builder(&self.spin);
        launch.arg(&ns).arg(out);
        // SAFETY: the signature is (u64, u64*) and `out` holds at least 2 elements.
        unsafe { launch.launch(ONE_THREAD) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the spin kernel", e))
    }

    /// Enqueues one metronome call (see [`SOURCE`]); `state` needs 2 elements, zeroed per sample.
    pub fn paced(
        &self,
        stream: &Arc<CudaStream>,
        ns: u64,
        state: &mut CudaSlice<u64>,
    ) -> Result<(), CudaError> {
        let mut launch = stream.launch_builder(&self.paced);
        launch.arg(&ns).arg(state);
        // SAFETY: the signature is (u64, u64*) and `state` holds at least 2 elements.
        unsafe { launch.launch(ONE_THREAD) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the paced spin kernel", e))
    }

    /// Keeps the stream busy for `ns` so the calls enqueued after it run back to back on the GPU
    /// instead of at the host's enqueue rate (nvbench's blocking kernel, without host memory).
    pub fn hold(&mut self, stream: &Arc<CudaStream>, ns: u64) -> Result<(), CudaError> {
        let mut launch = stream.launch_builder(&self.spin);
        launch.arg(&ns).arg(&mut self.scratch);
        // SAFETY: as for `spin`; the scratch holds 4 elements.
        unsafe { launch.launch(ONE_THREAD) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the hold kernel", e))
    }

    /// Measures how often `%globaltimer` advances (synchronizes the stream).
    pub fn timer_resolution(&self, stream: &Arc<CudaStream>) -> Result<TimerResolution, CudaError> {
        let mut out = stream
            .alloc_zeros::<u64>(3)
            .map_err(|e| CudaError::driver("allocate the timer probe's output", e))?;
        let reads: u32 = 200_000;
        let mut launch = stream.launch_builder(&self.resolution);
        launch.arg(&mut out).arg(&reads);
        // SAFETY: the signature is (u64*, u32) and `out` holds 3 elements.
        unsafe { launch.launch(ONE_THREAD) }
            .map_err(|e| CudaError::driver("launch the timer probe", e))?;
        let host = stream
            .clone_dtoh(&out)
            .map_err(|e| CudaError::driver("read the timer probe's output", e))?;
        Ok(resolution_from(host[0], host[1], host[2]))
    }
}

fn resolution_from(min_step: u64, steps: u64, span: u64) -> TimerResolution {
    if steps == 0 {
        return TimerResolution {
            min_step_ns: 0,
            mean_step_ns: f64::NAN,
        };
    }
    TimerResolution {
        min_step_ns: min_step,
        mean_step_ns: span as f64 / steps as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_is_the_span_over_the_steps() {
        let r = resolution_from(32, 1000, 32_000);
        assert_eq!(r.min_step_ns, 32);
        assert_eq!(r.mean_step_ns, 32.0);
        assert!(resolution_from(u64::MAX, 0, 0).mean_step_ns.is_nan());
    }

    /// The CUDA C a raw string literal `r#"…"#` holds in a Rust source file.
    fn embedded_cuda(rust: &str) -> Option<&str> {
        let start = rust.find("r#\"")? + 3;
        let len = rust[start..].find("\"#")?;
        Some(&rust[start..start + len])
    }

    #[test]
    #[expect(clippy::print_stderr, reason = "a skipped test says why")]
    fn builtin_and_fixture_sources_compile_for_sm_90() {
        if let Err(e) = nvrtc::ensure_loaded() {
            eprintln!("note: NVRTC compile test skipped: {e}");
            return;
        }
        let elf = |cubin: &[u8]| cubin.starts_with(b"\x7fELF");
        let cubin = nvrtc::compile_cubin("apex_builtin.cu", SOURCE, (9, 0)).unwrap();
        assert!(elf(&cubin), "NVRTC did not return an ELF CUBIN");
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/fixtures");
        for file in ["cuda_known_duration.rs", "cuda_fault.rs"] {
            let path = fixtures.join(file);
            let Ok(rust) = std::fs::read_to_string(&path) else {
                eprintln!(
                    "note: {} not found; its source is not compiled here",
                    path.display()
                );
                continue;
            };
            let cuda = embedded_cuda(&rust).unwrap_or_else(|| panic!("no CUDA source in {file}"));
            let cubin =
                nvrtc::compile_cubin(file, cuda, (9, 0)).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(elf(&cubin), "{file}");
        }
    }
}
