//! [`AttestError`]: failures while hashing artifacts or reading gate evidence.

use std::path::PathBuf;

use crate::report::WriteError;

#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    #[error(
        "failed to read `{path}`: {source}\n(hint: check the path; artifacts are produced by `apex-host run` and `apex-host compare`)"
    )]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to parse `{path}` at {line}:{column}: {source}\n(hint: {hint})")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        hint: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "`{path}` is not a compare summary: {detail}\n(hint: pass the `compare_summary.json` written by `apex-host compare` or `run --compare`)"
    )]
    NotACompareSummary { path: PathBuf, detail: String },
    #[error("`{value}` is not a valid {what}\n(hint: {hint})")]
    BadArgument {
        what: &'static str,
        value: String,
        hint: String,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl AttestError {
    pub(crate) fn parse(
        path: impl Into<PathBuf>,
        hint: &'static str,
        source: serde_json::Error,
    ) -> Self {
        Self::Parse {
            path: path.into(),
            line: source.line(),
            column: source.column(),
            hint,
            source,
        }
    }
}
