//! [`Figure`]: a number a kernel reports about its calls that the host cannot derive from its
//! own clocks or the cost model: what a call selected (`selected_l0_per_call`), how many
//! iterations a solver took, an engine runtime's own per-phase times. The host collects them
//! once per worker, after the accuracy check, and puts them in the case's `figures`.

use abi_stable::{
    StableAbi,
    std_types::{RString, RVec},
};

/// One named figure: a single value, or one value per observed call (the host summarizes a
/// series with min, max, mean, median and p90/p95/p99).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct Figure {
    /// snake_case, unique within the case, e.g. `selected_l0_per_call`.
    pub name: RString,
    /// The unit as a reader would write it (`tiles`, `ms`, `iterations`); empty for a count.
    pub unit: RString,
    /// Finite values, at least one.
    pub values: RVec<f64>,
}

impl Figure {
    /// A figure with one value.
    pub fn value(name: &str, unit: &str, value: f64) -> Self {
        Self::series(name, unit, vec![value])
    }

    /// A figure with one value per observed call.
    pub fn series(name: &str, unit: &str, values: Vec<f64>) -> Self {
        Self {
            name: name.into(),
            unit: unit.into(),
            values: values.into(),
        }
    }

    /// Why the host would refuse this figure, if it would: a name that is not snake_case, no
    /// values, or a value that is not finite.
    pub fn problem(&self) -> Option<String> {
        let name = self.name.as_str();
        let snake = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !snake {
            return Some(format!(
                "figure name `{name}` is not snake_case (letters a-z, digits, `_`, starting with a letter)"
            ));
        }
        if self.values.is_empty() {
            return Some(format!("figure `{name}` has no values"));
        }
        if let Some(v) = self.values.iter().find(|v| !v.is_finite()) {
            return Some(format!("figure `{name}` has a non-finite value ({v})"));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_well_formed_figure_has_no_problem() {
        assert_eq!(
            Figure::value("selected_l0_per_call", "tiles", 8.0).problem(),
            None
        );
        assert_eq!(
            Figure::series("h2d_ms", "ms", vec![0.1, 0.2]).problem(),
            None
        );
    }

    #[test]
    fn bad_names_empty_series_and_non_finite_values_are_refused() {
        let bad = [
            Figure::value("Selected", "", 1.0),
            Figure::value("", "", 1.0),
            Figure::value("9lives", "", 1.0),
            Figure::value("a-b", "", 1.0),
            Figure::series("empty", "", vec![]),
            Figure::value("nan", "", f64::NAN),
            Figure::series("inf", "", vec![1.0, f64::INFINITY]),
        ];
        for f in bad {
            assert!(f.problem().is_some(), "{f:?} should be refused");
        }
    }
}
