//! One tile of a heavy path in fp32: FiLM from the tile's mixed token, the modulation, the
//! depthwise 3x3, the pointwise GEMM, GroupNorm(1) and `a*relu(b)` + residual, written back over
//! the packed tile. The loops run along pixel rows, so they vectorize.

use apex_tile_math::{
    gate::sigmoid,
    scan::{TOKEN_CLAMP, clean_token},
};

use super::{gemm::gemm_bias, reduce};
use crate::{problem::NORM_EPS, weights::PathWeights};

/// Per-worker buffers for one tile.
pub struct TileScratch {
    film: Vec<f32>,
    hidden: Vec<f32>,
    padded: Vec<f32>,
    dw: Vec<f32>,
    pw: Vec<f32>,
}

impl TileScratch {
    pub fn new(channels: usize, tile: usize) -> Self {
        let p = tile * tile;
        Self {
            film: vec![0.0; 2 * channels],
            hidden: vec![0.0; 2 * channels],
            padded: vec![0.0; (tile + 2) * (tile + 2)],
            dw: vec![0.0; channels * p],
            pw: vec![0.0; 2 * channels * p],
        }
    }
}

fn linear(w: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
    let k = x.len();
    for (o, y) in y.iter_mut().enumerate() {
        let row = &w[o * k..(o + 1) * k];
        // Eight partial sums, so the reduction vectorizes.
        let mut acc = [0.0f32; 8];
        let (chunks, rest) = (row.chunks_exact(8), row.len() / 8 * 8);
        for (i, wc) in chunks.enumerate() {
            for j in 0..8 {
                acc[j] += wc[j] * x[i * 8 + j];
            }
        }
        let tail: f32 = row[rest..].iter().zip(&x[rest..]).map(|(a, b)| a * b).sum();
        *y = b[o] + acc.iter().sum::<f32>() + tail;
    }
}

/// FiLM of one mixed token into `s.film`: `gamma = tanh(.)` in `0..C`, `beta` in `C..2C`.
fn film(w: &PathWeights, token: &[f32], s: &mut TileScratch) {
    let c = w.channels;
    let x = &mut s.hidden[..c];
    for (x, &t) in x.iter_mut().zip(token) {
        *x = clean_token(t, TOKEN_CLAMP as f32);
    }
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / c as f64;
    let var = x
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / c as f64;
    let inv = (1.0 / (var + NORM_EPS).sqrt()) as f32;
    let mean = mean as f32;
    for ((x, &g), &b) in x.iter_mut().zip(&w.ln_w).zip(&w.ln_b) {
        *x = (*x - mean) * inv * g + b;
    }
    let (h, z1) = s.hidden.split_at_mut(c);
    linear(&w.fc1_w, &w.fc1_b, h, z1);
    for z in z1.iter_mut() {
        *z *= sigmoid(*z);
    }
    linear(&w.fc2_w, &w.fc2_b, z1, &mut s.film);
    for g in &mut s.film[..c] {
        *g = g.tanh();
    }
}

/// The depthwise 3x3 (zero padding at the tile's edges, with bias) of `m` into `s.dw`.
#[inline(always)]
fn depthwise(w: &PathWeights, t: usize, m: &[f32], s: &mut TileScratch) {
    let (p, tp) = (t * t, t + 2);
    for ch in 0..w.channels {
        let pad = &mut s.padded;
        for (i, row) in m[ch * p..(ch + 1) * p].chunks_exact(t).enumerate() {
            pad[(i + 1) * tp + 1..(i + 1) * tp + 1 + t].copy_from_slice(row);
        }
        let k = &w.dw_w[ch * 9..ch * 9 + 9];
        let out = &mut s.dw[ch * p..(ch + 1) * p];
        out.fill(w.dw_b[ch]);
        for (i, orow) in out.chunks_exact_mut(t).enumerate() {
            for di in 0..3 {
                let prow = &pad[(i + di) * tp..(i + di) * tp + tp];
                for dj in 0..3 {
                    let kv = k[di * 3 + dj];
                    for (o, &v) in orow.iter_mut().zip(&prow[dj..dj + t]) {
                        *o += kv * v;
                    }
                }
            }
        }
    }
}

/// The tile `[C, t, t]` (packed input in, refined output out) with its mixed token `[C]`. With
/// AVX2 and FMA (detected at run time) the whole tile is compiled for them (8-wide rows); else
/// for the x86-64 baseline.
pub fn refine_tile(
    w: &PathWeights,
    t: usize,
    token: &[f32],
    tile: &mut [f32],
    s: &mut TileScratch,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            unsafe { refine_tile_avx2_fma(w, t, token, tile, s) };
            return;
        }
    }
    refine_body(w, t, token, tile, s);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn refine_tile_avx2_fma(
    w: &PathWeights,
    t: usize,
    token: &[f32],
    tile: &mut [f32],
    s: &mut TileScratch,
) {
    refine_body(w, t, token, tile, s);
}

#[inline(always)]
fn refine_body(w: &PathWeights, t: usize, token: &[f32], tile: &mut [f32], s: &mut TileScratch) {
    let c = w.channels;
    let p = t * t;
    film(w, token, s);
    for (ch, plane) in tile.chunks_exact_mut(p).enumerate() {
        let (g, b) = (1.0 + s.film[ch], s.film[c + ch]);
        for v in plane {
            *v = g * *v + b;
        }
    }
    depthwise(w, t, tile, s);
    gemm_bias(2 * c, c, p, &w.pw_w, &w.pw_b, &s.dw, &mut s.pw);
    // GroupNorm(1): mean and variance of all 2C*P values, two passes in f64.
    let n = s.pw.len() as f64;
    let mean = reduce::sum(&s.pw) / n;
    let var = reduce::squared_deviations(&s.pw, mean) / n;
    let inv = 1.0 / (var + NORM_EPS).sqrt();
    let (a, b) = s.pw.split_at(c * p);
    for ch in 0..c {
        // y = v*scale + shift per channel, for a (channel ch) and b (channel C + ch).
        let sa = inv * f64::from(w.gn_w[ch]);
        let sb = inv * f64::from(w.gn_w[c + ch]);
        let (ha, hb) = (
            (f64::from(w.gn_b[ch]) - mean * sa) as f32,
            (f64::from(w.gn_b[c + ch]) - mean * sb) as f32,
        );
        let (sa, sb) = (sa as f32, sb as f32);
        let rows = ch * p..(ch + 1) * p;
        for ((m, &av), &bv) in tile[rows.clone()]
            .iter_mut()
            .zip(&a[rows.clone()])
            .zip(&b[rows])
        {
            let gate = (bv * sb + hb).max(0.0);
            *m += (av * sa + ha) * gate;
        }
    }
}
