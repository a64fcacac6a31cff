//! Exports: the run's results in the formats other tools read, written beside `summary.json` by
//! `apex-host run --format …` and `apex-host report --format …`. Each is a pure function of the
//! summary (and, for JUnit, the gate's checks); one file per format.
//!
//! | `--format` | file | for |
//! | --- | --- | --- |
//! | `csv` | `results.csv` | spreadsheets, pandas: one row per case ([`csv`]) |
//! | `junit` | `junit.xml` | CI test reports: one test case per benchmark case, failures and skips ([`junit`]) |
//! | `bmf` | `bmf.json` | Bencher Metric Format: latency in ns with the median's 95 % CI, throughput ([`bmf`]) |
//! | `github-action-benchmark` | `github-action-benchmark.json` | `customSmallerIsBetter` entries ([`gab`]) |

mod bmf;
mod csv;
mod gab;
mod junit;

use std::path::{Path, PathBuf};

use crate::compare::Comparison;
use crate::model::RunSummary;

use super::{WriteError, write_atomic};

/// An export format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    Csv,
    Junit,
    Bmf,
    GithubActionBenchmark,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 4] = [
        Format::Csv,
        Format::Junit,
        Format::Bmf,
        Format::GithubActionBenchmark,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Junit => "junit",
            Format::Bmf => "bmf",
            Format::GithubActionBenchmark => "github-action-benchmark",
        }
    }

    /// The file the format is written to, inside the output folder.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Csv => "results.csv",
            Format::Junit => "junit.xml",
            Format::Bmf => "bmf.json",
            Format::GithubActionBenchmark => "github-action-benchmark.json",
        }
    }

    /// Parses a `--format` value, naming the valid ones when it is none of them.
    pub fn parse(text: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format `{text}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }

    /// The document of this format for `summary` (`gate`: the regression gate's checks, when
    /// the run was gated).
    pub fn render(self, summary: &RunSummary, gate: Option<&Comparison>) -> String {
        match self {
            Format::Csv => csv::render(summary),
            Format::Junit => junit::render(summary, gate),
            Format::Bmf => bmf::render(summary),
            Format::GithubActionBenchmark => gab::render(summary),
        }
    }
}

/// Writes every format of `formats` into `output_dir` atomically; returns the files written.
pub fn write_exports(
    output_dir: &Path,
    formats: &[Format],
    summary: &RunSummary,
    gate: Option<&Comparison>,
) -> Result<Vec<PathBuf>, WriteError> {
    let mut formats = formats.to_vec();
    formats.sort();
    formats.dedup();
    let mut written = Vec::new();
    for f in formats {
        let path = output_dir.join(f.file_name());
        write_atomic(&path, f.render(summary, gate).as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// The headline figures of a measured case, shared by the formats: p50, the median's CI, the
/// unit rate and bandwidth. `None` for a case without a valid timing (skipped, failed,
/// failed_accuracy).
struct Headline {
    p50_ms: f64,
    ci_low_ms: f64,
    ci_high_ms: f64,
    unit_rate: Option<(&'static str, f64)>,
    gbps: Option<f64>,
}

fn headline(case: &crate::model::CaseResult) -> Option<Headline> {
    if case.status != crate::model::CaseStatus::Ok {
        return None;
    }
    let mode = case.timing.get(case.headline.as_deref()?)?;
    let t = case.throughput.as_ref();
    Some(Headline {
        p50_ms: case.p50_ms?,
        ci_low_ms: mode.stats.median_ci_low_ms,
        ci_high_ms: mode.stats.median_ci_high_ms,
        unit_rate: t.and_then(super::unit_rate),
        gbps: t.map(|t| t.gbps).filter(|g| *g > 0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name_and_bad_names_list_the_good_ones() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.name()), Ok(f));
        }
        let e = Format::parse("xml").unwrap_err();
        assert!(
            e.contains("csv, junit, bmf, github-action-benchmark"),
            "{e}"
        );
    }

    #[test]
    fn every_format_is_written_once_and_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let s = super::super::test_support::sample_summary();
        let formats = [Format::Bmf, Format::Csv, Format::Bmf];
        let written = write_exports(dir.path(), &formats, &s, None).unwrap();
        assert_eq!(written.len(), 2);
        assert!(dir.path().join("bmf.json").is_file());
        assert!(dir.path().join("results.csv").is_file());
    }
}
