//! [`Sample`]: timing samples whose invariants are checked once, so the statistics never see an
//! empty slice or a NaN (criterion's `univariate::Sample` is the model).

use super::quantile::quantile_sorted;

/// Why raw values cannot form a [`Sample`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SampleError {
    #[error(
        "no samples to summarize\n(hint: the case produced no timing samples; check its status)"
    )]
    Empty,
    #[error(
        "sample #{index} is {value}, not a finite number\n(hint: a timer returned NaN or infinity; the measurement is invalid)"
    )]
    NonFinite { index: usize, value: f64 },
}

/// At least one finite value, stored in ascending order. Order of the input never matters.
///
/// A single point is allowed (style rule 13 asks for two): a one-call run still has a median, and
/// the statistics that need two points (sample standard deviation) document their `n = 1` value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    sorted: Vec<f64>,
}

impl Sample {
    /// Validates and sorts `values`.
    pub fn new(values: &[f64]) -> Result<Self, SampleError> {
        if values.is_empty() {
            return Err(SampleError::Empty);
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SampleError::NonFinite { index, value });
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Ok(Self { sorted })
    }

    /// The values in ascending order.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    /// Number of points (at least 1).
    pub fn n(&self) -> usize {
        self.sorted.len()
    }

    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }

    /// Type-7 quantile, `q` in `[0, 1]`.
    pub fn quantile(&self, q: f64) -> f64 {
        quantile_sorted(&self.sorted, q)
    }

    /// The median, which is by definition the type-7 quantile at 0.5: the middle value for odd
    /// `n`, the mean of the two middle values for even `n`.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    /// Arithmetic mean, summed in ascending order.
    pub fn mean(&self) -> f64 {
        self.sorted.iter().sum::<f64>() / self.sorted.len() as f64
    }

    /// Sample standard deviation (divisor `n - 1`); 0 for a single point, where it is undefined
    /// and JSON cannot carry NaN (`n` in the summary tells the reader).
    pub fn std_dev(&self) -> f64 {
        let n = self.sorted.len();
        if n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let ss: f64 = self.sorted.iter().map(|x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_and_non_finite() {
        assert_eq!(Sample::new(&[]), Err(SampleError::Empty));
        assert!(matches!(
            Sample::new(&[1.0, f64::NAN]),
            Err(SampleError::NonFinite { index: 1, .. })
        ));
        assert!(Sample::new(&[f64::INFINITY]).is_err());
    }

    #[test]
    fn basic_moments() {
        let s = Sample::new(&[4.0, 2.0, 1.0, 3.0]).unwrap();
        assert_eq!(s.sorted(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.median(), 2.5);
        assert_eq!(s.mean(), 2.5);
        // Sum of squared deviations is 5, over n - 1 = 3.
        assert!((s.std_dev() - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(Sample::new(&[7.0]).unwrap().std_dev(), 0.0);
    }
}
