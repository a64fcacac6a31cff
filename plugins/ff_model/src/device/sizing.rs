//! What the fast path's kernels need of a shape: each kernel's dynamic shared memory, the
//! limits a case must fit (tiles a frame, refine CTAs a tile, shared memory a block), and
//! [`check_shape`], which refuses the shapes past them with the parameter named.

use apex_plugin_api::PluginError;

use crate::{problem::FfProblem, program, storage::Storage};

/// The largest dynamic shared memory a block may use on sm_90 (227 KiB).
const MAX_SMEM: usize = 227 * 1024;
/// The most L0 tiles a frame may have on CUDA (`ff_select` keeps two f64 scores, a state and a
/// split mark per tile, 21 bytes, in 48 KiB of shared memory).
pub const MAX_L0_TILES: usize = 2048;
/// The most refine blocks per tile (`ff_refine` combines the tile's partials in 64 slots).
const MAX_CHUNKS: usize = 64;

/// `ff_select`'s dynamic shared memory for `g` L0 tiles: two f64 scores, an i32 state and a u8
/// split mark per tile. Within the 48 KiB a block gets without opting in for every `g` up to
/// [`MAX_L0_TILES`] (a test checks it, with room for the kernel's static scan slots).
pub fn select_smem(g: usize) -> usize {
    (2 * 8 + 4 + 1) * g
}

/// Tile indices each FiLM linear block (`ff_film_fc1`, `ff_film_out`) takes in a call whose
/// batch runs in `runs` runs of frames: one where a single run has the GPU to itself, two where
/// runs overlap (the `_x2` entry points), so that a block's weight slice serves two tiles' vectors
/// and the overlapping runs read FiLM's weights half as often.
///
/// H100, twenty-fourth session (`benches/results/device_scripts_2026-11-28_s24.sh`). Call 1, in
/// process, one build (its GEMV unrolled for 12 vectors) with 1 / 2 / 3 / 4 tiles a block for
/// every call: the profile 58.9-59.3 / 59.7-59.8 / 60.8-60.9 / 62.2-62.4 us, B=8 164.8-165.2 /
/// 161.2-161.6 / 162.5-162.6 / 168.5, B=16 306.1-306.7 / 302.9 / 300.6-301.9 / 301.5-302.4
/// (main: 57.4-57.6, 167.9-168.6, 311.4). Call 2, this rule against main, in process, three
/// rounds: the profile 56.2-56.3 against 57.7-57.8, B=4 99.8 against 105.2-105.7, B=8
/// 159.8-160.5 against 168.3-168.5, B=16 301.5-302.2 against 312.0-313.8.
pub fn film_tiles(runs: usize) -> usize {
    if runs > 1 { FILM_MAX_TILES } else { 1 }
}

/// Frames of its run each FiLM linear block of `tiles` tile indices ([`film_tiles`]) takes in a
/// run of `run_frames` frames: one where the block has one tile and the run one frame (the `_one`
/// entry points, whose GEMV carries one vector's sums), else up to `program::FILM_TOKENS`, the
/// run's frames sharing the block's weight slice. The launch's grid divides the run by it.
///
/// H200, thirty-ninth session, call 2 of `benches/results/device_scripts_2026-11-29_s39.sh`,
/// against the build before it, two rounds: in process the profile 41.05 -> 39.37-39.41 us, B=8
/// and B=16 unchanged (104.1-104.3, 185.9-186.1); apex-host fp16 43.00 -> 41.36-41.37, bf16
/// 49.94 -> 48.11-48.12, fp32 57.25 -> 55.80-55.86, tiles 32/16 108.0 -> 106.2, B=8 107.1-107.4
/// both. Every block at one frame (thirty-eighth session, call 6, a compile-time switch) cost
/// B=8 3.6 us and B=16 3.5, so runs of more frames keep `FILM_TOKENS`.
pub fn film_frames(tiles: usize, run_frames: usize) -> usize {
    if tiles == 1 && run_frames == 1 {
        1
    } else {
        program::FILM_TOKENS
    }
}

/// The most tile indices a FiLM linear block takes: its entry points take 1 (`ff_film_fc1`,
/// `ff_film_out`) or 2 (`_x2`), `FastFunctions::film_fc1[tiles - 1]`.
pub const FILM_MAX_TILES: usize = 2;

/// The dynamic shared memory a FiLM linear block may have: the 48 KiB every block gets without
/// opting in (the host does not opt those kernels in).
const FILM_SMEM: usize = 48 * 1024;

/// A FiLM linear block's dynamic shared memory: the vectors of its `tiles` tiles and `frames`
/// frames (at most `program::FILM_TOKENS`; the launch passes the run's frames capped at the
/// block's, `film_frames`), `c` f32 each.
pub fn film_smem(c: usize, tiles: usize, frames: usize) -> usize {
    4 * tiles * frames.clamp(1, program::FILM_TOKENS) * c
}

/// A refine CTA's dynamic shared memory (`ff_refine`, `ff_refine_apply`) for tiles of `t` pixels
/// and `c` channels: the modulated rows a chunk's 3x3 reads (`rows * t + 1` f32 for each of up
/// to `CB` channels at a time) plus the depthwise output ([`operand_smem`]). At C = 128 in 16-bit
/// storage: 49.5 KiB (t = 16) or 41.5 KiB (t = 8); fp32 16.5 KiB more.
pub fn refine_smem(c: usize, t: usize, storage: Storage) -> usize {
    let p = t * t;
    let rows = (0..p.div_ceil(program::CHUNK))
        .map(|j| {
            let (p0, p1) = (j * program::CHUNK, ((j + 1) * program::CHUNK).min(p));
            (p1 - 1) / t + 1 - p0 / t + 2
        })
        .max()
        .unwrap_or(0);
    4 * program::CB.min(c) * (rows * t + 1) + operand_smem(c, storage)
}

/// The depthwise output a refine CTA multiplies (`bs`): a hi and a lo copy of `CHUNK` rows of
/// `C` elements, each row padded by 16 bytes (`BPAD` in the source).
fn operand_smem(c: usize, storage: Storage) -> usize {
    2 * program::CHUNK * (c * storage.bytes() + 16)
}

/// An `ff_refine_apply_lean` CTA's dynamic shared memory: the stash of the GEMM's output
/// (`2C x CHUNK` f32) from the start, ending inside the modulated rows of [`refine_smem`]'s
/// region (dead once the operand is built) and before its operand: the larger of the stash plus
/// the operand and [`refine_smem`] (`lean_lead` in the source places the region per chunk). At
/// C = 128: 49.5 KiB (t = 16, the modulated rows the larger) or 32 + 17 KiB (t = 8) in 16-bit
/// storage, four CTAs (216 KiB with their static shared memory) a SM; fp32's operand takes
/// 33 KiB (65.5 KiB at t = 16): three CTAs a SM.
pub fn lean_smem(c: usize, t: usize, storage: Storage) -> usize {
    (4 * 2 * c * program::CHUNK + operand_smem(c, storage)).max(refine_smem(c, t, storage))
}

/// Refuses shapes the kernels cannot run, naming the parameter.
pub fn check_shape(problem: &FfProblem, storage: Storage) -> Result<(), PluginError> {
    let c = problem.channels;
    if !c.is_multiple_of(16) {
        return Err(PluginError::invalid(format!(
            "channels = {c}: the CUDA paths need a multiple of 16 (the pointwise conv runs on \
             16x16 tensor-core fragments; hint: use channels = {} or {}, or the cpu backend)",
            (c / 16).max(1) * 16,
            (c / 16 + 1) * 16
        )));
    }
    let film = film_smem(c, FILM_MAX_TILES, program::FILM_TOKENS);
    if film > FILM_SMEM {
        return Err(PluginError::invalid(format!(
            "channels = {c}: a FiLM linear block holds up to {} vectors of C f32 ({film} bytes of \
             shared memory), more than the {FILM_SMEM} it may have (hint: fewer channels)",
            FILM_MAX_TILES * program::FILM_TOKENS
        )));
    }
    let g = problem.grid_l0().tiles();
    if g > MAX_L0_TILES {
        return Err(PluginError::invalid(format!(
            "the map has {g} L0 tiles; the CUDA selection holds at most {MAX_L0_TILES} (hint: a \
             larger tile_size_l0 or a smaller map)"
        )));
    }
    for t in [problem.tile_l0, problem.tile_l1] {
        let chunks = (t * t).div_ceil(program::CHUNK);
        if chunks > MAX_CHUNKS {
            return Err(PluginError::invalid(format!(
                "a {t}x{t} tile is {chunks} refine blocks of {} pixels; the CUDA paths take at \
                 most {MAX_CHUNKS} (tiles up to 45 pixels; hint: a smaller tile_size_l0)",
                program::CHUNK
            )));
        }
        let smem = refine_smem(c, t, storage);
        if smem > MAX_SMEM {
            return Err(PluginError::invalid(format!(
                "channels = {c} with {t}-pixel tiles needs {smem} bytes of shared memory per \
                 refine block, more than the {MAX_SMEM} a block may have (hint: fewer channels or \
                 smaller tiles)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn film_blocks_take_two_tiles_only_beside_other_runs() {
        assert_eq!(film_tiles(1), 1);
        assert_eq!(film_tiles(3), 2);
        // Two tiles of four frames at C = 128: 8 vectors of 512 bytes.
        assert_eq!(film_smem(128, 2, 3), 4 * 2 * 3 * 128);
        assert_eq!(film_smem(128, 2, 8), 4 * 2 * 4 * 128);
        assert!(film_smem(1536, 2, 4) <= FILM_SMEM);
        assert!(film_smem(1552, 2, 4) > FILM_SMEM);
    }

    #[test]
    fn film_blocks_take_one_frame_only_in_a_run_of_one() {
        assert_eq!(film_frames(1, 1), 1);
        for frames in 2..=8 {
            assert_eq!(film_frames(1, frames), program::FILM_TOKENS);
        }
        // A block of one frame asks shared memory for one vector a tile.
        assert_eq!(film_smem(128, 1, 1), 4 * 128);
    }

    #[test]
    fn the_selections_shared_memory_fits_without_opting_in() {
        // 48 KiB less the kernel's static `warp_base[WARPS]` and `total` (and some slack).
        assert!(select_smem(MAX_L0_TILES) + 64 <= 48 * 1024);
        assert_eq!(select_smem(64), 64 * 21);
    }

    #[test]
    fn lean_refine_ctas_fit_a_sm_at_the_profiles_tiles() {
        // ff_refine_apply_lean's static shared memory (ptxas, sm_90) and the 1 KiB the driver
        // reserves a CTA, against the 228 KiB of a H100 SM: four CTAs in 16-bit storage, three
        // in fp32 (its TF32 operand is twice as large), as many as their registers allow
        // (LEAN_MIN_BLOCKS).
        const STATIC: usize = 3584;
        for (storage, operand, ctas) in [
            (Storage::F32, 33_792, 3),
            (Storage::F16, 17_408, 4),
            (Storage::Bf16, 17_408, 4),
        ] {
            // All 128 channels' rows (4 rows of 16, plus one float, each) and the operand: 32
            // pixels of 128 channels plus 16 bytes, hi and lo.
            assert_eq!(
                refine_smem(128, 16, storage),
                33_280 + operand,
                "{storage:?}"
            );
            // t = 16: the 32 KiB stash lies inside the 32.5 KiB of modulated rows.
            assert_eq!(lean_smem(128, 16, storage), 33_280 + operand, "{storage:?}");
            // t = 8: six rows of 8 (24.5 KiB) are shorter than the stash.
            assert_eq!(lean_smem(128, 8, storage), 32_768 + operand, "{storage:?}");
            for t in [3, 6, 8, 16] {
                let smem = lean_smem(128, t, storage);
                assert!(
                    ctas * (smem + STATIC + 1024) <= 228 * 1024,
                    "t = {t}: {smem}"
                );
            }
        }
        // Few channels on 6-pixel tiles: the stash (4 KiB) is longer than the 8 rows of 6 a
        // chunk reads (3,136 bytes), so the operand follows the stash.
        assert_eq!(refine_smem(16, 6, Storage::F16), 3_136 + 3_072);
        assert_eq!(lean_smem(16, 6, Storage::F16), 4_096 + 3_072);
    }
}
