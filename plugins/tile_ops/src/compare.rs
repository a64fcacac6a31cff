//! [`compare_chunked`]: a case's outputs against their f64 reference, in chunks on rayon's pool.
//!
//! Every element is still compared, by `apex_plugin_api::compare_outputs` itself, chunk by chunk;
//! only the widening to f64 and the pass over the data are split, so a large case (the large
//! profile's 134 M-element maps) neither holds a second f64 copy of its outputs nor verifies on
//! one core. The chunks' figures merge into what one pass defines: counts add, maxima take the
//! maximum, and the squared-error sum is rebuilt from each chunk's RMSE (equal up to rounding).

use apex_plugin_api::{Accuracy, Tolerance, compare_outputs};
use rayon::prelude::*;

use crate::Element;

/// Elements per chunk: large enough that a chunk's work dwarfs scheduling it, small enough that a
/// chunk's f64 copy stays in cache-friendly territory (8 MiB).
const CHUNK: usize = 1 << 20;

/// Compares `outputs` (in output order) with `reference` (the outputs' f64 reference,
/// concatenated in the same order).
pub fn compare_chunked<T: Element>(
    outputs: &[Vec<T>],
    reference: &[f64],
    tol: &Tolerance,
) -> Accuracy {
    let total: usize = outputs.iter().map(Vec::len).sum();
    assert_eq!(
        total,
        reference.len(),
        "output and reference lengths differ"
    );
    // (output index, first element, length, offset into the reference)
    let mut pieces = Vec::new();
    let mut offset = 0;
    for (o, out) in outputs.iter().enumerate() {
        for start in (0..out.len()).step_by(CHUNK) {
            let len = CHUNK.min(out.len() - start);
            pieces.push((o, start, len, offset + start));
        }
        offset += out.len();
    }
    let parts: Vec<Accuracy> = pieces
        .par_iter()
        .map(|&(o, start, len, at)| {
            let widened: Vec<f64> = outputs[o][start..start + len]
                .iter()
                .map(|v| v.to_f64())
                .collect();
            compare_outputs(&widened, &reference[at..at + len], tol)
        })
        .collect();
    merge(&parts)
}

/// One pass's figures from the figures of its consecutive parts.
fn merge(parts: &[Accuracy]) -> Accuracy {
    let mut elements = 0u64;
    let mut sum_sq = 0.0f64;
    let mut mismatches = 0u64;
    let mut non_finite = 0u64;
    let mut max_abs = 0.0f64;
    let mut max_rel = 0.0f64;
    for p in parts {
        elements += p.elements;
        sum_sq += p.rmse * p.rmse * p.elements as f64;
        // Exact: the ratio is a count divided by a count below 2^53.
        mismatches += (p.mismatch_ratio * p.elements as f64).round() as u64;
        non_finite += p.non_finite;
        max_abs = max_abs.max(p.max_abs_error);
        max_rel = max_rel.max(p.max_rel_error);
    }
    let n = elements as f64;
    Accuracy {
        elements,
        rmse: if elements == 0 {
            0.0
        } else {
            (sum_sq / n).sqrt()
        },
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        mismatch_ratio: if elements == 0 {
            0.0
        } else {
            mismatches as f64 / n
        },
        non_finite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selection::{Rng, uniform};

    /// Outputs near a random reference with poisoned, infinite and wrong elements scattered over
    /// several chunks and two outputs.
    fn case(seed: u64) -> (Vec<Vec<f32>>, Vec<f64>) {
        let lens = [CHUNK * 2 + 12_345, CHUNK / 3];
        let mut rng = Rng::new(seed, 9);
        let mut outputs = Vec::new();
        let mut reference = Vec::new();
        for (k, &n) in lens.iter().enumerate() {
            let r: Vec<f32> = uniform(n, -3.0, 3.0, &mut Rng::new(seed, k as u64));
            let mut o = r.clone();
            for v in o.iter_mut() {
                match rng.below(50_000) {
                    0 => *v = f32::NAN,
                    1 => *v = f32::INFINITY,
                    2..=40 => *v += 0.5,
                    _ => *v += 1e-4,
                }
            }
            reference.extend(r.iter().map(|&x| f64::from(x)));
            outputs.push(o);
        }
        (outputs, reference)
    }

    #[test]
    fn chunked_figures_equal_one_pass() {
        let tol = Tolerance {
            atol: 1e-3,
            rtol: 1e-3,
            rmse: 1.0,
            max_mismatch_ratio: 0.5,
        };
        for seed in [1, 2, 3] {
            let (outputs, reference) = case(seed);
            let flat: Vec<f64> = outputs.iter().flatten().map(|&v| f64::from(v)).collect();
            let one = compare_outputs(&flat, &reference, &tol);
            let chunked = compare_chunked(&outputs, &reference, &tol);
            assert!(one.non_finite > 0 && one.mismatch_ratio > 0.0, "{one:?}");
            assert_eq!(chunked.elements, one.elements);
            assert_eq!(chunked.non_finite, one.non_finite);
            assert_eq!(chunked.mismatch_ratio, one.mismatch_ratio);
            assert_eq!(chunked.max_abs_error, one.max_abs_error);
            assert_eq!(chunked.max_rel_error, one.max_rel_error);
            assert_eq!(chunked.rmse, one.rmse, "infinite with a non-finite output");
            assert_eq!(chunked.within(&tol), one.within(&tol));
        }
    }

    #[test]
    fn finite_errors_give_the_same_rmse_up_to_rounding() {
        let tol = Tolerance::default_for(apex_plugin_api::Precision::Fp32);
        let (mut outputs, reference) = case(4);
        for o in &mut outputs {
            for v in o.iter_mut().filter(|v| !v.is_finite()) {
                *v = 0.0;
            }
        }
        let flat: Vec<f64> = outputs.iter().flatten().map(|&v| f64::from(v)).collect();
        let one = compare_outputs(&flat, &reference, &tol);
        let chunked = compare_chunked(&outputs, &reference, &tol);
        assert_eq!(chunked.mismatch_ratio, one.mismatch_ratio);
        // The one-pass sum of 2.4 M squares carries up to n * eps (about 3e-10) of rounding; the
        // chunked sum less.
        assert!(
            ((chunked.rmse - one.rmse) / one.rmse).abs() < 1e-9,
            "{chunked:?} {one:?}"
        );
        assert_eq!(chunked.within(&tol), one.within(&tol));
    }
}
