//! `apex-host report`: re-renders `summary.md` and `index.html` from `summary.json` (after
//! editing nothing but the renderer, to add a regressions block or a history's trends), without
//! running anything.

use std::path::{Path, PathBuf};

use super::exit_codes::ApexExitCode;
use crate::model::{RunSummary, SUMMARY_SCHEMA_VERSION};
use crate::report::term::errln;
use crate::report::{WriteError, paths, render_summary_markdown, write_atomic};

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Report options")]
pub struct ReportArgs {
    /// The report folder of a run (the `--output-dir` of `apex-host run`).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "reports",
        env = "APEX_REPORT_DIR"
    )]
    pub input_dir: PathBuf,

    /// Where to write the Markdown [default: `<input-dir>/summary.md`].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// A Markdown file to include as the "Regressions" section (e.g. `<input-dir>/regressions.md`).
    #[arg(long, value_name = "FILE")]
    pub regressions: Option<PathBuf>,

    /// Exit at once (code 75) when a run holds the input directory, instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,

    /// Also write the results in these formats beside the Markdown (repeatable or
    /// comma-separated): csv, junit, bmf, github-action-benchmark, apex-x-gpu, apex-x-cpu,
    /// quasim, comprehensive.
    #[arg(long = "format", value_name = "FORMAT", value_delimiter = ',', value_parser = crate::report::exports::Format::parse)]
    pub formats: Vec<crate::report::exports::Format>,

    /// A history folder (`run --history`) whose trends index.html shows, change points marked.
    /// Read only: nothing is appended.
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,

    /// Anchor results to show beside the cases in summary.md and index.html, instead of the
    /// ones summary.json holds (which stays as the run wrote it).
    #[command(flatten)]
    pub anchors: super::anchor_opts::AnchorOpts,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "failed to find `{path}`\n(hint: run `apex-host run --output-dir {dir}` first, or point \
         `--input-dir` at a folder that holds a summary.json)",
        dir = path.parent().map_or_else(|| ".".into(), |d| d.display().to_string())
    )]
    MissingSummary { path: PathBuf },
    #[error("failed to read `{path}`: {source}\n(hint: check the file's permissions)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "failed to parse `{path}` at {line}:{column}: {source}\n(hint: the file is not a \
         summary.json written by apex-host (schema: docs/schemas/summary.schema.json); re-run \
         `apex-host run` to write a fresh one)"
    )]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        source: serde_json::Error,
    },
    #[error(
        "failed to use `{path}`: it has schema_version {found}, this apex-host reads {expected}\n\
         (hint: re-render it with the apex-host version that wrote it, or re-run the benchmarks)"
    )]
    SchemaVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error(
        "failed to read the regressions block `{path}`: {source}\n(hint: check `--regressions`)"
    )]
    Regressions {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Anchors(#[from] crate::anchors::AnchorError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Html(#[from] crate::report::html::HtmlError),
    #[error(transparent)]
    Lock(#[from] crate::report::LockError),
}

impl ReportError {
    /// A missing or unreadable input is a configuration error (nothing was rendered); failing to
    /// write the Markdown is an internal (I/O) error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Write(_)
            | Self::Html(
                crate::report::html::HtmlError::Write(_) | crate::report::html::HtmlError::Chart(_),
            ) => ApexExitCode::INTERNAL,
            Self::Lock(e) => super::lock::exit_code(e),
            _ => ApexExitCode::CONFIG_ERROR,
        }
    }
}

/// Reads `<input-dir>/summary.json`, writes the Markdown, returns the exit code (0).
pub fn exec(args: &ReportArgs) -> Result<i32, ReportError> {
    // Read before anything is written: a malformed anchor file changes nothing.
    let anchors = if args.anchors.anchor_results.is_empty() {
        None
    } else {
        Some(crate::anchors::load(&args.anchors.anchor_results)?)
    };
    // Writing into the run's folder: wait for a run that is writing it, so the Markdown is
    // rendered from its final summary.json and never overwrites its summary.md with an older one.
    // (A folder that does not exist holds no summary.json: that error comes below.)
    let _lock = if args.output.is_none() && args.input_dir.is_dir() {
        Some(super::lock::lock_output_dir(
            &args.input_dir,
            "report",
            args.no_wait,
            || false,
        )?)
    } else {
        None
    };
    let summary_path = args.input_dir.join(paths::SUMMARY_JSON);
    let mut summary = load_summary(&summary_path)?;
    super::anchor_opts::apply(&mut summary, anchors.as_ref());
    let regressions = match &args.regressions {
        Some(p) => Some(
            std::fs::read_to_string(p).map_err(|source| ReportError::Regressions {
                path: p.clone(),
                source,
            })?,
        ),
        None => None,
    };
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| args.input_dir.join(paths::SUMMARY_MD));
    let md = render_summary_markdown(&summary, regressions.as_deref());
    write_atomic(&out, md.as_bytes())?;
    announce(&out, &summary_path);
    let folder = out.parent().unwrap_or(std::path::Path::new("."));
    let gate = crate::report::html::GateView::read(&args.input_dir)?;
    let html = crate::report::html::write_report(
        folder,
        &summary,
        gate.as_ref(),
        args.history.as_deref(),
    )?;
    announce(&html, &summary_path);
    for file in crate::report::exports::write_exports(folder, &args.formats, &summary, None)? {
        announce(&file, &summary_path);
    }
    Ok(ApexExitCode::OK)
}

/// [`exec`], with any error printed to stderr and mapped to its exit code.
pub fn exec_to_code(args: &ReportArgs) -> i32 {
    match exec(args) {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            e.exit_code()
        }
    }
}

fn print_error(e: &ReportError) {
    errln!("error: {e}");
}

/// Loads and checks a `summary.json`.
pub fn load_summary(path: &Path) -> Result<RunSummary, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ReportError::MissingSummary {
                path: path.to_path_buf(),
            }
        } else {
            ReportError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    let summary: RunSummary =
        serde_json::from_str(&text).map_err(|source| ReportError::Malformed {
            path: path.to_path_buf(),
            line: source.line(),
            column: source.column(),
            source,
        })?;
    if summary.schema_version != SUMMARY_SCHEMA_VERSION {
        return Err(ReportError::SchemaVersion {
            path: path.to_path_buf(),
            found: summary.schema_version,
            expected: SUMMARY_SCHEMA_VERSION,
        });
    }
    Ok(summary)
}

fn announce(out: &Path, from: &Path) {
    errln!("wrote {} (from {})", out.display(), from.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dir: &Path) -> ReportArgs {
        ReportArgs {
            input_dir: dir.to_path_buf(),
            output: None,
            regressions: None,
            no_wait: false,
            formats: Vec::new(),
            history: None,
            anchors: Default::default(),
        }
    }

    fn summary_json() -> String {
        let s = RunSummary {
            schema_version: SUMMARY_SCHEMA_VERSION,
            suite: crate::model::SUITE_NAME.into(),
            timestamp_utc: "2026-01-02T03:04:05+00:00".into(),
            environment: serde_json::json!({"host": {"hostname": "h"}}),
            config: serde_json::json!({}),
            status: "empty".into(),
            counts: Default::default(),
            benchmarks: Default::default(),
            time_accounting: None,
            plan: None,
            anchors: None,
        };
        crate::report::to_sorted_json(&s).unwrap()
    }

    #[test]
    fn re_renders_summary_md_with_regressions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("summary.json"), summary_json()).unwrap();
        let reg = dir.path().join("regressions.md");
        std::fs::write(
            &reg,
            "| metric | verdict |\n|---|---|\n| a/p50_ms | regress |\n",
        )
        .unwrap();
        let mut a = args(dir.path());
        a.regressions = Some(reg);
        assert_eq!(exec(&a).unwrap(), 0);
        let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
        assert!(md.contains("| host | h |"));
        assert!(md.contains("## Regressions") && md.contains("| a/p50_ms | regress |"));
    }

    #[test]
    fn missing_summary_names_the_path_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let e = exec(&args(dir.path())).unwrap_err();
        assert_eq!(e.exit_code(), ApexExitCode::CONFIG_ERROR);
        let err = e.to_string();
        assert!(err.contains("summary.json`"), "{err}");
        assert!(
            err.contains("(hint: run `apex-host run --output-dir"),
            "{err}"
        );
    }

    #[test]
    fn malformed_summary_gives_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("summary.json"),
            "{\n  \"schema_version\": 1,\n  \"suite\": 7\n}\n",
        )
        .unwrap();
        let err = exec(&args(dir.path())).unwrap_err().to_string();
        assert!(err.contains("summary.json` at 3:"), "{err}");
        assert!(err.contains("(hint:"), "{err}");

        let wrong_version =
            summary_json().replace("\"schema_version\": 1", "\"schema_version\": 99");
        std::fs::write(dir.path().join("summary.json"), wrong_version).unwrap();
        let err = exec(&args(dir.path())).unwrap_err().to_string();
        assert!(err.contains("schema_version 99"), "{err}");
    }
}
