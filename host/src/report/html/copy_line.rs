//! "% of the copy line" as bars: each CUDA case's achieved bandwidth against the device's
//! measured copy bandwidth (DRAM-cold figures) or its L2 line (`l2_hot` batch figures), each
//! kind in its own colour, with the 100 % line drawn.

use plotters::prelude::*;

use super::charts::{ChartError, FAMILY, msg, svg};
use crate::model::RunSummary;

/// `(case id, percent, l2_hot)` of every case with a line to be set against, in case order.
pub fn bars(summary: &RunSummary) -> Vec<(String, f64, bool)> {
    summary
        .benchmarks
        .values()
        .filter_map(|c| {
            let t = c.throughput.as_ref()?;
            match (t.pct_of_copy_bandwidth, t.pct_of_l2_line) {
                (Some(p), _) => Some((c.id.clone(), p, false)),
                (None, Some(p)) => Some((c.id.clone(), p, true)),
                _ => None,
            }
        })
        .collect()
}

/// The bar chart, or `None` when no case has a line (a CPU run, or no calibration).
pub fn chart(summary: &RunSummary) -> Result<Option<String>, ChartError> {
    let bars = bars(summary);
    if bars.is_empty() {
        return Ok(None);
    }
    let top = bars.iter().map(|b| b.1).fold(100.0, f64::max) * 1.08;
    let n = bars.len();
    let height = 80 + 16 * n as u32;
    svg("% of copy line", (900, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .caption(
                "% of the measured line (blue: copy line, DRAM-cold; orange: L2 line, l2_hot)",
                (FAMILY, 14),
            )
            .x_label_area_size(30)
            .y_label_area_size(0)
            .build_cartesian_2d(0f64..top, 0f64..n as f64)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc("%")
            .label_style((FAMILY, 11))
            .draw()
            .map_err(msg)?;
        for (i, (id, pct, l2)) in bars.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let c = if *l2 {
                RGBColor(230, 159, 0)
            } else {
                RGBColor(0, 114, 178)
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y + 0.15), (*pct, y + 0.85)],
                    c.filled(),
                )))
                .map_err(msg)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{pct:.1} %  {id}"),
                    (top * 0.005, y + 0.8),
                    (FAMILY, 10).into_font().color(&BLACK),
                )))
                .map_err(msg)?;
        }
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(100.0, 0.0), (100.0, n as f64)],
                RED.stroke_width(1),
            )))
            .map_err(msg)?;
        Ok(())
    })
    .map(Some)
}
