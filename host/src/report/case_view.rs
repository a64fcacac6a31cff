//! Read-only views of a [`CaseResult`] that several report renderers share: the headline
//! timing, whether it was throttled, its ordering in a leaderboard.

use std::cmp::Ordering;

use crate::model::{CaseResult, CaseStatus, ModeTiming, RunSummary};

/// The timing mode the case's headline p50 comes from (`cpu`, or `batch` for CUDA).
pub fn headline_timing(case: &CaseResult) -> Option<&ModeTiming> {
    match &case.headline {
        Some(mode) => case.timing.get(mode),
        None if case.timing.len() == 1 => case.timing.values().next(),
        None => None,
    }
}

/// Whether NVML saw the GPU throttle during the case's measurement window.
pub fn throttled(case: &CaseResult) -> bool {
    case.resources
        .energy
        .as_ref()
        .is_some_and(|e| e.throttled_samples > 0 || !e.throttle_reasons.is_empty())
}

/// `ok` cases, fastest headline p50 first; equal times (or none) in id order.
pub fn leaderboard(summary: &RunSummary) -> Vec<&CaseResult> {
    let mut cases: Vec<&CaseResult> = summary
        .benchmarks
        .values()
        .filter(|c| c.status == CaseStatus::Ok)
        .collect();
    cases.sort_by(|a, b| by_p50(a, b).then_with(|| a.id.cmp(&b.id)));
    cases
}

/// Cases with a p50 before cases without one, then ascending p50.
fn by_p50(a: &CaseResult, b: &CaseResult) -> Ordering {
    match (a.p50_ms, b.p50_ms) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// Cases of `status`, in id order.
pub fn with_status(summary: &RunSummary, status: CaseStatus) -> Vec<&CaseResult> {
    summary
        .benchmarks
        .values()
        .filter(|c| c.status == status)
        .collect()
}

/// `N (ok a, skipped b, ...)` from the cases themselves; a `total` entry in `counts` is not a
/// status and is not repeated.
pub fn counts_line(s: &RunSummary) -> String {
    let counts: Vec<String> = s
        .counts
        .iter()
        .filter(|(k, _)| k.as_str() != "total")
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!("{} ({})", s.benchmarks.len(), counts.join(", "))
}
