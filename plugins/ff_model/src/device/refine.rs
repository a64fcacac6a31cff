//! How a level runs its refine block (`cuda/fast/refine_*.cu`): fused, the tile's chunks as one
//! thread-block cluster that exchanges its GroupNorm partials in distributed shared memory
//! (`ff_refine_apply`, sm_90; or `ff_refine_apply_lean`, the same in at most 64 registers a
//! thread with the GEMM's output stashed in shared memory, four CTAs a SM; bf16 and fp32: 80
//! and three; a level of a shape in `program::LEAN_SHAPES` runs its shape's copy,
//! `FastFunctions::lean`),
//! or split in two launches through the pre-norm tensor in global memory (`ff_refine`, then
//! `ff_apply`).
//!
//! A fp16 level of a shape in `program::WG_SHAPES` on sm_90 can also run the wgmma refine
//! (`ff_refine_wg_*`, `cuda/fast/refine_wg.cu`): 64-pixel chunks, the GEMM on warpgroup MMAs.
//!
//! The default, [`Refine::Auto`], runs each level that fits a cluster on one of the fused kernels
//! ([`pick`]): the wgmma refine wherever the module has it (fp16, the profile's two levels, at
//! every batch), else the lean kernel's copy compiled for the level's shape wherever the level
//! has one (the profile's two levels at every batch, bf16 and fp32), and otherwise the kernel
//! that needs fewer waves of clusters: `ff_refine_apply` (the shorter CTA) while its tiles fit
//! one wave of it, and `ff_refine_apply_lean` once the lean kernel's extra CTAs a SM save a wave.
//! Fused, lean, wg and split stay selectable so the GPU check verifies and times all four.

use std::sync::Arc;

use apex_plugin_api::{PluginError, cuda::cuda_error};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::program::{CHUNK, MAX_CLUSTER, WARPS};

/// The refine path a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refine {
    /// `ff_refine` then `ff_apply` on both levels.
    Split,
    /// Per level where [`Refine::Fused`] applies, the fused kernel [`pick`] chooses (the level's
    /// shape-compiled lean copy, else the kernel with fewer waves); split on the others.
    #[default]
    Auto,
    /// `ff_refine_apply` on each level that [`fits_cluster`] on a device with clusters (sm_90
    /// and later); split on the others.
    Fused,
    /// `ff_refine_apply_lean` where `Fused` would run `ff_refine_apply` (same levels, same
    /// results; four CTAs a SM (bf16, fp32: three) instead of two); split on the others.
    FusedLean,
    /// The wgmma refine (`ff_refine_wg_*`: fp16, sm_90, a shape of `program::WG_SHAPES`) where
    /// the level has one; [`Refine::Auto`]'s choice on the others.
    Wg,
}

/// One level's refine launches, with the scratch they need.
pub enum LevelRefine {
    /// `ff_refine_apply`: nothing between refine and apply leaves the cluster.
    Fused,
    /// `ff_refine_apply_lean`: as `Fused`, the pre-norm values waiting in shared memory.
    Lean,
    /// `ff_refine_wg_*`: the tile's 64-pixel chunks as one cluster, the GEMM on wgmma.
    Wg,
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

/// How many clusters of each fused kernel a device runs at once for one level (its wave), from
/// the driver's occupancy calculator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Residency {
    pub fused: usize,
    pub lean: usize,
    /// The level has a lean copy compiled for its shape (`program::LEAN_SHAPES`): [`pick`] then
    /// runs it at every batch.
    pub shaped: bool,
    /// The module has the wgmma refine for the level's shape (`program::WG_SHAPES`).
    pub wg: bool,
}

/// The fused kernel [`Refine::Auto`] runs for `tiles` clusters (batch x selected tiles).
///
/// A level the wgmma refine is compiled for runs it at any batch. H200, twenty-eighth session
/// (`benches/results/device_scripts_2026-11-28_s28.sh`, call 6), in process against the lean
/// copies in the same runs: the fp16 profile 51.0 -> 47.2 us, B=8 146.5 -> 134.7, B=16 267 ->
/// 245; the refine blocks alone at B=8 80.9 -> 69.0.
///
/// A level with a shape-compiled lean copy runs it at any batch, in every storage. H100,
/// twenty-fifth session (`benches/results/device_scripts_2026-11-28_s25.sh`, call 4), apex-host,
/// main (the fused kernel at B=1) against this rule, alternating, two rounds: the fp16 profile
/// 59.37-59.49 -> 55.06-55.12 us, bf16 62.78-62.84 -> 58.30-58.32, 256x256 75.75-75.77 ->
/// 74.97-75.00, tiles 32/16 (its L1 on the t = 16 copy) 115.18-115.48 -> 115.48-115.70; but fp32
/// 130.95-131.11 -> 151.37-151.48 with its scalar-FMA GEMM then, so fp32 kept the wave rule
/// until its GEMM moved to tensor cores (3xTF32) and its copies took both row tiles in one k
/// loop: in process, twenty-sixth session, call 3, its profile 62.4-62.7 us lean against
/// 65.7-65.8 fused, B=8 245.2-245.6 lean against 246.9-247.7 under the wave rule. The shape
/// copies had overtaken the fused kernel since the rule below was measured (twenty-first and
/// twenty-second sessions: constant shapes, the two-pass partial, both row tiles in one k loop,
/// pushed partials).
///
/// Elsewhere lean only where it needs fewer waves; on a tie the fused kernel, whose CTA is the
/// shorter (H100, profile: 72.97 us a frame fused against 75.96 lean; B=8: 318.8 against 297.9;
/// general kernels, before the shape copies).
pub fn pick(tiles: usize, residency: Residency) -> Refine {
    if residency.wg {
        return Refine::Wg;
    }
    if residency.shaped && residency.lean > 0 {
        return Refine::FusedLean;
    }
    let waves = |resident: usize| tiles.div_ceil(resident.max(1));
    if waves(residency.lean) < waves(residency.fused) {
        Refine::FusedLean
    } else {
        Refine::Fused
    }
}

impl LevelRefine {
    /// The launches `refine` gives a level of `t`-pixel tiles, `k` of them a frame, for `batch`
    /// frames of `channels` channels (`residency`: how many of the level's clusters each fused
    /// kernel holds at once, `None` where the level cannot run fused: no cluster kernels, or
    /// tiles that do not [`fits_cluster`]); the split path's scratch is allocated here, only
    /// when it runs.
    pub fn plan(
        refine: Refine,
        residency: Option<Residency>,
        (batch, channels): (usize, usize),
        t: usize,
        k: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<Self, PluginError> {
        let chunks = (t * t).div_ceil(CHUNK);
        if let Some(residency) = residency {
            let refine = match refine {
                Refine::Auto => pick(batch * k, residency),
                // Not compiled for this level's shape, storage or device: what Auto runs.
                Refine::Wg if !residency.wg => pick(batch * k, residency),
                other => other,
            };
            match refine {
                Refine::Auto | Refine::Fused => return Ok(Self::Fused),
                Refine::FusedLean => return Ok(Self::Lean),
                Refine::Wg => return Ok(Self::Wg),
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
            Self::Wg => Refine::Wg,
            Self::Split { .. } => Refine::Split,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level's residency: clusters of each kernel held at once, and whether it has a
    /// 16-bit shape-compiled lean copy.
    fn held(fused: usize, lean: usize, shaped: bool) -> Residency {
        Residency {
            fused,
            lean,
            shaped,
            wg: false,
        }
    }

    #[test]
    fn the_profiles_tiles_fit_a_cluster_and_larger_ones_do_not() {
        // L0 t = 16 (8 chunks) and L1 t = 8 (2 chunks) at C = 128: fused.
        assert!(fits_cluster(128, 8) && fits_cluster(128, 2));
        // t = 3 (1 chunk) and C = 16: fused.
        assert!(fits_cluster(16, 1));
        // t = 32 (32 chunks): split; C = 144 (two row-tile pairs on warp 0): split.
        assert!(!fits_cluster(128, 32) && !fits_cluster(144, 8));
    }

    #[test]
    fn auto_runs_lean_only_where_it_saves_a_wave() {
        // H100, profile L0 at B=1 and B=8 (clusters of 8: fused 30, lean 45 at once).
        let l0 = held(30, 45, false);
        assert_eq!(pick(20, l0), Refine::Fused);
        assert_eq!(pick(160, l0), Refine::FusedLean);
        // A tie in waves (two each) keeps the shorter fused CTA.
        assert_eq!(pick(60, l0), Refine::Fused);
        assert_eq!(pick(31, l0), Refine::FusedLean);
        // A kernel the device cannot hold at all never wins.
        assert_eq!(pick(8, held(0, 4, false)), Refine::FusedLean);
        assert_eq!(pick(8, held(4, 0, false)), Refine::Fused);
    }

    #[test]
    fn auto_runs_the_wgmma_refine_wherever_the_module_has_it() {
        let wg = Residency {
            wg: true,
            ..held(30, 45, true)
        };
        // The profile's levels at B=1 and B=8 (fp16 on sm_90).
        assert_eq!(pick(20, wg), Refine::Wg);
        assert_eq!(pick(160, wg), Refine::Wg);
        // Elsewhere (bf16, fp32, other shapes or devices) what it ran before.
        assert_eq!(pick(20, held(30, 45, true)), Refine::FusedLean);
    }

    #[test]
    fn auto_runs_a_shaped_lean_copy_at_every_batch() {
        let shaped = held(30, 45, true);
        // The profile's L0 at B=1 (20 tiles, one wave of either kernel) and at B=8.
        assert_eq!(pick(20, shaped), Refine::FusedLean);
        assert_eq!(pick(160, shaped), Refine::FusedLean);
        // A lean copy the device cannot hold is never picked.
        assert_eq!(pick(20, held(30, 0, true)), Refine::Fused);
    }
}
