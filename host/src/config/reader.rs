//! [`Reader`]: walks the located YAML tree of one file, converting nodes to typed values and
//! collecting every error (with its key path) instead of stopping at the first.

use super::errors::{ConfigError, ConfigErrorKind, Loc};
use super::suggest::hint_for;
use super::yaml::{Node, Raw, loc};
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) struct Reader<'t> {
    pub file: Arc<PathBuf>,
    /// The file's text, to place a `check` expression's column precisely.
    pub text: &'t str,
    pub errors: Vec<ConfigError>,
}

/// `parent.key`, or `key` at the top.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

impl<'t> Reader<'t> {
    pub fn new(file: Arc<PathBuf>, text: &'t str) -> Self {
        Self {
            file,
            text,
            errors: Vec::new(),
        }
    }

    pub fn loc(&self, n: &Node) -> Loc {
        loc(&self.file, n)
    }

    pub fn error(&mut self, n: &Node, path: &str, kind: ConfigErrorKind, hint: impl Into<String>) {
        let e = ConfigError::new(self.loc(n), path, kind, hint);
        self.errors.push(e);
    }

    pub fn wrong_type(&mut self, n: &Node, path: &str, expected: &str, hint: impl Into<String>) {
        let kind = ConfigErrorKind::WrongType {
            expected: expected.into(),
            found: n.value.describe(),
        };
        self.error(n, path, kind, hint);
    }

    /// The pairs of a mapping whose keys are all strings; reports unknown keys against `allowed`
    /// (when given) and drops them.
    pub fn map<'n>(
        &mut self,
        n: &'n Node,
        path: &str,
        allowed: Option<&[&str]>,
        hint: &str,
    ) -> Option<Vec<(String, &'n Node, &'n Node)>> {
        let Raw::Map(pairs) = &n.value else {
            self.wrong_type(n, path, "a mapping", hint);
            return None;
        };
        let mut out = Vec::new();
        for (k, v) in pairs {
            let Raw::Str(key) = &k.value else {
                let key_path = join(path, "<key>");
                self.wrong_type(
                    k,
                    &key_path,
                    "a string key",
                    "keys are names like `tile_size`",
                );
                continue;
            };
            if let Some(allowed) = allowed
                && !allowed.contains(&key.as_str())
            {
                let hint = hint_for(key, allowed, "allowed keys here");
                self.error(
                    k,
                    &join(path, key),
                    ConfigErrorKind::UnknownKey(key.clone()),
                    hint,
                );
                continue;
            }
            out.push((key.clone(), k, v));
        }
        Some(out)
    }

    /// The items of a list, or the node itself as a one-item list.
    pub fn items(n: &Node) -> (Vec<&Node>, bool) {
        match &n.value {
            Raw::Seq(items) => (items.iter().collect(), true),
            _ => (vec![n], false),
        }
    }

    pub fn string(&mut self, n: &Node, path: &str, hint: &str) -> Option<String> {
        match &n.value {
            Raw::Str(s) => Some(s.clone()),
            _ => {
                self.wrong_type(n, path, "a string", hint);
                None
            }
        }
    }

    /// A non-negative integer.
    pub fn u64(&mut self, n: &Node, path: &str, hint: &str) -> Option<u64> {
        match n.value {
            Raw::UInt(u) => Some(u),
            Raw::Int(i) if i >= 0 => u64::try_from(i).ok(),
            Raw::Int(_) => {
                self.error(
                    n,
                    path,
                    ConfigErrorKind::InvalidValue("must not be negative".into()),
                    hint.to_string(),
                );
                None
            }
            _ => {
                self.wrong_type(n, path, "an integer", hint);
                None
            }
        }
    }

    /// A finite number (integers are accepted).
    pub fn f64(&mut self, n: &Node, path: &str, hint: &str) -> Option<f64> {
        let v = match n.value {
            Raw::UInt(u) => u as f64,
            Raw::Int(i) => i as f64,
            Raw::Float(x) => x,
            _ => {
                self.wrong_type(n, path, "a number", hint);
                return None;
            }
        };
        if !v.is_finite() {
            self.error(
                n,
                path,
                ConfigErrorKind::InvalidValue(format!("`{v}` is not a finite number")),
                hint.to_string(),
            );
            return None;
        }
        Some(v)
    }

    /// A scalar parameter value (integer, number, bool or string) as JSON.
    /// A list item that is itself a list: a shape, every dimension a positive integer.
    pub fn shape(&mut self, n: &Node, dims: &[&Node], path: &str) -> Option<serde_json::Value> {
        let hint = "a shape is a list of positive integers, e.g. `grid_size: [64, 64, 64]`; a sweep of shapes is a list of them";
        if dims.is_empty() {
            self.error(
                n,
                path,
                ConfigErrorKind::InvalidValue("empty shape".into()),
                hint,
            );
            return None;
        }
        let mut out = Vec::with_capacity(dims.len());
        for (i, d) in dims.iter().enumerate() {
            match d.value {
                Raw::UInt(u) if u > 0 && i64::try_from(u).is_ok() => {
                    out.push(serde_json::Value::from(u))
                }
                Raw::Int(v) if v > 0 => out.push(serde_json::Value::from(v)),
                _ => {
                    self.wrong_type(
                        d,
                        &format!("{path}[{i}]"),
                        "a positive integer (a dimension of a shape)",
                        hint,
                    );
                    return None;
                }
            }
        }
        Some(serde_json::Value::Array(out))
    }

    pub fn scalar(&mut self, n: &Node, path: &str, hint: &str) -> Option<serde_json::Value> {
        match &n.value {
            Raw::UInt(u) => Some((*u).into()),
            Raw::Int(i) => Some((*i).into()),
            Raw::Float(x) if x.is_finite() => Some((*x).into()),
            Raw::Bool(b) => Some((*b).into()),
            Raw::Str(s) => Some(s.clone().into()),
            _ => {
                self.wrong_type(n, path, "an integer, number, boolean or string", hint);
                None
            }
        }
    }

    /// The file column of character `col` (1-based) of a string scalar at `n`, when the scalar
    /// sits on one line (plain or quoted); otherwise the scalar's own column.
    pub fn column_inside(&self, n: &Node, col: usize) -> u64 {
        let line_no = n.referenced.line();
        let start = n.referenced.column();
        let Some(line) = usize::try_from(line_no)
            .ok()
            .and_then(|l| self.text.lines().nth(l.saturating_sub(1)))
        else {
            return start;
        };
        let first = usize::try_from(start)
            .ok()
            .and_then(|c| line.chars().nth(c.saturating_sub(1)));
        let offset = match first {
            Some('"' | '\'') => 1,
            Some('|' | '>') | None => return start,
            Some(_) => 0,
        };
        start + offset + (col as u64).saturating_sub(1)
    }
}
