//! [`ScanProblem`]: one validated case of a TileSSM kernel (direction, shape, merge, initial state,
//! clamp), its parameters and defaults, its cost model and the policies every backend shares
//! (`spec/apex-x-kernels.md` §1.5).

use apex_plugin_api::{
    Backend, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work, WorkUnit,
};

/// The decay clamp `[DECAY_MIN, DECAY_MAX]`, as the f32 values every backend uses (the f64
/// reference widens these same values, so `1 - a` is identical everywhere; `1 - 1e-6` itself is
/// not an f32, and the difference would be a 1 % error in `1 - a` near the top of the range).
pub const DECAY_MIN: f32 = 1e-6;
pub const DECAY_MAX: f32 = 1.0 - 1e-6;

/// `v` clamped to `[lo, hi]` with NaN mapped to `lo`, as the device's `fminf(fmaxf(v, lo), hi)`
/// does (`f64::clamp` would keep the NaN). Every backend clamps the decay and the gate this way.
pub fn clamp_nan_low(v: f64, lo: f64, hi: f64) -> f64 {
    v.max(lo).min(hi)
}

/// The decay clamped to `[DECAY_MIN, DECAY_MAX]` (NaN → `DECAY_MIN`).
pub fn clamp_decay(d: f64) -> f64 {
    clamp_nan_low(d, f64::from(DECAY_MIN), f64::from(DECAY_MAX))
}

/// The largest batch: the CUDA grid's y dimension.
pub const MAX_BATCH: usize = 65_535;
/// At most this many token-channels per call (32-bit element counts on the device).
pub const MAX_TOKENS: usize = 1 << 31;
/// At most this many steps (a `K` loop index never overflows an `i32`).
pub const MAX_STEPS: usize = 1 << 30;

/// Which way the recurrence runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `k = 0 .. K-1`.
    Forward,
    /// `k = K-1 .. 0` (forward on the tokens flipped along K, output flipped back); the final state
    /// is the state after `k = 0`.
    Backward,
    /// Both, merged; the final state is `[B, 2, C]` (forward, backward).
    Bidirectional,
}

impl Direction {
    pub const ALL: [Direction; 3] = [Self::Forward, Self::Backward, Self::Bidirectional];

    pub fn name(self) -> &'static str {
        match self {
            Self::Forward => "forward",
            Self::Backward => "backward",
            Self::Bidirectional => "bidirectional",
        }
    }

    /// The kernel id, `tile_ssm.<direction>`.
    pub fn kernel_id(self) -> String {
        format!("tile_ssm.{}", self.name())
    }

    /// States per (b, c): 2 for bidirectional, else 1.
    pub fn states(self) -> usize {
        if self == Self::Bidirectional { 2 } else { 1 }
    }
}

/// How bidirectional merges its two outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// `y_f + y_b`.
    Sum,
    /// `0.5 * (y_f + y_b)` (the original's default).
    Avg,
    /// `g * y_f + (1 - g) * y_b`, `g` = the gate clamped to `[0, 1]`.
    Gated,
}

impl Merge {
    pub fn parse(s: &str) -> Result<Self, PluginError> {
        match s {
            "sum" => Ok(Self::Sum),
            "avg" => Ok(Self::Avg),
            "gated" => Ok(Self::Gated),
            other => Err(PluginError::invalid(format!(
                "merge = `{other}` is not a merge mode (hint: use sum, avg or gated)"
            ))),
        }
    }

    /// The `merge` argument of the CUDA kernel.
    pub fn code(self) -> i32 {
        match self {
            Self::Sum => 0,
            Self::Avg => 1,
            Self::Gated => 2,
        }
    }
}

/// The shape of the merge gate (`merge = gated` only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateShape {
    /// `[C]`, one gate per channel.
    Channel,
    /// `[B, 1, C]`, one gate per (batch, channel).
    BatchChannel,
}

impl GateShape {
    pub fn parse(s: &str) -> Result<Self, PluginError> {
        match s {
            "channel" => Ok(Self::Channel),
            "batch_channel" => Ok(Self::BatchChannel),
            other => Err(PluginError::invalid(format!(
                "gate = `{other}` is not a gate shape (hint: use channel for [C] or batch_channel for [B,1,C])"
            ))),
        }
    }
}

/// The optional initial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitState {
    /// Every chain starts at 0.
    None,
    /// `[B, C]`; bidirectional starts both directions from it.
    Bc,
    /// `[B, 2, C]` (forward, backward); bidirectional only.
    B2c,
}

impl InitState {
    pub fn parse(s: &str) -> Result<Self, PluginError> {
        match s {
            "none" => Ok(Self::None),
            "bc" => Ok(Self::Bc),
            "b2c" => Ok(Self::B2c),
            other => Err(PluginError::invalid(format!(
                "init_state = `{other}` is not an initial state (hint: use none, bc for [B,C] or b2c for [B,2,C])"
            ))),
        }
    }
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanProblem {
    pub direction: Direction,
    pub batch: usize,
    /// `K`, the sequence length.
    pub steps: usize,
    pub channels: usize,
    /// Tokens are clamped to `[-clamp_value, clamp_value]` (±inf to the bounds, NaN to 0).
    pub clamp_value: f32,
    pub init: InitState,
    pub merge: Merge,
    pub gate: GateShape,
    /// Whether the inputs contain NaN and ±inf tokens (about one token in 256 each).
    pub nonfinite: bool,
}

/// The kernel descriptor of `direction`: CPU and CUDA, fp32/fp16/bf16 tokens, graph-capturable.
pub fn descriptor(direction: Direction) -> KernelDescriptor {
    let what = match direction {
        Direction::Forward => "forward scan",
        Direction::Backward => "backward scan (k = K-1 .. 0)",
        Direction::Bidirectional => "bidirectional scan, both directions merged in one pass",
    };
    let mut d = KernelDescriptor::new(
        &direction.kernel_id(),
        &format!(
            "TileSSM {what}: s = a*s + (1-a)*(input_gain*x + state_bias), y = output_gain*s over tokens[B,K,C]; outputs y and the final state"
        ),
    )
    .backends(&[Backend::Cpu, Backend::Cuda])
    .precisions(&[Precision::Fp32, Precision::Fp16, Precision::Bf16])
    .graph_capturable(true)
    .param(ParamSpec::int("batch", 1, "B, the batch (1..65535)"))
    .param(ParamSpec::int("steps", 256, "K, the sequence length (>= 1)"))
    .param(ParamSpec::int("channels", 128, "C, the channels"))
    .param(ParamSpec::float(
        "clamp_value",
        1e4,
        "tokens clamped to [-clamp_value, clamp_value]; +-inf to the bounds, NaN to 0",
    ))
    .param(ParamSpec::str(
        "init_state",
        "none",
        if direction == Direction::Bidirectional {
            "initial state: none (zeros), bc ([B,C], both directions) or b2c ([B,2,C], forward then backward)"
        } else {
            "initial state: none (zeros) or bc ([B,C])"
        },
    ))
    .param(ParamSpec::bool(
        "nonfinite",
        false,
        "whether about one token in 256 each is NaN, +inf and -inf (the edge-case inputs)",
    ));
    if direction == Direction::Bidirectional {
        d = d
            .param(ParamSpec::str("merge", "avg", "sum, avg or gated"))
            .param(ParamSpec::str(
                "gate",
                "channel",
                "gated merge: channel ([C]) or batch_channel ([B,1,C]); clamped to [0,1]",
            ));
    }
    for p in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
        d = d.tolerance(p, tolerance(p));
    }
    d
}

/// The declared tolerance: the usual per-precision bounds with no mismatching element allowed
/// (a wrong chunk carry spoils only a few elements, so a mismatch budget could hide it). The
/// output's own rounding is at most 2^-11 (fp16) or 2^-8 (bf16) of it, well inside `rtol`.
pub fn tolerance(precision: Precision) -> Tolerance {
    Tolerance {
        max_mismatch_ratio: 0.0,
        ..Tolerance::default_for(precision)
    }
}

impl ScanProblem {
    /// Validates the parameters of a `direction` case.
    pub fn plan(direction: Direction, params: &Params) -> Result<Self, PluginError> {
        let batch = params.usize("batch")?;
        let steps = params.usize("steps")?;
        let channels = params.usize("channels")?;
        if batch == 0 || batch > MAX_BATCH {
            return Err(PluginError::invalid(format!(
                "batch = {batch} is outside 1..={MAX_BATCH} (hint: the CUDA grid holds one batch entry per block row)"
            )));
        }
        if steps == 0 || steps > MAX_STEPS {
            return Err(PluginError::invalid(format!(
                "steps = {steps} is outside 1..={MAX_STEPS} (hint: K is the sequence length)"
            )));
        }
        if channels == 0 {
            return Err(PluginError::invalid(
                "channels = 0 (hint: C must be at least 1)",
            ));
        }
        let tokens = batch
            .checked_mul(steps)
            .and_then(|v| v.checked_mul(channels))
            .unwrap_or(usize::MAX);
        if tokens > MAX_TOKENS {
            return Err(PluginError::invalid(format!(
                "batch*steps*channels = {batch}*{steps}*{channels} exceeds {MAX_TOKENS} (hint: use a smaller shape)"
            )));
        }
        let clamp = params.float("clamp_value")?;
        if !(clamp.is_finite() && clamp > 0.0 && clamp <= f64::from(f32::MAX)) {
            return Err(PluginError::invalid(format!(
                "clamp_value = {clamp} must be a positive finite f32 (hint: the default is 1e4)"
            )));
        }
        let init = InitState::parse(params.str("init_state")?)?;
        if init == InitState::B2c && direction != Direction::Bidirectional {
            return Err(PluginError::invalid(format!(
                "init_state = b2c needs two directions, {} has one (hint: use none or bc)",
                direction.kernel_id()
            )));
        }
        let (merge, gate) = if direction == Direction::Bidirectional {
            (
                Merge::parse(params.str("merge")?)?,
                GateShape::parse(params.str("gate")?)?,
            )
        } else {
            (Merge::Avg, GateShape::Channel)
        };
        Ok(Self {
            direction,
            batch,
            steps,
            channels,
            clamp_value: clamp as f32,
            init,
            merge,
            gate,
            nonfinite: params.bool("nonfinite")?,
        })
    }

    /// `B*K*C`, the tokens (and outputs) of one call.
    pub fn tokens(&self) -> usize {
        self.batch * self.steps * self.channels
    }

    /// Elements of the final-state output: `[B, C]`, or `[B, 2, C]` for bidirectional.
    pub fn state_len(&self) -> usize {
        self.batch * self.direction.states() * self.channels
    }

    /// Elements of the initial-state input (0 without one).
    pub fn init_len(&self) -> usize {
        match self.init {
            InitState::None => 0,
            InitState::Bc => self.batch * self.channels,
            InitState::B2c => 2 * self.batch * self.channels,
        }
    }

    /// Elements of the gate input (0 unless the merge is gated).
    pub fn gate_len(&self) -> usize {
        match (self.direction, self.merge, self.gate) {
            (Direction::Bidirectional, Merge::Gated, GateShape::Channel) => self.channels,
            (Direction::Bidirectional, Merge::Gated, GateShape::BatchChannel) => {
                self.batch * self.channels
            }
            _ => 0,
        }
    }

    /// Where chain (b, direction d) finds its initial state in the init tensor, if it has one.
    pub fn init_index(&self, b: usize, d: usize, c: usize) -> Option<usize> {
        match self.init {
            InitState::None => None,
            InitState::Bc => Some(b * self.channels + c),
            InitState::B2c => Some((b * 2 + d) * self.channels + c),
        }
    }

    /// Where (b, c) finds its gate.
    pub fn gate_index(&self, b: usize, c: usize) -> usize {
        match self.gate {
            GateShape::Channel => c,
            GateShape::BatchChannel => b * self.channels + c,
        }
    }

    /// The logical minimum one call moves: tokens, the four f32 parameter vectors, the initial
    /// state and the f32 gate read; `y` and the final state written. Bidirectional reads the tokens
    /// once in this count (its CUDA kernel re-reads them when K exceeds one super-chunk).
    /// FLOPs: about 6 per token-channel per direction (clean, g*x+b, (1-a)*u, a*s+.., o*s), plus 2
    /// per token-channel for the merge.
    pub fn work(&self, element_bytes: usize) -> Work {
        let es = element_bytes as u64;
        let tokens = self.tokens() as u64;
        let dirs = self.direction.states() as f64;
        let merge = if self.direction == Direction::Bidirectional {
            2.0
        } else {
            0.0
        };
        Work {
            bytes_read: tokens * es
                + 4 * 4 * self.channels as u64
                + self.init_len() as u64 * es
                + 4 * self.gate_len() as u64,
            bytes_written: tokens * es + self.state_len() as u64 * es,
            flops: (6.0 * dirs + merge) * tokens as f64,
            items: tokens as f64,
            unit: WorkUnit::Tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::ParamValue;

    fn params(direction: Direction, overrides: &[(&str, ParamValue)]) -> Params {
        crate::harness::params_for(&descriptor(direction), overrides)
    }

    #[test]
    fn defaults_are_the_fixed_profile() {
        for d in Direction::ALL {
            let p = ScanProblem::plan(d, &params(d, &[])).unwrap();
            assert_eq!((p.batch, p.steps, p.channels), (1, 256, 128));
            assert_eq!(p.clamp_value, 1e4);
            assert_eq!(p.init, InitState::None);
            let w = p.work(2);
            assert_eq!(w.items, 32_768.0);
            // 64 KiB of tokens and 2 KiB of f32 parameters in; 64 KiB of y and the state out.
            assert_eq!(w.bytes_read, 65_536 + 2048);
            assert_eq!(w.bytes_written, 65_536 + 256 * d.states() as u64);
        }
        let p = ScanProblem::plan(
            Direction::Bidirectional,
            &params(Direction::Bidirectional, &[]),
        )
        .unwrap();
        assert_eq!(p.merge, Merge::Avg);
        assert_eq!(p.gate_len(), 0);
    }

    #[test]
    fn bad_parameters_are_refused_with_a_hint() {
        let d = Direction::Forward;
        let bad: [(&str, ParamValue); 7] = [
            ("batch", ParamValue::Int(0)),
            ("batch", ParamValue::Int(65_536)),
            ("steps", ParamValue::Int(0)),
            ("channels", ParamValue::Int(0)),
            ("clamp_value", ParamValue::Float(0.0)),
            ("clamp_value", ParamValue::Float(f64::NAN)),
            ("init_state", ParamValue::Str("b2c".into())),
        ];
        for (k, v) in bad {
            let e = ScanProblem::plan(d, &params(d, &[(k, v.clone())])).unwrap_err();
            assert!(e.message.contains("hint"), "{k}={v}: {}", e.message);
        }
        let b = Direction::Bidirectional;
        for (k, v) in [("merge", "max"), ("gate", "row"), ("init_state", "zeros")] {
            let e =
                ScanProblem::plan(b, &params(b, &[(k, ParamValue::Str(v.into()))])).unwrap_err();
            assert!(e.message.contains("hint"), "{}", e.message);
        }
    }

    #[test]
    fn layouts_of_the_optional_inputs() {
        let b = Direction::Bidirectional;
        let p = ScanProblem::plan(
            b,
            &params(
                b,
                &[
                    ("batch", ParamValue::Int(3)),
                    ("channels", ParamValue::Int(5)),
                    ("init_state", ParamValue::Str("b2c".into())),
                    ("merge", ParamValue::Str("gated".into())),
                    ("gate", ParamValue::Str("batch_channel".into())),
                ],
            ),
        )
        .unwrap();
        assert_eq!(p.init_len(), 30);
        assert_eq!(p.init_index(2, 1, 4), Some(29));
        assert_eq!(p.gate_len(), 15);
        assert_eq!(p.gate_index(2, 4), 14);
        assert_eq!(p.state_len(), 30);
        assert!(DECAY_MAX < 1.0 && f64::from(DECAY_MAX) != 1.0 - 1e-6);
    }
}
