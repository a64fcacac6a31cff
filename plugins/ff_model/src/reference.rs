//! The f64 reference: the frame exactly as `spec/apex-x-kernels.md` §2.3 writes it, one step
//! after another on whole tensors (pack, token means, scan, FiLM, modulation, depthwise conv,
//! pointwise conv, GroupNorm, `a*relu(b)` + residual, override unpack into a clone of the base,
//! FusionGate over the whole map), in f64 on the stored fp32 inputs and weights. Every other
//! variant is verified against it. It is written for clarity, not speed; it is independent of
//! the fast path except for the selection and the scan formula (`apex-tile-math`), which both
//! share.

use apex_plugin_api::PluginError;
use apex_tile_math::{
    gate::sigmoid,
    grid::TileGrid,
    scan::{Bidirectional, TOKEN_CLAMP, clean_token},
};
use rayon::prelude::*;

use crate::{
    inputs::FfInputs,
    problem::{FfProblem, NORM_EPS},
    select::{FrameSelection, select},
    weights::{FfWeights, PathWeights},
};

/// The three outputs in f64, `heavy_features` and `detail_map` `[B,C,H,W]`, `alpha` `[B,1,H,W]`.
#[derive(Debug, Clone)]
pub struct Outputs {
    pub heavy: Vec<f64>,
    pub detail: Vec<f64>,
    pub alpha: Vec<f64>,
    pub selections: Vec<FrameSelection>,
}

impl Outputs {
    /// `heavy ++ detail ++ alpha`: the order every variant's outputs are compared in.
    pub fn concat(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.heavy.len() * 2 + self.alpha.len());
        v.extend_from_slice(&self.heavy);
        v.extend_from_slice(&self.detail);
        v.extend_from_slice(&self.alpha);
        v
    }
}

fn f(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// FiLM of one token vector: `(gamma, beta)`, `[C]` each.
fn film(w: &PathWeights, token: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let c = w.channels;
    let x: Vec<f64> = token.iter().map(|&v| clean_token(v, TOKEN_CLAMP)).collect();
    let mean = x.iter().sum::<f64>() / c as f64;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / c as f64;
    let inv = 1.0 / (var + NORM_EPS).sqrt();
    let h: Vec<f64> = (0..c)
        .map(|i| (x[i] - mean) * inv * f64::from(w.ln_w[i]) + f64::from(w.ln_b[i]))
        .collect();
    let linear = |wm: &[f32], b: &[f32], x: &[f64]| -> Vec<f64> {
        b.iter()
            .enumerate()
            .map(|(o, &bo)| {
                let row = &wm[o * x.len()..(o + 1) * x.len()];
                f64::from(bo)
                    + row
                        .iter()
                        .zip(x)
                        .map(|(&wv, &xv)| f64::from(wv) * xv)
                        .sum::<f64>()
            })
            .collect()
    };
    let z1 = linear(&w.fc1_w, &w.fc1_b, &h);
    let s: Vec<f64> = z1.iter().map(|&z| z * sigmoid(z)).collect();
    let z2 = linear(&w.fc2_w, &w.fc2_b, &s);
    let gamma = z2[..c].iter().map(|v| v.tanh()).collect();
    (gamma, z2[c..].to_vec())
}

/// The refine block on one modulated tile `[C, t, t]`: returns `a*relu(b) + modulated`.
fn refine(w: &PathWeights, t: usize, m: &[f64]) -> Vec<f64> {
    let c = w.channels;
    let p = t * t;
    // Depthwise 3x3, zero padding 1 at the tile's edges, with bias.
    let mut dw = vec![0.0f64; c * p];
    for ch in 0..c {
        for i in 0..t {
            for j in 0..t {
                let mut acc = f64::from(w.dw_b[ch]);
                for di in 0..3 {
                    for dj in 0..3 {
                        let (y, x) = (i + di, j + dj);
                        if y < 1 || x < 1 || y > t || x > t {
                            continue;
                        }
                        acc += f64::from(w.dw_w[ch * 9 + di * 3 + dj])
                            * m[ch * p + (y - 1) * t + (x - 1)];
                    }
                }
                dw[ch * p + i * t + j] = acc;
            }
        }
    }
    // Pointwise 1x1, C -> 2C, with bias.
    // Each output element sums bias + w[o][0]*x[0] + w[o][1]*x[1] + ... in channel order; the
    // loop runs over whole pixel rows per input channel (the same sums, cache-friendly).
    let mut pw = vec![0.0f64; 2 * c * p];
    for (o, row) in pw.chunks_exact_mut(p).enumerate() {
        row.fill(f64::from(w.pw_b[o]));
        for ch in 0..c {
            let wv = f64::from(w.pw_w[o * c + ch]);
            for (acc, &x) in row.iter_mut().zip(&dw[ch * p..(ch + 1) * p]) {
                *acc += wv * x;
            }
        }
    }
    // GroupNorm with one group over all 2C x t x t values, then the per-channel affine.
    let n = pw.len() as f64;
    let mean = pw.iter().sum::<f64>() / n;
    let var = pw.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let inv = 1.0 / (var + NORM_EPS).sqrt();
    for o in 0..2 * c {
        for v in &mut pw[o * p..(o + 1) * p] {
            *v = (*v - mean) * inv * f64::from(w.gn_w[o]) + f64::from(w.gn_b[o]);
        }
    }
    // a = channels 0..C, b = channels C..2C.
    (0..c * p)
        .map(|i| pw[i] * pw[c * p + i].max(0.0) + m[i])
        .collect()
}

/// One heavy path on one frame: `(fused, alpha)` for `base` `[C,H,W]` and the tiles `ids` (in
/// processing order) of `grid`.
fn heavy_path(
    w: &PathWeights,
    grid: &TileGrid,
    base: &[f64],
    ids: &[usize],
    boundary: &[f64],
    uncertainty: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let c = w.channels;
    let p = grid.tile_pixels();
    // Pack and token means.
    let packed: Vec<Vec<f64>> = ids
        .iter()
        .map(|&id| {
            let mut tile = vec![0.0f64; c * p];
            grid.pack(base, id, &mut tile);
            tile
        })
        .collect();
    let tokens: Vec<f64> = packed
        .iter()
        .flat_map(|tile| {
            tile.chunks_exact(p)
                .map(|px| px.iter().sum::<f64>() / p as f64)
        })
        .collect();
    // Bidirectional scan over the K tiles.
    let scan = Bidirectional::<f64>::from_raw(&w.scan);
    let mut mixed = vec![0.0f64; tokens.len()];
    scan.run(&tokens, &mut mixed, &mut vec![0.0; c]);
    // FiLM, modulation, refine, override unpack into a clone of the base.
    // The tiles are independent until the unpack, so they are computed on rayon (each tile's
    // arithmetic is the same whichever thread runs it) and unpacked in K order.
    let refined: Vec<Vec<f64>> = packed
        .par_iter()
        .enumerate()
        .map(|(k, tile)| {
            let (gamma, beta) = film(w, &mixed[k * c..(k + 1) * c]);
            let modulated: Vec<f64> = (0..c * p)
                .map(|i| (1.0 + gamma[i / p]) * tile[i] + beta[i / p])
                .collect();
            refine(w, grid.tile, &modulated)
        })
        .collect();
    let mut unfused = base.to_vec();
    for (&id, tile) in ids.iter().zip(&refined) {
        grid.unpack(tile, id, &mut unfused);
    }
    // FusionGate over the whole map.
    let gate = w.gate();
    let alpha: Vec<f64> = boundary
        .iter()
        .zip(uncertainty)
        .map(|(&b, &u)| gate.alpha(b, u))
        .collect();
    let hw = alpha.len();
    let fused = (0..base.len())
        .map(|i| base[i] + alpha[i % hw] * (unfused[i] - base[i]))
        .collect();
    (fused, alpha)
}

/// The frame (every batch entry) in f64.
pub fn reference(
    problem: &FfProblem,
    weights: &FfWeights,
    inputs: &FfInputs,
) -> Result<Outputs, PluginError> {
    let (cn, hw) = (problem.channels, problem.height * problem.width);
    let mut out = Outputs {
        heavy: Vec::with_capacity(problem.map_len()),
        detail: Vec::with_capacity(problem.map_len()),
        alpha: Vec::with_capacity(problem.pixels()),
        selections: Vec::with_capacity(problem.batch),
    };
    for b in 0..problem.batch {
        let sel = select(problem, inputs, b)?;
        let dense = f(&inputs.dense[b * cn * hw..(b + 1) * cn * hw]);
        let boundary = f(&inputs.boundary[b * hw..(b + 1) * hw]);
        let uncertainty = f(&inputs.uncertainty[b * hw..(b + 1) * hw]);
        let (heavy_l0, _) = heavy_path(
            &weights.l0,
            &problem.grid_l0(),
            &dense,
            &sel.l0,
            &boundary,
            &uncertainty,
        );
        let (heavy, alpha) = heavy_path(
            &weights.l1,
            &problem.grid_l1(),
            &heavy_l0,
            &sel.l1,
            &boundary,
            &uncertainty,
        );
        out.detail
            .extend(heavy.iter().zip(&heavy_l0).map(|(h, l)| h - l));
        out.heavy.extend(heavy);
        out.alpha.extend(alpha);
        out.selections.push(sel);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_channel() -> PathWeights {
        let mut w = PathWeights::generate(1, &mut apex_tile_math::rng::Rng::new(1, 1));
        w.dw_w = vec![0.0; 9];
        w.dw_w[4] = 2.0; // the centre tap only
        w.dw_b = vec![0.5];
        w.pw_w = vec![1.0, -1.0];
        w.pw_b = vec![0.0, 0.0];
        w.gn_w = vec![1.0, 1.0];
        w.gn_b = vec![0.0, 0.0];
        w
    }

    #[test]
    fn refine_by_hand_on_a_one_channel_tile() {
        // dw = 2m + 0.5; pw: a = dw, b = -dw; GroupNorm over [a, b] has mean 0 and
        // var = mean(dw^2), so a*relu(b) is nonzero only where dw < 0.
        let w = one_channel();
        let m = [1.0, -1.0, 0.0, -0.5];
        let dw: Vec<f64> = m.iter().map(|v| 2.0 * v + 0.5).collect();
        let var = dw.iter().map(|v| v * v).sum::<f64>() / 4.0;
        let s = 1.0 / (var + NORM_EPS).sqrt();
        let out = refine(&w, 2, &m);
        for i in 0..4 {
            let (a, b) = (dw[i] * s, -dw[i] * s);
            assert!(
                (out[i] - (a * b.max(0.0) + m[i])).abs() < 1e-12,
                "{i}: {out:?}"
            );
        }
    }

    #[test]
    fn the_depthwise_conv_pads_with_zeros_at_tile_edges() {
        let mut w = one_channel();
        w.dw_w = vec![1.0; 9];
        w.dw_b = vec![0.0];
        w.pw_w = vec![1.0, 0.0];
        w.pw_b = vec![0.0, 1.0]; // b = 1 everywhere before the norm
        w.gn_w = vec![1.0, 0.0];
        w.gn_b = vec![0.0, 1.0]; // b = 1 after the norm: out = norm(a) + m
        let m = [1.0; 9];
        let out = refine(&w, 3, &m);
        // Box sums of ones: corners 4, edges 6, centre 9.
        let sums = [4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0];
        // One group over [a, b]: b is 0 before the norm (pw_w row 1 is 0, bias 1 -> 1).
        let all: Vec<f64> = sums.iter().copied().chain([1.0; 9]).collect();
        let mean = all.iter().sum::<f64>() / 18.0;
        let var = all.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 18.0;
        for i in 0..9 {
            let a = (sums[i] - mean) / (var + NORM_EPS).sqrt();
            assert!((out[i] - (a + 1.0)).abs() < 1e-12, "{i}: {out:?}");
        }
    }
}
