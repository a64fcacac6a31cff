//! Accuracy figures and the one comparison routine every plugin uses to produce them.

use abi_stable::StableAbi;

use crate::Tolerance;

/// How far an output is from the reference. `passed` is decided by [`compare_outputs`] against
/// the tolerance the host passed to `verify`; the host re-checks it against the same tolerance.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    pub elements: u64,
    pub rmse: f64,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Fraction of elements with `|out - ref| > atol + rtol*|ref|` (non-finite outputs count).
    pub mismatch_ratio: f64,
    /// Outputs that are NaN or infinite where the reference is finite.
    pub non_finite: u64,
}

/// Compares `output` with `reference` element by element (both already converted to f64).
///
/// A NaN or infinite output where the reference is finite counts as a mismatch with infinite error,
/// which is how a poisoned (never written) output element is caught.
pub fn compare_outputs(output: &[f64], reference: &[f64], tol: &Tolerance) -> Accuracy {
    assert_eq!(
        output.len(),
        reference.len(),
        "output and reference lengths differ"
    );
    let mut sum_sq = 0.0f64;
    let mut max_abs = 0.0f64;
    let mut max_rel = 0.0f64;
    let mut mismatches = 0u64;
    let mut non_finite = 0u64;
    for (&o, &r) in output.iter().zip(reference) {
        if o.is_nan() && r.is_nan() {
            continue;
        }
        if !o.is_finite() && o != r {
            non_finite += 1;
            mismatches += 1;
            max_abs = f64::INFINITY;
            max_rel = f64::INFINITY;
            sum_sq = f64::INFINITY;
            continue;
        }
        let err = (o - r).abs();
        sum_sq += err * err;
        max_abs = max_abs.max(err);
        if r != 0.0 {
            max_rel = max_rel.max(err / r.abs());
        } else if err > 0.0 {
            max_rel = f64::INFINITY;
        }
        if err > tol.atol + tol.rtol * r.abs() {
            mismatches += 1;
        }
    }
    let n = output.len() as u64;
    Accuracy {
        elements: n,
        rmse: if n == 0 {
            0.0
        } else {
            (sum_sq / n as f64).sqrt()
        },
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        mismatch_ratio: if n == 0 {
            0.0
        } else {
            mismatches as f64 / n as f64
        },
        non_finite,
    }
}

impl Accuracy {
    /// Whether these figures are within `tol`.
    pub fn within(&self, tol: &Tolerance) -> bool {
        self.non_finite == 0
            && self.rmse <= tol.rmse
            && self.mismatch_ratio <= tol.max_mismatch_ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_match_passes_exact_tolerance() {
        let a = compare_outputs(&[1.0, 2.0], &[1.0, 2.0], &Tolerance::EXACT);
        assert_eq!(a.rmse, 0.0);
        assert!(a.within(&Tolerance::EXACT));
    }

    #[test]
    fn poisoned_output_is_a_mismatch() {
        let tol = Tolerance {
            atol: 1.0,
            rtol: 1.0,
            rmse: 1.0,
            max_mismatch_ratio: 0.5,
        };
        let a = compare_outputs(&[f64::NAN, 2.0], &[1.0, 2.0], &tol);
        assert_eq!(a.non_finite, 1);
        assert_eq!(a.mismatch_ratio, 0.5);
        assert!(!a.within(&tol));
    }

    #[test]
    fn small_error_counts_against_atol_and_rtol() {
        let tol = Tolerance {
            atol: 0.0,
            rtol: 0.01,
            rmse: 1.0,
            max_mismatch_ratio: 0.0,
        };
        let a = compare_outputs(&[100.5, 1.02], &[100.0, 1.0], &tol);
        assert_eq!(a.mismatch_ratio, 0.5);
        assert!((a.max_abs_error - 0.5).abs() < 1e-12);
        assert!((a.max_rel_error - 0.02).abs() < 1e-12);
    }
}
