//! The pointwise 1x1 convolution as a GEMM: `y[M][N] = w[M][K] · x[K][N] + bias[M]` (`M = 2C`
//! output channels, `K = C` input channels, `N = t*t` pixels), row-major. A register-blocked
//! micro-kernel keeps a `4 x NR` block of `y` in registers while it walks `K`: each step loads
//! `NR` pixels of one input channel and four weights, and does `4*NR` multiply-adds. With AVX2
//! and FMA (detected at run time) it uses 16-wide blocks and fused multiply-adds; otherwise the
//! same code with 8-wide blocks and separate multiply and add (SSE2, the x86-64 baseline).

const MR: usize = 4;

/// `y = w · x + bias`.
pub fn gemm_bias(m: usize, k: usize, n: usize, w: &[f32], bias: &[f32], x: &[f32], y: &mut [f32]) {
    assert!(w.len() >= m * k && bias.len() >= m && x.len() >= k * n && y.len() >= m * n);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            unsafe { gemm_avx2_fma(m, k, n, w, bias, x, y) };
            return;
        }
    }
    body::<8, false>(m, k, n, w, bias, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gemm_avx2_fma(
    m: usize,
    k: usize,
    n: usize,
    w: &[f32],
    bias: &[f32],
    x: &[f32],
    y: &mut [f32],
) {
    body::<16, true>(m, k, n, w, bias, x, y);
}

#[inline(always)]
fn madd<const FMA: bool>(acc: f32, a: f32, b: f32) -> f32 {
    if FMA { a.mul_add(b, acc) } else { acc + a * b }
}

#[inline(always)]
fn body<const NR: usize, const FMA: bool>(
    m: usize,
    k: usize,
    n: usize,
    w: &[f32],
    bias: &[f32],
    x: &[f32],
    y: &mut [f32],
) {
    let full_rows = m / MR * MR;
    let full_cols = n / NR * NR;
    for r0 in (0..full_rows).step_by(MR) {
        for c0 in (0..full_cols).step_by(NR) {
            let mut acc = [[0.0f32; NR]; MR];
            for (r, a) in acc.iter_mut().enumerate() {
                *a = [bias[r0 + r]; NR];
            }
            for kk in 0..k {
                let xv: &[f32; NR] = x[kk * n + c0..kk * n + c0 + NR].try_into().unwrap();
                for (r, a) in acc.iter_mut().enumerate() {
                    let wv = w[(r0 + r) * k + kk];
                    for j in 0..NR {
                        a[j] = madd::<FMA>(a[j], wv, xv[j]);
                    }
                }
            }
            for (r, a) in acc.iter().enumerate() {
                y[(r0 + r) * n + c0..(r0 + r) * n + c0 + NR].copy_from_slice(a);
            }
        }
        edge::<FMA>(r0..r0 + MR, full_cols..n, k, n, w, bias, x, y);
    }
    edge::<FMA>(full_rows..m, 0..n, k, n, w, bias, x, y);
}

/// The rows and columns outside the full blocks, one dot product per element.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn edge<const FMA: bool>(
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    k: usize,
    n: usize,
    w: &[f32],
    bias: &[f32],
    x: &[f32],
    y: &mut [f32],
) {
    for r in rows {
        for c in cols.clone() {
            let mut acc = bias[r];
            for kk in 0..k {
                acc = madd::<FMA>(acc, w[r * k + kk], x[kk * n + c]);
            }
            y[r * n + c] = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_naive_product_on_block_and_edge_shapes() {
        for (m, k, n) in [
            (8, 5, 32),
            (6, 3, 17),
            (3, 7, 5),
            (256, 128, 64),
            (4, 1, 16),
        ] {
            let w: Vec<f32> = (0..m * k)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.1)
                .collect();
            let x: Vec<f32> = (0..k * n)
                .map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.2)
                .collect();
            let bias: Vec<f32> = (0..m).map(|i| i as f32 * 0.01).collect();
            let mut y = vec![f32::NAN; m * n];
            gemm_bias(m, k, n, &w, &bias, &x, &mut y);
            for r in 0..m {
                for c in 0..n {
                    let want: f64 = f64::from(bias[r])
                        + (0..k)
                            .map(|kk| f64::from(w[r * k + kk]) * f64::from(x[kk * n + c]))
                            .sum::<f64>();
                    let got = f64::from(y[r * n + c]);
                    assert!(
                        (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                        "{m}x{k}x{n} [{r},{c}]: {got} vs {want}"
                    );
                }
            }
            let mut z = vec![f32::NAN; m * n];
            body::<8, false>(m, k, n, &w, &bias, &x, &mut z);
            for (a, b) in y.iter().zip(&z) {
                assert!((a - b).abs() <= 1e-5 * (1.0 + a.abs()));
            }
        }
    }
}
