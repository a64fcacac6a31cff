//! Config errors: [`ConfigError`] (one problem, located as `file:line:col: key.path: message`, with a
//! `(hint: ...)` line) and [`ConfigErrors`] (every problem of every file, reported together; any
//! error stops the run before anything runs).

use crate::skip::ParseError;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// A position in a config file. Line and column are 1-based; 0 means "the whole file" (I/O
/// errors), and then only the path is printed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub file: Arc<PathBuf>,
    pub line: u64,
    pub column: u64,
}

impl Loc {
    pub fn file_only(file: &Arc<PathBuf>) -> Self {
        Self {
            file: file.clone(),
            line: 0,
            column: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.file
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
        }
    }
}

/// What went wrong, without where.
#[derive(Debug, Error)]
pub enum ConfigErrorKind {
    #[error("cannot read the file: {0}")]
    Io(#[source] std::io::Error),
    #[error("invalid YAML: {0}")]
    Yaml(String),
    #[error("unknown key `{0}`")]
    UnknownKey(String),
    #[error("missing required key `{0}`")]
    MissingKey(String),
    #[error("expected {expected}, found {found}")]
    WrongType { expected: String, found: String },
    #[error("{0}")]
    InvalidValue(String),
    #[error("invalid skip condition: {0}")]
    Expression(#[source] ParseError),
    #[error("{what} `{name}` is not declared by kernel `{kernel}`")]
    NotDeclared {
        what: &'static str,
        name: String,
        kernel: String,
    },
    #[error("`kernel: {0}` matches no kernel")]
    NoMatch(String),
    #[error(
        "`{name}` is set to {found}, which does not match the declared default's type ({expected})"
    )]
    ParamType {
        name: String,
        expected: String,
        found: String,
    },
}

/// One located config problem.
#[derive(Debug, Error)]
#[error("{loc}: {path}: {kind}\n  (hint: {hint})")]
pub struct ConfigError {
    pub loc: Loc,
    /// The key path inside the file, e.g. `problem_size.tile_size[1]`, or `<document>` for YAML
    /// syntax errors and `<file>` for I/O errors.
    pub path: String,
    #[source]
    pub kind: ConfigErrorKind,
    pub hint: String,
}

impl ConfigError {
    pub fn new(
        loc: Loc,
        path: impl Into<String>,
        kind: ConfigErrorKind,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            loc,
            path: path.into(),
            kind,
            hint: hint.into(),
        }
    }
}

/// Every config error found, in file order. `Display` prints each on its own lines.
#[derive(Debug, Default)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.0.iter()
    }

    /// Adds `e` unless the same error (same place, path and message) is already there: one glob
    /// entry resolved for several kernels can report one mistake several times.
    pub fn push(&mut self, e: ConfigError) {
        let rendered = e.to_string();
        if !self.0.iter().any(|x| x.to_string() == rendered) {
            self.0.push(e);
        }
    }

    pub fn extend(&mut self, other: ConfigErrors) {
        for e in other.0 {
            self.push(e);
        }
    }

    /// `Ok(value)` when no error was collected.
    pub fn into_result<T>(self, value: T) -> Result<T, ConfigErrors> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

impl IntoIterator for ConfigErrors {
    type Item = ConfigError;
    type IntoIter = std::vec::IntoIter<ConfigError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_path_message_and_hint() {
        let loc = Loc {
            file: Arc::new(PathBuf::from("bench.yaml.d/20-cuda.yaml")),
            line: 14,
            column: 3,
        };
        let e = ConfigError::new(
            loc,
            "problem_size.tile_size[1]",
            ConfigErrorKind::WrongType {
                expected: "an integer".into(),
                found: "a string".into(),
            },
            "write 16, not \"16\"",
        );
        let all = ConfigErrors(vec![e]);
        assert_eq!(
            all.to_string(),
            "error: bench.yaml.d/20-cuda.yaml:14:3: problem_size.tile_size[1]: expected an \
             integer, found a string\n  (hint: write 16, not \"16\")"
        );
    }
}
