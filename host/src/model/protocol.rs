//! [`ProtocolSettings`]: the resolved measurement protocol of one case (defaults ← bench.yaml ←
//! bench.yaml.d ← CLI). `docs/protocol.md` explains each knob.

use serde::{Deserialize, Serialize};

/// When sampling stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoppingRule {
    /// Exactly `iters` samples (`--iters`).
    Fixed { iters: u64 },
    /// nvbench's model: at least `min_samples` and `min_time_s`, then stop once the relative
    /// noise of the median is at most `target_rel_noise`, or at `max_time_s`.
    Adaptive {
        min_samples: u64,
        min_time_s: f64,
        target_rel_noise: f64,
        max_time_s: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProtocolSettings {
    /// Warm-up calls before sampling, capped by `warmup_max_s` of wall time.
    pub warmup: u64,
    pub warmup_max_s: f64,
    pub stopping: StoppingRule,
    /// Per-case wall-clock limit for the worker (setup + warm-up + sampling + verification).
    pub timeout_s: f64,
    /// CPU cases are measured in this many worker processes, each with 1/N of the sampling
    /// budget, and their samples pooled: a process's memory layout (where ASLR put its buffers)
    /// can move a CPU kernel by 30 % or more, and only several processes show that spread.
    /// CUDA cases use one process.
    #[serde(default = "one")]
    pub processes: u32,
    /// CUDA: also time a batch on the case's one buffer set, whose data can stay in L2 between
    /// calls (nvbench's hot batch), as the extra timing mode `batch_hot`; the headline `batch`
    /// stays DRAM-cold. Set by `run --l2-hot`.
    #[serde(default)]
    pub l2_hot_batch: bool,
}

fn one() -> u32 {
    1
}

impl Default for ProtocolSettings {
    fn default() -> Self {
        Self {
            warmup: 10,
            warmup_max_s: 1.0,
            stopping: StoppingRule::Adaptive {
                min_samples: 20,
                min_time_s: 0.2,
                target_rel_noise: 0.005,
                max_time_s: 3.0,
            },
            timeout_s: 120.0,
            processes: 3,
            l2_hot_batch: false,
        }
    }
}

impl ProtocolSettings {
    /// The `--quick` profile: short, for CI smoke runs and A/A checks on small machines.
    pub fn quick() -> Self {
        Self {
            warmup: 3,
            warmup_max_s: 0.2,
            stopping: StoppingRule::Adaptive {
                min_samples: 10,
                min_time_s: 0.05,
                target_rel_noise: 0.01,
                max_time_s: 0.5,
            },
            timeout_s: 60.0,
            processes: 3,
            l2_hot_batch: false,
        }
    }
}

impl ProtocolSettings {
    /// The settings of one of `n` worker processes: the sampling budget (samples and times) split
    /// evenly, so a case takes about as long in total as with one process.
    pub fn share_of(&self, n: u32) -> ProtocolSettings {
        let n = n.max(1);
        let nf = f64::from(n);
        let stopping = match self.stopping {
            StoppingRule::Fixed { iters } => StoppingRule::Fixed {
                iters: iters.div_ceil(u64::from(n)).max(1),
            },
            StoppingRule::Adaptive {
                min_samples,
                min_time_s,
                target_rel_noise,
                max_time_s,
            } => StoppingRule::Adaptive {
                min_samples: min_samples.div_ceil(u64::from(n)).max(1),
                min_time_s: min_time_s / nf,
                target_rel_noise,
                max_time_s: max_time_s / nf,
            },
        };
        ProtocolSettings {
            stopping,
            processes: 1,
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_splits_the_sampling_budget() {
        let s = ProtocolSettings::default().share_of(3);
        assert_eq!(s.processes, 1);
        match s.stopping {
            StoppingRule::Adaptive {
                min_samples,
                min_time_s,
                max_time_s,
                ..
            } => {
                assert_eq!(min_samples, 7);
                assert!((min_time_s - 0.2 / 3.0).abs() < 1e-12 && (max_time_s - 1.0).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
        let fixed = ProtocolSettings {
            stopping: StoppingRule::Fixed { iters: 10 },
            ..ProtocolSettings::default()
        };
        assert_eq!(fixed.share_of(3).stopping, StoppingRule::Fixed { iters: 4 });
    }
}
