//! Reads one YAML document into a generic tree of [`Node`]s, each carrying the line and column it
//! came from (serde-saphyr's `Spanned`). Validation then walks the tree by hand, which is what lets
//! every error name its exact key path and position (`Spanned` does not survive
//! `#[serde(flatten)]`, and serde's derived errors carry no key path).
//!
//! Parser settings: YAML 1.2 booleans only (`yes`/`no`/`on`/`off` stay strings, so `yes` in a
//! bool-typed field is an error, not a silent `true`), duplicate keys are errors, and the default
//! alias budget stops anchor bombs.

use super::errors::{ConfigError, ConfigErrorKind, Loc};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

pub(crate) type Node = Spanned<Raw>;

impl Raw {
    /// How the value reads in "expected X, found Y".
    pub(crate) fn describe(&self) -> String {
        match self {
            Raw::Null => "nothing (null)".into(),
            Raw::Bool(b) => format!("the boolean `{b}`"),
            Raw::Int(i) => format!("the integer `{i}`"),
            Raw::UInt(u) => format!("the integer `{u}`"),
            Raw::Float(x) => format!("the number `{x}`"),
            Raw::Str(s) => format!("the string {s:?}"),
            Raw::Seq(_) => "a list".into(),
            Raw::Map(_) => "a mapping".into(),
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::UInt(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = a.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
        let mut pairs = Vec::new();
        while let Some(pair) = a.next_entry()? {
            pairs.push(pair);
        }
        Ok(Raw::Map(pairs))
    }
}

/// Config files larger than this are refused before parsing; a suite file is a page of YAML.
pub(crate) const MAX_FILE_BYTES: usize = 1 << 20;

/// Parses `text` (the contents of `file`). An empty document (or one of only comments) is `None`.
pub(crate) fn parse(text: &str, file: &Arc<PathBuf>) -> Result<Option<Node>, Box<ConfigError>> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Box::new(ConfigError::new(
            Loc::file_only(file),
            "<file>",
            ConfigErrorKind::InvalidValue(format!(
                "file is {} bytes (limit {MAX_FILE_BYTES})",
                text.len()
            )),
            "split the suite into several files under bench.yaml.d/",
        )));
    }
    let options = serde_saphyr::options! {
        strict_booleans: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<Option<Node>>(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map_or((0, 0), |l| (l.line().max(1), l.column().max(1)));
        let full = e.to_string();
        let message = match full.find(" at line ") {
            Some(i) => full[..i].to_string(),
            None => full,
        };
        let hint = yaml_hint(&message);
        Box::new(ConfigError::new(
            Loc {
                file: file.clone(),
                line,
                column,
            },
            "<document>",
            ConfigErrorKind::Yaml(message),
            hint,
        ))
    })
}

fn yaml_hint(message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("tab") {
        "indent with spaces; YAML does not allow tabs for indentation"
    } else if m.contains("duplicate") {
        "each key may appear once per mapping; remove or merge the repeated key"
    } else if m.contains("budget") || m.contains("alias") || m.contains("recursion") {
        "the document expands too many aliases (an anchor bomb?); write the values out"
    } else if m.contains("boolean") {
        "write booleans as `true` or `false`"
    } else {
        "fix the YAML syntax here (quotes, brackets, `key: value` indentation)"
    }
}

/// Location of a node.
pub(crate) fn loc(file: &Arc<PathBuf>, node: &Node) -> Loc {
    Loc {
        file: file.clone(),
        line: node.referenced.line(),
        column: node.referenced.column(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<PathBuf> {
        Arc::new(PathBuf::from("t.yaml"))
    }

    #[test]
    fn keeps_positions_and_scalar_kinds() {
        let n = parse("a: [8, \"16\", yes, 1.5, true, ~]\n", &file())
            .unwrap()
            .unwrap();
        let Raw::Map(pairs) = &n.value else { panic!() };
        let Raw::Seq(items) = &pairs[0].1.value else {
            panic!()
        };
        let kinds: Vec<_> = items.iter().map(|i| i.value.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                Raw::UInt(8),
                Raw::Str("16".into()),
                Raw::Str("yes".into()),
                Raw::Float(1.5),
                Raw::Bool(true),
                Raw::Null
            ]
        );
        assert_eq!(
            (items[1].referenced.line(), items[1].referenced.column()),
            (1, 8)
        );
    }

    #[test]
    fn syntax_errors_are_located() {
        for src in ["a: 1\na: 2\n", "a:\n\tb: 1\n", "a: [1, 2\n", "a: 'x\n"] {
            let e = parse(src, &file()).unwrap_err();
            assert!(e.loc.line >= 1, "{e}");
            assert_eq!(e.path, "<document>");
        }
        assert_eq!(parse("# only a comment\n", &file()).unwrap(), None);
    }
}
