//! [`change_points`]: where a metric's history steps to a new level, for the trend plots of the
//! HTML report (asv's idea: fit a piecewise-constant model, asv `step_detect.py`).
//!
//! Method: optimal partitioning by dynamic programming over every split, minimizing the sum of
//! absolute deviations from each segment's median (an L1 fit, robust to a single outlier) plus
//! a penalty per segment. The penalty is `PENALTY_FACTOR · σ̂ · ln(n)`, where `σ̂` is the noise
//! scale `1.4826 · median |successive difference|` divided by √2 (a level shift moves one
//! difference only, so it barely moves σ̂). Segments are at least `MIN_SEGMENT` points long,
//! as asv's `min_size = 2`. O(n²) in the number of runs, which a history folder keeps small.

/// Points a segment needs at least.
pub const MIN_SEGMENT: usize = 2;
/// The penalty per segment in units of `σ̂ · ln(n)`.
pub const PENALTY_FACTOR: f64 = 3.0;

/// The indices at which a new level starts (each > 0), in order. Fewer than `2 · MIN_SEGMENT`
/// values, or values that never vary, have none.
pub fn change_points(values: &[f64]) -> Vec<usize> {
    let n = values.len();
    if n < 2 * MIN_SEGMENT || values.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let sigma = noise_scale(values);
    let scale_floor = 1e-9 * values.iter().map(|v| v.abs()).fold(0.0, f64::max);
    let penalty = PENALTY_FACTOR * sigma.max(scale_floor).max(f64::MIN_POSITIVE) * (n as f64).ln();
    // best[j]: the least cost of values[..j]; start[j]: where its last segment starts.
    let mut best = vec![f64::INFINITY; n + 1];
    let mut start = vec![0usize; n + 1];
    best[0] = -penalty;
    for j in MIN_SEGMENT..=n {
        for i in 0..=j - MIN_SEGMENT {
            if !best[i].is_finite() {
                continue;
            }
            let cost = best[i] + l1_cost(&values[i..j]) + penalty;
            if cost < best[j] {
                best[j] = cost;
                start[j] = i;
            }
        }
    }
    let mut points = Vec::new();
    let mut j = n;
    while j > 0 {
        let i = start[j];
        if i > 0 {
            points.push(i);
        }
        j = i;
    }
    points.reverse();
    points
}

/// The sum of absolute deviations of `segment` from its median.
fn l1_cost(segment: &[f64]) -> f64 {
    let mut sorted = segment.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = super::quantile_sorted(&sorted, 0.5);
    segment.iter().map(|v| (v - median).abs()).sum()
}

/// `1.4826 · median |successive difference| / √2`: the noise of one point, robust to level
/// shifts.
fn noise_scale(values: &[f64]) -> f64 {
    let mut diffs: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    diffs.sort_by(f64::total_cmp);
    1.4826 * super::quantile_sorted(&diffs, 0.5) / std::f64::consts::SQRT_2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values at `level` with uniform ±1 % noise from a seeded xorshift generator.
    fn noisy(n: usize, level: f64, seed: u64) -> Vec<f64> {
        let mut x = 0x9E37_79B9_7F4A_7C15 ^ (seed + 1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                level * (1.0 + 0.02 * (u - 0.5))
            })
            .collect()
    }

    #[test]
    fn a_flat_noisy_history_has_no_change_point() {
        assert_eq!(change_points(&noisy(30, 1.0, 0)), Vec::<usize>::new());
    }

    #[test]
    fn a_twenty_five_percent_step_is_found_where_it_happened() {
        let mut v = noisy(12, 1.0, 0);
        v.extend(noisy(10, 1.25, 3));
        assert_eq!(change_points(&v), vec![12]);
    }

    #[test]
    fn a_single_outlier_is_not_a_level_shift() {
        let mut v = noisy(20, 1.0, 0);
        v[9] = 1.6;
        assert_eq!(change_points(&v), Vec::<usize>::new());
    }

    #[test]
    fn two_steps_are_two_change_points() {
        let mut v = noisy(8, 1.0, 0);
        v.extend(noisy(8, 1.3, 1));
        v.extend(noisy(8, 0.9, 2));
        assert_eq!(change_points(&v), vec![8, 16]);
    }

    #[test]
    fn short_or_constant_histories_have_none() {
        assert!(change_points(&[1.0, 2.0, 3.0]).is_empty());
        assert!(change_points(&[5.0; 10]).is_empty());
    }
}
