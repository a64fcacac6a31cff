//! [`FfProblem`]: one validated case of `ff_model.infer` (the frame's shape, the two tile sizes,
//! the budgets and caps, the path), its descriptor with the Apex-X defaults
//! (`spec/apex-x-kernels.md` §2.1), the selection counts the budgets imply, and the cost model.

use apex_plugin_api::{
    Backend, KernelDescriptor, ParamSpec, ParamValue, Params, PluginError, Precision, Tolerance,
    Work, WorkUnit,
};
use apex_tile_math::{grid::TileGrid, selection::SLACK, selection::TwoStageConfig};

pub const KERNEL_ID: &str = "ff_model.infer";

/// The config's per-tile costs (`apex_x/config/schema.py`): every L0 tile costs
/// `cost_heavy - cost_cheap = 0.8` of `b1`.
pub const COST_HEAVY: f64 = 1.0;
pub const COST_CHEAP: f64 = 0.2;
/// Every split costs this much of `b2` (the benchmark's `split_overheads` are all 1.0).
pub const SPLIT_OVERHEAD: f64 = 1.0;
/// The LayerNorm and GroupNorm epsilon (PyTorch's default).
pub const NORM_EPS: f64 = 1e-5;

/// Which implementation runs the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Fused passes (CPU: the rayon fp32 path).
    Fast,
    /// One kernel per op, as PyTorch eager runs it, the selection on the host (CUDA only).
    Eager,
}

impl Path {
    pub fn parse(s: &str) -> Result<Self, PluginError> {
        match s {
            "fast" => Ok(Self::Fast),
            "eager" => Ok(Self::Eager),
            other => Err(PluginError::invalid(format!(
                "path = `{other}` is not a path (hint: use fast or eager)"
            ))),
        }
    }
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct FfProblem {
    pub batch: usize,
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub tile_l0: usize,
    pub tile_l1: usize,
    pub budget_b1: f64,
    pub budget_b2: f64,
    pub kmax_l0: usize,
    pub kmax_l1: usize,
    pub path: Path,
}

/// The kernel descriptor: CPU fp32; CUDA fp32, fp16 and bf16.
pub fn descriptor() -> KernelDescriptor {
    KernelDescriptor::new(
        KERNEL_ID,
        "Apex-X FF inference, one call = one batch of frames: two-stage greedy selection, then per level \
         (L0, L1) pack -> bidirectional TileSSM scan -> FiLM -> refine (dw3x3, pw1x1 C->2C, GroupNorm(1), \
         a*relu(b), residual) -> override unpack -> FusionGate; outputs heavy_features, detail_map, alpha",
    )
    .backends(&[Backend::Cpu, Backend::Cuda])
    .precisions(&[Precision::Fp32, Precision::Fp16, Precision::Bf16])
    .graph_capturable(true)
    .param(ParamSpec::int("batch", 1, "B, frames per call"))
    .param(ParamSpec::int("channels", 128, "C, the feature channels"))
    .param(ParamSpec::int("height", 128, "H, a multiple of tile_size_l0"))
    .param(ParamSpec::int("width", 128, "W, a multiple of tile_size_l0"))
    .param(ParamSpec::int(
        "tile_size_l0",
        16,
        "L0 tile size in pixels (twice tile_size_l1)",
    ))
    .param(ParamSpec::int("tile_size_l1", 8, "L1 tile size in pixels"))
    .param(ParamSpec::float(
        "budget_b1",
        16.0,
        "L0 budget; each tile costs cost_heavy - cost_cheap = 0.8",
    ))
    .param(ParamSpec::float(
        "budget_b2",
        8.0,
        "split budget; each split L0 tile costs 1.0",
    ))
    .param(ParamSpec::int("kmax_l0", 32, "at most this many L0 tiles"))
    .param(ParamSpec::int(
        "kmax_l1",
        64,
        "at most this many L1 tiles (4 per split)",
    ))
    .param(ParamSpec::str(
        "path",
        "fast",
        "fast (fused passes) or eager (one kernel per op, as PyTorch eager runs it; CUDA only)",
    ))
    .tolerance(Precision::Fp32, tolerance())
}

/// The declared defaults with `overrides` replacing them (tests, the export example).
pub fn params(overrides: &[(&str, ParamValue)]) -> Params {
    let mut p = Params::default();
    for spec in descriptor().params.iter() {
        let v = overrides
            .iter()
            .find(|(n, _)| *n == spec.name.as_str())
            .map_or_else(|| spec.default.clone(), |(_, v)| v.clone());
        p.push(spec.name.as_str(), v);
    }
    p
}

/// fp32 against the f64 reference: the usual fp32 bounds, no mismatching element allowed.
pub fn tolerance() -> Tolerance {
    Tolerance {
        max_mismatch_ratio: 0.0,
        ..Tolerance::default_for(Precision::Fp32)
    }
}

fn non_negative_finite(name: &str, v: f64) -> Result<f64, PluginError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(PluginError::invalid(format!(
            "{name} = {v} is not a finite number >= 0 (hint: budgets are tile costs, e.g. {name} = 16)"
        )))
    }
}

fn multiple_of(name: &str, v: usize, tile: usize) -> Result<(), PluginError> {
    if v == 0 || !v.is_multiple_of(tile) {
        let lower = (v / tile).max(1) * tile;
        return Err(PluginError::invalid(format!(
            "{name} = {v} is not a positive multiple of tile_size_l0 = {tile} (hint: use {name} = {lower} \
             or {}, or a tile_size_l0 that divides {v})",
            lower + tile
        )));
    }
    Ok(())
}

impl FfProblem {
    pub fn plan(params: &Params, backend: Backend) -> Result<Self, PluginError> {
        let batch = params.usize("batch")?;
        let channels = params.usize("channels")?;
        let (height, width) = (params.usize("height")?, params.usize("width")?);
        let (tile_l0, tile_l1) = (params.usize("tile_size_l0")?, params.usize("tile_size_l1")?);
        if batch == 0 {
            return Err(PluginError::invalid(
                "batch = 0 (hint: B is the frames per call, at least 1)",
            ));
        }
        if channels == 0 {
            return Err(PluginError::invalid(
                "channels = 0 (hint: C must be at least 1; the Apex-X model has 128)",
            ));
        }
        if tile_l1 == 0 {
            return Err(PluginError::invalid(
                "tile_size_l1 = 0 (hint: the L1 tile size must be at least 1 pixel)",
            ));
        }
        if tile_l0 != 2 * tile_l1 {
            return Err(PluginError::invalid(format!(
                "tile_size_l0 = {tile_l0} is not twice tile_size_l1 = {tile_l1}: a split L0 tile becomes \
                 its 2x2 L1 children (hint: use tile_size_l0 = {}, or tile_size_l1 = {} with an even \
                 tile_size_l0)",
                2 * tile_l1,
                tile_l0 / 2
            )));
        }
        multiple_of("height", height, tile_l0)?;
        multiple_of("width", width, tile_l0)?;
        let budget_b1 = non_negative_finite("budget_b1", params.float("budget_b1")?)?;
        let budget_b2 = non_negative_finite("budget_b2", params.float("budget_b2")?)?;
        let path = Path::parse(params.str("path")?)?;
        if path == Path::Eager && backend == Backend::Cpu {
            return Err(PluginError::invalid(
                "path = eager is the CUDA one-kernel-per-op baseline; the CPU has the fast path only \
                 (hint: use path = fast on the cpu backend)",
            ));
        }
        let p = Self {
            batch,
            channels,
            height,
            width,
            tile_l0,
            tile_l1,
            budget_b1,
            budget_b2,
            kmax_l0: params.usize("kmax_l0")?,
            kmax_l1: params.usize("kmax_l1")?,
            path,
        };
        let elements = batch
            .checked_mul(channels)
            .and_then(|v| v.checked_mul(height))
            .and_then(|v| v.checked_mul(width));
        if elements.is_none_or(|n| n > 1 << 31) {
            return Err(PluginError::invalid(format!(
                "B*C*H*W = {batch}*{channels}*{height}*{width} exceeds 2^31 elements (hint: use a smaller map)"
            )));
        }
        Ok(p)
    }

    pub fn grid_l0(&self) -> TileGrid {
        TileGrid::new(self.height, self.width, self.tile_l0)
    }

    pub fn grid_l1(&self) -> TileGrid {
        TileGrid::new(self.height, self.width, self.tile_l1)
    }

    pub fn selection_config(&self) -> TwoStageConfig {
        TwoStageConfig {
            budget_b1: self.budget_b1,
            budget_b2: self.budget_b2,
            kmax_l0: self.kmax_l0,
            kmax_l1: self.kmax_l1,
        }
    }

    /// Elements of one map `[B, C, H, W]`.
    pub fn map_len(&self) -> usize {
        self.batch * self.channels * self.height * self.width
    }

    /// Pixels of one proxy `[B, 1, H, W]`.
    pub fn pixels(&self) -> usize {
        self.batch * self.height * self.width
    }

    /// L0 tiles selected per frame. All tiles cost the same, so the count follows from the
    /// budget and the caps whatever the utilities: `min(kmax_l0, G0, the tiles b1 pays for)`.
    pub fn selected_l0(&self) -> usize {
        let delta = COST_HEAVY - COST_CHEAP;
        let mut n = 0usize;
        let mut spent = 0.0f64;
        while n < self.kmax_l0.min(self.grid_l0().tiles())
            && spent + delta <= self.budget_b1 + SLACK
        {
            spent += delta;
            n += 1;
        }
        n
    }

    /// L1 tiles selected per frame: 4 per split parent, parents limited by `b2` (1.0 each) and
    /// `kmax_l1 / 4`.
    pub fn selected_l1(&self) -> usize {
        let l0 = self.selected_l0();
        if l0 == 0 || self.kmax_l1 == 0 || self.budget_b2 == 0.0 {
            return 0;
        }
        let mut parents = 0usize;
        let mut spent = 0.0f64;
        while parents < l0
            && spent + SPLIT_OVERHEAD <= self.budget_b2 + SLACK
            && 4 * (parents + 1) <= self.kmax_l1
        {
            spent += SPLIT_OVERHEAD;
            parents += 1;
        }
        4 * parents
    }

    /// FLOPs of one heavy path on `k` tiles of `t x t` (a multiply-add is 2, sigmoid/exp/tanh ~4),
    /// term by term as `spec/apex-x-kernels.md` §2.4 counts them.
    fn path_flops(&self, k: usize, t: usize) -> f64 {
        let (c, p, k) = (self.channels as f64, (t * t) as f64, k as f64);
        let tile = k * c * p;
        let means = tile;
        let scan = 2.0 * k * c * 6.0 + 3.0 * k * c;
        let film = k * (2.0 * c * c + 2.0 * 2.0 * c * c + 8.0 * c + 5.0 * c + 2.0 * c + 4.0 * c);
        let modulate = 2.0 * tile;
        let depthwise = 19.0 * tile;
        let pointwise = 2.0 * (2.0 * c) * c * p * k + 2.0 * c * p * k;
        let group_norm = 7.0 * 2.0 * tile;
        let gate_residual = 3.0 * tile;
        let hw = (self.height * self.width) as f64;
        let fusion = 3.0 * c * hw + 8.0 * hw;
        means + scan + film + modulate + depthwise + pointwise + group_norm + gate_residual + fusion
    }

    /// The logical work of one call: every input read once (the map, the proxies, the
    /// utilities, both levels' weights), every output written once, and the FLOPs of §2.4.
    /// Maps and proxies count `element_bytes` per value (the case's storage), the utilities and
    /// weights 4.
    pub fn work(&self, weight_elements: usize, element_bytes: u64) -> Work {
        let (e, f) = (element_bytes, 4u64);
        let map = self.map_len() as u64;
        let px = self.pixels() as u64;
        let utilities = 2 * (self.batch * self.grid_l0().tiles()) as u64;
        let per_frame = self.path_flops(self.selected_l0(), self.tile_l0)
            + self.path_flops(self.selected_l1(), self.tile_l1)
            + (self.channels * self.height * self.width) as f64;
        Work {
            bytes_read: e * (map + 2 * px) + f * (utilities + weight_elements as u64),
            bytes_written: e * (2 * map + px),
            flops: per_frame * self.batch as f64,
            items: self.batch as f64,
            unit: WorkUnit::Frames,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_err(overrides: &[(&str, ParamValue)]) -> String {
        FfProblem::plan(&params(overrides), Backend::Cpu)
            .unwrap_err()
            .message
            .to_string()
    }

    #[test]
    fn the_defaults_are_the_apex_x_profile_and_select_20_and_32() {
        let p = FfProblem::plan(&params(&[]), Backend::Cpu).unwrap();
        assert_eq!((p.batch, p.channels, p.height, p.width), (1, 128, 128, 128));
        assert_eq!(
            (p.tile_l0, p.tile_l1, p.kmax_l0, p.kmax_l1),
            (16, 8, 32, 64)
        );
        assert_eq!((p.selected_l0(), p.selected_l1()), (20, 32));
    }

    #[test]
    fn the_flops_follow_the_spec_accounting_at_the_profile() {
        let p = FfProblem::plan(&params(&[]), Backend::Cpu).unwrap();
        let g = p.work(0, 4).flops / 1e9;
        // §2.4: about 0.53 GFLOP (pointwise 337 M + 135 M dominate).
        assert!((0.50..0.56).contains(&g), "{g} GFLOP");
        assert_eq!(p.work(0, 4).items, 1.0);
        assert_eq!(p.work(0, 4).unit, WorkUnit::Frames);
    }

    #[test]
    fn shapes_that_do_not_tile_are_refused_with_the_parameter_named() {
        let e = plan_err(&[("height", ParamValue::Int(100))]);
        assert!(
            e.contains("height = 100") && e.contains("tile_size_l0 = 16") && e.contains("hint"),
            "{e}"
        );
        let e = plan_err(&[("width", ParamValue::Int(40))]);
        assert!(
            e.contains("width = 40") && e.contains("use width = 32 or 48"),
            "{e}"
        );
        let e = plan_err(&[
            ("tile_size_l0", ParamValue::Int(16)),
            ("tile_size_l1", ParamValue::Int(4)),
        ]);
        assert!(e.contains("not twice tile_size_l1 = 4"), "{e}");
        let e = plan_err(&[("budget_b1", ParamValue::Float(f64::NAN))]);
        assert!(e.contains("budget_b1"), "{e}");
        let e = plan_err(&[("path", ParamValue::Str("eager".into()))]);
        assert!(e.contains("CUDA"), "{e}");
        let e = plan_err(&[("path", ParamValue::Str("slow".into()))]);
        assert!(e.contains("fast or eager"), "{e}");
        assert!(plan_err(&[("channels", ParamValue::Int(0))]).contains("channels = 0"));
    }

    #[test]
    fn other_tile_sizes_and_budgets_change_the_counts() {
        let p = FfProblem::plan(
            &params(&[
                ("tile_size_l0", ParamValue::Int(32)),
                ("tile_size_l1", ParamValue::Int(16)),
            ]),
            Backend::Cpu,
        )
        .unwrap();
        // 4x4 = 16 L0 tiles < the 20 that b1 pays for; 8 splits of 16 parents.
        assert_eq!((p.selected_l0(), p.selected_l1()), (16, 32));
        let p = FfProblem::plan(
            &params(&[("budget_b2", ParamValue::Float(0.0))]),
            Backend::Cpu,
        )
        .unwrap();
        assert_eq!((p.selected_l0(), p.selected_l1()), (20, 0));
    }
}
