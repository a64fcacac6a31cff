//! The charts of one case: the distribution of its samples (a violin from a kernel density
//! estimate, with the Tukey fences), its iteration times in the order they were taken, and its
//! timing modes side by side (CUDA: cold, launch and batch).

use plotters::prelude::*;

use super::charts::{ChartError, FAMILY, color, msg, padded_range, svg};
use crate::model::{CaseResult, ModeTiming};
use crate::stats::{Sample, density, quantile_sorted};

const WIDTH: u32 = 720;

/// The most samples a violin's rug draws: past this, evenly spaced order statistics (the minimum
/// and maximum always among them). A 1-px dot per sample of a few thousand samples added
/// megabytes to a report (27 MB for 97 CUDA cases) and nothing the density does not show.
const RUG_POINTS: usize = 300;

/// At most `max` (≥ 2) values of `sorted`, evenly spaced by rank, first and last included.
fn rug(sorted: &[f64], max: usize) -> Vec<f64> {
    let n = sorted.len();
    if n <= max {
        return sorted.to_vec();
    }
    (0..max).map(|i| sorted[i * (n - 1) / (max - 1)]).collect()
}

/// The violin of every mode that kept its samples, one row per mode, with the median, the
/// mild (1.5 IQR) and severe (3 IQR) Tukey fences of each and a rug of the samples (at most
/// [`RUG_POINTS`] of them). `None` when no mode has samples.
pub fn distribution(case: &CaseResult) -> Result<Option<String>, ChartError> {
    let modes: Vec<(&String, Sample)> = case
        .timing
        .iter()
        .filter_map(|(name, m)| Some((name, Sample::new(m.samples_ms.as_ref()?).ok()?)))
        .collect();
    if modes.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = padded_range(modes.iter().flat_map(|(_, s)| [s.min(), s.max()]), 0.05);
    let rows = modes.len();
    let height = 70 + 90 * rows as u32;
    svg("distribution", (WIDTH, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .caption(
                "sample distribution (ms per call): median black, Tukey fences 1.5 IQR orange, 3 IQR red",
                (FAMILY, 13),
            )
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, -0.5..(rows as f64 - 0.5))
            .map_err(msg)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .disable_y_mesh()
            .y_labels(rows)
            .y_label_formatter(&|y| {
                let i = y.round() as usize;
                modes.get(i).map_or(String::new(), |(n, _)| n.to_string())
            })
            .x_desc("ms")
            .label_style((FAMILY, 11))
            .draw()
            .map_err(msg)?;
        for (row, (_, sample)) in modes.iter().enumerate() {
            let y = row as f64;
            let curve = density(sample, lo, hi, 160);
            let peak = curve.iter().map(|p| p.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
            let half = |d: f64| 0.42 * d / peak;
            let mut outline: Vec<(f64, f64)> = curve.iter().map(|&(x, d)| (x, y + half(d))).collect();
            outline.extend(curve.iter().rev().map(|&(x, d)| (x, y - half(d))));
            let c = color(row);
            chart
                .draw_series(std::iter::once(Polygon::new(outline, c.mix(0.35).filled())))
                .map_err(msg)?;
            let (low_severe, low_mild, high_mild, high_severe) = tukey_fences(sample.sorted());
            let mild = RGBColor(230, 159, 0);
            let fences = [
                (low_severe, RED),
                (low_mild, mild),
                (high_mild, mild),
                (high_severe, RED),
            ];
            for (x, fence_color) in fences.into_iter().filter(|(x, _)| *x > lo && *x < hi) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, y - 0.45), (x, y + 0.45)],
                        fence_color.stroke_width(1),
                    )))
                    .map_err(msg)?;
            }
            let median = sample.median();
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(median, y - 0.45), (median, y + 0.45)],
                    BLACK.stroke_width(2),
                )))
                .map_err(msg)?;
            chart
                .draw_series(
                    rug(sample.sorted(), RUG_POINTS)
                        .into_iter()
                        .map(|v| Circle::new((v, y), 1, c.filled())),
                )
                .map_err(msg)?;
        }
        Ok(())
    })
    .map(Some)
}

/// Every saved sample of each mode in the order it was taken (a drift or a warm-up tail shows as
/// a slope), one line per mode. `None` when no mode has samples.
pub fn iteration_times(case: &CaseResult) -> Result<Option<String>, ChartError> {
    let modes: Vec<(&String, &Vec<f64>)> = case
        .timing
        .iter()
        .filter_map(|(name, m)| Some((name, m.samples_ms.as_ref()?)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    if modes.is_empty() {
        return Ok(None);
    }
    let longest = modes.iter().map(|(_, s)| s.len()).max().unwrap_or(1);
    let (lo, hi) = padded_range(modes.iter().flat_map(|(_, s)| s.iter().copied()), 0.05);
    svg("iteration times", (WIDTH, 260), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .caption("iteration times, in the order taken", (FAMILY, 14))
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..longest as f64, lo..hi)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("sample")
            .y_desc("ms per call")
            .label_style((FAMILY, 11))
            .draw()
            .map_err(msg)?;
        for (i, (name, samples)) in modes.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(
                    samples.iter().enumerate().map(|(k, &v)| (k as f64, v)),
                    c.stroke_width(1),
                ))
                .map_err(msg)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c));
        }
        chart
            .configure_series_labels()
            .label_font((FAMILY, 11))
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(msg)
    })
    .map(Some)
}

/// The timing modes side by side from their summaries (always available): per mode a bar from
/// min to p99, the median's confidence interval as a thick bar, the median as a dot.
pub fn modes(case: &CaseResult) -> Result<Option<String>, ChartError> {
    let modes: Vec<(&String, &ModeTiming)> = case.timing.iter().collect();
    if modes.len() < 2 {
        return Ok(None);
    }
    let (lo, hi) = padded_range(
        modes
            .iter()
            .flat_map(|(_, m)| [m.stats.min_ms, m.stats.p99_ms]),
        0.08,
    );
    let rows = modes.len();
    svg("timing modes", (WIDTH, 60 + 50 * rows as u32), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .caption("timing modes: min–p99, median with its CI", (FAMILY, 14))
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, -0.5..(rows as f64 - 0.5))
            .map_err(msg)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .disable_y_mesh()
            .y_labels(rows)
            .y_label_formatter(&|y| {
                let i = y.round() as usize;
                modes.get(i).map_or(String::new(), |(n, _)| n.to_string())
            })
            .x_desc("ms per call")
            .label_style((FAMILY, 11))
            .draw()
            .map_err(msg)?;
        for (row, (_, m)) in modes.iter().enumerate() {
            let y = row as f64;
            let s = &m.stats;
            let c = color(row);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(s.min_ms, y), (s.p99_ms, y)],
                    c.stroke_width(2),
                )))
                .map_err(msg)?;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [
                        (s.median_ci_low_ms, y - 0.15),
                        (s.median_ci_high_ms, y + 0.15),
                    ],
                    c.mix(0.6).filled(),
                )))
                .map_err(msg)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (s.p50_ms, y),
                    4,
                    BLACK.filled(),
                )))
                .map_err(msg)?;
        }
        Ok(())
    })
    .map(Some)
}

/// The sorted values' Tukey fences `(low severe, low mild, high mild, high severe)`.
pub fn tukey_fences(sorted: &[f64]) -> (f64, f64, f64, f64) {
    let q1 = quantile_sorted(sorted, 0.25);
    let q3 = quantile_sorted(sorted, 0.75);
    let iqr = q3 - q1;
    (
        q1 - 3.0 * iqr,
        q1 - 1.5 * iqr,
        q3 + 1.5 * iqr,
        q3 + 3.0 * iqr,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rug_keeps_every_sample_up_to_its_limit_then_spaced_ranks_with_both_ends() {
        let few: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(rug(&few, 300), few);
        let many: Vec<f64> = (0..10_000).map(f64::from).collect();
        let r = rug(&many, 300);
        assert_eq!(r.len(), 300);
        assert_eq!((r[0], r[299]), (0.0, 9999.0));
        assert!(
            r.windows(2).all(|w| w[0] < w[1]),
            "distinct ranks, in order"
        );
    }
}
