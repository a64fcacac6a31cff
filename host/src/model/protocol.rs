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
        }
    }
}
