//! Tukey's fences. With quartiles `Q1`, `Q3` (type 7) and `IQR = Q3 - Q1`:
//! a point below `Q1 - 3 IQR` is a low severe outlier, below `Q1 - 1.5 IQR` (and not severe) a
//! low mild one; above `Q3 + 1.5 IQR` a high mild one, above `Q3 + 3 IQR` a high severe one.
//! Outliers are counted, never removed: the statistics always use every sample.

use super::Sample;
use super::settings::{TUKEY_MILD_FENCE, TUKEY_SEVERE_FENCE};
use crate::model::Outliers;

/// Counts the points beyond Tukey's inner ([`TUKEY_MILD_FENCE`]) and outer
/// ([`TUKEY_SEVERE_FENCE`]) fences.
pub fn tukey_outliers(sample: &Sample) -> Outliers {
    let q1 = sample.quantile(0.25);
    let q3 = sample.quantile(0.75);
    let iqr = q3 - q1;
    let (low_severe, low_mild) = (q1 - TUKEY_SEVERE_FENCE * iqr, q1 - TUKEY_MILD_FENCE * iqr);
    let (high_mild, high_severe) = (q3 + TUKEY_MILD_FENCE * iqr, q3 + TUKEY_SEVERE_FENCE * iqr);
    let mut out = Outliers::default();
    for &x in sample.sorted() {
        if x < low_severe {
            out.low_severe += 1;
        } else if x < low_mild {
            out.low_mild += 1;
        } else if x > high_severe {
            out.high_severe += 1;
        } else if x > high_mild {
            out.high_mild += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_fence() {
        let mut xs: Vec<f64> = (1..=20).map(f64::from).collect();
        xs.extend([30.0, 50.0, -10.0, -30.0]);
        let o = tukey_outliers(&Sample::new(&xs).unwrap());
        // n = 24: Q1 = 4.75, Q3 = 16.25, IQR = 11.5; mild fences -12.5 / 33.5, severe
        // -29.75 / 50.75: -30 is a low severe outlier, 50 a high mild one.
        assert_eq!(
            o,
            Outliers {
                low_severe: 1,
                low_mild: 0,
                high_mild: 1,
                high_severe: 0
            }
        );
        let xs: Vec<f64> = (1..=20)
            .map(f64::from)
            .chain([31.0, 45.0, -9.0, -23.0])
            .collect();
        // Same quartiles: -23 is a low mild outlier, 45 a high mild one, 31 and -9 are inside.
        let o = tukey_outliers(&Sample::new(&xs).unwrap());
        assert_eq!(
            o,
            Outliers {
                low_severe: 0,
                low_mild: 1,
                high_mild: 1,
                high_severe: 0
            }
        );
    }

    #[test]
    fn constant_sample_has_none() {
        let o = tukey_outliers(&Sample::new(&[2.0; 10]).unwrap());
        assert_eq!(o, Outliers::default());
    }
}
