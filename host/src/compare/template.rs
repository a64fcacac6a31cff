//! `baseline emit`: a baseline template from a run, with the seeds' default tolerances for each
//! kind of metric, to be tightened by hand for the target machine.
//!
//! | case | p50 (ratio, abs ms) | p95 (ratio, abs ms) | source |
//! | --- | --- | --- | --- |
//! | CPU | 0.75, 2.0 | 1.0, 5.0 | CPU generator (`infer_p95` row for p95) |
//! | CUDA/TRT micro-benchmark | 0.6, 0.25 | 0.8, 0.5 | GPU generator, micro rows |
//! | CUDA/TRT end-to-end (work unit `frames`) | 0.5, 1.0 | 0.8, 2.0 | GPU generator, end-to-end rows (p95 ratio as committed) |
//!
//! Other stats take the p95 row when they are upper-tail (`p90/p99/max`), the p50 row otherwise.
//! Only cases whose status is `ok` are baselined: a skipped or failed case has no value to keep.
//! `required_status: "ok"` is set when any non-CPU case is baselined (the CPU template of the
//! seeds has no such key).

use std::collections::BTreeMap;

use super::lookup::{Current, lookup};
use super::{Baseline, BaselineMetric, baseline::BASELINE_SCHEMA_VERSION};
use crate::model::{CaseResult, CaseStatus, RunSummary};

/// The stats a template covers unless told otherwise.
pub const DEFAULT_TEMPLATE_STATS: &[&str] = &["p50_ms", "p95_ms"];

#[derive(Debug, Clone, PartialEq)]
pub struct TemplateOptions {
    /// Overrides every metric's ratio (`--ratio`).
    pub ratio: Option<f64>,
    /// Overrides every metric's absolute slack (`--abs-ms`).
    pub abs_ms: Option<f64>,
    /// Stat names to baseline per case (`--stat`, repeatable).
    pub stats: Vec<String>,
    /// Replaces the generated `baseline_notes`.
    pub notes: Option<String>,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        Self {
            ratio: None,
            abs_ms: None,
            stats: DEFAULT_TEMPLATE_STATS
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            notes: None,
        }
    }
}

/// A template and the cases left out of it (id and status).
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedTemplate {
    pub baseline: Baseline,
    pub left_out: Vec<(String, CaseStatus)>,
}

/// The seeds' default `(ratio, abs_ms)` for one stat of one case.
pub fn default_tolerance(case: &CaseResult, stat: &str) -> (f64, f64) {
    let stat = stat.rsplit('.').next().unwrap_or(stat);
    let upper_tail = matches!(stat, "p90_ms" | "p95_ms" | "p99_ms" | "max_ms");
    let end_to_end = case.work.as_ref().is_some_and(|w| w.unit == "frames");
    match (case.key.backend.as_str(), end_to_end, upper_tail) {
        ("cpu", _, false) => (0.75, 2.0),
        ("cpu", _, true) => (1.0, 5.0),
        (_, true, false) => (0.5, 1.0),
        (_, true, true) => (0.8, 2.0),
        (_, false, false) => (0.6, 0.25),
        (_, false, true) => (0.8, 0.5),
    }
}

pub fn emit_template(run: &RunSummary, opts: &TemplateOptions) -> EmittedTemplate {
    let mut metrics = BTreeMap::new();
    let mut left_out = Vec::new();
    let mut any_accelerator = false;
    for (id, case) in &run.benchmarks {
        if case.status != CaseStatus::Ok {
            left_out.push((id.clone(), case.status));
            continue;
        }
        for stat in &opts.stats {
            let metric = format!("{id}/{stat}");
            if let Current::Value(v) = lookup(run, &metric) {
                let (ratio, abs) = default_tolerance(case, stat);
                any_accelerator |= case.key.backend != "cpu";
                metrics.insert(
                    metric,
                    BaselineMetric {
                        value_ms: v.ms,
                        max_regression_ratio: opts.ratio.unwrap_or(ratio),
                        max_regression_abs_ms: opts.abs_ms.unwrap_or(abs),
                    },
                );
            }
        }
    }
    let notes = opts.notes.clone().unwrap_or_else(|| {
        format!(
            "Template emitted by `apex-host baseline emit` from the `{}` run of {}: values are that run's \
             measurements, tolerances the defaults per kind of metric (docs/protocol.md). Tighten them by \
             hand for the target machine.",
            run.suite, run.timestamp_utc
        )
    });
    EmittedTemplate {
        baseline: Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            suite: run.suite.clone(),
            baseline_notes: notes,
            required_status: any_accelerator.then(|| "ok".to_string()),
            metrics,
            reference: None,
        },
        left_out,
    }
}
