//! [`Value`]: what a fact or literal evaluates to, and the comparison rules of the language.
//!
//! * Numbers compare numerically; strings compare as dotted versions when both sides look like
//!   versions (`"12.4" < "13.0"`, and a number against a version string, so
//!   `cuda.driver_version >= 12.4` works), otherwise lexicographically.
//! * `null` (an unset `env.NAME`, a missing CUDA fact) equals only `null`; any ordering comparison
//!   with `null` is false, so `cuda.compute_capability < 8.0` is false on a machine without CUDA.
//! * Comparing different kinds otherwise (`os < 3`, `true == "x"`) is an evaluation error.
//! * Truthiness: `false`, `null`, `0`, `""` and `[]` are false; everything else is true.

use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Value>),
}

impl Value {
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Num(_) => "number",
            Value::Str(_) => "string",
            Value::List(_) => "list",
        }
    }

    /// A parameter value from the case's `ParamMap` (JSON) as a language value.
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => n.as_f64().map_or(Value::Null, Value::Num),
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(_) => Value::Null,
        }
    }

    /// `==`: `Ok(None)` never happens; mismatched kinds are an error (except null).
    pub fn equals(&self, other: &Value) -> Result<bool, String> {
        match (self, other) {
            (Value::Null, _) | (_, Value::Null) => Ok(self == other),
            (Value::List(a), Value::List(b)) => {
                if a.len() != b.len() {
                    return Ok(false);
                }
                for (x, y) in a.iter().zip(b) {
                    if !x.equals(y)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (Value::Bool(a), Value::Bool(b)) => Ok(a == b),
            _ => self.order(other).map(|o| o == Some(Ordering::Equal)),
        }
    }

    /// Ordering for `< <= > >=`; `Ok(None)` when either side is null (the comparison is false).
    pub fn order(&self, other: &Value) -> Result<Option<Ordering>, String> {
        match (self, other) {
            (Value::Null, _) | (_, Value::Null) => Ok(None),
            (Value::Num(a), Value::Num(b)) => Ok(a.partial_cmp(b)),
            (Value::Str(a), Value::Str(b)) => Ok(Some(match (version(a), version(b)) {
                (Some(va), Some(vb)) => cmp_versions(&va, &vb),
                _ => a.cmp(b),
            })),
            (Value::Str(s), Value::Num(n)) => match version(s) {
                Some(v) => Ok(Some(cmp_versions(&v, &num_version(*n)))),
                None => Err(self.mismatch(other)),
            },
            (Value::Num(n), Value::Str(s)) => match version(s) {
                Some(v) => Ok(Some(cmp_versions(&num_version(*n), &v))),
                None => Err(self.mismatch(other)),
            },
            _ => Err(self.mismatch(other)),
        }
    }

    /// `in`: membership in a list, or substring of a string; false when the right side is null.
    pub fn contained_in(&self, container: &Value) -> Result<bool, String> {
        match (self, container) {
            (_, Value::Null) => Ok(false),
            (item, Value::List(items)) => Ok(items.iter().any(|x| item.equals(x).unwrap_or(false))),
            (Value::Str(needle), Value::Str(hay)) => Ok(hay.contains(needle.as_str())),
            (Value::Null, Value::Str(_)) => Ok(false),
            _ => Err(format!(
                "`in` needs a list (or a string for substring tests) on the right, found {} {}",
                container.kind(),
                container
            )),
        }
    }

    fn mismatch(&self, other: &Value) -> String {
        format!(
            "cannot compare {} {} with {} {}",
            self.kind(),
            self,
            other.kind(),
            other
        )
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Num(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Whether `s` reads as a dotted version (`"12.4"`, `"13"`), which orders against numbers.
pub(crate) fn is_version(s: &str) -> bool {
    version(s).is_some()
}

/// `"13.0"` → `[13, 0]`; `None` unless the string is dot-separated decimal integers.
fn version(s: &str) -> Option<Vec<u64>> {
    if s.is_empty() {
        return None;
    }
    s.split('.').map(|p| p.parse::<u64>().ok()).collect()
}

fn num_version(n: f64) -> Vec<u64> {
    version(&n.to_string()).unwrap_or_default()
}

fn cmp_versions(a: &[u64], b: &[u64]) -> Ordering {
    let len = a.len().max(b.len());
    (0..len)
        .map(|i| {
            a.get(i)
                .copied()
                .unwrap_or(0)
                .cmp(&b.get(i).copied().unwrap_or(0))
        })
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(s("9.0").order(&s("12.4")), Ok(Some(Ordering::Less)));
        assert_eq!(
            s("13.0").order(&Value::Num(12.4)),
            Ok(Some(Ordering::Greater))
        );
        assert_eq!(s("13").equals(&s("13.0")), Ok(true));
        assert_eq!(s("abc").order(&s("abd")), Ok(Some(Ordering::Less)));
    }

    #[test]
    fn null_is_false_in_orderings_and_equal_only_to_null() {
        assert_eq!(Value::Null.order(&Value::Num(8.0)), Ok(None));
        assert_eq!(Value::Null.equals(&s("x")), Ok(false));
        assert_eq!(Value::Null.equals(&Value::Null), Ok(true));
        assert!(!Value::Null.truthy());
    }

    #[test]
    fn mismatched_kinds_are_errors() {
        assert!(s("linux").order(&Value::Num(3.0)).is_err());
        assert!(Value::Bool(true).equals(&s("x")).is_err());
        assert!(Value::Num(1.0).contained_in(&Value::Num(1.0)).is_err());
    }

    #[test]
    fn membership_and_substring() {
        let l = Value::List(vec![s("fp16"), Value::Num(8.0)]);
        assert_eq!(s("fp16").contained_in(&l), Ok(true));
        assert_eq!(Value::Num(8.0).contained_in(&l), Ok(true));
        assert_eq!(s("fp8").contained_in(&l), Ok(false));
        assert_eq!(s("H100").contained_in(&s("NVIDIA H100 80GB")), Ok(true));
    }
}
