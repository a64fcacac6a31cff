//! The sampling protocol shared by every timer: warm-up (count and time cap), batching of calls
//! too short for the clock, then samples until the stopping rule holds. `docs/protocol.md`
//! describes it; this file is the only implementation.

use std::time::Instant;

use super::{MeasureError, Timer, Workload};
use crate::model::{ProtocolSettings, StoppingRule};
use crate::stats;

/// The raw result of sampling one mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub mode: &'static str,
    pub calls_per_sample: u64,
    /// Seconds per call, one entry per sample.
    pub per_call_s: Vec<f64>,
    pub warmup_calls: u64,
    /// `fixed`, `converged`, `time_cap` or `max_samples`.
    pub stopped_by: &'static str,
    pub elapsed_s: f64,
    pub graph: bool,
}

/// No sample batches more calls than this, whatever the estimate says.
const MAX_CALLS_PER_SAMPLE: u64 = 10_000_000;
/// No run takes more samples than this.
const MAX_SAMPLES: usize = 100_000;
/// The noise check (a sort of all samples) runs every this many samples.
const NOISE_CHECK_EVERY: usize = 8;

/// Warms up, picks the batch size, and samples until `settings.stopping` holds.
pub fn sample(
    timer: &mut dyn Timer,
    work: &mut dyn Workload,
    settings: &ProtocolSettings,
) -> Result<Sampled, MeasureError> {
    let warm_start = Instant::now();
    let mut warmup_calls = 0;
    let mut last_call_s = f64::NAN;
    // At least one call always runs: it both warms up and gives the first duration estimate.
    while warmup_calls < settings.warmup.max(1) {
        last_call_s = timer.sample(work, 1)?;
        warmup_calls += 1;
        if warm_start.elapsed().as_secs_f64() >= settings.warmup_max_s {
            break;
        }
    }
    let calls = if timer.batches() {
        batch_size(timer, work, last_call_s)?
    } else {
        1
    };

    let start = Instant::now();
    let mut per_call_s = Vec::new();
    let stopped_by = loop {
        per_call_s.push(timer.sample(work, calls)? / calls as f64);
        let n = per_call_s.len();
        let elapsed = start.elapsed().as_secs_f64();
        match settings.stopping {
            StoppingRule::Fixed { iters } => {
                if n as u64 >= iters.max(1) {
                    break "fixed";
                }
            }
            StoppingRule::Adaptive {
                min_samples,
                min_time_s,
                target_rel_noise,
                max_time_s,
            } => {
                if elapsed >= max_time_s && n as u64 >= min_samples.min(3) {
                    break "time_cap";
                }
                if n as u64 >= min_samples
                    && elapsed >= min_time_s
                    && n % NOISE_CHECK_EVERY == 0
                    && stats::relative_noise_of_median(&per_call_s) <= target_rel_noise
                {
                    break "converged";
                }
            }
        }
        if n >= MAX_SAMPLES {
            break "max_samples";
        }
    };
    Ok(Sampled {
        mode: timer.mode(),
        calls_per_sample: calls,
        per_call_s,
        warmup_calls,
        stopped_by,
        elapsed_s: start.elapsed().as_secs_f64(),
        graph: timer.used_graph(),
    })
}

/// The number of calls per sample so that one sample lasts at least `timer.min_sample_s()`:
/// estimated from the last warm-up call, then checked with one real batch and grown if the
/// estimate was optimistic (a first call is often slower than the rest).
fn batch_size(
    timer: &mut dyn Timer,
    work: &mut dyn Workload,
    call_s: f64,
) -> Result<u64, MeasureError> {
    let target = timer.min_sample_s();
    let mut calls = calls_for(target, call_s);
    for _ in 0..8 {
        let t = timer.sample(work, calls)?;
        if t >= target || calls >= MAX_CALLS_PER_SAMPLE {
            break;
        }
        calls = calls_for(target, t / calls as f64)
            .max(calls * 2)
            .min(MAX_CALLS_PER_SAMPLE);
    }
    Ok(calls)
}

fn calls_for(target_s: f64, call_s: f64) -> u64 {
    // NaN and non-positive estimates both mean "unknown": batch as much as allowed.
    if call_s.is_nan() || call_s <= 0.0 {
        return MAX_CALLS_PER_SAMPLE;
    }
    // A hair below the quotient, so that 1e-3 / 1e-6 = 1000.0000000000001 gives 1000 calls.
    (((target_s / call_s) * (1.0 - 4.0 * f64::EPSILON)).ceil() as u64)
        .clamp(1, MAX_CALLS_PER_SAMPLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake clock: each call "takes" `call_s`, so the protocol's arithmetic is checked exactly.
    struct FakeTimer {
        call_s: f64,
        batches: bool,
    }
    impl Timer for FakeTimer {
        fn mode(&self) -> &'static str {
            "fake"
        }
        fn batches(&self) -> bool {
            self.batches
        }
        fn min_sample_s(&self) -> f64 {
            1e-3
        }
        fn sample(&mut self, work: &mut dyn Workload, calls: u64) -> Result<f64, MeasureError> {
            for _ in 0..calls {
                work.call()?;
            }
            Ok(self.call_s * calls as f64)
        }
    }
    struct Count(u64);
    impl Workload for Count {
        fn call(&mut self) -> Result<(), MeasureError> {
            self.0 += 1;
            Ok(())
        }
    }

    #[test]
    fn short_calls_are_batched_to_the_minimum_sample() {
        let settings = ProtocolSettings {
            warmup: 2,
            warmup_max_s: 1.0,
            stopping: StoppingRule::Fixed { iters: 5 },
            timeout_s: 1.0,
            processes: 1,
            l2_hot_batch: false,
        };
        let s = sample(
            &mut FakeTimer {
                call_s: 1e-6,
                batches: true,
            },
            &mut Count(0),
            &settings,
        )
        .unwrap();
        assert_eq!(s.calls_per_sample, 1000);
        assert_eq!(s.per_call_s.len(), 5);
        assert!(s.per_call_s.iter().all(|&t| (t - 1e-6).abs() < 1e-15));
        assert_eq!(s.stopped_by, "fixed");
        assert_eq!(s.warmup_calls, 2);
    }

    #[test]
    fn timers_that_do_not_batch_take_one_call_per_sample() {
        let settings = ProtocolSettings {
            warmup: 1,
            warmup_max_s: 1.0,
            stopping: StoppingRule::Fixed { iters: 3 },
            timeout_s: 1.0,
            processes: 1,
            l2_hot_batch: false,
        };
        let mut work = Count(0);
        let s = sample(
            &mut FakeTimer {
                call_s: 1e-6,
                batches: false,
            },
            &mut work,
            &settings,
        )
        .unwrap();
        assert_eq!(s.calls_per_sample, 1);
        assert_eq!(work.0, 4);
    }

    #[test]
    fn adaptive_rule_converges_on_noiseless_samples() {
        let settings = ProtocolSettings {
            warmup: 1,
            warmup_max_s: 1.0,
            stopping: StoppingRule::Adaptive {
                min_samples: 16,
                min_time_s: 0.0,
                target_rel_noise: 0.01,
                max_time_s: 60.0,
            },
            timeout_s: 1.0,
            processes: 1,
            l2_hot_batch: false,
        };
        let s = sample(
            &mut FakeTimer {
                call_s: 2e-3,
                batches: true,
            },
            &mut Count(0),
            &settings,
        )
        .unwrap();
        assert_eq!(s.stopped_by, "converged");
        assert_eq!(s.per_call_s.len(), 16);
    }

    #[test]
    fn errors_stop_sampling() {
        struct Fails;
        impl Workload for Fails {
            fn call(&mut self) -> Result<(), MeasureError> {
                Err(MeasureError::Plugin("boom".into()))
            }
        }
        let err = sample(
            &mut FakeTimer {
                call_s: 1e-3,
                batches: true,
            },
            &mut Fails,
            &ProtocolSettings::default(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
    }
}
