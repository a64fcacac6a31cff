//! [`CompareError`]: everything that can stop a comparison before a verdict exists. A gate
//! *failure* is not an error: it is a [`super::Comparison`] whose exit code is
//! [`super::GateExitCode::GATE_FAILED`].

use std::path::PathBuf;

use crate::report::WriteError;

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(
        "failed to read `{path}`: {source}\n(hint: check the path; run `apex-host run` first to produce a summary)"
    )]
    Read {
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
    #[error("invalid baseline `{path}`: {detail}\n(hint: {hint})")]
    InvalidBaseline {
        path: PathBuf,
        detail: String,
        hint: String,
    },
    #[error(
        "cannot rebase the baseline on `{reference}`: {count} metric(s) have no figure there: {listed}\n(hint: the reference run must be a run of the baseline's reference build{}, on this machine, with the same cases: `apex-host run` from a checkout of that commit)",
        reference_commit.as_deref().map(|c| format!(" (commit {c})")).unwrap_or_default()
    )]
    Rebase {
        reference: PathBuf,
        count: usize,
        listed: String,
        reference_commit: Option<String>,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(
        "failed to run `git {args}` in `{repo}`: {source}\n(hint: is git installed and on PATH?)"
    )]
    GitSpawn {
        repo: PathBuf,
        args: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "git ref `{git_ref}` does not exist in `{repo}`\n(hint: fetch it first (`git fetch origin {git_ref}`) or pass a branch, tag or commit that exists)"
    )]
    GitRefMissing { repo: PathBuf, git_ref: String },
    #[error(
        "`{path}` does not exist at git ref `{git_ref}`: {stderr}\n(hint: the baseline was not committed at that ref; pass `--compare FILE` or another ref)"
    )]
    GitPathMissing {
        git_ref: String,
        path: String,
        stderr: String,
    },
    #[error(
        "failed to read history folder `{path}`: {source}\n(hint: pass the folder given to `--history` when runs were appended)"
    )]
    History {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl CompareError {
    /// Wraps a serde_json error on `path` with its line and column.
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

    pub(crate) fn read(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Read {
            path: path.into(),
            source,
        }
    }
}
