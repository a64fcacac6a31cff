//! [`EnvSnapshot`]: the process environment captured once by `facts::gather`, so evaluating a skip
//! condition reads no process state (evaluation stays pure and testable).
//!
//! Semantics of `env.NAME`: a set variable is its string value (an empty string is false-y); an
//! unset variable or one that is not valid UTF-8 is `null` (false-y).

use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Default, PartialEq)]
pub struct EnvSnapshot {
    vars: BTreeMap<String, String>,
}

impl EnvSnapshot {
    pub fn capture() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// Prints only the count: values may be secrets and must not reach logs through `{:?}`.
impl fmt::Debug for EnvSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EnvSnapshot({} variables)", self.vars.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_values() {
        let e = EnvSnapshot::from_pairs([("TOKEN", "secret")]);
        assert_eq!(e.get("TOKEN"), Some("secret"));
        assert!(!format!("{e:?}").contains("secret"));
    }
}
