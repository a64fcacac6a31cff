//! [`Builtins`]: the host's own CUDA kernels, compiled once per device with NVRTC: the
//! `%globaltimer` spin kernels that calibration uses as a known duration, the hold kernel that
//! keeps the GPU busy while the host enqueues a sample, a probe of the timer's resolution, and the
//! 16-byte copy kernel behind the copy and L2 lines.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::{CudaError, nvrtc};

/// CUDA C of the built-in kernels. The timer kernels run one thread each: a single thread reading
/// `%globaltimer` ends its spin at the first reading past the deadline, and nothing else runs on
/// the SM to delay it.
pub const SOURCE: &str = r#"
__device__ __forceinline__ unsigned long long apex_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for `ns` from its own start; out[0] = the spin it saw, out[1] counts calls.
//
// Both spin kernels count their calls with a fire-and-forget atomic, never a load: a kernel node
// of a CUDA graph costs 0.80 us back to back on an H100, and a load-then-store of the count kept
// on each call's path (0.09 us more) left the paced chain unable to hold a 1 us pace (+27 %;
// benches/probes/graph_node_gap.cu, session 8 calls 4-5; +0.8 % with the atomic).
extern "C" __global__ void apex_spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long t0 = apex_globaltimer();
    unsigned long long t;
    do { t = apex_globaltimer(); } while (t - t0 < ns);
    out[0] = t - t0;
    atomicAdd(out + 1, 1ull);
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
    atomicAdd(state + 1, 1ull);
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

// The bandwidth kernels walk n 16-byte words in chunks of 4 * blockDim words: block b takes
// chunks b, b + gridDim, ...; in a chunk, thread t moves words t, t + blockDim, t + 2 blockDim,
// t + 3 blockDim (four independent loads in flight, each warp on contiguous 512 bytes). STREAM
// uses the evict-first cache hints (ld.global.cs / st.global.cs) for data touched once.
template <bool STREAM>
__device__ __forceinline__ uint4 apex_load(const uint4* p) { return STREAM ? __ldcs(p) : *p; }
template <bool STREAM>
__device__ __forceinline__ void apex_store(uint4* p, uint4 v) { if (STREAM) __stcs(p, v); else *p = v; }
__device__ __forceinline__ uint4 apex_xor(uint4 a, uint4 b) {
    return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// Copies n words from src to dst, `reps` times over (reps > 1 re-reads a buffer that then sits
// in L2).
template <bool STREAM>
__device__ __forceinline__ void apex_copy16_body(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                 unsigned long long n, unsigned int reps) {
    const unsigned long long chunk = 4ull * blockDim.x;
    for (unsigned int r = 0; r < reps; ++r) {
        for (unsigned long long base = blockIdx.x * chunk + threadIdx.x; base < n;
             base += (unsigned long long)gridDim.x * chunk) {
            uint4 v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned long long i = base + (unsigned long long)k * blockDim.x;
                if (i < n) v[k] = apex_load<STREAM>(src + i);
            }
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned long long i = base + (unsigned long long)k * blockDim.x;
                if (i < n) apex_store<STREAM>(dst + i, v[k]);
            }
        }
    }
}

// STREAM's add: reads a and b, writes their xor (2 reads to 1 write).
template <bool STREAM>
__device__ __forceinline__ void apex_add16_body(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                                uint4* __restrict__ dst, unsigned long long n) {
    const unsigned long long chunk = 4ull * blockDim.x;
    for (unsigned long long base = blockIdx.x * chunk + threadIdx.x; base < n;
         base += (unsigned long long)gridDim.x * chunk) {
        uint4 x[4], y[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const unsigned long long i = base + (unsigned long long)k * blockDim.x;
            if (i < n) { x[k] = apex_load<STREAM>(a + i); y[k] = apex_load<STREAM>(b + i); }
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const unsigned long long i = base + (unsigned long long)k * blockDim.x;
            if (i < n) apex_store<STREAM>(dst + i, apex_xor(x[k], y[k]));
        }
    }
}

// Reads only: xor-folds the words and stores only if the fold hits a value the zero-filled
// buffers cannot produce (the store keeps the loads alive).
template <bool STREAM>
__device__ __forceinline__ void apex_read16_body(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                 unsigned long long n) {
    const unsigned long long chunk = 4ull * blockDim.x;
    uint4 acc = make_uint4(0u, 0u, 0u, 0u);
    for (unsigned long long base = blockIdx.x * chunk + threadIdx.x; base < n;
         base += (unsigned long long)gridDim.x * chunk) {
        uint4 v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const unsigned long long i = base + (unsigned long long)k * blockDim.x;
            v[k] = i < n ? apex_load<STREAM>(src + i) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) acc = apex_xor(acc, v[k]);
    }
    if ((acc.x & acc.y & acc.z & acc.w) == 0xA5A5A5A5u) dst[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
extern "C" __global__ void apex_add16(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                      uint4* __restrict__ dst, unsigned long long n) {
    apex_add16_body<false>(a, b, dst, n);
}
extern "C" __global__ void apex_add16_stream(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                             uint4* __restrict__ dst, unsigned long long n) {
    apex_add16_body<true>(a, b, dst, n);
}
extern "C" __global__ void apex_read16(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                       unsigned long long n) {
    apex_read16_body<false>(src, dst, n);
}
extern "C" __global__ void apex_read16_stream(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                              unsigned long long n) {
    apex_read16_body<true>(src, dst, n);
}
extern "C" __global__ void apex_copy16(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                       unsigned long long n, unsigned int reps) {
    apex_copy16_body<false>(src, dst, n, reps);
}
extern "C" __global__ void apex_copy16_stream(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                              unsigned long long n, unsigned int reps) {
    apex_copy16_body<true>(src, dst, n, reps);
}
"#;

/// Threads per block of the copy kernel.
const COPY_BLOCK: u32 = 256;

/// One way of running the copy kernel: cache hints and blocks per SM. The copy line takes the
/// fastest of [`CopyVariant::ALL`] on the device at hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyVariant {
    /// Evict-first loads and stores (`__ldcs`/`__stcs`).
    pub streaming: bool,
    /// Blocks of [`COPY_BLOCK`] threads per SM, each looping over its chunks (8: the full 2048
    /// threads resident); 0: one block per chunk of `4 * COPY_BLOCK` words, no loop.
    pub blocks_per_sm: u32,
}

impl CopyVariant {
    pub const ALL: [CopyVariant; 6] = [
        CopyVariant {
            streaming: false,
            blocks_per_sm: 4,
        },
        CopyVariant {
            streaming: false,
            blocks_per_sm: 8,
        },
        CopyVariant {
            streaming: false,
            blocks_per_sm: 0,
        },
        CopyVariant {
            streaming: true,
            blocks_per_sm: 4,
        },
        CopyVariant {
            streaming: true,
            blocks_per_sm: 8,
        },
        CopyVariant {
            streaming: true,
            blocks_per_sm: 0,
        },
    ];
    /// The L2 line's variant (plain hints keep the buffer in L2).
    pub const L2: CopyVariant = CopyVariant {
        streaming: false,
        blocks_per_sm: 8,
    };
}

impl std::fmt::Display for CopyVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hints = if self.streaming {
            "evict-first"
        } else {
            "default"
        };
        match self.blocks_per_sm {
            0 => write!(f, "{hints} hints, one block of {COPY_BLOCK} per chunk"),
            n => write!(f, "{hints} hints, {n} blocks of {COPY_BLOCK}/SM"),
        }
    }
}

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
    /// The bandwidth kernels, each as `[default hints, evict-first hints]`.
    copy16: [CudaFunction; 2],
    add16: [CudaFunction; 2],
    read16: [CudaFunction; 2],
    sm_count: u32,
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
            copy16: [get("apex_copy16")?, get("apex_copy16_stream")?],
            add16: [get("apex_add16")?, get("apex_add16_stream")?],
            read16: [get("apex_read16")?, get("apex_read16_stream")?],
            sm_count: ctx
                .attribute(
                    cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                )
                .map_err(|e| CudaError::driver("read the SM count", e))?
                .max(1) as u32,
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

    /// Enqueues `reps` copies of the first `bytes` of `src` into `dst` with the 16-byte copy
    /// kernel run as `variant` (`bytes` a multiple of 16, both buffers at least that long).
    pub fn copy16(
        &self,
        stream: &Arc<CudaStream>,
        (src, dst): (&CudaSlice<u8>, &mut CudaSlice<u8>),
        bytes: usize,
        reps: u32,
        variant: CopyVariant,
    ) -> Result<(), CudaError> {
        let words = self.words(bytes, &[src.len(), dst.len()])?;
        let config = self.copy_config(words, variant);
        let mut launch = stream.launch_builder(&self.copy16[usize::from(variant.streaming)]);
        launch.arg(src).arg(dst).arg(&words).arg(&reps);
        // SAFETY: the signature is (const uint4*, uint4*, u64, u32); both buffers hold at least
        // `words` 16-byte words (checked above) and cudarc's allocations are 256-byte aligned.
        unsafe { launch.launch(config) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the copy kernel", e))
    }

    /// Enqueues one STREAM-`add` pass over the first `bytes` of `a` and `b` into `dst` (two
    /// reads to one write; the same rules as [`Builtins::copy16`]).
    pub fn add16(
        &self,
        stream: &Arc<CudaStream>,
        (a, b, dst): (&CudaSlice<u8>, &CudaSlice<u8>, &mut CudaSlice<u8>),
        bytes: usize,
        variant: CopyVariant,
    ) -> Result<(), CudaError> {
        let words = self.words(bytes, &[a.len(), b.len(), dst.len()])?;
        let mut launch = stream.launch_builder(&self.add16[usize::from(variant.streaming)]);
        launch.arg(a).arg(b).arg(dst).arg(&words);
        // SAFETY: the signature is (const uint4*, const uint4*, uint4*, u64); every buffer holds
        // at least `words` 16-byte words (checked) and cudarc's allocations are 256-byte aligned.
        unsafe { launch.launch(self.copy_config(words, variant)) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the add kernel", e))
    }

    /// Enqueues one read-only pass over the first `bytes` of `src` (`dst`, one word per thread
    /// at most, is written only if the data held a value zero-filled buffers cannot).
    pub fn read16(
        &self,
        stream: &Arc<CudaStream>,
        (src, dst): (&CudaSlice<u8>, &mut CudaSlice<u8>),
        bytes: usize,
        variant: CopyVariant,
    ) -> Result<(), CudaError> {
        let words = self.words(bytes, &[src.len()])?;
        let config = self.copy_config(words, variant);
        let threads = u64::from(config.grid_dim.0) * u64::from(COPY_BLOCK);
        if (dst.len() as u64) < threads * 16 {
            return Err(CudaError::Unsupported(format!(
                "the read kernel needs {} bytes of output, got {}",
                threads * 16,
                dst.len()
            )));
        }
        let mut launch = stream.launch_builder(&self.read16[usize::from(variant.streaming)]);
        launch.arg(src).arg(dst).arg(&words);
        // SAFETY: the signature is (const uint4*, uint4*, u64); `src` holds `words` words and
        // `dst` one word per thread of the grid (both checked).
        unsafe { launch.launch(config) }
            .map(|_| ())
            .map_err(|e| CudaError::driver("launch the read kernel", e))
    }

    /// 16-byte words in `bytes`, which every buffer length in `lens` must hold.
    fn words(&self, bytes: usize, lens: &[usize]) -> Result<u64, CudaError> {
        if !bytes.is_multiple_of(16) || lens.iter().any(|&l| bytes > l) {
            return Err(CudaError::Unsupported(format!(
                "the bandwidth kernels move whole 16-byte words within every buffer, not {bytes} bytes"
            )));
        }
        Ok((bytes / 16) as u64)
    }

    fn copy_config(&self, words: u64, variant: CopyVariant) -> LaunchConfig {
        let chunks = words.div_ceil(4 * u64::from(COPY_BLOCK));
        let resident = u64::from(self.sm_count * variant.blocks_per_sm);
        let blocks = if resident == 0 {
            chunks
        } else {
            chunks.min(resident)
        };
        LaunchConfig {
            grid_dim: (u32::try_from(blocks.max(1)).unwrap_or(u32::MAX), 1, 1),
            block_dim: (COPY_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
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
    fn copy_variants_name_their_launch() {
        let v = CopyVariant {
            streaming: true,
            blocks_per_sm: 0,
        };
        assert_eq!(
            v.to_string(),
            "evict-first hints, one block of 256 per chunk"
        );
        assert_eq!(
            CopyVariant::L2.to_string(),
            "default hints, 8 blocks of 256/SM"
        );
    }

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
