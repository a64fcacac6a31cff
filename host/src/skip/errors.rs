//! Errors of the skip-condition language: [`ParseError`] (caught at load time, located by column
//! inside the expression) and [`EvalError`] (a type error found while evaluating against facts).

use thiserror::Error;

/// A syntax error, unknown name or forbidden construct in a `check` expression.
///
/// `column` is 1-based and counts characters inside the expression text, so the config loader can
/// add it to the column of the YAML scalar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message} at column {column} of `{expression}`")]
pub struct ParseError {
    pub message: String,
    pub column: usize,
    pub expression: String,
    /// What to write instead; always present so every config error can print a `(hint: ...)` line.
    pub hint: String,
}

/// A type error found while evaluating a parsed expression, e.g. `os < 3`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot evaluate `{expression}`: {message} (at column {column})")]
pub struct EvalError {
    pub message: String,
    pub column: usize,
    pub expression: String,
}
