//! The CUDA program: [`CudaTuning`] (the block shape), the source specialised for one storage type
//! and tuning, compiled once per (architecture, dtype, tuning) through plugin-api's process-wide
//! cache (`compile_ptx_cached`) and never per shape: B, K and C are kernel arguments.

use apex_plugin_api::{
    PluginError, Precision,
    cuda::{STORAGE_CUH, cached_compiles, compile_ptx_cached, dtype_code},
};
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
    /// Adjacent channels per lane (1 or 2): 2 makes every token access 4 bytes (16-bit storage)
    /// or 8 (fp32) instead of 2 or 4, half the instructions per byte, for half the blocks. Used
    /// only where C is even ([`CudaTuning::fit`]).
    pub channels_per_lane: usize,
}

impl Default for CudaTuning {
    /// [`CudaTuning::NARROW`].
    fn default() -> Self {
        Self::NARROW
    }
}

/// The most channel columns (`B * C`) [`CudaTuning::NARROW`] runs: its 512-thread blocks of 32
/// columns run one per SM (their registers fill it), so up to 132 × 32 columns are one wave on an
/// H100 or H200 (132 SMs); past that [`CudaTuning::WIDE`], whose 256-thread blocks of 64 columns
/// run two per SM, is faster. H100, fp16, K = 4096 (`tile_ssm_gpu_check --bench --profile mid`,
/// 2026-11-25), forward µs NARROW / WIDE: B·C = 1536: 41.6 / 59.3; 3072: 42.0 / 59.3; 4096:
/// 42.2 / 59.2; 6144: 74.7 / 60.3; 8192: 75.1 / 62.9; 12288: 110.8 / 91.3.
pub const NARROW_MAX_COLUMNS: usize = 132 * 32;

impl CudaTuning {
    /// 16 chunks × 16 tokens, one channel per lane: the fastest shape measured where B·C is small
    /// and the scan is latency-bound. H100, fixed profile (B=1, K=256, C=128, fp16), DRAM-cold
    /// graph replay (`tile_ssm_gpu_check --bench`, 2026-11-25): forward 4.03 µs against 4.41-6.05
    /// for 16×8, 8×16, 32×8, 32×4 and every two-channel shape; bidirectional 4.77 against 5.97 and
    /// more (4.70 once `tile_ssm_bidirectional_one` took the one-super-chunk case). 16 × 16 = 256
    /// steps is the whole fixed-profile K in one super-chunk.
    pub const NARROW: CudaTuning = CudaTuning {
        chunks: 16,
        tokens_per_thread: 16,
        prefetch: true,
        channels_per_lane: 1,
    };

    /// 8 chunks × 16 tokens, two channels per lane: the fastest shape measured where B·C fills the
    /// GPU and the scan is bandwidth-bound. H100, large profile (B=8, K=4096, C=1536, fp16), same
    /// call: forward 91.3 µs (2205 GB/s of declared bytes, 73 % of the 3012 GB/s copy line)
    /// against 110.8 for [`CudaTuning::NARROW`]; backward 96.2 against 115.4; bidirectional 175.7
    /// against 227.5.
    pub const WIDE: CudaTuning = CudaTuning {
        chunks: 8,
        tokens_per_thread: 16,
        prefetch: true,
        channels_per_lane: 2,
    };

    /// The tuning a `tile_ssm` CUDA case runs with: [`CudaTuning::NARROW`] up to
    /// [`NARROW_MAX_COLUMNS`] channel columns (`batch * channels`), [`CudaTuning::WIDE`] past it;
    /// either fitted to `channels` (an odd C keeps one channel per lane).
    pub fn for_shape(batch: usize, channels: usize) -> CudaTuning {
        let t = if batch * channels <= NARROW_MAX_COLUMNS {
            Self::NARROW
        } else {
            Self::WIDE
        };
        t.fit(channels)
    }

    /// A short label: `16x16`, plus ` c2` for two channels per lane and ` pf` with prefetch.
    pub fn label(&self) -> String {
        format!(
            "{}x{}{}{}",
            self.chunks,
            self.tokens_per_thread,
            if self.channels_per_lane > 1 {
                format!(" c{}", self.channels_per_lane)
            } else {
                String::new()
            },
            if self.prefetch { " pf" } else { "" }
        )
    }

    /// Steps per super-chunk: `chunks * tokens_per_thread`.
    pub fn super_chunk(&self) -> usize {
        self.chunks * self.tokens_per_thread
    }

    /// Channels one block covers: 32 lanes × `channels_per_lane`.
    pub fn block_channels(&self) -> usize {
        32 * self.channels_per_lane
    }

    /// This tuning for `channels` channels: two channels per lane need an even C (aligned
    /// vector accesses), so an odd C falls back to one.
    pub fn fit(self, channels: usize) -> Self {
        if channels.is_multiple_of(self.channels_per_lane) {
            self
        } else {
            Self {
                channels_per_lane: 1,
                ..self
            }
        }
    }

    /// Refuses block shapes the kernel cannot launch (at most 1024 threads, at least one token,
    /// one or two channels per lane).
    pub fn check(&self) -> Result<(), PluginError> {
        if self.chunks == 0
            || self.chunks > 32
            || self.tokens_per_thread == 0
            || !(1..=2).contains(&self.channels_per_lane)
        {
            return Err(PluginError::invalid(format!(
                "CUDA tuning {self:?} is not launchable (hint: 1..=32 chunks of 32 threads, >= 1 token per thread, 1 or 2 channels per lane)"
            )));
        }
        Ok(())
    }
}

/// The source for `precision` and `tuning`: `#define` lines, plugin-api's storage header (the
/// storage type and its conversions), then [`SOURCE`].
pub fn source(precision: Precision, tuning: CudaTuning) -> Result<String, PluginError> {
    tuning.check()?;
    let dtype = dtype_code(precision).ok_or_else(|| {
        PluginError::invalid(format!(
            "tile_ssm has no {precision} path (hint: use fp32, fp16 or bf16)"
        ))
    })?;
    Ok(format!(
        "#define DTYPE {dtype}\n#define CHUNKS {}\n#define TPT {}\n#define CPL {}\n#define PREFETCH {}\n\
         #define DECAY_MIN_BITS 0x{:08x}\n#define DECAY_MAX_BITS 0x{:08x}\n{STORAGE_CUH}\n{SOURCE}",
        tuning.chunks,
        tuning.tokens_per_thread,
        tuning.channels_per_lane,
        u8::from(tuning.prefetch),
        DECAY_MIN.to_bits(),
        DECAY_MAX.to_bits(),
    ))
}

/// The entry point of `direction` for any K.
pub fn function_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Forward => "tile_ssm_forward",
        Direction::Backward => "tile_ssm_backward",
        Direction::Bidirectional => "tile_ssm_bidirectional",
    }
}

/// The entry point a case with `steps` steps launches under `tuning`: for the bidirectional scan
/// of a K within one super-chunk, `tile_ssm_bidirectional_one` (the same kernel specialised for
/// it; `cuda/tile_ssm.cu` gives the figures), else [`function_name`].
pub fn entry(direction: Direction, steps: usize, tuning: CudaTuning) -> &'static str {
    if direction == Direction::Bidirectional && steps <= tuning.super_chunk() {
        "tile_ssm_bidirectional_one"
    } else {
        function_name(direction)
    }
}

/// NVRTC compiles this process has run (the GPU check asserts that a new K adds none).
pub fn compiles() -> usize {
    cached_compiles()
}

/// The PTX of `source` for `arch`, compiled on first use and cached for the process.
pub fn ptx(source: &str, arch: &'static str) -> Result<Ptx, PluginError> {
    compile_ptx_cached("tile_ssm", source, arch)
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

/// The tunings `tile_ssm_gpu_check --bench` times side by side: the two production shapes first.
pub fn bench_tunings() -> Vec<CudaTuning> {
    let shape = |chunks, tokens_per_thread, channels_per_lane| CudaTuning {
        chunks,
        tokens_per_thread,
        prefetch: true,
        channels_per_lane,
    };
    vec![
        CudaTuning::NARROW,
        CudaTuning::WIDE,
        CudaTuning {
            prefetch: false,
            ..CudaTuning::NARROW
        },
        shape(8, 32, 1),
        shape(4, 64, 1),
        shape(8, 32, 2),
        shape(16, 16, 2),
        shape(16, 8, 1),
        shape(32, 8, 1),
    ]
}

/// The tunings [`CudaTuning::for_shape`] can pick: the self-check runs its plan on each.
pub fn production_tunings() -> [CudaTuning; 2] {
    [CudaTuning::NARROW, CudaTuning::WIDE]
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::cuda::nvrtc_for_test;

    #[test]
    fn defines_carry_the_exact_decay_bounds() {
        let s = source(Precision::Fp16, CudaTuning::default()).unwrap();
        assert!(s.starts_with(
            "#define DTYPE 1\n#define CHUNKS 16\n#define TPT 16\n#define CPL 1\n#define PREFETCH 1\n"
        ));
        assert!(s.contains(&format!("0x{:08x}", DECAY_MAX.to_bits())));
        assert!(source(Precision::Fp8, CudaTuning::default()).is_err());
        let bad = CudaTuning {
            chunks: 33,
            ..CudaTuning::default()
        };
        assert!(source(Precision::Fp32, bad).is_err());
        let three = CudaTuning {
            channels_per_lane: 3,
            ..CudaTuning::default()
        };
        assert!(source(Precision::Fp32, three).is_err());
    }

    #[test]
    fn two_channels_per_lane_only_where_c_is_even() {
        let two = CudaTuning {
            channels_per_lane: 2,
            ..CudaTuning::default()
        };
        assert_eq!(two.fit(128).channels_per_lane, 2);
        assert_eq!(two.fit(33).channels_per_lane, 1);
        assert_eq!(two.fit(33).block_channels(), 32);
        assert_eq!(two.block_channels(), 64);
    }

    #[test]
    fn a_k_within_one_super_chunk_takes_the_one_entry() {
        let t = CudaTuning::NARROW;
        assert_eq!(
            entry(Direction::Bidirectional, 256, t),
            "tile_ssm_bidirectional_one"
        );
        assert_eq!(
            entry(Direction::Bidirectional, 257, t),
            "tile_ssm_bidirectional"
        );
        assert_eq!(entry(Direction::Forward, 1, t), "tile_ssm_forward");
        assert_eq!(entry(Direction::Backward, 4096, t), "tile_ssm_backward");
    }

    #[test]
    fn the_shape_rule_picks_wide_only_for_wide_even_problems() {
        assert_eq!(CudaTuning::for_shape(1, 128), CudaTuning::NARROW);
        assert_eq!(CudaTuning::for_shape(8, 1536), CudaTuning::WIDE);
        assert_eq!(CudaTuning::for_shape(4, 1536), CudaTuning::WIDE);
        assert_eq!(CudaTuning::for_shape(4, 1024), CudaTuning::NARROW);
        assert_eq!(CudaTuning::for_shape(1, 4224), CudaTuning::NARROW);
        assert_eq!(CudaTuning::for_shape(1, 4226), CudaTuning::WIDE);
        let odd = CudaTuning::for_shape(255, 33);
        assert_eq!(odd.channels_per_lane, 1);
        assert_eq!(odd.chunks, CudaTuning::WIDE.chunks);
        assert_eq!(CudaTuning::WIDE.label(), "8x16 c2 pf");
    }

    #[test]
    fn every_source_compiles_with_nvrtc_for_sm_90_once() {
        if !nvrtc_for_test() {
            return;
        }
        let sources = all_sources().unwrap();
        assert_eq!(sources.len(), 3 * bench_tunings().len());
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
            let short = entry(d, 1, CudaTuning::NARROW);
            assert!(text.contains(short), "{short}");
        }
    }
}
