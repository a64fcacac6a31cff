//! The `## Kernel figures` section of `summary.md`: what each kernel reported about its calls
//! (`Instance::figures`), one row per case and figure, with a series' spread beside its median.

use super::fmt::sig;
use super::table::Table;
use crate::model::RunSummary;

/// Appends the section, or nothing when no case has a figure.
pub fn figures_section(s: &RunSummary, md: &mut String) {
    let cases: Vec<_> = s
        .benchmarks
        .values()
        .filter(|c| !c.figures.is_empty())
        .collect();
    if cases.is_empty() {
        return;
    }
    md.push_str("## Kernel figures\n\n");
    md.push_str(
        "Reported by the kernel about its checked call (a series: one value per observed \
         call, its median as the value, with trtexec's statistics: min, mean, p90, p95, p99, \
         max).\n\n",
    );
    let mut t = Table::new(&[
        "case", "figure", ">value", "unit", ">n", ">min", ">mean", ">p90", ">p95", ">p99", ">max",
    ]);
    for c in cases {
        for (name, f) in &c.figures {
            let spread = |pick: fn(&crate::model::SeriesStats) -> f64| {
                f.series.as_ref().map_or(String::new(), |s| num(pick(s)))
            };
            t.row(vec![
                c.id.clone(),
                name.clone(),
                num(f.value),
                f.unit.clone(),
                f.series.as_ref().map_or(1, |s| s.n).to_string(),
                spread(|s| s.min),
                spread(|s| s.mean),
                spread(|s| s.p90),
                spread(|s| s.p95),
                spread(|s| s.p99),
                spread(|s| s.max),
            ]);
        }
    }
    md.push_str(&t.markdown());
    md.push('\n');
}

/// A count as an integer, anything else with four significant digits and no trailing zeros.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let s = sig(x, 4);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FigureBlock;
    use crate::report::test_support::{measured_case, summary_of};

    #[test]
    fn numbers_read_as_counts_or_four_digits() {
        assert_eq!(num(89.0), "89");
        assert_eq!(num(0.0100), "0.01");
        assert_eq!(num(2.5671e-4), "0.0002567");
        assert_eq!(num(1.0e-7), "1.000e-7");
    }

    #[test]
    fn cases_without_figures_leave_no_section() {
        let s = summary_of(vec![measured_case("tile_ops.tile_pack", "cpu", 1.0, 0.01)]);
        let mut md = String::new();
        figures_section(&s, &mut md);
        assert!(md.is_empty());
    }

    #[test]
    fn each_figure_is_a_row_and_a_series_shows_its_spread() {
        let mut c = measured_case("poisson.cg", "cpu", 1.0, 0.01);
        c.figures.insert(
            "iterations".into(),
            FigureBlock::from_values("iterations", &[89.0]),
        );
        c.figures.insert(
            "h2d_ms".into(),
            FigureBlock::from_values("ms", &[0.010, 0.012, 0.011, 0.013]),
        );
        let mut md = String::new();
        figures_section(&summary_of(vec![c]), &mut md);
        assert!(md.starts_with("## Kernel figures"), "{md}");
        let iter_row = md.lines().find(|l| l.contains("| iterations |")).unwrap();
        assert!(iter_row.contains("| 89 | iterations | 1 |"), "{iter_row}");
        let h2d_row = md.lines().find(|l| l.contains("| h2d_ms |")).unwrap();
        assert!(h2d_row.contains("| 4 | 0.01 |"), "{h2d_row}");
        assert!(h2d_row.contains("| 0.013 |"), "{h2d_row}");
    }
}
