//! One heavy path on one frame in fp32: pack and token means (parallel over tiles), the
//! bidirectional scan (serial over tiles, vectorized over channels), each tile's refine
//! (parallel over tiles), FusionGate's alpha (parallel over rows), and the fused map (parallel
//! over channel planes: the base plane copied, then each selected tile's window fused; on the
//! L1 path the detail map in the same pass).

use apex_tile_math::{grid::TileGrid, scan::Bidirectional};
use rayon::prelude::*;

use super::{
    reduce,
    tile::{TileScratch, refine_tile},
};
use crate::weights::PathWeights;

/// The path's packed tiles and tokens, kept across calls.
pub struct PathScratch {
    packed: Vec<f32>,
    tokens: Vec<f32>,
    mixed: Vec<f32>,
    state: Vec<f32>,
}

impl PathScratch {
    pub fn new(channels: usize, tiles: usize, tile: usize) -> Self {
        Self {
            packed: vec![0.0; tiles * channels * tile * tile],
            tokens: vec![0.0; tiles * channels],
            mixed: vec![0.0; tiles * channels],
            state: vec![0.0; channels],
        }
    }
}

/// `out = base + alpha*(unfused - base)` for the tiles `ids` of `grid` (`base`, `out`:
/// `[C, H, W]`; `alpha`: `[H, W]`, written here). With `detail`, also `detail = out - base`
/// (`[C, H, W]`): 0 outside the tiles, where `out` is the base itself.
#[allow(clippy::too_many_arguments)]
pub fn heavy_path(
    w: &PathWeights,
    scan: &Bidirectional<f32>,
    grid: &TileGrid,
    base: &[f32],
    ids: &[usize],
    (boundary, uncertainty): (&[f32], &[f32]),
    out: &mut [f32],
    detail: Option<&mut [f32]>,
    alpha: &mut [f32],
    s: &mut PathScratch,
) {
    let c = w.channels;
    let (t, p) = (grid.tile, grid.tile_pixels());
    let k = ids.len();
    // The sizes follow the selection; they only change if a call selects another count.
    s.packed.resize(k * c * p, 0.0);
    s.tokens.resize(k * c, 0.0);
    s.mixed.resize(k * c, 0.0);
    s.packed
        .par_chunks_mut(c * p)
        .zip(s.tokens.par_chunks_mut(c))
        .zip(ids.par_iter())
        .for_each(|((tile, token), &id)| {
            grid.pack(base, id, tile);
            for (tok, px) in token.iter_mut().zip(tile.chunks_exact(p)) {
                *tok = (reduce::sum(px) / p as f64) as f32;
            }
        });
    scan.run(&s.tokens, &mut s.mixed, &mut s.state);
    s.packed
        .par_chunks_mut(c * p)
        .zip(s.mixed.par_chunks(c))
        .for_each_init(
            || TileScratch::new(c, t),
            |scratch, (tile, token)| refine_tile(w, t, token, tile, scratch),
        );
    let gate = w.gate();
    let width = grid.width;
    alpha
        .par_chunks_mut(width)
        .zip(
            boundary
                .par_chunks(width)
                .zip(uncertainty.par_chunks(width)),
        )
        .for_each(|(a, (b, u))| {
            for ((a, &b), &u) in a.iter_mut().zip(b).zip(u) {
                *a = gate.alpha(b, u);
            }
        });
    let hw = grid.height * width;
    let alpha = &*alpha;
    let packed = &s.packed;
    let fuse = |ch: usize, plane: &mut [f32], bplane: &[f32], mut dplane: Option<&mut [f32]>| {
        plane.copy_from_slice(bplane);
        if let Some(d) = dplane.as_deref_mut() {
            d.fill(0.0);
        }
        for (kk, &id) in ids.iter().enumerate() {
            let (y0, x0) = grid.origin(id);
            let tile = &packed[(kk * c + ch) * p..(kk * c + ch + 1) * p];
            for (i, trow) in tile.chunks_exact(t).enumerate() {
                let at = (y0 + i) * width + x0;
                let (o, bs, al) = (
                    &mut plane[at..at + t],
                    &bplane[at..at + t],
                    &alpha[at..at + t],
                );
                for j in 0..t {
                    o[j] = bs[j] + al[j] * (trow[j] - bs[j]);
                }
                if let Some(d) = dplane.as_deref_mut() {
                    for ((d, &o), &b) in d[at..at + t].iter_mut().zip(&*o).zip(bs) {
                        *d = o - b;
                    }
                }
            }
        }
    };
    let planes = out.par_chunks_mut(hw).zip(base.par_chunks(hw)).enumerate();
    match detail {
        Some(detail) => planes
            .zip(detail.par_chunks_mut(hw))
            .for_each(|((ch, (plane, bplane)), d)| fuse(ch, plane, bplane, Some(d))),
        None => planes.for_each(|(ch, (plane, bplane))| fuse(ch, plane, bplane, None)),
    }
}
