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
//! | `apex-x-gpu` | `perf_gpu.json`, `perf_gpu.md` | the Apex-X GPU suite's report (seed 000) from the CUDA cases at the fixed profile ([`apex_x_gpu`]) |
//! | `apex-x-cpu` | `perf_cpu.json` | the Apex-X CPU perf-regression report (seed 001), flat `metrics{KEY: ms}` ([`apex_x_cpu`]) |
//! | `quasim` | `quasim.json` | the QuASIM per-kernel report (seed 002), one object per case ([`quasim`]) |
//! | `comprehensive` | `comprehensive.json` | the "comprehensive benchmark" result rows (seed 004) of the nn_ops cases ([`comprehensive`]) |
//!
//! The seed formats take each field from one case, chosen by [`select::Selector`] (never a guess
//! among several); a field without a case is `null` with the reason. A seed-style baseline is
//! gated through the same tables ([`seed_keys`]); seed 003's TensorRT wrapper's keys and status
//! over the engine shape sweep are in [`trt_sweep`] (no file of its own).

pub mod apex_x_cpu;
pub mod apex_x_gpu;
mod bmf;
mod comprehensive;
mod csv;
mod gab;
mod junit;
mod quasim;
pub mod seed_keys;
pub mod select;
pub mod trt_sweep;

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
    ApexXGpu,
    ApexXCpu,
    Quasim,
    Comprehensive,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 8] = [
        Format::Csv,
        Format::Junit,
        Format::Bmf,
        Format::GithubActionBenchmark,
        Format::ApexXGpu,
        Format::ApexXCpu,
        Format::Quasim,
        Format::Comprehensive,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Junit => "junit",
            Format::Bmf => "bmf",
            Format::GithubActionBenchmark => "github-action-benchmark",
            Format::ApexXGpu => "apex-x-gpu",
            Format::ApexXCpu => "apex-x-cpu",
            Format::Quasim => "quasim",
            Format::Comprehensive => "comprehensive",
        }
    }

    /// The files the format is written to, inside the output folder.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Format::Csv => &["results.csv"],
            Format::Junit => &["junit.xml"],
            Format::Bmf => &["bmf.json"],
            Format::GithubActionBenchmark => &["github-action-benchmark.json"],
            Format::ApexXGpu => &[apex_x_gpu::JSON_FILE, apex_x_gpu::MARKDOWN_FILE],
            Format::ApexXCpu => &[apex_x_cpu::FILE],
            Format::Quasim => &[quasim::FILE],
            Format::Comprehensive => &[comprehensive::FILE],
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

    /// The documents of this format for `summary`, one per [`Format::file_names`] entry, in
    /// that order (`gate`: the regression gate's checks, when the run was gated).
    pub fn render(self, summary: &RunSummary, gate: Option<&Comparison>) -> Vec<String> {
        match self {
            Format::Csv => vec![csv::render(summary)],
            Format::Junit => vec![junit::render(summary, gate)],
            Format::Bmf => vec![bmf::render(summary)],
            Format::GithubActionBenchmark => vec![gab::render(summary)],
            Format::ApexXGpu => vec![
                sorted_json(&apex_x_gpu::document(summary)),
                apex_x_gpu::render_markdown(summary),
            ],
            Format::ApexXCpu => vec![sorted_json(&apex_x_cpu::document(summary))],
            Format::Quasim => vec![sorted_json(&quasim::document(summary))],
            Format::Comprehensive => vec![sorted_json(&comprehensive::document(summary))],
        }
    }
}

/// A seed document as the seeds' writers print it: keys sorted, indented, one trailing newline.
fn sorted_json(doc: &serde_json::Value) -> String {
    super::to_sorted_json(doc).unwrap_or_default()
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
        for (name, text) in f.file_names().iter().zip(f.render(summary, gate)) {
            let path = output_dir.join(name);
            write_atomic(&path, text.as_bytes())?;
            written.push(path);
        }
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

/// Validates `doc` against a schema of `docs/schemas/` (its text), for the formats' tests.
#[cfg(test)]
fn check_schema(schema: &str, doc: &serde_json::Value) -> Result<(), String> {
    let schema: serde_json::Value = serde_json::from_str(schema).map_err(|e| e.to_string())?;
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("schema.json", schema)
        .map_err(|e| format!("{e:#}"))?;
    let index = compiler
        .compile("schema.json", &mut schemas)
        .map_err(|e| format!("{e:#}"))?;
    schemas.validate(doc, index).map_err(|e| format!("{e:#}"))
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
            e.contains(
                "csv, junit, bmf, github-action-benchmark, apex-x-gpu, apex-x-cpu, quasim, comprehensive"
            ),
            "{e}"
        );
        for f in Format::ALL {
            let docs = f.render(&super::super::test_support::sample_summary(), None);
            assert_eq!(docs.len(), f.file_names().len(), "{}", f.name());
        }
    }

    #[test]
    fn every_format_is_written_once_and_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let s = super::super::test_support::sample_summary();
        let formats = [Format::Bmf, Format::Csv, Format::Bmf, Format::ApexXGpu];
        let written = write_exports(dir.path(), &formats, &s, None).unwrap();
        assert_eq!(written.len(), 4);
        for f in ["bmf.json", "results.csv", "perf_gpu.json", "perf_gpu.md"] {
            assert!(dir.path().join(f).is_file(), "{f}");
        }
    }
}
