//! [`pool`]: the outcomes of one case's worker processes as one outcome. A crash, timeout or error
//! in any process is the case's outcome (the first one, in process order); otherwise the samples
//! of each timing mode are pooled, and the accuracy check that failed (if any) is kept.

use super::isolation::WorkerOutcome;
use super::wire::WorkerReply;

/// Pools `outcomes` (one per process, at least one).
pub fn pool(outcomes: Vec<WorkerOutcome>) -> WorkerOutcome {
    let mut replies = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        match outcome {
            WorkerOutcome::Replied(r) if r.error.is_none() && r.skipped.is_none() => {
                replies.push(*r)
            }
            other => return other,
        }
    }
    let mut it = replies.into_iter();
    let Some(mut merged) = it.next() else {
        return WorkerOutcome::Crashed("no worker process ran".into());
    };
    for r in it {
        merge_into(&mut merged, r);
    }
    WorkerOutcome::Replied(Box::new(merged))
}

fn merge_into(into: &mut WorkerReply, other: WorkerReply) {
    for mode in other.modes {
        match into.modes.iter_mut().find(|m| m.mode == mode.mode) {
            Some(m) => {
                m.per_call_ms.extend(mode.per_call_ms);
                m.samples_per_process.extend(mode.samples_per_process);
                m.elapsed_s += mode.elapsed_s;
                m.calls_per_sample = m.calls_per_sample.max(mode.calls_per_sample);
                m.short_holds = match (m.short_holds, mode.short_holds) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            None => into.modes.push(mode),
        }
    }
    if let Some(acc) = other.accuracy
        && (into.accuracy.is_none()
            || (!acc.passed && into.accuracy.as_ref().is_some_and(|a| a.passed)))
    {
        into.accuracy = Some(acc);
    }
    for figure in other.figures {
        match into.figures.iter_mut().find(|f| f.name == figure.name) {
            Some(f) => f.values.extend(figure.values),
            None => into.figures.push(figure),
        }
    }
    // Notes of every process, each line once, in the order first seen.
    for note in other.notes {
        if !into.notes.contains(&note) {
            into.notes.push(note);
        }
    }
    into.peak_rss_mb = max_opt(into.peak_rss_mb, other.peak_rss_mb);
    into.peak_device_memory_mb = max_opt(into.peak_device_memory_mb, other.peak_device_memory_mb);
    into.loaded_after_ms = into.loaded_after_ms.max(other.loaded_after_ms);
    // Phases add up over the processes: the case's time is the sum of its workers'.
    for (name, s) in other.phases {
        match into.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += s,
            None => into.phases.push((name, s)),
        }
    }
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::wire::RawMode;

    fn reply(samples: &[f64], passed: bool) -> WorkerOutcome {
        WorkerOutcome::Replied(Box::new(WorkerReply {
            modes: vec![RawMode {
                mode: "cpu".into(),
                calls_per_sample: 2,
                graph: false,
                per_call_ms: samples.to_vec(),
                samples_per_process: vec![samples.len()],
                warmup_calls: 1,
                stopped_by: "fixed".into(),
                elapsed_s: 0.5,
                cache: None,
                buffer_sets: None,
                short_holds: None,
            }],
            accuracy: Some(crate::model::AccuracyBlock {
                passed,
                elements: 1,
                rmse: 0.0,
                max_abs_error: 0.0,
                max_rel_error: 0.0,
                mismatch_ratio: 0.0,
                non_finite: 0,
                tolerance: Default::default(),
                note: None,
            }),
            peak_rss_mb: Some(samples.len() as f64),
            ..WorkerReply::default()
        }))
    }

    #[test]
    fn samples_pool_and_a_failed_check_wins() {
        let WorkerOutcome::Replied(r) = pool(vec![reply(&[1.0, 2.0], true), reply(&[3.0], false)])
        else {
            panic!("replied")
        };
        assert_eq!(r.modes[0].per_call_ms, [1.0, 2.0, 3.0]);
        assert_eq!(r.modes[0].samples_per_process, [2, 1]);
        assert_eq!(r.modes[0].elapsed_s, 1.0);
        assert!(!r.accuracy.unwrap().passed);
        assert_eq!(r.peak_rss_mb, Some(2.0));
    }

    /// The processes' short-hold counts add up; a process without any leaves the others'.
    #[test]
    fn short_holds_add_up_across_processes() {
        let with = |short: Option<u64>| {
            let mut out = reply(&[1.0], true);
            if let WorkerOutcome::Replied(r) = &mut out {
                r.modes[0].short_holds = short;
            }
            out
        };
        for (a, b, merged) in [
            (Some(1), Some(2), Some(3)),
            (None, Some(2), Some(2)),
            (Some(4), None, Some(4)),
            (None, None, None),
        ] {
            let WorkerOutcome::Replied(r) = pool(vec![with(a), with(b)]) else {
                panic!("replied")
            };
            assert_eq!(r.modes[0].short_holds, merged, "{a:?} + {b:?}");
        }
    }

    #[test]
    fn a_crash_in_any_process_is_the_outcome() {
        let out = pool(vec![
            reply(&[1.0], true),
            WorkerOutcome::TimedOut(3.0),
            WorkerOutcome::Crashed("x".into()),
        ]);
        assert_eq!(out, WorkerOutcome::TimedOut(3.0));
    }
}
