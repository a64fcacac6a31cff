//! History trends: per metric of a history folder (`--history`), the headline p50 across the
//! recorded runs, with the change points found by [`crate::stats::change_points`] marked.

use plotters::prelude::*;
use std::collections::BTreeMap;

use super::charts::{ChartError, FAMILY, msg, padded_range, svg};
use crate::compare::history::HistoryRecord;
use crate::stats::change_points;

/// Trend charts drawn at most; metrics with a change point come first.
pub const MAX_TRENDS: usize = 24;

/// One metric's history: `(run index, value)` and the indices where a new level starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    pub metric: String,
    pub points: Vec<(usize, f64)>,
    pub changes: Vec<usize>,
}

/// The trends of every metric seen in at least two runs, change points first, at most
/// [`MAX_TRENDS`]; the second value is how many were left out.
pub fn trends(records: &[HistoryRecord]) -> (Vec<Trend>, usize) {
    let mut series: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        for (metric, v) in &r.metrics {
            series.entry(metric).or_default().push((i, *v));
        }
    }
    let mut out: Vec<Trend> = series
        .into_iter()
        .filter(|(_, p)| p.len() >= 2)
        .map(|(metric, points)| {
            let values: Vec<f64> = points.iter().map(|p| p.1).collect();
            let changes = change_points(&values)
                .into_iter()
                .map(|k| points[k].0)
                .collect();
            Trend {
                metric: metric.to_string(),
                points,
                changes,
            }
        })
        .collect();
    out.sort_by_key(|t| t.changes.is_empty());
    let left_out = out.len().saturating_sub(MAX_TRENDS);
    out.truncate(MAX_TRENDS);
    (out, left_out)
}

/// One trend as a line chart with its change points as red vertical lines.
pub fn chart(trend: &Trend, runs: usize) -> Result<String, ChartError> {
    let (lo, hi) = padded_range(trend.points.iter().map(|p| p.1), 0.1);
    svg("trend", (720, 220), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .caption(&trend.metric, (FAMILY, 12))
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5f64..(runs as f64 - 0.5), lo..hi)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels(runs.min(12))
            .x_label_formatter(&|v| {
                if v.fract() == 0.0 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .x_desc("run (oldest first)")
            .y_desc("ms")
            .label_style((FAMILY, 11))
            .draw()
            .map_err(msg)?;
        let pts: Vec<(f64, f64)> = trend.points.iter().map(|&(i, v)| (i as f64, v)).collect();
        chart
            .draw_series(LineSeries::new(
                pts.clone(),
                RGBColor(0, 114, 178).stroke_width(2),
            ))
            .map_err(msg)?;
        chart
            .draw_series(
                pts.into_iter()
                    .map(|p| Circle::new(p, 3, RGBColor(0, 114, 178).filled())),
            )
            .map_err(msg)?;
        for &k in &trend.changes {
            let x = k as f64 - 0.5;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    RED.stroke_width(2),
                )))
                .map_err(msg)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(metrics: &[(&str, f64)]) -> HistoryRecord {
        HistoryRecord {
            schema_version: 1,
            suite: "s".into(),
            timestamp_utc: "2026-11-24T00:00:00Z".into(),
            status: "ok".into(),
            git_commit: None,
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn a_step_in_one_metric_puts_it_first_with_its_change_point() {
        let mut records = Vec::new();
        for i in 0..12 {
            let wobble = 1.0 + 0.004 * ((i * 5 % 7) as f64 - 3.0);
            let slow = if i >= 6 { 1.3 } else { 1.0 };
            records.push(record(&[("a/p50_ms", wobble), ("b/p50_ms", wobble * slow)]));
        }
        let (found, left_out) = trends(&records);
        assert_eq!(left_out, 0);
        assert_eq!(found[0].metric, "b/p50_ms");
        assert_eq!(found[0].changes, vec![6]);
        assert!(found[1].changes.is_empty());
        let svg = chart(&found[0], records.len()).unwrap();
        assert!(svg.contains("b/p50_ms"));
    }
}
