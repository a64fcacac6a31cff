//! The GPU self-check of `ff_model.infer` (run on the GPU machine): every checked shape of the
//! fast path and five of the eager path, in fp16, bf16 and fp32, two calls on fresh inputs with poisoned outputs, a call after `rotate(4)`, and a
//! never-run poisoned output that must fail; per output (heavy_features, detail_map, alpha) the
//! largest error against the f64 reference and the share of its tolerance bound it used.
//!
//! ```text
//! ff_model_gpu_check [--only LABEL]
//! ```
//! Exits 0 when every check passes, 1 when one fails, 2 without a GPU.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use abi_stable::std_types::ROption;
use apex_plugin_api::{
    Backend, CudaHandles, Instance, ParamValue, PluginError, Precision, SetupRequest, Tolerance,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_ff_model::{FfCase, problem};

type Overrides = Vec<(&'static str, ParamValue)>;

fn shapes() -> Vec<(&'static str, Overrides)> {
    let i = |n: &'static str, v: i64| (n, ParamValue::Int(v));
    let eager = || ("path", ParamValue::Str("eager".into()));
    vec![
        ("profile", vec![]),
        (
            "tiles 32/16",
            vec![i("tile_size_l0", 32), i("tile_size_l1", 16)],
        ),
        ("256x256", vec![i("height", 256), i("width", 256)]),
        ("B=3", vec![i("batch", 3)]),
        ("B=8", vec![i("batch", 8)]),
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

/// `(max abs error, worst |err| / (atol + rtol*|ref|))` of `got` against `want`.
fn errors(got: &[f32], want: &[f64], tol: &Tolerance) -> (f64, f64) {
    got.iter()
        .zip(want)
        .fold((0.0f64, 0.0f64), |(m, r), (&g, &w)| {
            let e = (f64::from(g) - w).abs();
            let e = if e.is_nan() { f64::INFINITY } else { e };
            (m.max(e), r.max(e / (tol.atol + tol.rtol * w.abs())))
        })
}

fn check_case(
    overrides: &Overrides,
    precision: Precision,
    handles: CudaHandles,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Result<String, String> {
    let tol = problem::descriptor().tolerance_for(precision);
    let request = SetupRequest {
        params: problem::params(overrides),
        backend: Backend::Cuda,
        precision,
        seed: 5,
        cuda: ROption::RSome(handles),
    };
    let mut case = FfCase::new(&request).map_err(|e| format!("setup: {e}"))?;
    let mut lines = Vec::new();
    for (round, seed) in [(0, 11u64), (1, 12), (2, 13)] {
        if round == 2 {
            let sets = case.rotate(4).map_err(|e| format!("rotate: {e}"))?;
            lines.push(format!("rotate -> {sets} sets"));
        }
        case.prepare_check(seed)
            .map_err(|e| format!("prepare: {e}"))?;
        case.run().map_err(|e| format!("run: {e}"))?;
        sync().map_err(|e| format!("sync: {e}"))?;
        let acc = case.verify(&tol).map_err(|e| format!("verify: {e}"))?;
        let want = case.reference().map_err(|e| format!("reference: {e}"))?;
        let (h, d, a) = case.outputs();
        let parts = [
            ("heavy", errors(h, &want.heavy, &tol)),
            ("detail", errors(d, &want.detail, &tol)),
            ("alpha", errors(a, &want.alpha, &tol)),
        ];
        let line = parts
            .iter()
            .map(|(n, (m, r))| format!("{n} {m:.2e} ({:.0}%)", 100.0 * r))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(format!(
            "seed {seed}: {line}; rmse {:.2e}, mismatch ratio {:.1e}",
            acc.rmse, acc.mismatch_ratio
        ));
        if !acc.within(&tol) || acc.non_finite > 0 {
            return Err(format!("{}\n    {acc:?}", lines.join("\n    ")));
        }
    }
    case.prepare_check(14)
        .map_err(|e| format!("prepare: {e}"))?;
    match case.verify(&tol) {
        Ok(acc) if acc.non_finite > 0 && !acc.within(&tol) => lines.push(format!(
            "poisoned outputs caught; note: {}",
            case.verify_note()
        )),
        Ok(acc) => return Err(format!("poison not caught: {acc:?}")),
        Err(e) => return Err(format!("verify of poison: {e}")),
    }
    Ok(lines.join("\n    "))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let gpu = match StandaloneGpu::open(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("ff_model_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (stream, handles) = (gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for (label, overrides) in shapes() {
        if only.as_deref().is_some_and(|o| o != label) {
            continue;
        }
        for precision in [Precision::Fp16, Precision::Bf16, Precision::Fp32] {
            match check_case(&overrides, precision, handles, &sync) {
                Ok(text) => println!("ok   {label} {precision}\n    {text}"),
                Err(text) => {
                    failures += 1;
                    println!("FAIL {label} {precision}\n    {text}");
                }
            }
        }
    }
    if failures == 0 {
        println!("RESULT: OK");
        ExitCode::SUCCESS
    } else {
        println!("RESULT: {failures} FAILED");
        ExitCode::from(1)
    }
}
