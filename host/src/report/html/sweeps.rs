//! The sweep views (seed 004's "by batch size / by sequence length / by dimension"): per kernel
//! and per numeric parameter that varies, time and throughput against that parameter, one line
//! per backend × precision × setting of the other parameters.

use plotters::prelude::*;
use std::collections::BTreeMap;

use super::charts::{ChartError, FAMILY, color, msg, padded_range, svg};
use crate::model::{CaseResult, CaseStatus, RunSummary};
use crate::report::fmt::si;
use crate::report::unit_rate;

/// Lines drawn per chart at most (the ones with the most points); the page says when more exist.
pub const MAX_LINES: usize = 8;

/// One point of a line: `(axis value, p50 ms, rate)`.
pub type Point = (f64, f64, f64);

/// One sweep: a kernel, the swept parameter and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub kernel: String,
    pub axis: String,
    /// The throughput unit of the lines (`elements_per_s`, … or `GB/s`).
    pub rate_unit: String,
    /// Label → points `(axis value, p50 ms, rate)`, sorted by axis value.
    pub lines: BTreeMap<String, Vec<Point>>,
    /// Lines left out beyond [`MAX_LINES`].
    pub dropped: usize,
}

/// Every sweep of the run's `ok` cases: a numeric parameter with at least two values along which
/// some line has at least two points.
pub fn sweeps(summary: &RunSummary) -> Vec<Sweep> {
    let mut by_kernel: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for c in summary.benchmarks.values() {
        if c.status == CaseStatus::Ok && c.p50_ms.is_some() {
            by_kernel.entry(c.key.kernel.as_str()).or_default().push(c);
        }
    }
    let mut out = Vec::new();
    for (kernel, cases) in by_kernel {
        for axis in numeric_axes(&cases) {
            if let Some(s) = sweep(kernel, &axis, &cases) {
                out.push(s);
            }
        }
    }
    out
}

/// Parameters that parse as numbers in every case and take at least two values.
fn numeric_axes(cases: &[&CaseResult]) -> Vec<String> {
    let Some(first) = cases.first() else {
        return Vec::new();
    };
    first
        .key
        .params
        .keys()
        .filter(|name| {
            let values: Option<Vec<f64>> = cases
                .iter()
                .map(|c| c.key.params.get(*name)?.parse::<f64>().ok())
                .collect();
            values.is_some_and(|v| v.iter().any(|x| *x != v[0]))
        })
        .cloned()
        .collect()
}

fn sweep(kernel: &str, axis: &str, cases: &[&CaseResult]) -> Option<Sweep> {
    let rate_unit = cases
        .iter()
        .find_map(|c| unit_rate(c.throughput.as_ref()?).map(|(u, _)| u.to_string()))
        .unwrap_or_else(|| "GB/s".into());
    let mut lines: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for c in cases {
        let x: f64 = c.key.params.get(axis)?.parse().ok()?;
        let others: Vec<String> = c
            .key
            .params
            .iter()
            .filter(|(k, _)| *k != axis)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let label = format!("{}/{} {}", c.key.backend, c.key.precision, others.join(","));
        let rate = c
            .throughput
            .as_ref()
            .map_or(f64::NAN, |t| unit_rate(t).map_or(t.gbps, |(_, v)| v));
        lines
            .entry(label.trim_end().to_string())
            .or_default()
            .push((x, c.p50_ms?, rate));
    }
    lines.retain(|_, pts| pts.len() >= 2);
    if lines.is_empty() {
        return None;
    }
    for pts in lines.values_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let mut ranked: Vec<(String, Vec<Point>)> = lines.into_iter().collect();
    ranked.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let dropped = ranked.len().saturating_sub(MAX_LINES);
    ranked.truncate(MAX_LINES);
    Some(Sweep {
        kernel: kernel.to_string(),
        axis: axis.to_string(),
        rate_unit,
        lines: ranked.into_iter().collect(),
        dropped,
    })
}

/// Which figure of a sweep a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Time,
    Rate,
}

/// The line chart of one figure of `sweep`, on log axes when the values span a decade or more.
pub fn chart(sweep: &Sweep, figure: Figure) -> Result<String, ChartError> {
    let pick = |p: &Point| match figure {
        Figure::Time => p.1,
        Figure::Rate => p.2,
    };
    let xs: Vec<f64> = sweep.lines.values().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = sweep
        .lines
        .values()
        .flatten()
        .map(pick)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let log_x = spans_a_decade(&xs);
    let log_y = spans_a_decade(&ys);
    let (x_lo, x_hi) = padded_range(xs.iter().copied(), 0.03);
    let (y_lo, y_hi) = padded_range(ys.iter().copied(), 0.08);
    let title = match figure {
        Figure::Time => format!("{}: p50 ms by {}", sweep.kernel, sweep.axis),
        Figure::Rate => format!("{}: {} by {}", sweep.kernel, sweep.rate_unit, sweep.axis),
    };
    let y_desc = match figure {
        Figure::Time => "p50 ms per call".to_string(),
        Figure::Rate => sweep.rate_unit.clone(),
    };
    let height = 300 + 16 * sweep.lines.len() as u32;
    svg("sweep", (720, height), |root| {
        let (plot, legend) = root.split_vertically(300);
        let x_range = if log_x {
            x_lo.max(xs.iter().copied().fold(f64::INFINITY, f64::min) * 0.8)..x_hi
        } else {
            x_lo..x_hi
        };
        let y_range = if log_y {
            ys.iter().copied().fold(f64::INFINITY, f64::min) * 0.8..y_hi * 1.1
        } else {
            y_lo.min(0.0).max(y_lo)..y_hi
        };
        draw_lines(
            &plot,
            &title,
            &y_desc,
            &sweep.axis,
            (x_range, log_x),
            (y_range, log_y),
            sweep,
            pick,
        )?;
        for (i, label) in sweep.lines.keys().enumerate() {
            let y = 4 + 16 * i as i32;
            let c = color(i);
            legend
                .draw(&PathElement::new(
                    vec![(70, y + 6), (90, y + 6)],
                    c.stroke_width(2),
                ))
                .map_err(msg)?;
            legend
                .draw(&Text::new(label.clone(), (96, y), (FAMILY, 11)))
                .map_err(msg)?;
        }
        Ok(())
    })
}

type Area<'a, 'b> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

#[expect(clippy::too_many_arguments, reason = "one chart's whole description")]
fn draw_lines(
    area: &Area<'_, '_>,
    title: &str,
    y_desc: &str,
    x_desc: &str,
    (x_range, log_x): (std::ops::Range<f64>, bool),
    (y_range, log_y): (std::ops::Range<f64>, bool),
    sweep: &Sweep,
    pick: impl Fn(&Point) -> f64,
) -> Result<(), String> {
    // Four coordinate kinds (linear/log on each axis) are four chart types in plotters.
    macro_rules! draw {
        ($x:expr, $y:expr) => {{
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .caption(title, (FAMILY, 14))
                .x_label_area_size(35)
                .y_label_area_size(70)
                .build_cartesian_2d($x, $y)
                .map_err(msg)?;
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .x_labels(8)
                .y_labels(8)
                .x_label_formatter(&|v| si(*v))
                .y_label_formatter(&|v| si(*v))
                .x_desc(x_desc)
                .y_desc(y_desc)
                .label_style((FAMILY, 11))
                .draw()
                .map_err(msg)?;
            for (i, pts) in sweep.lines.values().enumerate() {
                let c = color(i);
                let pts: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|p| (p.0, pick(p)))
                    .filter(|p| p.1.is_finite() && p.1 > 0.0)
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                    .map_err(msg)?;
                chart
                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))
                    .map_err(msg)?;
            }
            Ok(())
        }};
    }
    match (log_x, log_y) {
        (false, false) => draw!(x_range, y_range),
        (true, false) => draw!(x_range.log_scale(), y_range),
        (false, true) => draw!(x_range, y_range.log_scale()),
        (true, true) => draw!(x_range.log_scale(), y_range.log_scale()),
    }
}

fn spans_a_decade(values: &[f64]) -> bool {
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0, f64::max);
    positive.len() == values.len() && lo.is_finite() && hi / lo >= 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, summary_of};

    fn case(n: &str, other: &str, p50: f64) -> CaseResult {
        let mut c = measured_case("example.saxpy", "cpu", p50, 0.01);
        c.key.params = BTreeMap::from([("n".into(), n.into()), ("a".into(), other.into())]);
        c.id = c.key.id();
        c
    }

    #[test]
    fn a_numeric_parameter_with_several_values_is_a_sweep_with_one_line_per_other_setting() {
        let s = summary_of(vec![
            case("1024", "2.0", 0.1),
            case("4096", "2.0", 0.4),
            case("16384", "2.0", 1.6),
            case("1024", "3.0", 0.1),
            case("4096", "3.0", 0.5),
        ]);
        let found = sweeps(&s);
        let by_n = found
            .iter()
            .find(|s| s.axis == "n")
            .expect("a sweep along n");
        assert_eq!(by_n.lines.len(), 2, "{:?}", by_n.lines.keys());
        let first = by_n.lines.values().next().unwrap();
        assert!(first.windows(2).all(|w| w[0].0 < w[1].0), "sorted by n");
        // `a` varies too, but no line has two points along it at a fixed n... except n=1024 and 4096.
        let by_a = found
            .iter()
            .find(|s| s.axis == "a")
            .expect("a sweep along a");
        assert_eq!(by_a.lines.len(), 2);
        let svg = chart(by_n, Figure::Time).unwrap();
        assert!(svg.contains("p50 ms by n"));
        assert!(chart(by_n, Figure::Rate).unwrap().starts_with("<svg"));
    }

    #[test]
    fn a_parameter_that_never_varies_is_no_sweep() {
        let s = summary_of(vec![case("1024", "2.0", 0.1), case("1024", "2.0", 0.1)]);
        assert!(sweeps(&s).is_empty());
    }
}
