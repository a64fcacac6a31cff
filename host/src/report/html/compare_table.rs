//! The regression gate as nvbench shapes its compare output: per metric the reference and the
//! current time, the current noise, the difference and its percentage, and the status
//! (FAST, SLOW, SAME, or `????` when the evidence cannot tell), beside the seed rule's verdict.

use crate::compare::Check;
use crate::compare::verdict::Verdict;
use crate::model::RunSummary;

/// One row of the table, already formatted except for the status class.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub metric: String,
    pub reference_ms: Option<f64>,
    pub current_ms: Option<f64>,
    /// Half-width of the current median's confidence interval, relative to the median.
    pub noise: Option<f64>,
    pub diff_ms: Option<f64>,
    pub diff_pct: Option<f64>,
    /// nvbench's status word.
    pub status: &'static str,
    /// The seed rule's check status (`pass`, `fail`, `missing`, …).
    pub gate: &'static str,
    pub reason: Option<String>,
}

/// The rows of the gate's checks, noise read from the current run's cases.
pub fn rows(checks: &[Check], current: &RunSummary) -> Vec<Row> {
    checks.iter().map(|check| row(check, current)).collect()
}

fn row(check: &Check, current: &RunSummary) -> Row {
    let diff_ms = match (check.current_ms, check.baseline_ms) {
        (Some(c), Some(b)) => Some(c - b),
        _ => None,
    };
    let diff_pct = match (diff_ms, check.baseline_ms) {
        (Some(d), Some(b)) if b > 0.0 => Some(100.0 * d / b),
        _ => None,
    };
    let status = match check.verdict_kind() {
        Some(Verdict::Improve) => "FAST",
        Some(Verdict::Regress) => "SLOW",
        Some(Verdict::Pass) => "SAME",
        Some(Verdict::Inconclusive) | None => "????",
    };
    Row {
        metric: check.metric.clone(),
        reference_ms: check.baseline_ms,
        current_ms: check.current_ms,
        noise: noise(&check.metric, current),
        diff_ms,
        diff_pct,
        status,
        gate: check.status.as_str(),
        reason: check.reason.clone(),
    }
}

/// The relative half-width of the median CI of the case behind `metric` (`<case id>/<stat>`).
fn noise(metric: &str, current: &RunSummary) -> Option<f64> {
    let (case_id, _) = metric.rsplit_once('/')?;
    let case = current.benchmarks.get(case_id)?;
    let stats = &case.timing.get(case.headline.as_deref()?)?.stats;
    (stats.p50_ms > 0.0)
        .then(|| (stats.median_ci_high_ms - stats.median_ci_low_ms) / 2.0 / stats.p50_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::CheckStatus;
    use crate::compare::verdict::{VerdictMethod, VerdictReport};
    use crate::report::test_support::{measured_case, summary_of};

    #[test]
    fn a_slower_metric_reads_slow_with_its_difference_and_noise() {
        let case = measured_case("tile_ops.tile_pack", "cpu", 1.2, 0.02);
        let metric = format!("{}/p50_ms", case.id);
        let summary = summary_of(vec![case]);
        let mut check = Check::empty(metric.clone(), CheckStatus::Fail);
        check.baseline_ms = Some(1.0);
        check.current_ms = Some(1.2);
        check.verdict = Some(VerdictReport {
            verdict: Verdict::Regress,
            method: VerdictMethod::CurrentInterval,
            ci_low_ms: None,
            ci_high_ms: None,
            ratio: Some(1.2),
            ratio_ci_low: None,
            ratio_ci_high: None,
            mann_whitney_p: None,
            confidence_level: None,
        });
        let r = row(&check, &summary);
        assert_eq!(r.status, "SLOW");
        assert_eq!(r.gate, "fail");
        assert!((r.diff_pct.unwrap() - 20.0).abs() < 1e-9);
        assert!(r.noise.unwrap() > 0.0);
    }
}
