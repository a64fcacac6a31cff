//! Resolving a metric id (`<case id>/<stat>` or `<case id>/<mode>.<stat>`) against a run.
//!
//! `<stat>` is one of `p50_ms p90_ms p95_ms p99_ms min_ms max_ms mean_ms`; without a mode it is
//! read from the case's headline mode (`cpu` for CPU cases, `batch` for CUDA), with `<mode>.`
//! (`cold.p50_ms`) from that timing mode.

use crate::model::{CaseResult, CaseStatus, ModeTiming, RunSummary, Summary};

/// What a run says about one metric.
#[derive(Debug)]
pub(crate) enum Current<'a> {
    /// No case with that id in the run.
    NoCase {
        case_id: String,
    },
    /// The case exists but its status is not `ok`.
    NotOk(&'a CaseResult),
    /// The case is ok but does not have the metric (unknown stat or mode).
    NoMetric {
        detail: String,
    },
    Value(MetricValue<'a>),
}

#[derive(Debug)]
pub(crate) struct MetricValue<'a> {
    pub ms: f64,
    /// The quantile the stat is (`None` for the mean).
    pub quantile: Option<f64>,
    pub samples: Option<&'a [f64]>,
    /// How many of `samples` each worker process took, when there were several.
    pub samples_per_process: Option<&'a [usize]>,
    pub stats: Option<&'a Summary>,
}

impl<'a> MetricValue<'a> {
    /// The samples split by worker process, when there were at least two processes and the
    /// counts add up.
    pub fn process_groups(&self) -> Option<Vec<&'a [f64]>> {
        let (samples, counts) = (self.samples?, self.samples_per_process?);
        if counts.len() < 2 || counts.iter().sum::<usize>() != samples.len() {
            return None;
        }
        let mut rest = samples;
        Some(
            counts
                .iter()
                .map(|&n| {
                    let (head, tail) = rest.split_at(n);
                    rest = tail;
                    head
                })
                .collect(),
        )
    }
}

/// Splits a metric id into the case id and the stat part.
pub fn split_metric(metric: &str) -> Option<(&str, &str)> {
    metric.rsplit_once('/')
}

/// The quantile a stat name stands for, and how to read it from a [`Summary`].
/// Reads one statistic from a [`Summary`].
type StatReader = fn(&Summary) -> f64;

fn stat_reader(stat: &str) -> Option<(Option<f64>, StatReader)> {
    Some(match stat {
        "p50_ms" => (Some(0.5), |s| s.p50_ms),
        "p90_ms" => (Some(0.9), |s| s.p90_ms),
        "p95_ms" => (Some(0.95), |s| s.p95_ms),
        "p99_ms" => (Some(0.99), |s| s.p99_ms),
        "min_ms" => (Some(0.0), |s| s.min_ms),
        "max_ms" => (Some(1.0), |s| s.max_ms),
        "mean_ms" => (None, |s| s.mean_ms),
        _ => return None,
    })
}

/// The stat names a metric id may end with.
pub const KNOWN_STATS: &[&str] = &[
    "p50_ms", "p90_ms", "p95_ms", "p99_ms", "min_ms", "max_ms", "mean_ms",
];

/// The mode a metric without an explicit mode reads: the headline, or the only mode there is.
pub(crate) fn headline_mode(case: &CaseResult) -> Option<(&str, &ModeTiming)> {
    match &case.headline {
        Some(h) => case
            .timing
            .get_key_value(h.as_str())
            .map(|(k, v)| (k.as_str(), v)),
        None if case.timing.len() == 1 => case.timing.iter().next().map(|(k, v)| (k.as_str(), v)),
        None => None,
    }
}

pub(crate) fn lookup<'a>(run: &'a RunSummary, metric: &str) -> Current<'a> {
    let Some((case_id, stat_part)) = split_metric(metric) else {
        return Current::NoCase {
            case_id: metric.to_string(),
        };
    };
    let Some(case) = run.benchmarks.get(case_id) else {
        return Current::NoCase {
            case_id: case_id.to_string(),
        };
    };
    if case.status != CaseStatus::Ok {
        return Current::NotOk(case);
    }
    let (mode, stat) = match stat_part.split_once('.') {
        Some((m, s)) => (Some(m), s),
        None => (None, stat_part),
    };
    let Some((quantile, read)) = stat_reader(stat) else {
        return Current::NoMetric {
            detail: format!(
                "unknown statistic `{stat}` (known: {})",
                KNOWN_STATS.join(", ")
            ),
        };
    };
    let timing = match mode {
        Some(m) => case.timing.get(m),
        None => headline_mode(case).map(|(_, t)| t),
    };
    match timing {
        Some(t) => Current::Value(MetricValue {
            ms: read(&t.stats),
            quantile,
            samples: t.samples_ms.as_deref(),
            samples_per_process: t.samples_per_process.as_deref(),
            stats: Some(&t.stats),
        }),
        None => {
            // Older or partial results may carry only the Apex-X top-level names.
            let top = match (mode, stat) {
                (None, "p50_ms") => case.p50_ms,
                (None, "p95_ms") => case.p95_ms,
                _ => None,
            };
            match top {
                Some(ms) => Current::Value(MetricValue {
                    ms,
                    quantile,
                    samples: None,
                    samples_per_process: None,
                    stats: None,
                }),
                None => Current::NoMetric {
                    detail: format!(
                        "case `{case_id}` has no timing mode `{}` (modes: {})",
                        mode.or(case.headline.as_deref()).unwrap_or("<headline>"),
                        case.timing.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                },
            }
        }
    }
}
