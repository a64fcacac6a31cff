//! Math for the two CPU paths.
//!
//! f32 (the fast path): `exp`, `ln`, `erf`, sigmoid and GELU written with only `+ - * /`, fused
//! multiply-adds, `min/max`, selects and bit casts, so LLVM vectorizes the loops that call them
//! (`f32::exp` is a libm call that it cannot), and lane-parallel sums and maxima over a row. Their
//! polynomials use `mul_add`: callers run them inside [`simd_dispatch!`] functions, compiled for
//! AVX-512 or AVX2 and FMA where the CPU has them (one `vfmadd` each; elsewhere `mul_add` is a
//! libm call, so an x86 CPU without FMA runs the portable build correctly but slowly).
//!
//! f64 (the references): `erfc` to full double precision, since std has no `erf`.

/// Defines `fn NAME(args) -> R` that runs `BODY(args)` compiled for AVX-512 (16 floats a
/// vector, 32 vector registers) when the CPU has AVX-512F and VL, else for AVX2 and FMA when it
/// has both (8 floats a vector and fused multiply-adds; the build targets baseline x86-64, SSE2),
/// else as built. `BODY` must be `#[inline(always)]`: it is compiled inside the `target_feature`
/// function itself, so the vector width does not depend on an inlining decision (a closure passed
/// to a generic `target_feature` wrapper lost it once for the activations, 2026-11-25).
///
/// The AVX-512 tier is PyTorch's on the same CPUs (its CPU capability `AVX512`); on the 2-core
/// Zen 4 dev machine the AVX2 build of the GELU loop spilled vector registers to the stack
/// (sixteen `ymm` registers for four interleaved vectors of a long polynomial chain).
macro_rules! simd_dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $body:path) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                fn avx512($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn avx2_fma($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU has AVX-512F and VL (checked just above), which imply
                    // AVX2 and FMA.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA (checked just above).
                    return unsafe { avx2_fma($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}
pub(crate) use simd_dispatch;

/// `e^x` in f32 (Cephes `expf`: range reduction by `ln 2` in two parts, degree-5 polynomial,
/// scale by `2^n` through the exponent bits). About 1 ulp; inputs are clamped to `[-87, 88]`,
/// so the result is never infinite or subnormal (`e^-87` stands for anything smaller).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let e = exp_f32_clamped(x);
    if x.is_nan() { x } else { e }
}

/// [`exp_f32`] without its NaN select: a NaN gives some finite value. For callers whose result
/// keeps a NaN input NaN anyway (`x / (1 + e^-x)`), the select is two vector operations of about
/// twenty for nothing.
#[inline(always)]
fn exp_f32_clamped(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer without a libm call.
    const ROUND: f32 = 12_582_912.0;
    // max/min rather than clamp: they lower to maxps/minps (clamp's NaN rules do not); a NaN
    // becomes -87 here (exp_f32 passes it through by its select).
    #[expect(
        clippy::manual_clamp,
        reason = "clamp's NaN rules keep it from vectorizing"
    )]
    let x = x.max(-87.0).min(88.0);
    let shifted = x.mul_add(LOG2E, ROUND);
    let n = shifted - ROUND;
    let r = n.mul_add(-0.693_359_4, x);
    let r = n.mul_add(2.121_944_4e-4, r);
    let z = r * r;
    let p = 1.987_569_1e-4f32
        .mul_add(r, 1.398_199_9e-3)
        .mul_add(r, 8.333_452e-3)
        .mul_add(r, 4.166_579_6e-2)
        .mul_add(r, 1.666_666_5e-1)
        .mul_add(r, 0.5);
    let y = p.mul_add(z, r) + 1.0;
    // `shifted` holds n in its low mantissa bits (bits = 0x4B40_0000 + n), so 2^n is an integer
    // shift of the bits, with no float-to-int conversion (Rust's saturating `as` does not
    // vectorize well).
    let pow2n = (shifted
        .to_bits()
        .wrapping_sub(0x4B40_0000)
        .wrapping_add(127))
        << 23;
    y * f32::from_bits(pow2n)
}

/// `ln(x)` in f32 for positive, finite, normal `x` (Cephes `logf`: the exponent from the bits,
/// the mantissa moved into `[sqrt(1/2), sqrt 2)`, a degree-9 polynomial); NaN stays NaN (a NaN
/// logit must give a NaN loss). About 1 ulp, written with bit casts, selects and fused
/// multiply-adds so that a loop of them vectorizes (`f32::ln` is a libm call, which a loop over
/// rows' sums cannot vectorize).
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let bits = x.to_bits();
    // x = 2^e * m with m in [0.5, 1).
    let e = ((bits >> 23) as i32 - 126) as f32;
    let m = f32::from_bits((bits & 0x007F_FFFF) | 0x3F00_0000);
    // m in [sqrt(1/2), sqrt 2): below sqrt(1/2) the mantissa doubles and the exponent drops.
    let low = m < SQRT_HALF;
    let e = if low { e - 1.0 } else { e };
    let r = if low { m + m - 1.0 } else { m - 1.0 };
    let z = r * r;
    let p = 7.037_683_6e-2f32
        .mul_add(r, -1.151_461e-1)
        .mul_add(r, 1.167_699_9e-1)
        .mul_add(r, -1.242_014_1e-1)
        .mul_add(r, 1.424_932_3e-1)
        .mul_add(r, -1.666_805_8e-1)
        .mul_add(r, 2.000_071_5e-1)
        .mul_add(r, -2.499_999_4e-1)
        .mul_add(r, 3.333_333e-1);
    let y = p * r * z + e.mul_add(-2.121_944_4e-4, -0.5 * z);
    let out = e.mul_add(0.693_359_4, r + y);
    if x.is_nan() { x } else { out }
}

/// `erf(x)` in f32 to an absolute error of about 4e-7 (f32 rounding; the fit itself is good to
/// 1.5e-7): `x P(x^2) / Q(x^2)` on `|x| <= 4` with `P` of degree 6 and `Q` of degree 4 in `x^2`,
/// and `x` clamped to `[-4, 4]` (`erf(4) = 1 - 1.5e-8`). Coefficients: our own least-squares fit
/// with Lawson reweighting on 40,001 points of `[0, 4]` (`benches/probes/erf_fit.py`); its
/// constant term, 1.12837905, is `2 / sqrt(pi)` to f32 precision and is written as such. One
/// division and eleven multiply-adds, no exponential: it replaced Abramowitz and Stegun 7.1.26
/// (a division, an exponential and the erfc tail's select: about 30 vector operations against
/// 17), which left the GELU loop at 0.76x PyTorch's on two cores.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    // max/min rather than clamp (see exp_f32); a NaN becomes -4 here, and callers keep NaN
    // through their own use of x.
    #[expect(
        clippy::manual_clamp,
        reason = "clamp's NaN rules keep it from vectorizing"
    )]
    let x = x.max(-4.0).min(4.0);
    let t = x * x;
    let p = 1.950_685_2e-8f32
        .mul_add(t, -1.939_251_1e-6)
        .mul_add(t, 1.418_044_4e-4)
        .mul_add(t, 3.716_969_6e-3)
        .mul_add(t, 5.057_951_3e-2)
        .mul_add(t, 2.003_927_1e-1)
        .mul_add(t, std::f32::consts::FRAC_2_SQRT_PI);
    let q = 9.592_259_5e-4f32
        .mul_add(t, 1.437_104_3e-2)
        .mul_add(t, 1.151_443_1e-1)
        .mul_add(t, 5.109_243_2e-1)
        .mul_add(t, 1.0);
    x * p / q
}

/// `x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))`: GELU, erf form, to an absolute error of about
/// `3e-7 * max(|x|, 1)` (the fp32 tolerance's absolute floor is 1e-5). NaN stays NaN through
/// `x`; `-inf` gives NaN, as `-inf * 0` does.
#[inline(always)]
pub fn gelu_erf_f32(x: f32) -> f32 {
    let hx = 0.5 * x;
    hx.mul_add(erf_f32(x * std::f32::consts::FRAC_1_SQRT_2), hx)
}

/// `sqrt(2 / pi)`.
pub const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// The cubic coefficient of the tanh form.
pub const GELU_TANH_C: f64 = 0.044_715;

/// `0.5 x (1 + tanh(u))` with `u = sqrt(2/pi) (x + 0.044715 x^3)`, computed as `x * sigmoid(2u)`.
#[inline(always)]
pub fn gelu_tanh_f32(x: f32) -> f32 {
    let u = SQRT_2_OVER_PI as f32 * (x + GELU_TANH_C as f32 * x * x * x);
    x / (1.0 + exp_f32_clamped(-2.0 * u))
}

/// `x * sigmoid(x)`.
#[inline(always)]
pub fn swish_f32(x: f32) -> f32 {
    x / (1.0 + exp_f32_clamped(-x))
}

/// Lanes of the row reductions: eight independent accumulators, which LLVM keeps in vector
/// registers (a single running sum is a serial dependence it may not reorder).
const LANES: usize = 8;

/// Rows at least this long are summed in [`WIDE_LANES`] lanes, shorter ones in [`LANES`].
const WIDE_FROM: usize = 64;
/// Lanes of the long-row sums: four 8-float or two 16-float vector accumulators. One
/// accumulator is a chain of dependent adds (64 of them for a 512-float row, twice per
/// LayerNorm row), which left LayerNorm at dim 512 latency-bound at 0.94x PyTorch on two cores.
const WIDE_LANES: usize = 32;

/// The sum of `x` in f32, accumulated in [`LANES`] lanes, or [`WIDE_LANES`] for long rows.
#[inline(always)]
pub fn sum_f32(x: &[f32]) -> f32 {
    if x.len() >= WIDE_FROM {
        lane_sum::<WIDE_LANES>(x, |v| v)
    } else {
        lane_sum::<LANES>(x, |v| v)
    }
}

/// `sum((x - c)^2)` in f32, accumulated as [`sum_f32`] does.
#[inline(always)]
pub fn sum_sq_dev_f32(x: &[f32], c: f32) -> f32 {
    let sq = |v: f32| (v - c) * (v - c);
    if x.len() >= WIDE_FROM {
        lane_sum::<WIDE_LANES>(x, sq)
    } else {
        lane_sum::<LANES>(x, sq)
    }
}

/// `sum(f(x))` in `N` lanes (a multiple of 8), folded pairwise, then the tail.
#[inline(always)]
fn lane_sum<const N: usize>(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0.0f32; N];
    let mut chunks = x.chunks_exact(N);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|&v| f(v)).sum();
    let mut eight = [0.0f32; LANES];
    for group in acc.chunks_exact(LANES) {
        for (e, &a) in eight.iter_mut().zip(group) {
            *e += a;
        }
    }
    fold(eight, |a, b| a + b) + tail
}

simd_dispatch!(
    /// [`sum_sq_diff_f32`] compiled for the best vector instructions the CPU has ([`simd_dispatch!`]).
    pub fn sum_sq_diff_f32_best(a: &[f32], b: &[f32]) -> f32 => sum_sq_diff_f32
);

/// `sum((a - b)^2)` in f32, accumulated in eight lanes.
#[inline(always)]
pub fn sum_sq_diff_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| (x - y) * (x - y))
        .sum();
    for (xa, xb) in ca.zip(cb) {
        for ((s, x), y) in acc.iter_mut().zip(xa).zip(xb) {
            let d = x - y;
            *s += d * d;
        }
    }
    fold(acc, |p, q| p + q) + tail
}

/// The maximum of `x` (negative infinity for an empty slice), in eight lanes.
#[inline(always)]
pub fn max_f32(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = if v > *a { v } else { *a };
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    fold(acc, f32::max).max(tail)
}

/// Pairwise fold of the lanes (a fixed tree, so the result does not depend on the caller).
#[inline(always)]
fn fold(acc: [f32; LANES], f: impl Fn(f32, f32) -> f32) -> f32 {
    let a = [
        f(acc[0], acc[4]),
        f(acc[1], acc[5]),
        f(acc[2], acc[6]),
        f(acc[3], acc[7]),
    ];
    f(f(a[0], a[2]), f(a[1], a[3]))
}

/// `erfc(x)` in f64: `1 - erf(x)` by a positive-term series for `|x| < 2.5` (about 1e-16
/// absolute), the Laplace continued fraction beyond (about 1e-15 relative), and
/// `erfc(-x) = 2 - erfc(x)`. The reference of every
/// GELU-erf check, so it is written without divisions in its loops (the series multiplies by a
/// table of reciprocals, the fraction runs as a forward recurrence with one division at the end):
/// the earlier form with a division a step made GELU's verification a tenth of the whole CUDA
/// suite's wall time.
pub fn erfc_f64(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc_f64(-x);
    }
    if x < 2.5 {
        return 1.0 - erf_series(x);
    }
    if x > 27.0 {
        return 0.0;
    }
    // erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), 80 levels (far
    // more than enough for x >= 2.5), as the convergent A/B of the recurrences
    // A_k = x A_(k-1) + (k/2) A_(k-2) (likewise B), A_0 = x, A_(-1) = 1, B_0 = 1, B_(-1) = 0.
    // Every term is positive (no cancellation); A stays below 30^81 (no overflow).
    let (mut a_prev, mut a) = (1.0f64, x);
    let (mut b_prev, mut b) = (0.0f64, 1.0f64);
    for k in 1..=CF_LEVELS {
        let ak = f64::from(k) * 0.5;
        // (Not `mul_add`: without FMA in the target features it is a libm call.)
        let a_next = x * a + ak * a_prev;
        let b_next = x * b + ak * b_prev;
        (a_prev, a, b_prev, b) = (a, a_next, b, b_next);
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() * (b / a)
}

/// Levels of [`erfc_f64`]'s continued fraction.
const CF_LEVELS: u32 = 80;

/// Terms of [`erf_series`] at most (38 reach 1e-17 at x = 2.5).
const SERIES_TERMS: usize = 48;

/// `1 / (2n + 1)` for the series' terms.
const INV_ODD: [f64; SERIES_TERMS] = {
    let mut t = [0.0; SERIES_TERMS];
    let mut n = 0;
    while n < SERIES_TERMS {
        t[n] = 1.0 / (2 * n + 1) as f64;
        n += 1;
    }
    t
};

/// `erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1))` for `0 <= x < 2.5`: every
/// term is positive, so there is no cancellation.
fn erf_series(x: f64) -> f64 {
    let two_x2 = 2.0 * x * x;
    let mut term = x;
    let mut sum = x;
    for inv in &INV_ODD[1..] {
        term *= two_x2 * inv;
        sum += term;
        if term <= 1e-17 * sum {
            break;
        }
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp() * sum
}

/// GELU (erf form) in f64: `0.5 x erfc(-x / sqrt 2)`.
pub fn gelu_erf_f64(x: f64) -> f64 {
    0.5 * x * erfc_f64(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// GELU (tanh form) in f64: `0.5 x (1 + tanh(u)) = x / (1 + e^(-2u))`, the second form keeping
/// its relative accuracy in the negative tail where `1 + tanh(u)` cancels.
pub fn gelu_tanh_f64(x: f64) -> f64 {
    x / (1.0 + (-2.0 * SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x)).exp())
}

/// Swish in f64.
pub fn swish_f64(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// The definitions [`erfc_f64`] evaluates, one division a step: the oracle of its faster
    /// form.
    fn erfc_by_divisions(x: f64) -> f64 {
        if x < 0.0 {
            return 2.0 - erfc_by_divisions(-x);
        }
        if x < 2.5 {
            let (two_x2, mut term, mut sum, mut n) = (2.0 * x * x, x, x, 0.0);
            while term > 1e-17 * sum {
                n += 1.0;
                term *= two_x2 / (2.0 * n + 1.0);
                sum += term;
            }
            return 1.0 - std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp() * sum;
        }
        let mut f = x;
        for k in (1..=80).rev() {
            f = x + (f64::from(k) / 2.0) / f;
        }
        (-x * x).exp() / std::f64::consts::PI.sqrt() / f
    }

    #[test]
    fn erfc_matches_its_definition_evaluated_by_divisions() {
        // Below 2.5 both evaluate 1 - erf(x), accurate to about 1e-16 absolute; from 2.5 on, the
        // continued fraction, accurate relative to erfc itself.
        let (mut worst_abs, mut worst_rel) = (0.0f64, 0.0f64);
        for i in -27_000..27_000 {
            let x = f64::from(i) / 1000.0 + 1e-4; // [-27, 27), off the grid's round numbers
            let (fast, slow) = (erfc_f64(x), erfc_by_divisions(x));
            if x.abs() < 2.5 {
                worst_abs = worst_abs.max((fast - slow).abs());
            } else if slow > f64::MIN_POSITIVE {
                // (erfc is subnormal beyond x = 26.5: neither form keeps its precision there)
                worst_rel = worst_rel.max(rel(fast, slow));
            }
        }
        assert!(
            worst_abs < 1e-15,
            "below 2.5: worst absolute difference {worst_abs:e}"
        );
        assert!(
            worst_rel < 1e-14,
            "from 2.5: worst relative difference {worst_rel:e}"
        );
    }

    #[test]
    fn erfc_matches_tabulated_values() {
        // Values from the DLMF / Abramowitz-Stegun tables.
        for (x, want) in [
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_1),
            (2.0, 4.677_734_981_047_266e-3),
            (3.0, 2.209_049_699_858_544e-5),
            (5.0, 1.537_459_794_428_035e-12),
            (-1.0, 1.842_700_792_949_715),
        ] {
            assert!(
                rel(erfc_f64(x), want) < 1e-13,
                "erfc({x}) = {}",
                erfc_f64(x)
            );
        }
        assert_eq!(erfc_f64(0.0), 1.0);
        // Continuity where the method changes.
        assert!(rel(erfc_f64(2.5 - 1e-12), erfc_f64(2.5)) < 1e-10);
    }

    #[test]
    fn f32_math_is_close_to_f64() {
        let mut worst = [0.0f64; 3];
        let mut worst_gelu_abs = 0.0f64;
        for i in -4000..4000 {
            let x = i as f32 / 500.0; // [-8, 8)
            let xf = f64::from(x);
            // GELU-erf is accurate to an absolute error that grows with |x|.
            worst_gelu_abs = worst_gelu_abs
                .max((f64::from(gelu_erf_f32(x)) - gelu_erf_f64(xf)).abs() / xf.abs().max(1.0));
            let errs = [
                rel(f64::from(exp_f32(x)), xf.exp()),
                rel(f64::from(gelu_tanh_f32(x)), gelu_tanh_f64(xf)),
                rel(f64::from(swish_f32(x)), swish_f64(xf)),
            ];
            for (w, e) in worst.iter_mut().zip(errs) {
                if xf != 0.0 {
                    *w = w.max(e);
                }
            }
        }
        assert!(worst[0] < 3e-7, "exp {worst:?}");
        assert!(worst_gelu_abs < 4e-7, "gelu erf {worst_gelu_abs:e}");
        assert!(worst[1] < 2e-5, "gelu tanh {worst:?}");
        assert!(worst[2] < 2e-6, "swish {worst:?}");
        assert_eq!(exp_f32(-1000.0), (-87.0f32).exp().max(exp_f32(-87.0)));
        assert!(exp_f32(f32::NAN).is_nan());
    }

    #[test]
    fn lane_reductions_match_plain_loops() {
        let x: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin()).collect();
        let y: Vec<f32> = (0..37).map(|i| (i as f32 * 0.11).cos()).collect();
        let close = |a: f32, b: f64| (f64::from(a) - b).abs() < 1e-5;
        assert!(close(sum_f32(&x), x.iter().map(|&v| f64::from(v)).sum()));
        assert!(close(
            sum_sq_dev_f32(&x, 0.25),
            x.iter().map(|&v| (f64::from(v) - 0.25).powi(2)).sum()
        ));
        assert!(close(
            sum_sq_diff_f32(&x, &y),
            x.iter()
                .zip(&y)
                .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                .sum()
        ));
        assert_eq!(
            max_f32(&x),
            x.iter().copied().fold(f32::NEG_INFINITY, f32::max)
        );
        assert_eq!(max_f32(&[]), f32::NEG_INFINITY);
        assert_eq!(sum_f32(&[]), 0.0);
    }
}
