//! Quantiles by linear interpolation between order statistics (Hyndman & Fan type 7, the default
//! of R and NumPy). The seeds' floor index (`sorted[int(0.95*(n-1))]`) is biased low; this is not.

/// The type-7 quantile of ascending `sorted` at `q` (clamped to `[0, 1]`).
///
/// With `h = (n - 1) q`, the result is `x[floor h] + (h - floor h) (x[ceil h] - x[floor h])`,
/// computed as a convex combination clamped to the two order statistics so rounding can never
/// leave them. At `q = 0.5` it is the median exactly: `0.5 a + 0.5 b` rounds like `(a + b) / 2`.
///
/// # Panics
/// If `sorted` is empty; [`super::Sample`] rules that out.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of an empty sample");
    let q = q.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let (a, b) = (sorted[lo], sorted[hi]);
    if lo == hi || a == b {
        return a;
    }
    let f = h - lo as f64;
    ((1.0 - f) * a + f * b).clamp(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [0, 25, 50, 90, 95, 100]) with the default method.
        let x = [1.0, 2.0, 3.0, 4.0, 10.0];
        let want = [1.0, 2.0, 3.0, 7.6, 8.8, 10.0];
        for (q, w) in [0.0, 0.25, 0.5, 0.9, 0.95, 1.0].iter().zip(want) {
            assert!((quantile_sorted(&x, *q) - w).abs() < 1e-12, "q={q}");
        }
    }

    #[test]
    fn p95_is_not_the_floor_index() {
        // The seed's floor index would give x[13] = 14 for n = 15; type 7 interpolates.
        let x: Vec<f64> = (1..=15).map(f64::from).collect();
        assert!((quantile_sorted(&x, 0.95) - 14.3).abs() < 1e-12);
    }

    /// Hyndman–Fan's own formulation of type 7 (1-based, `m = 1 - p`), written independently.
    fn hyndman_fan_type7(sorted: &[f64], p: f64) -> f64 {
        let n = sorted.len() as f64;
        let np_m = n * p + (1.0 - p);
        let j = np_m.floor();
        let g = np_m - j;
        let j = j as usize; // 1-based
        let xj = sorted[j.clamp(1, sorted.len()) - 1];
        let xj1 = sorted[(j + 1).clamp(1, sorted.len()) - 1];
        (1.0 - g) * xj + g * xj1
    }

    proptest! {
        #[test]
        fn agrees_with_independent_formula(
            mut xs in prop::collection::vec(0.001f64..1000.0, 1..200),
            p in 0.0f64..=1.0,
        ) {
            xs.sort_by(f64::total_cmp);
            let a = quantile_sorted(&xs, p);
            let b = hyndman_fan_type7(&xs, p);
            prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        }

        #[test]
        fn p50_is_the_textbook_median(mut xs in prop::collection::vec(0.001f64..1000.0, 1..200)) {
            xs.sort_by(f64::total_cmp);
            let n = xs.len();
            let median = if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 };
            prop_assert_eq!(quantile_sorted(&xs, 0.5), median);
        }

        #[test]
        fn monotone_in_q(mut xs in prop::collection::vec(-1e6f64..1e6, 1..100), a in 0.0f64..=1.0, b in 0.0f64..=1.0) {
            xs.sort_by(f64::total_cmp);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(quantile_sorted(&xs, lo) <= quantile_sorted(&xs, hi));
        }
    }
}
