//! The shapes the check and the bench take, and how one case of them is set up.

use abi_stable::std_types::ROption;
use apex_plugin_api::{Backend, CudaHandles, ParamValue, Precision, SetupRequest};
use apex_plugin_ff_model::{FfCase, device::Refine, problem};

pub type Overrides = Vec<(&'static str, ParamValue)>;

/// The shapes the bench times when `--only` names none.
pub const BENCH_SHAPES: [&str; 2] = ["profile", "B=8"];

pub fn shapes() -> Vec<(&'static str, Overrides)> {
    let i = |n: &'static str, v: i64| (n, ParamValue::Int(v));
    let eager = || ("path", ParamValue::Str("eager".into()));
    // Every L0 tile and 160 L1 tiles: FiLM's scan over more than one 32-token chunk.
    let wide_k = || {
        vec![
            ("budget_b1", ParamValue::Float(1e4)),
            ("budget_b2", ParamValue::Float(1e4)),
            i("kmax_l0", 64),
            i("kmax_l1", 160),
        ]
    };
    vec![
        ("profile", vec![]),
        (
            "tiles 32/16",
            vec![i("tile_size_l0", 32), i("tile_size_l1", 16)],
        ),
        ("256x256", vec![i("height", 256), i("width", 256)]),
        ("B=3", vec![i("batch", 3)]),
        ("B=4", vec![i("batch", 4)]),
        ("B=8", vec![i("batch", 8)]),
        ("B=16", vec![i("batch", 16)]),
        // Several runs of frames (the pack-free levels) on a map of 256 L0 tiles.
        (
            "B=4 256x256",
            vec![i("batch", 4), i("height", 256), i("width", 256)],
        ),
        (
            // Several runs with L0 on a refine other than wgmma (t = 32) and L1 pack-free: the
            // pack-free wgmma level reading the f32 result a lean L0 level wrote.
            "B=4 tiles 32/16",
            vec![i("batch", 4), i("tile_size_l0", 32), i("tile_size_l1", 16)],
        ),
        ("K=64/160", wide_k()),
        (
            // The same in several runs of frames: the pack-free levels' scans over two chunks.
            "B=4 K=64/160",
            [vec![i("batch", 4)], wide_k()].concat(),
        ),
        (
            "C=16 36x60 tiles 6/3",
            vec![
                i("channels", 16),
                i("height", 36),
                i("width", 60),
                i("tile_size_l0", 6),
                i("tile_size_l1", 3),
            ],
        ),
        (
            "nothing selected",
            vec![("budget_b1", ParamValue::Float(0.0))],
        ),
        ("no split", vec![("budget_b2", ParamValue::Float(0.0))]),
        ("eager profile", vec![eager()]),
        (
            "eager tiles 32/16",
            vec![eager(), i("tile_size_l0", 32), i("tile_size_l1", 16)],
        ),
        (
            "eager 256x256",
            vec![eager(), i("height", 256), i("width", 256)],
        ),
        (
            "eager C=16 36x60 tiles 6/3 B=2",
            vec![
                eager(),
                i("batch", 2),
                i("channels", 16),
                i("height", 36),
                i("width", 60),
                i("tile_size_l0", 6),
                i("tile_size_l1", 3),
            ],
        ),
        (
            "eager nothing selected",
            vec![eager(), ("budget_b1", ParamValue::Float(0.0))],
        ),
    ]
}

/// Whether the overrides pick the eager path (where the refine path does not apply).
pub fn is_eager(overrides: &Overrides) -> bool {
    overrides
        .iter()
        .any(|(n, v)| *n == "path" && matches!(v, ParamValue::Str(s) if s.as_str() == "eager"))
}

/// A case of `overrides` in `precision`, its refine block run `refine`'s way (`None`: the
/// eager path, which has no such choice).
pub fn setup(
    overrides: &Overrides,
    precision: Precision,
    handles: CudaHandles,
    refine: Option<Refine>,
) -> Result<FfCase, String> {
    let request = SetupRequest {
        params: problem::params(overrides),
        backend: Backend::Cuda,
        precision,
        seed: 5,
        cuda: ROption::RSome(handles),
    };
    let mut case = FfCase::new(&request).map_err(|e| format!("setup: {e}"))?;
    if let Some(refine) = refine {
        case.set_refine(refine)
            .map_err(|e| format!("set_refine: {e}"))?;
    }
    Ok(case)
}

/// What each level's refine block ran as: `fused L0+L1`, `lean L1 (L0 split)`, `split`, …, or
/// `eager`.
pub fn plan(case: &FfCase) -> String {
    let name = |r: Refine| match r {
        Refine::Auto => "auto",
        Refine::Fused => "fused",
        Refine::FusedLean => "lean",
        Refine::Wg => "wg",
        Refine::Split => "split",
    };
    match case.level_refines() {
        Some([l0, l1]) if l0 == l1 && l0 == Refine::Split => "split".into(),
        Some([l0, l1]) if l0 == l1 => format!("{} L0+L1", name(l0)),
        Some([l0, Refine::Split]) => format!("{} L0 (L1 split)", name(l0)),
        Some([Refine::Split, l1]) => format!("{} L1 (L0 split)", name(l1)),
        Some([l0, l1]) => format!("{} L0, {} L1", name(l0), name(l1)),
        None => "eager".into(),
    }
}
