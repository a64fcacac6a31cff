//! How a level runs its refine block (`cuda/ff_fast.cu`): fused, the tile's chunks as one
//! thread-block cluster that exchanges its GroupNorm partials in distributed shared memory
//! (`ff_refine_apply`, sm_90; or `ff_refine_apply_lean`, the same in at most 80 registers a
//! thread with the GEMM's output stashed in shared memory, three CTAs a SM), or split in two
//! launches through the pre-norm tensor in global memory (`ff_refine`, then `ff_apply`). The
//! fused path is the default wherever it fits; the lean and split ones stay selectable so the
//! GPU check verifies and times all three.

use std::sync::Arc;

use apex_plugin_api::{PluginError, cuda::cuda_error};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::program::{CHUNK, MAX_CLUSTER, WARPS};

/// The refine path a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refine {
    /// `ff_refine` then `ff_apply` on both levels.
    Split,
    /// `ff_refine_apply` on each level that [`fits_cluster`] on a device with clusters (sm_90
    /// and later); split on the others.
    #[default]
    Fused,
    /// `ff_refine_apply_lean` where `Fused` would run `ff_refine_apply` (same levels, same
    /// results; three CTAs a SM instead of two); split on the others.
    FusedLean,
}

/// One level's refine launches, with the scratch they need.
pub enum LevelRefine {
    /// `ff_refine_apply`: nothing between refine and apply leaves the cluster.
    Fused,
    /// `ff_refine_apply_lean`: as `Fused`, the pre-norm values waiting in shared memory.
    Lean,
    /// `ff_refine` + `ff_apply`: the pre-norm output `[B, K, 2C, t*t]` and each chunk's
    /// GroupNorm partial `[B, K, chunks, 2]` (sum, centred sum of squares), both f32.
    Split {
        pre: CudaSlice<f32>,
        stats: CudaSlice<f32>,
    },
}

/// Whether a level of `channels` channels and `chunks` refine CTAs per tile can run fused: the
/// chunks form one portable cluster (at most [`MAX_CLUSTER`] CTAs: tiles up to 16x16), and each
/// warp owns at most one row-tile pair of the GEMM (C <= 16 * WARPS), whose accumulators it keeps
/// until the tile's statistics are known.
pub fn fits_cluster(channels: usize, chunks: usize) -> bool {
    chunks <= MAX_CLUSTER && channels <= 16 * WARPS
}

impl LevelRefine {
    /// The launches `refine` gives a level of `t`-pixel tiles, `k` of them a frame, for `batch`
    /// frames of `channels` channels (`clusters`: the device has thread-block clusters and the
    /// module the fused kernel); the split path's scratch is allocated here, only when it runs.
    pub fn plan(
        refine: Refine,
        clusters: bool,
        (batch, channels): (usize, usize),
        t: usize,
        k: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<Self, PluginError> {
        let chunks = (t * t).div_ceil(CHUNK);
        if clusters && fits_cluster(channels, chunks) {
            match refine {
                Refine::Fused => return Ok(Self::Fused),
                Refine::FusedLean => return Ok(Self::Lean),
                Refine::Split => {}
            }
        }
        let zeros = |n: usize| stream.alloc_zeros::<f32>(n.max(1)).map_err(cuda_error);
        Ok(Self::Split {
            pre: zeros(batch * k * 2 * channels * t * t)?,
            stats: zeros(batch * k * chunks * 2)?,
        })
    }

    /// What the level runs, as the [`Refine`] that names it.
    pub fn runs(&self) -> Refine {
        match self {
            Self::Fused => Refine::Fused,
            Self::Lean => Refine::FusedLean,
            Self::Split { .. } => Refine::Split,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiles_tiles_fit_a_cluster_and_larger_ones_do_not() {
        // L0 t = 16 (8 chunks) and L1 t = 8 (2 chunks) at C = 128: fused.
        assert!(fits_cluster(128, 8) && fits_cluster(128, 2));
        // t = 3 (1 chunk) and C = 16: fused.
        assert!(fits_cluster(16, 1));
        // t = 32 (32 chunks): split; C = 144 (two row-tile pairs on warp 0): split.
        assert!(!fits_cluster(128, 32) && !fits_cluster(144, 8));
    }
}
