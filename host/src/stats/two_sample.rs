//! Two-sample evidence for the gate's noise-aware verdicts: a bootstrap interval of the ratio of
//! a quantile (current / baseline) and the Mann–Whitney U test of a location shift.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::Sample;
use super::bootstrap::{
    BootstrapSettings, ConfidenceInterval, draw_many, percentile_interval, quantile_unsorted,
};

/// Percentile-bootstrap interval of `quantile_q(current) / quantile_q(baseline)`.
///
/// Each resample draws both groups independently (`n` from each, with replacement) from one
/// seeded generator, baseline first. Resamples whose baseline quantile is not positive are
/// dropped; `None` when the baseline's own quantile is not positive (a ratio is meaningless).
/// The interval is widened to contain the point ratio, as in [`super::bootstrap::quantile_ci`].
pub fn ratio_of_quantiles_ci(
    baseline: &Sample,
    current: &Sample,
    q: f64,
    settings: &BootstrapSettings,
) -> Option<(f64, ConfidenceInterval)> {
    let base_point = baseline.quantile(q);
    if base_point <= 0.0 {
        return None;
    }
    let point = current.quantile(q) / base_point;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let mut bbuf = vec![0.0; baseline.n()];
    let mut cbuf = vec![0.0; current.n()];
    let mut stat = |b: &mut [f64]| quantile_unsorted(b, q);
    let mut ratios = Vec::with_capacity(settings.resamples);
    for _ in 0..settings.resamples.max(1) {
        let b = draw_many(baseline, 1, &mut rng, &mut bbuf, &mut stat)[0];
        let c = draw_many(current, 1, &mut rng, &mut cbuf, &mut stat)[0];
        if b > 0.0 {
            ratios.push(c / b);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    Some((
        point,
        percentile_interval(ratios, point, settings.confidence_level),
    ))
}

/// [`ratio_of_quantiles_ci`] for samples taken in several processes: each resample first draws
/// processes with replacement, then samples with replacement inside each drawn process, and pools
/// them. When processes disagree (a CPU kernel whose speed depends on where a process's buffers
/// landed), the interval is as wide as that disagreement, which the flat bootstrap hides.
/// `None` when either side has no process or the baseline's pooled quantile is not positive.
pub fn hierarchical_ratio_ci(
    baseline: &[&[f64]],
    current: &[&[f64]],
    q: f64,
    settings: &BootstrapSettings,
) -> Option<(f64, ConfidenceInterval)> {
    let pooled =
        |groups: &[&[f64]]| -> Vec<f64> { groups.iter().flat_map(|g| g.iter().copied()).collect() };
    let (mut base_all, mut cur_all) = (pooled(baseline), pooled(current));
    if base_all.is_empty() || cur_all.is_empty() {
        return None;
    }
    let base_point = quantile_unsorted(&mut base_all, q);
    if base_point <= 0.0 {
        return None;
    }
    let point = quantile_unsorted(&mut cur_all, q) / base_point;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(settings.seed);
    let mut buf = Vec::new();
    let resample = |groups: &[&[f64]], rng: &mut Xoshiro256PlusPlus, buf: &mut Vec<f64>| {
        buf.clear();
        for _ in 0..groups.len() {
            let g = groups[rng.random_range(0..groups.len() as u64) as usize];
            for _ in 0..g.len() {
                buf.push(g[rng.random_range(0..g.len() as u64) as usize]);
            }
        }
        quantile_unsorted(buf, q)
    };
    let mut ratios = Vec::with_capacity(settings.resamples);
    for _ in 0..settings.resamples.max(1) {
        let b = resample(baseline, &mut rng, &mut buf);
        let c = resample(current, &mut rng, &mut buf);
        if b > 0.0 {
            ratios.push(c / b);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    Some((
        point,
        percentile_interval(ratios, point, settings.confidence_level),
    ))
}

/// The Mann–Whitney U test of `current` against `baseline`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the current sample: the number of (baseline, current) pairs where current is larger,
    /// ties counting one half.
    pub u: f64,
    /// Standardized U with tie and continuity corrections; positive when current is slower.
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p_two_sided: f64,
}

/// Mann–Whitney U with mid-ranks for ties, the tie-corrected variance
/// `n1 n2 / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))`, a 0.5 continuity correction and the
/// normal approximation (good for `n1, n2 >= 8`, the protocol's minimum is larger). When every
/// value is tied the variance is 0 and the test reports `z = 0`, `p = 1`.
pub fn mann_whitney_u(baseline: &Sample, current: &Sample) -> MannWhitney {
    let (n1, n2) = (baseline.n() as f64, current.n() as f64);
    let mut all: Vec<(f64, bool)> = baseline
        .sorted()
        .iter()
        .map(|&x| (x, false))
        .chain(current.sorted().iter().map(|&x| (x, true)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let big_n = all.len() as f64;
    let mut rank_sum_current = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks are 1-based; the tied block i..=j shares the mean of its ranks.
        let mid_rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_current += mid_rank * all[i..=j].iter().filter(|e| e.1).count() as f64;
        i = j + 1;
    }
    let u = rank_sum_current - n2 * (n2 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    if var <= 0.0 {
        return MannWhitney {
            u,
            z: 0.0,
            p_two_sided: 1.0,
        };
    }
    let diff = u - mean;
    let corrected = (diff.abs() - 0.5).max(0.0).copysign(diff);
    let z = corrected / var.sqrt();
    MannWhitney {
        u,
        z,
        p_two_sided: (2.0 * normal_sf(z.abs())).min(1.0),
    }
}

/// Upper tail of the standard normal, `P(Z > z) = erfc(z / sqrt 2) / 2`.
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Complementary error function, Numerical Recipes' Chebyshev fit (`erfcc`), fractional error
/// below 1.2e-7 everywhere: ample for a p-value compared with 0.05.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(xs: &[f64]) -> Sample {
        Sample::new(xs).unwrap()
    }

    #[test]
    fn erfc_reference_values() {
        // Values from the closed forms / standard tables.
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((normal_sf(1.959_963_984_540_054) - 0.025).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_792_949_715).abs() < 1e-6);
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        // R: wilcox.test(1:5, 6:10, exact = FALSE, correct = TRUE) gives W = 0, p = 0.01219;
        // W is the first sample's U, ours is the second's, n1 n2 - 0 = 25.
        let r = mann_whitney_u(&s(&[1., 2., 3., 4., 5.]), &s(&[6., 7., 8., 9., 10.]));
        assert_eq!(r.u, 25.0);
        assert!((r.p_two_sided - 0.012_185_78).abs() < 1e-6, "{r:?}");
        assert!(r.z > 0.0);
        // With ties (an independent Python evaluation of the same formula): U1 = 6, so ours is
        // 19, z = 1.284895, p = 0.198829.
        let r = mann_whitney_u(&s(&[1., 2., 2., 3., 4.]), &s(&[2., 3., 3., 5., 6.]));
        assert_eq!(r.u, 19.0);
        assert!((r.z - 1.284_895_1).abs() < 1e-6, "{r:?}");
        assert!((r.p_two_sided - 0.198_828_9).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn all_tied_is_not_significant() {
        let r = mann_whitney_u(&s(&[1.0; 6]), &s(&[1.0; 6]));
        assert_eq!(r.p_two_sided, 1.0);
    }

    #[test]
    fn ratio_ci_brackets_a_known_shift() {
        let base: Vec<f64> = (0..200).map(|i| 1.0 + f64::from(i % 20) / 100.0).collect();
        let cur: Vec<f64> = base.iter().map(|x| x * 1.5).collect();
        let (r, ci) =
            ratio_of_quantiles_ci(&s(&base), &s(&cur), 0.5, &BootstrapSettings::with_seed(5))
                .unwrap();
        assert!((r - 1.5).abs() < 1e-12);
        assert!(ci.low > 1.3 && ci.high < 1.7 && ci.contains(1.5), "{ci:?}");
        assert!(
            ratio_of_quantiles_ci(
                &s(&[0.0]),
                &s(&[1.0]),
                0.5,
                &BootstrapSettings::with_seed(1)
            )
            .is_none()
        );
    }
}

#[cfg(test)]
mod hierarchical_tests {
    use super::*;

    fn settings() -> BootstrapSettings {
        BootstrapSettings::with_seed(9)
    }

    #[test]
    fn agreeing_processes_give_a_narrow_interval_around_the_shift() {
        let base: Vec<Vec<f64>> = (0..3)
            .map(|p| {
                (0..30)
                    .map(|i| 1.0 + 0.001 * ((i * 7 + p) % 11) as f64)
                    .collect()
            })
            .collect();
        let cur: Vec<Vec<f64>> = base
            .iter()
            .map(|g| g.iter().map(|x| x * 1.25).collect())
            .collect();
        let (b, c): (Vec<&[f64]>, Vec<&[f64]>) = (
            base.iter().map(|v| &v[..]).collect(),
            cur.iter().map(|v| &v[..]).collect(),
        );
        let (ratio, ci) = hierarchical_ratio_ci(&b, &c, 0.5, &settings()).unwrap();
        assert!((ratio - 1.25).abs() < 1e-9);
        assert!(ci.low > 1.2 && ci.high < 1.3, "{ci:?}");
    }

    #[test]
    fn a_process_in_another_mode_widens_the_interval_past_one() {
        // Same code, but one process of the current run landed in a layout twice as slow.
        let fast: Vec<f64> = (0..30).map(|i| 1.0 + 0.001 * (i % 7) as f64).collect();
        let slow: Vec<f64> = fast.iter().map(|x| x * 2.0).collect();
        let base = [&fast[..], &fast[..], &fast[..]];
        let cur = [&fast[..], &fast[..], &slow[..]];
        let (_, ci) = hierarchical_ratio_ci(&base, &cur, 0.95, &settings()).unwrap();
        assert!(ci.low <= 1.0 + 1e-9 && ci.high >= 1.9, "{ci:?}");
    }
}
