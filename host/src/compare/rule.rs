//! The seeds' gate rule, exactly: `allowed_max = value_ms * (1 + ratio) + abs_ms`, and a metric
//! fails when `current_ms > allowed_max` (equality passes).

/// `value_ms * (1 + ratio) + abs_ms`, evaluated in that order (as the seeds' Python does) so
/// the limit is bit-identical to theirs.
pub fn allowed_max(value_ms: f64, ratio: f64, abs_ms: f64) -> f64 {
    value_ms * (1.0 + ratio) + abs_ms
}

/// Whether `current_ms` breaks the limit. Equality passes; NaN never passes.
pub fn exceeds(current_ms: f64, allowed_max_ms: f64) -> bool {
    current_ms.is_nan() || current_ms > allowed_max_ms
}

/// `current / baseline - 1`, or `None` when the baseline is not positive (the seeds' `null`).
pub fn regression_ratio(current_ms: f64, baseline_ms: f64) -> Option<f64> {
    (baseline_ms > 0.0).then(|| current_ms / baseline_ms - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_passes_one_ulp_above_fails() {
        let limit = allowed_max(0.24996, 0.75, 2.0);
        assert!(!exceeds(limit, limit));
        assert!(exceeds(limit.next_up(), limit));
        assert!(!exceeds(limit.next_down(), limit));
        assert!(exceeds(f64::NAN, limit));
    }

    #[test]
    fn seed_example() {
        // seeds/001: allowed_max_ms 2.4374 for value 0.24996, ratio 0.75, abs 2.0.
        assert!((allowed_max(0.24996, 0.75, 2.0) - 2.43743).abs() < 1e-12);
        assert!((regression_ratio(0.26683, 0.24996).unwrap() - 0.067_490_798).abs() < 1e-6);
        assert_eq!(regression_ratio(1.0, 0.0), None);
    }
}
