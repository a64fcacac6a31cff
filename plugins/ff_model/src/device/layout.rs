//! One level's weights as the device reads them: a single f32 buffer in the order of `Level` in
//! `cuda/fast/prelude.cu` (scan constants, LayerNorm, the FiLM linears row-major, depthwise,
//! pointwise bias, GroupNorm, gate, then the pointwise weights). The pointwise weights are in
//! `mma.sync` A-fragment order, so each lane loads a fragment with one 16-byte load: fp16 rounds
//! them (m16n8k16), bf16 splits them into a rounded part and the rounded remainder (m16n8k16),
//! fp32 into TF32 parts the same way (m16n8k8: the 3xTF32 GEMM).

use apex_tile_math::scan::Bidirectional;

use crate::{storage::Storage, weights::PathWeights};

/// The f32 words of one level for `storage` (`C` a multiple of 16: the host checks).
pub fn level_words(w: &PathWeights, scan: &Bidirectional<f32>, storage: Storage) -> Vec<f32> {
    let c = w.channels;
    let mut out = Vec::with_capacity(33 * c + 5 * c * c + 4);
    for dir in [&scan.forward, &scan.backward] {
        for row in [
            &dir.a,
            &dir.one_minus_a,
            &dir.input_gain,
            &dir.state_bias,
            &dir.output_gain,
        ] {
            out.extend_from_slice(row);
        }
    }
    out.extend_from_slice(&scan.gate);
    out.extend_from_slice(&scan.one_minus_gate);
    out.extend_from_slice(&w.ln_w);
    out.extend_from_slice(&w.ln_b);
    out.extend_from_slice(&w.fc1_w);
    out.extend_from_slice(&w.fc1_b);
    out.extend_from_slice(&w.fc2_w);
    out.extend_from_slice(&w.fc2_b);
    out.extend_from_slice(&w.dw_w);
    out.extend_from_slice(&w.dw_b);
    out.extend_from_slice(&w.pw_b);
    out.extend_from_slice(&w.gn_w);
    out.extend_from_slice(&w.gn_b);
    let gate = w.gate();
    out.extend([gate.wb as f32, gate.wu as f32, gate.bias as f32, 0.0]);
    debug_assert_eq!(
        out.len() % 4,
        0,
        "the pointwise block must be 16-byte aligned"
    );
    match storage {
        Storage::F32 => {
            // hi = the weight rounded to TF32, lo = the remainder rounded to TF32: hi + lo
            // carries about 21 mantissa bits (the kernel multiplies both parts).
            let hi: Vec<f32> = w.pw_w.iter().map(|&v| tf32(v)).collect();
            let lo: Vec<f32> = w.pw_w.iter().zip(&hi).map(|(&v, &h)| tf32(v - h)).collect();
            out.extend(tf32_fragments(&hi, 2 * c, c));
            out.extend(tf32_fragments(&lo, 2 * c, c));
        }
        Storage::F16 => out.extend(fragments(&w.pw_w, 2 * c, c, storage)),
        Storage::Bf16 => {
            // hi = the weight rounded to bf16, lo = the rounded remainder: hi + lo carries about
            // 16 mantissa bits (the kernel multiplies both parts).
            let hi: Vec<f32> = w.pw_w.iter().map(|&v| storage.round(v)).collect();
            let lo: Vec<f32> = w.pw_w.iter().zip(&hi).map(|(&v, &h)| v - h).collect();
            out.extend(fragments(&hi, 2 * c, c, storage));
            out.extend(fragments(&lo, 2 * c, c, storage));
        }
    }
    out
}

/// `v` rounded to TF32 (10 mantissa bits), to nearest with ties away from zero, as the device's
/// `cvt.rna.tf32.f32` rounds the activations; the low 13 bits are zero, so the tensor cores read
/// the value exactly. Non-finite values pass unchanged.
pub fn tf32(v: f32) -> f32 {
    if !v.is_finite() {
        return v;
    }
    f32::from_bits((v.to_bits() + 0x1000) & !0x1fff)
}

/// `a` (`m x k` row-major, `m` a multiple of 16, `k` of 8) in m16n8k8 TF32 A-fragment order:
/// for row tile `mt`, k-step `kk` and lane (`g = lane / 4`, `q = lane % 4`), the four f32
/// `a[g][q]`, `a[g+8][q]`, `a[g][q+4]`, `a[g+8][q+4]` of the 16x8 block.
pub fn tf32_fragments(a: &[f32], m: usize, k: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(m * k);
    for mt in 0..m / 16 {
        for kk in 0..k / 8 {
            for lane in 0..32 {
                let (r, c) = (mt * 16 + lane / 4, kk * 8 + lane % 4);
                out.extend([
                    a[r * k + c],
                    a[(r + 8) * k + c],
                    a[r * k + c + 4],
                    a[(r + 8) * k + c + 4],
                ]);
            }
        }
    }
    out
}

/// `a` (`m x k` row-major, `m` and `k` multiples of 16) in m16n8k16 A-fragment order: for row
/// tile `mt`, k-step `ks` and lane (`g = lane / 4`, `q = lane % 4`), four 32-bit words holding
/// `(a[g][2q], a[g][2q+1])`, `(a[g+8][2q], ..)`, `(a[g][2q+8], ..)`, `(a[g+8][2q+8], ..)` of the
/// 16x16 block, low half first; each word returned as the f32 with those bits.
pub fn fragments(a: &[f32], m: usize, k: usize, storage: Storage) -> Vec<f32> {
    let half = |r: usize, c: usize| u32::from(storage.bits16(a[r * k + c]));
    let word = |r: usize, c: usize| f32::from_bits(half(r, c) | (half(r, c + 1) << 16));
    let mut out = Vec::with_capacity(m * k / 2);
    for mt in 0..m / 16 {
        for ks in 0..k / 16 {
            for lane in 0..32 {
                let (r, c) = (mt * 16 + lane / 4, ks * 16 + 2 * (lane % 4));
                out.extend([
                    word(r, c),
                    word(r + 8, c),
                    word(r, c + 8),
                    word(r + 8, c + 8),
                ]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::FfWeights;

    #[test]
    fn the_layout_has_the_kernels_offsets() {
        let w = FfWeights::generate(16, 3);
        let scan = Bidirectional::from_raw(&w.l0.scan);
        let c = 16;
        let f32_words = level_words(&w.l0, &scan, Storage::F32);
        // The pointwise block starts where the kernel's level_at puts it.
        let pw = 33 * c + 3 * c * c + 4;
        assert_eq!(
            f32_words.len(),
            pw + 4 * c * c,
            "fp32: hi and lo TF32 fragments, 4C^2 words"
        );
        // fc1 row-major after the scan rows and LayerNorm, 16-byte aligned.
        assert_eq!(&f32_words[14 * c..15 * c], &w.l0.fc1_w[..c]);
        assert_eq!((14 * c) % 4, 0);
        let h = level_words(&w.l0, &scan, Storage::F16);
        assert_eq!(
            h.len(),
            pw + c * c,
            "fp16: the weights' fragments, C^2 words"
        );
        let b = level_words(&w.l0, &scan, Storage::Bf16);
        assert_eq!(
            b.len(),
            pw + 2 * c * c,
            "bf16: hi and lo fragments, 2C^2 words"
        );
    }

    #[test]
    fn fp32_weights_split_into_exact_tf32_parts() {
        let w = FfWeights::generate(16, 5);
        let scan = Bidirectional::from_raw(&w.l0.scan);
        let c = 16;
        let words = level_words(&w.l0, &scan, Storage::F32);
        let pw = &words[33 * c + 3 * c * c + 4..];
        let (hi, lo) = pw.split_at(2 * c * c);
        // Row tile 1, k-step 1, lane 6 (g 1, q 2): rows 17 and 25, columns 10 and 14.
        let at = ((2 + 1) * 32 + 6) * 4;
        for (j, (r, col)) in [(17, 10), (25, 10), (17, 14), (25, 14)]
            .into_iter()
            .enumerate()
        {
            let v = w.l0.pw_w[r * c + col];
            let (h, l) = (hi[at + j], lo[at + j]);
            assert_eq!(h.to_bits() & 0x1fff, 0, "hi is a TF32 value");
            assert_eq!(l.to_bits() & 0x1fff, 0, "lo is a TF32 value");
            // The two parts carry ~21 bits: |v - hi - lo| <= 2^-22 |v| (lo's rounding).
            assert!(
                (f64::from(v) - f64::from(h) - f64::from(l)).abs() <= f64::from(v.abs()) * 2.4e-7,
                "{v} = {h} + {l}"
            );
        }
    }

    #[test]
    fn tf32_rounds_to_nearest_ties_away() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: away from zero.
        assert_eq!(tf32(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
        assert_eq!(tf32(-(1.0 + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
        assert_eq!(tf32(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(tf32(1.0 + 3.0 * 2f32.powi(-12)), 1.0 + 2f32.powi(-10));
        assert_eq!(tf32(0.0), 0.0);
        assert!(tf32(f32::NAN).is_nan());
        assert_eq!(tf32(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn tf32_fragments_follow_the_m16n8k8_a_layout() {
        let (m, k) = (32, 16);
        let a: Vec<f32> = (0..m * k).map(|i| i as f32).collect();
        let f = tf32_fragments(&a, m, k);
        assert_eq!(f.len(), m * k);
        // Row tile 1, k-step 1, lane 13 (g 3, q 1): rows 19 and 27, columns 9 and 13.
        let at = ((2 + 1) * 32 + 13) * 4;
        assert_eq!(
            &f[at..at + 4],
            &[a[19 * k + 9], a[27 * k + 9], a[19 * k + 13], a[27 * k + 13]]
        );
    }

    #[test]
    fn fragments_follow_the_mma_a_layout() {
        let (m, k) = (32, 32);
        let a: Vec<f32> = (0..m * k).map(|i| i as f32).collect();
        let f = fragments(&a, m, k, Storage::F16);
        let halves = |w: f32| {
            let b = w.to_bits();
            (
                half::f16::from_bits(b as u16).to_f32(),
                half::f16::from_bits((b >> 16) as u16).to_f32(),
            )
        };
        // Row tile 1, k-step 1, lane 6 (g 1, q 2): rows 17 and 25, columns 20 and 28.
        let at = ((2 + 1) * 32 + 6) * 4;
        assert_eq!(halves(f[at]), (a[17 * k + 20], a[17 * k + 21]));
        assert_eq!(halves(f[at + 1]), (a[25 * k + 20], a[25 * k + 21]));
        assert_eq!(halves(f[at + 2]), (a[17 * k + 28], a[17 * k + 29]));
        assert_eq!(halves(f[at + 3]), (a[25 * k + 28], a[25 * k + 29]));
    }
}
