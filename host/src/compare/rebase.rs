//! [`rebase`]: a baseline file's values re-measured on this machine, its tolerances kept.
//!
//! A committed CPU baseline holds absolute times from one machine. Instances of one cloud VM
//! class differ by more than any useful tolerance (on the 2-vCPU CI class the build a baseline
//! was measured from read 2.07x slower on another instance: `baselines/README.md`), so gating
//! another machine against those values fails on the machine, not the code. Rebasing removes
//! the machine: the baseline's *reference build* (its `reference_commit`) is run on the machine
//! at hand, and each metric's `value_ms` becomes that run's figure, while `max_regression_ratio`
//! and `max_regression_abs_ms` (the case's measured noise) stay as committed. The rule is then
//! the seeds' rule exactly, on two runs of one machine, and the reference run's raw samples feed
//! the two-sample verdicts (asv's `continuous` compares two commits the same way).

use std::path::Path;

use super::lookup::{Current, lookup};
use super::{Baseline, CompareError};
use crate::model::RunSummary;

/// How many of the metrics that could not be rebased an error lists by name.
const LISTED_MISSING: usize = 5;

/// `baseline` with every metric's `value_ms` taken from `reference` (a run of the reference
/// build on this machine); `reference_path` names that run in errors and notes.
///
/// Every metric must be rebased: one the reference run lacks (or whose case there is not `ok`)
/// is an error listing them, since a value from another machine would decide its check.
pub fn rebase(
    baseline: &Baseline,
    reference: RunSummary,
    reference_path: &Path,
) -> Result<Baseline, CompareError> {
    let mut rebased = baseline.clone();
    let mut missing = Vec::new();
    for (key, metric) in &mut rebased.metrics {
        let why = match baseline.metric_id(&reference, key) {
            Ok(id) => match lookup(&reference, &id) {
                Current::Value(v) => {
                    metric.value_ms = v.ms;
                    continue;
                }
                Current::NotOk(case) => format!("case is `{}`", case.status.as_str()),
                Current::NoCase { .. } => "no such case".to_string(),
                Current::NoMetric { detail } => detail,
            },
            Err(reason) => reason,
        };
        missing.push(format!("`{key}` ({why})"));
    }
    if !missing.is_empty() {
        return Err(CompareError::Rebase {
            reference: reference_path.to_path_buf(),
            count: missing.len(),
            listed: missing
                .into_iter()
                .take(LISTED_MISSING)
                .collect::<Vec<_>>()
                .join("; "),
            reference_commit: baseline.reference_commit.clone(),
        });
    }
    let commit = reference.git_commit();
    rebased.baseline_notes = format!(
        "Rebased on `{}` (reference build {}, run {}): values from that run on this machine, tolerances as committed. {}",
        reference_path.display(),
        commit.as_deref().unwrap_or("of an unknown commit"),
        reference.timestamp_utc,
        baseline.baseline_notes
    );
    if let (Some(want), Some(got)) = (&baseline.reference_commit, &commit)
        && !commits_match(want, got)
    {
        rebased.baseline_notes = format!(
            "Warning: the baseline's reference build is {want}, the reference run is of {got}. {}",
            rebased.baseline_notes
        );
    }
    rebased.reference = Some(Box::new(reference));
    Ok(rebased)
}

/// Whether two commit names agree (either may be abbreviated).
fn commits_match(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_end_matches("+dirty"), b.trim_end_matches("+dirty"));
    !a.is_empty() && !b.is_empty() && (a.starts_with(b) || b.starts_with(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{GateExitCode, GateOptions, gate};

    use crate::report::test_support::{case_at, summary_of};

    const ID: &str = "k.op/cpu/fp32/n=1";

    /// A run with one ok CPU case [`ID`] whose p50 is `p50` ms, built from `commit`.
    fn run(p50: f64, commit: &str) -> RunSummary {
        let mut r = summary_of(vec![case_at("k.op", "cpu", "fp32", &[("n", "1")], p50)]);
        r.environment["git"] = serde_json::json!({"commit": commit, "dirty": false});
        assert!(r.benchmarks.contains_key(ID));
        r
    }

    fn baseline(value_ms: f64) -> Baseline {
        Baseline::parse(
            &format!(
                r#"{{"schema_version":1,"suite":"s","baseline_notes":"made elsewhere","reference_commit":"abc123",
                "metrics":{{"k.op/cpu/fp32/n=1/p50_ms":{{"value_ms":{value_ms},"max_regression_ratio":0.5,"max_regression_abs_ms":0}}}}}}"#
            ),
            Path::new("cpu.json"),
        )
        .unwrap()
    }

    #[test]
    fn values_come_from_the_reference_run_and_tolerances_stay() {
        // Baseline from a machine 2x faster: the same code here fails it unrebased, passes rebased.
        let b = baseline(1.0);
        let here = run(2.1, "abc123def");
        assert_eq!(
            gate(&here, &b, &GateOptions::default()).exit_code(),
            GateExitCode::GATE_FAILED
        );
        let rebased = rebase(&b, run(2.0, "abc123def"), Path::new("ref/summary.json")).unwrap();
        let m = rebased.metrics[&format!("{ID}/p50_ms")];
        assert_eq!((m.value_ms, m.max_regression_ratio), (2.0, 0.5));
        assert_eq!(
            gate(&here, &rebased, &GateOptions::default()).exit_code(),
            0
        );
        // A real slowdown on this machine still fails: 3.1 > 2.0 * 1.5.
        assert_ne!(
            gate(&run(3.1, "x"), &rebased, &GateOptions::default()).exit_code(),
            0
        );
        assert!(
            rebased
                .baseline_notes
                .starts_with("Rebased on `ref/summary.json`")
        );
        assert!(rebased.baseline_notes.contains("abc123def"));
        assert!(!rebased.baseline_notes.contains("Warning"));
        assert!(rebased.reference.is_some());
    }

    #[test]
    fn a_reference_of_another_commit_is_named_in_the_notes() {
        let rebased = rebase(&baseline(1.0), run(2.0, "fff000"), Path::new("r.json")).unwrap();
        assert!(
            rebased
                .baseline_notes
                .starts_with("Warning: the baseline's reference build is abc123"),
            "{}",
            rebased.baseline_notes
        );
    }

    #[test]
    fn a_metric_the_reference_lacks_is_an_error_that_names_it() {
        let mut other = run(2.0, "abc123");
        other.benchmarks.clear();
        let err = rebase(&baseline(1.0), other, Path::new("ref/summary.json"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ref/summary.json")
                && err.contains(&format!("`{ID}/p50_ms` (no such case)"))
                && err.contains("abc123")
                && err.contains("hint:"),
            "{err}"
        );
    }

    #[test]
    fn commit_names_match_by_prefix() {
        assert!(commits_match("fa5a762", "fa5a7623abc"));
        assert!(commits_match("fa5a7623abc+dirty", "fa5a762"));
        assert!(!commits_match("fa5a762", "e55d036"));
        assert!(!commits_match("", "e55d036"));
    }
}
