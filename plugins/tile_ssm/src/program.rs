//! The CUDA program: [`CudaTuning`] (the block shape), the source specialised for one storage type
//! and tuning, and a process-wide cache of NVRTC output, so a program is compiled once per
//! (architecture, dtype, tuning) and never per shape: B, K and C are kernel arguments.

use std::sync::{
    Mutex,
    atomic::{AtomicUsize, Ordering},
};

use apex_plugin_api::{PluginError, Precision, cuda::compile_ptx};
use cudarc::nvrtc::Ptx;

use crate::problem::{DECAY_MAX, DECAY_MIN, Direction};

/// The CUDA C of every TileSSM kernel.
pub const SOURCE: &str = include_str!("cuda/tile_ssm.cu");

/// The block shape of the chunked scan (`cuda/tile_ssm.cu` explains the design).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaTuning {
    /// Warps per block, one chunk each (the block is 32 channels × `chunks`).
    pub chunks: usize,
    /// Tokens per thread per super-chunk (held in registers).
    pub tokens_per_thread: usize,
    /// Load the next super-chunk's tokens while the current one is scanned.
    pub prefetch: bool,
}

impl Default for CudaTuning {
    /// 16 chunks × 16 tokens: the design the wave-2 prototypes measured fastest at the fixed
    /// profile on an H100 (3.58 µs forward in a graph, `guides/wave2-anchors.md` §1.1; 8 × 32 took
    /// 4.44 and 32 × 8 took 3.82), here with the tokens kept in registers across super-chunks.
    fn default() -> Self {
        Self {
            chunks: 16,
            tokens_per_thread: 16,
            prefetch: true,
        }
    }
}

impl CudaTuning {
    /// Steps per super-chunk: `chunks * tokens_per_thread`.
    pub fn super_chunk(&self) -> usize {
        self.chunks * self.tokens_per_thread
    }

    /// Refuses block shapes the kernel cannot launch (at most 1024 threads, at least one token).
    pub fn check(&self) -> Result<(), PluginError> {
        if self.chunks == 0 || self.chunks > 32 || self.tokens_per_thread == 0 {
            return Err(PluginError::invalid(format!(
                "CUDA tuning {self:?} is not launchable (hint: 1..=32 chunks of 32 threads, >= 1 token per thread)"
            )));
        }
        Ok(())
    }
}

/// `DTYPE`: 0 = fp32, 1 = fp16, 2 = bf16.
fn dtype_code(precision: Precision) -> Result<usize, PluginError> {
    match precision {
        Precision::Fp32 => Ok(0),
        Precision::Fp16 => Ok(1),
        Precision::Bf16 => Ok(2),
        other => Err(PluginError::invalid(format!(
            "tile_ssm has no {other} path (hint: use fp32, fp16 or bf16)"
        ))),
    }
}

/// The source for `precision` and `tuning`: `#define` lines, then [`SOURCE`].
pub fn source(precision: Precision, tuning: CudaTuning) -> Result<String, PluginError> {
    tuning.check()?;
    Ok(format!(
        "#define DTYPE {}\n#define CHUNKS {}\n#define TPT {}\n#define PREFETCH {}\n\
         #define DECAY_MIN_BITS 0x{:08x}\n#define DECAY_MAX_BITS 0x{:08x}\n{SOURCE}",
        dtype_code(precision)?,
        tuning.chunks,
        tuning.tokens_per_thread,
        u8::from(tuning.prefetch),
        DECAY_MIN.to_bits(),
        DECAY_MAX.to_bits(),
    ))
}

/// The entry point of `direction`.
pub fn function_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Forward => "tile_ssm_forward",
        Direction::Backward => "tile_ssm_backward",
        Direction::Bidirectional => "tile_ssm_bidirectional",
    }
}

type CacheEntry = (&'static str, String, Ptx);

static CACHE: Mutex<Vec<CacheEntry>> = Mutex::new(Vec::new());
static COMPILES: AtomicUsize = AtomicUsize::new(0);

/// NVRTC compiles this process has run (the GPU check asserts that a new K adds none).
pub fn compiles() -> usize {
    COMPILES.load(Ordering::Relaxed)
}

/// The PTX of `source` for `arch`, compiled on first use and cached for the process.
pub fn ptx(source: &str, arch: &'static str) -> Result<Ptx, PluginError> {
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, ptx)) = cache.iter().find(|(a, s, _)| *a == arch && s == source) {
        return Ok(ptx.clone());
    }
    let ptx = compile_ptx("tile_ssm", source, arch)?;
    COMPILES.fetch_add(1, Ordering::Relaxed);
    cache.push((arch, source.to_string(), ptx.clone()));
    Ok(ptx)
}

/// Every program a case can build (each precision, the default and the alternative tunings the
/// GPU check's `--bench` compares), for a compile check without a GPU.
pub fn all_sources() -> Result<Vec<(String, String)>, PluginError> {
    let mut out = Vec::new();
    for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
        for tuning in bench_tunings() {
            out.push((
                format!("{precision} {tuning:?}"),
                source(precision, tuning)?,
            ));
        }
    }
    Ok(out)
}

/// The tunings `tile_ssm_gpu_check --bench` times side by side: the default first.
pub fn bench_tunings() -> Vec<CudaTuning> {
    let d = CudaTuning::default();
    vec![
        d,
        CudaTuning {
            prefetch: false,
            ..d
        },
        CudaTuning {
            chunks: 8,
            tokens_per_thread: 16,
            prefetch: true,
        },
        CudaTuning {
            chunks: 16,
            tokens_per_thread: 8,
            prefetch: true,
        },
        CudaTuning {
            chunks: 32,
            tokens_per_thread: 8,
            prefetch: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::cuda::nvrtc_present;

    #[test]
    fn defines_carry_the_exact_decay_bounds() {
        let s = source(Precision::Fp16, CudaTuning::default()).unwrap();
        assert!(s.starts_with(
            "#define DTYPE 1\n#define CHUNKS 16\n#define TPT 16\n#define PREFETCH 1\n"
        ));
        assert!(s.contains(&format!("0x{:08x}", DECAY_MAX.to_bits())));
        assert!(source(Precision::Fp8, CudaTuning::default()).is_err());
        let bad = CudaTuning {
            chunks: 33,
            ..CudaTuning::default()
        };
        assert!(source(Precision::Fp32, bad).is_err());
    }

    #[test]
    #[expect(
        clippy::print_stderr,
        reason = "a skipped GPU-library test must say so, not pass silently"
    )]
    fn every_source_compiles_with_nvrtc_for_sm_90_once() {
        if !nvrtc_present() {
            eprintln!("skipped: no NVRTC (libnvrtc.so / libnvrtc.so.13 not loadable)");
            return;
        }
        let sources = all_sources().unwrap();
        assert_eq!(sources.len(), 15);
        for (label, src) in &sources {
            if let Err(e) = ptx(src, "sm_90") {
                panic!("{label}: {e}");
            }
        }
        // A second request for the same program is served from the cache.
        let before = compiles();
        ptx(&sources[0].1, "sm_90").unwrap();
        assert_eq!(compiles(), before);
        let text = ptx(&sources[0].1, "sm_90").unwrap().to_src();
        for d in Direction::ALL {
            assert!(text.contains(function_name(d)), "{}", function_name(d));
        }
    }
}
