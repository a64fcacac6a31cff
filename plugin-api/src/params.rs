//! Kernel parameters: declared with defaults in the descriptor, resolved by the host per case.

use abi_stable::{
    StableAbi,
    std_types::{RString, RVec},
};
use std::fmt;

use crate::PluginError;

/// One parameter value. Sweep axes in `bench.yaml` are lists of these.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(RString),
    /// A shape: a list of integers taken as one value (`grid_size: [64, 64, 64]`). A kernel
    /// declares a parameter as a shape with [`ParamSpec::shape`]; bench.yaml then reads a list
    /// as one value and a list of lists as a sweep.
    Shape(RVec<i64>),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Float(v) => write!(f, "{v}"),
            Self::Bool(v) => write!(f, "{v}"),
            Self::Str(v) => f.write_str(v),
            Self::Shape(dims) => {
                // `64x64x64`: the form case ids and the seeds' `name=AxB` strings use.
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str("x")?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
        }
    }
}

/// A declared parameter: its name, default and a one-line description.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: RString,
    pub default: ParamValue,
    pub description: RString,
}

impl ParamSpec {
    pub fn new(name: &str, default: ParamValue, description: &str) -> Self {
        Self {
            name: name.into(),
            default,
            description: description.into(),
        }
    }
    pub fn int(name: &str, default: i64, description: &str) -> Self {
        Self::new(name, ParamValue::Int(default), description)
    }
    pub fn float(name: &str, default: f64, description: &str) -> Self {
        Self::new(name, ParamValue::Float(default), description)
    }
    pub fn bool(name: &str, default: bool, description: &str) -> Self {
        Self::new(name, ParamValue::Bool(default), description)
    }
    pub fn str(name: &str, default: &str, description: &str) -> Self {
        Self::new(name, ParamValue::Str(default.into()), description)
    }
    /// A shape-valued parameter (a list of integers as one value).
    pub fn shape(name: &str, default: &[i64], description: &str) -> Self {
        Self::new(
            name,
            ParamValue::Shape(default.iter().copied().collect()),
            description,
        )
    }
}

/// The resolved parameters of one case (every declared parameter is present).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Default)]
pub struct Params {
    pub entries: RVec<Param>,
}

/// One resolved `name = value` pair.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct Param {
    pub name: RString,
    pub value: ParamValue,
}

impl Params {
    pub fn push(&mut self, name: &str, value: ParamValue) {
        self.entries.push(Param {
            name: name.into(),
            value,
        });
    }

    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.entries
            .iter()
            .find(|p| p.name.as_str() == name)
            .map(|p| &p.value)
    }

    fn missing(name: &str) -> PluginError {
        PluginError::invalid(format!("parameter `{name}` is missing"))
    }

    /// An integer parameter (a float with no fractional part is accepted).
    pub fn int(&self, name: &str) -> Result<i64, PluginError> {
        match self.get(name).ok_or_else(|| Self::missing(name))? {
            ParamValue::Int(v) => Ok(*v),
            ParamValue::Float(v) if v.fract() == 0.0 => Ok(*v as i64),
            other => Err(PluginError::invalid(format!(
                "parameter `{name}` must be an integer, got `{other}`"
            ))),
        }
    }

    /// A non-negative integer parameter as `usize`.
    pub fn usize(&self, name: &str) -> Result<usize, PluginError> {
        let v = self.int(name)?;
        usize::try_from(v)
            .map_err(|_| PluginError::invalid(format!("parameter `{name}` must be >= 0, got {v}")))
    }

    pub fn float(&self, name: &str) -> Result<f64, PluginError> {
        match self.get(name).ok_or_else(|| Self::missing(name))? {
            ParamValue::Float(v) => Ok(*v),
            ParamValue::Int(v) => Ok(*v as f64),
            other => Err(PluginError::invalid(format!(
                "parameter `{name}` must be a number, got `{other}`"
            ))),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, PluginError> {
        match self.get(name).ok_or_else(|| Self::missing(name))? {
            ParamValue::Bool(v) => Ok(*v),
            other => Err(PluginError::invalid(format!(
                "parameter `{name}` must be true or false, got `{other}`"
            ))),
        }
    }

    pub fn str(&self, name: &str) -> Result<&str, PluginError> {
        match self.get(name).ok_or_else(|| Self::missing(name))? {
            ParamValue::Str(v) => Ok(v.as_str()),
            other => Err(PluginError::invalid(format!(
                "parameter `{name}` must be a string, got `{other}`"
            ))),
        }
    }

    /// A shape parameter as non-negative dimensions.
    pub fn shape(&self, name: &str) -> Result<Vec<usize>, PluginError> {
        match self.get(name).ok_or_else(|| Self::missing(name))? {
            ParamValue::Shape(dims) => dims
                .iter()
                .map(|&d| {
                    usize::try_from(d).map_err(|_| {
                        PluginError::invalid(format!(
                            "parameter `{name}` must have dimensions >= 0, got {d}"
                        ))
                    })
                })
                .collect(),
            other => Err(PluginError::invalid(format!(
                "parameter `{name}` must be a shape (a list of integers), got `{other}`"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_getters_convert_and_reject() {
        let mut p = Params::default();
        p.push("k", ParamValue::Int(32));
        p.push("alpha", ParamValue::Float(0.5));
        p.push("mode", ParamValue::Str("blend".into()));
        assert_eq!(p.usize("k").unwrap(), 32);
        assert_eq!(p.float("k").unwrap(), 32.0);
        assert_eq!(p.str("mode").unwrap(), "blend");
        assert!(p.int("alpha").is_err());
        assert!(p.bool("k").is_err());
        assert!(p.int("nope").unwrap_err().message.contains("missing"));
    }

    #[test]
    fn shapes_are_one_value() {
        let mut p = Params::default();
        p.push(
            "grid_size",
            ParamValue::Shape([64, 32, 16].into_iter().collect()),
        );
        p.push("bad", ParamValue::Shape([4, -1].into_iter().collect()));
        assert_eq!(p.shape("grid_size").unwrap(), vec![64, 32, 16]);
        assert_eq!(p.get("grid_size").unwrap().to_string(), "64x32x16");
        assert!(p.shape("bad").unwrap_err().message.contains(">= 0"));
        p.push("n", ParamValue::Int(3));
        assert!(
            p.shape("n")
                .unwrap_err()
                .message
                .contains("must be a shape")
        );
    }
}
