//! Verification in pieces: outputs of a billion elements are compared with their f64 reference
//! chunk by chunk on every core (never a whole f64 copy in memory), and the chunks' figures are
//! merged into one [`Accuracy`] exactly as one `compare_outputs` over everything would give.

use apex_plugin_api::{Accuracy, Tolerance, compare_outputs};
use rayon::prelude::*;

/// Rows per verification chunk: about `CHUNK_ELEMENTS` elements.
const CHUNK_ELEMENTS: usize = 1 << 16;

/// The figures of `a` and `b` together.
pub fn merge(a: Accuracy, b: Accuracy) -> Accuracy {
    let n = a.elements + b.elements;
    if n == 0 {
        return a;
    }
    let sq = |x: &Accuracy| x.rmse * x.rmse * x.elements as f64;
    let mismatches = |x: &Accuracy| (x.mismatch_ratio * x.elements as f64).round();
    Accuracy {
        elements: n,
        rmse: ((sq(&a) + sq(&b)) / n as f64).sqrt(),
        max_abs_error: a.max_abs_error.max(b.max_abs_error),
        max_rel_error: a.max_rel_error.max(b.max_rel_error),
        mismatch_ratio: (mismatches(&a) + mismatches(&b)) / n as f64,
        non_finite: a.non_finite + b.non_finite,
    }
}

/// No elements.
pub const EMPTY: Accuracy = Accuracy {
    elements: 0,
    rmse: 0.0,
    max_abs_error: 0.0,
    max_rel_error: 0.0,
    mismatch_ratio: 0.0,
    non_finite: 0,
};

/// Compares `rows` rows of `cols` elements: `row(r, out, reference)` appends row `r`'s output
/// and reference (both as f64) to the two buffers. Runs on every core, in row chunks.
pub fn compare_rows(
    rows: usize,
    cols: usize,
    tolerance: &Tolerance,
    row: impl Fn(usize, &mut Vec<f64>, &mut Vec<f64>) + Sync,
) -> Accuracy {
    let per_chunk = (CHUNK_ELEMENTS / cols.max(1)).max(1);
    let chunks = rows.div_ceil(per_chunk);
    let parts: Vec<Accuracy> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (mut out, mut reference) = (Vec::new(), Vec::new());
            for r in c * per_chunk..((c + 1) * per_chunk).min(rows) {
                row(r, &mut out, &mut reference);
            }
            compare_outputs(&out, &reference, tolerance)
        })
        .collect();
    parts.into_iter().fold(EMPTY, merge)
}

/// A scalar loss compared relative to `max(1, |reference|)`: a sum over 10^8 elements is large,
/// and the tolerances are meant for values of order one.
pub fn compare_scalar(output: f32, reference: f64, tolerance: &Tolerance) -> Accuracy {
    let scale = reference.abs().max(1.0);
    let scale = if scale.is_finite() { scale } else { 1.0 };
    compare_outputs(
        &[f64::from(output) / scale],
        &[reference / scale],
        tolerance,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_chunks_equal_one_comparison() {
        let tol = Tolerance {
            atol: 1e-3,
            rtol: 0.0,
            rmse: 1.0,
            max_mismatch_ratio: 1.0,
        };
        let out: Vec<f64> = (0..1000)
            .map(|i| i as f64 + if i % 7 == 0 { 0.01 } else { 0.0 })
            .collect();
        let reference: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        let whole = compare_outputs(&out, &reference, &tol);
        let parts = compare_rows(100, 10, &tol, |r, o, re| {
            o.extend_from_slice(&out[r * 10..r * 10 + 10]);
            re.extend_from_slice(&reference[r * 10..r * 10 + 10]);
        });
        assert_eq!(parts.elements, whole.elements);
        assert!((parts.rmse - whole.rmse).abs() < 1e-12);
        assert_eq!(parts.mismatch_ratio, whole.mismatch_ratio);
        assert_eq!(parts.max_abs_error, whole.max_abs_error);
    }

    #[test]
    fn scalars_are_relative_and_nan_matches_nan() {
        let tol = Tolerance::default_for(apex_plugin_api::Precision::Fp32);
        assert!(compare_scalar(1.0e8, 1.00000001e8, &tol).within(&tol));
        assert!(!compare_scalar(1.01e8, 1.0e8, &tol).within(&tol));
        assert!(compare_scalar(f32::NAN, f64::NAN, &tol).within(&tol));
        assert!(!compare_scalar(f32::INFINITY, f64::NAN, &tol).within(&tol));
        assert!(!compare_scalar(f32::NAN, 2.0, &tol).within(&tol));
    }
}
