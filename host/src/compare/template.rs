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

/// [`emit_template_from_runs`] of one run.
pub fn emit_template(run: &RunSummary, opts: &TemplateOptions) -> EmittedTemplate {
    emit_template_from_runs(std::slice::from_ref(run), opts)
}

/// A template from several runs of the same build (the first run names the suite). A metric is
/// kept when its case is `ok` in every run; its value is the median across runs, and its ratio is
/// widened so that the allowed maximum is `(1 + ratio)` times the slowest run seen:
/// `ratio' = (1 + ratio) * slowest / median - 1`. A case that is stable between runs keeps the
/// ratio; one whose speed moves between runs (a CPU kernel sensitive to memory placement, say)
/// gets the slack its own runs showed, and the notes list it.
pub fn emit_template_from_runs(runs: &[RunSummary], opts: &TemplateOptions) -> EmittedTemplate {
    let Some(run) = runs.first() else {
        return EmittedTemplate {
            baseline: Baseline {
                schema_version: BASELINE_SCHEMA_VERSION,
                suite: String::new(),
                baseline_notes: "no run given".into(),
                required_status: None,
                reference_commit: None,
                metrics: BTreeMap::new(),
                reference: None,
                seed_keys: None,
            },
            left_out: Vec::new(),
        };
    };
    let mut metrics = BTreeMap::new();
    let mut left_out = Vec::new();
    let mut widened = Vec::new();
    let mut any_accelerator = false;
    for (id, case) in &run.benchmarks {
        let not_ok = runs
            .iter()
            .map(|r| {
                r.benchmarks
                    .get(id)
                    .map_or(CaseStatus::Skipped, |c| c.status)
            })
            .find(|s| *s != CaseStatus::Ok);
        if let Some(status) = not_ok {
            left_out.push((id.clone(), status));
            continue;
        }
        for stat in &opts.stats {
            let metric = format!("{id}/{stat}");
            let mut values: Vec<f64> = runs
                .iter()
                .filter_map(|r| match lookup(r, &metric) {
                    Current::Value(v) => Some(v.ms),
                    _ => None,
                })
                .collect();
            if values.len() != runs.len() {
                continue;
            }
            values.sort_by(f64::total_cmp);
            let median = crate::stats::quantile_sorted(&values, 0.5);
            let slowest = values[values.len() - 1];
            let (default_ratio, abs) = default_tolerance(case, stat);
            let ratio = opts.ratio.unwrap_or(default_ratio);
            let spread = if median > 0.0 { slowest / median } else { 1.0 };
            let ratio = if spread > 1.0 {
                ((1.0 + ratio) * spread - 1.0).max(ratio)
            } else {
                ratio
            };
            if spread > 1.05 {
                widened.push(format!(
                    "{metric} (runs up to {:.0} % above their median)",
                    (spread - 1.0) * 100.0
                ));
            }
            any_accelerator |= case.key.backend != "cpu";
            metrics.insert(
                metric,
                BaselineMetric {
                    value_ms: median,
                    max_regression_ratio: ratio,
                    max_regression_abs_ms: opts.abs_ms.unwrap_or(abs),
                },
            );
        }
    }
    let notes = opts.notes.clone().unwrap_or_else(|| {
        let mut notes = if runs.len() == 1 {
            format!(
                "Template emitted by `apex-host baseline emit` from the `{}` run of {}: values are that run's \
                 measurements, {}. Tighten them by hand for the target machine.",
                run.suite,
                run.timestamp_utc,
                tolerance_source(opts)
            )
        } else {
            format!(
                "Emitted by `apex-host baseline emit` from {} runs of `{}` (the first of {}): values are the \
                 median across runs, {}; each ratio is widened so the allowed maximum is (1 + ratio) times \
                 the slowest run (docs/protocol.md).",
                runs.len(),
                run.suite,
                run.timestamp_utc,
                tolerance_source(opts)
            )
        };
        if !widened.is_empty() {
            notes.push_str(&format!(" Widened by the spread between runs: {}.", widened.join("; ")));
        }
        notes
    });
    EmittedTemplate {
        baseline: Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            suite: run.suite.clone(),
            baseline_notes: notes,
            required_status: any_accelerator.then(|| "ok".to_string()),
            reference_commit: common_clean_commit(runs),
            metrics,
            reference: None,
            seed_keys: None,
        },
        left_out,
    }
}

/// Where the template's tolerances came from, as its notes say it: the defaults per kind of
/// metric, or the `--ratio` / `--abs-ms` given for every metric.
fn tolerance_source(opts: &TemplateOptions) -> String {
    match (opts.ratio, opts.abs_ms) {
        (None, None) => "tolerances the defaults per kind of metric (docs/protocol.md)".into(),
        (Some(r), Some(a)) => {
            format!("tolerances `--ratio {r}` and `--abs-ms {a}` for every metric")
        }
        (Some(r), None) => format!(
            "ratio `--ratio {r}` for every metric, absolute slack the default per kind of metric \
             (docs/protocol.md)"
        ),
        (None, Some(a)) => format!(
            "absolute slack `--abs-ms {a}` for every metric, ratio the default per kind of metric \
             (docs/protocol.md)"
        ),
    }
}

/// The commit every run was built from, when they agree and none had a dirty tree: the
/// baseline's `reference_commit` (what `compare --rebase` re-runs elsewhere).
fn common_clean_commit(runs: &[RunSummary]) -> Option<String> {
    let first = runs.first()?.git_commit()?;
    let clean = !first.ends_with("+dirty");
    (clean
        && runs
            .iter()
            .all(|r| r.git_commit().as_deref() == Some(first.as_str())))
    .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    #[test]
    fn notes_name_the_tolerances_given_not_the_defaults() {
        let run = sample_summary();
        let notes = |ratio, abs_ms| {
            let opts = TemplateOptions {
                ratio,
                abs_ms,
                ..TemplateOptions::default()
            };
            emit_template(&run, &opts).baseline.baseline_notes
        };
        assert!(notes(None, None).contains("the defaults per kind of metric"));
        let both = notes(Some(0.15), Some(0.0005));
        assert!(both.contains("`--ratio 0.15` and `--abs-ms 0.0005` for every metric"));
        assert!(!both.contains("defaults"), "{both}");
        assert!(notes(Some(0.2), None).contains("absolute slack the default"));
        assert!(notes(None, Some(0.001)).contains("ratio the default"));
        let two = emit_template_from_runs(
            &[run.clone(), run.clone()],
            &TemplateOptions {
                ratio: Some(0.15),
                abs_ms: Some(0.0005),
                ..TemplateOptions::default()
            },
        );
        assert!(
            two.baseline
                .baseline_notes
                .contains("median across runs, tolerances `--ratio 0.15`")
        );
    }

    #[test]
    fn runs_of_one_clean_commit_name_it_and_others_do_not() {
        let mut a = sample_summary();
        a.environment["git"] = serde_json::json!({"commit": "abc", "dirty": false});
        let mut b = a.clone();
        let opts = TemplateOptions::default();
        let same = emit_template_from_runs(&[a.clone(), b.clone()], &opts).baseline;
        assert_eq!(same.reference_commit.as_deref(), Some("abc"));
        b.environment["git"]["commit"] = "def".into();
        assert_eq!(
            emit_template_from_runs(&[a.clone(), b], &opts)
                .baseline
                .reference_commit,
            None
        );
        a.environment["git"]["dirty"] = true.into();
        assert_eq!(
            emit_template_from_runs(&[a], &opts)
                .baseline
                .reference_commit,
            None
        );
    }
}
