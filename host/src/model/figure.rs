//! [`FigureBlock`]: a figure a kernel reported about its calls (`Instance::figures`), as it
//! appears in a case's `figures`: the value, and for a series its distribution.

use serde::{Deserialize, Serialize};

/// One plugin figure of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureBlock {
    /// The plugin's unit (`tiles`, `ms`); absent for a plain count.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    /// The value; for a series, its median.
    pub value: f64,
    /// Present when the plugin reported more than one value (one per observed call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesStats>,
}

/// The distribution of a figure reported as a series, in trtexec's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesStats {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
}

impl FigureBlock {
    /// Summarizes `values` (finite, at least one: the worker refuses anything else).
    pub fn from_values(unit: &str, values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let q = |p: f64| crate::stats::quantile_sorted(&sorted, p);
        let series = (sorted.len() > 1).then(|| SeriesStats {
            n: sorted.len(),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
            median: q(0.5),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
        });
        Self {
            unit: unit.to_string(),
            value: q(0.5),
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_is_the_value_without_a_series() {
        let f = FigureBlock::from_values("tiles", &[8.0]);
        assert_eq!(f.value, 8.0);
        assert!(f.series.is_none());
    }

    #[test]
    fn a_series_reports_its_median_and_tail() {
        let values: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let f = FigureBlock::from_values("ms", &values);
        let s = f.series.expect("a series");
        assert_eq!((s.n, s.min, s.max), (100, 1.0, 100.0));
        assert_eq!(f.value, 50.5);
        assert_eq!(s.mean, 50.5);
        assert!((s.p90 - 90.1).abs() < 1e-9, "{}", s.p90);
        assert!((s.p99 - 99.01).abs() < 1e-9, "{}", s.p99);
    }
}
