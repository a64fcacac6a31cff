//! The plotters glue every chart shares: the embedded font, the palette, and [`svg`], which draws
//! into an inline SVG string. Text is measured with the DejaVu Sans file compiled into the
//! binary, so a chart never depends on the fonts of the machine that writes the report.

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::sync::OnceLock;

/// DejaVu Sans (license beside the file): the only font the charts use.
const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
pub const FAMILY: &str = "sans-serif";

/// A chart that could not be drawn: which one, and plotters' message.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {chart} chart: {message}")]
pub struct ChartError {
    pub chart: String,
    pub message: String,
}

impl ChartError {
    pub fn new(chart: &str, message: impl std::fmt::Display) -> Self {
        Self {
            chart: chart.to_string(),
            message: message.to_string(),
        }
    }
}

/// Line colours, one per series, distinguishable in print and for common colour blindness
/// (Okabe–Ito).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the embedded DejaVu Sans font is invalid".to_string())
        })
        .clone()
}

/// Draws a `width × height` chart with `draw` and returns the SVG element. `chart` names the
/// chart in an error.
pub fn svg(
    chart: &str,
    (width, height): (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<String, ChartError> {
    register().map_err(|m| ChartError::new(chart, m))?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| ChartError::new(chart, e))?;
        draw(&root).map_err(|m| ChartError::new(chart, m))?;
        root.present().map_err(|e| ChartError::new(chart, e))?;
    }
    Ok(out)
}

/// Turns any plotters error into the message [`svg`]'s closure returns.
pub fn msg<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A padded `(lo, hi)` range around `values`, never empty.
pub fn padded_range(values: impl IntoIterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let span = if hi > lo { hi - lo } else { lo.abs().max(1e-9) };
    (lo - pad * span, hi + pad * span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_an_svg_element_with_its_text() {
        let svg = svg("test", (200, 100), |root| {
            root.draw(&Text::new("hello", (10, 10), (FAMILY, 12)))
                .map_err(msg)
        })
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("hello"));
    }

    #[test]
    fn ranges_are_padded_and_never_empty() {
        assert_eq!(padded_range([1.0, 3.0], 0.5), (0.0, 4.0));
        let (lo, hi) = padded_range([2.0, 2.0], 0.1);
        assert!(lo < 2.0 && hi > 2.0);
        assert_eq!(padded_range([], 0.1), (0.0, 1.0));
    }
}
