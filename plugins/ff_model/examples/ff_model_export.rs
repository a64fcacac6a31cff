//! Writes one `ff_model.infer` case to a folder for the PyTorch parity anchor
//! (`benches/anchors/ff_model_torch.py`), after checking it in this (release) build:
//!
//! - `weights/l0.<name>.npy`, `weights/l1.<name>.npy`: the FFModule state, fp32, PyTorch names;
//! - `inputs/<name>.npy`: dense, utilities, split_utilities, boundary, uncertainty (fp32);
//! - `outputs/<name>.npy`: the fast CPU path's heavy_features, detail_map, alpha (fp32);
//! - `reference/<name>.npy`: the f64 reference's (fp64);
//! - `manifest.json`: the parameters, the selections per frame, the fp32-vs-f64 accuracy and
//!   the CPU frame times (fast path and reference, median of timed calls);
//! - with `--cuda` (a GPU machine): `outputs_cuda_fp16/<name>.npy`, the CUDA fast path's fp16
//!   outputs on the same seed (stored as fp32), checked against the f64 reference first, and
//!   their accuracy under `cuda_fp16` in the manifest, so the anchor compares PyTorch's fp16
//!   module with the plugin's fp16 GPU output directly.
//!
//! ```text
//! cargo run --release -p apex-plugin-ff-model --example ff_model_export -- --out /tmp/ff_export \
//!     [--channels 128] [--height 128] [--width 128] [--tile-l0 16] [--tile-l1 8] [--batch 1] \
//!     [--seed 123] [--iters 30] [--cuda]
//! ```
//! Exits 1 if the fast path does not match the reference within the declared fp32 tolerance.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use abi_stable::std_types::ROption;
use apex_plugin_api::{
    Backend, Instance, ParamValue, Precision, SetupRequest,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_ff_model::{FfCase, problem};
use serde_json::json;

/// Writes `data` as a little-endian `.npy` (format 1.0) of `shape`.
fn write_npy(path: &Path, descr: &str, shape: &[usize], bytes: &[u8]) -> std::io::Result<()> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_str = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_str}, }}");
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut f = fs::File::create(path)?;
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(bytes)
}

fn npy_f32(path: &Path, shape: &[usize], v: &[f32]) -> std::io::Result<()> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    write_npy(path, "<f4", shape, &bytes)
}

fn npy_f64(path: &Path, shape: &[usize], v: &[f64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    write_npy(path, "<f8", shape, &bytes)
}

struct Args {
    out: PathBuf,
    ints: Vec<(&'static str, i64)>,
    seed: u64,
    iters: usize,
    /// Also run the CUDA fast path in fp16 on the same seed and write its outputs.
    cuda: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        out: PathBuf::from("ff_export"),
        ints: Vec::new(),
        seed: 123,
        iters: 30,
        cuda: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--cuda" {
            a.cuda = true;
            continue;
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let int = || {
            value
                .parse::<i64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--out" => a.out = PathBuf::from(&value),
            "--seed" => a.seed = int()? as u64,
            "--iters" => a.iters = int()?.max(1) as usize,
            "--channels" => a.ints.push(("channels", int()?)),
            "--height" => a.ints.push(("height", int()?)),
            "--width" => a.ints.push(("width", int()?)),
            "--batch" => a.ints.push(("batch", int()?)),
            "--tile-l0" => a.ints.push(("tile_size_l0", int()?)),
            "--tile-l1" => a.ints.push(("tile_size_l1", int()?)),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().map_err(|e| format!("{e} (flags: --out --channels --height --width --batch --tile-l0 --tile-l1 --seed --iters --cuda)"))?;
    let overrides: Vec<(&str, ParamValue)> = args
        .ints
        .iter()
        .map(|&(n, v)| (n, ParamValue::Int(v)))
        .collect();
    let params = problem::params(&overrides);
    let request = SetupRequest {
        params,
        backend: Backend::Cpu,
        precision: Precision::Fp32,
        seed: args.seed,
        cuda: ROption::RNone,
    };
    let mut case = FfCase::new(&request).map_err(|e| e.message.to_string())?;
    let p = case.problem().clone();

    // The host's check: fresh inputs, poisoned outputs, one call, verify against f64.
    let tol = problem::tolerance();
    case.prepare_check(args.seed)
        .map_err(|e| e.message.to_string())?;
    case.run().map_err(|e| e.message.to_string())?;
    let acc = case.verify(&tol).map_err(|e| e.message.to_string())?;
    let ok = acc.within(&tol) && acc.non_finite == 0;

    // Frame times: the fast path (median and p95 of `iters` calls after 3 warm-up calls) and the
    // f64 reference (median of 3).
    for _ in 0..3 {
        case.run().map_err(|e| e.message.to_string())?;
    }
    let mut fast_ms: Vec<f64> = (0..args.iters)
        .map(|_| {
            let t = Instant::now();
            case.run().map(|_| t.elapsed().as_secs_f64() * 1e3)
        })
        .collect::<Result<_, _>>()
        .map_err(|e| e.message.to_string())?;
    fast_ms.sort_by(f64::total_cmp);
    let mut ref_ms: Vec<f64> = Vec::new();
    let mut reference = None;
    for _ in 0..3 {
        let t = Instant::now();
        reference = Some(case.reference().map_err(|e| e.message.to_string())?);
        ref_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ref_ms.sort_by(f64::total_cmp);
    let reference = reference.expect("three reference runs");

    let out = &args.out;
    for dir in ["weights", "inputs", "outputs", "reference"] {
        fs::create_dir_all(out.join(dir))?;
    }
    for (level, w) in [("l0", &case.weights().l0), ("l1", &case.weights().l1)] {
        for (name, shape, v) in w.tensors() {
            npy_f32(&out.join(format!("weights/{level}.{name}.npy")), &shape, &v)?;
        }
    }
    let (b, c, h, w) = (p.batch, p.channels, p.height, p.width);
    let g0 = p.grid_l0().tiles();
    let inputs = case.inputs();
    npy_f32(&out.join("inputs/dense.npy"), &[b, c, h, w], &inputs.dense)?;
    npy_f32(
        &out.join("inputs/utilities.npy"),
        &[b, g0],
        &inputs.utilities,
    )?;
    npy_f32(
        &out.join("inputs/split_utilities.npy"),
        &[b, g0],
        &inputs.split_utilities,
    )?;
    npy_f32(
        &out.join("inputs/boundary.npy"),
        &[b, 1, h, w],
        &inputs.boundary,
    )?;
    npy_f32(
        &out.join("inputs/uncertainty.npy"),
        &[b, 1, h, w],
        &inputs.uncertainty,
    )?;
    let (heavy, detail, alpha) = case.outputs();
    npy_f32(
        &out.join("outputs/heavy_features.npy"),
        &[b, c, h, w],
        heavy,
    )?;
    npy_f32(&out.join("outputs/detail_map.npy"), &[b, c, h, w], detail)?;
    npy_f32(&out.join("outputs/alpha.npy"), &[b, 1, h, w], alpha)?;
    npy_f64(
        &out.join("reference/heavy_features.npy"),
        &[b, c, h, w],
        &reference.heavy,
    )?;
    npy_f64(
        &out.join("reference/detail_map.npy"),
        &[b, c, h, w],
        &reference.detail,
    )?;
    npy_f64(
        &out.join("reference/alpha.npy"),
        &[b, 1, h, w],
        &reference.alpha,
    )?;

    let selections: Vec<_> = case
        .selections()
        .iter()
        .map(|s| {
            json!({
                "l0_score_order": s.l0_scored,
                "l0_hilbert_order": s.l0,
                "l1_hilbert_order": s.l1,
                "budget_b1_spent": s.spent_b1,
                "budget_b2_spent": s.spent_b2,
            })
        })
        .collect();
    let cuda = if args.cuda {
        Some(cuda_fp16(&overrides, args.seed, out, [b, c, h, w])?)
    } else {
        None
    };
    let manifest = json!({
        "kernel": problem::KERNEL_ID,
        "seed": args.seed,
        "params": {
            "batch": b, "channels": c, "height": h, "width": w,
            "tile_size_l0": p.tile_l0, "tile_size_l1": p.tile_l1,
            "budget_b1": p.budget_b1, "budget_b2": p.budget_b2,
            "kmax_l0": p.kmax_l0, "kmax_l1": p.kmax_l1,
            "cost_heavy": problem::COST_HEAVY, "cost_cheap": problem::COST_CHEAP,
            "split_overhead": problem::SPLIT_OVERHEAD, "norm_eps": problem::NORM_EPS,
        },
        "layout": "weights/<level>.<name>.npy (fp32, PyTorch state_dict names), inputs/*.npy (fp32), outputs/*.npy (fast CPU path, fp32), reference/*.npy (f64 reference, fp64)",
        "selections": selections,
        "accuracy_fp32_vs_f64": {
            "max_abs_err": acc.max_abs_error, "rmse": acc.rmse, "non_finite": acc.non_finite,
            "mismatch_ratio": acc.mismatch_ratio, "within_tolerance": ok,
        },
        "cpu_ms": {
            "threads": rayon::current_num_threads(),
            "fast_p50": percentile(&fast_ms, 0.5), "fast_p95": percentile(&fast_ms, 0.95),
            "fast_calls": fast_ms.len(),
            "reference_f64_p50": percentile(&ref_ms, 0.5),
        },
        "cuda_fp16": cuda,
    });
    fs::write(
        out.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    println!(
        "ff_model.infer B={b} C={c} {h}x{w} tiles {}/{}: fp32 vs f64 max_abs_err {:.3e} rmse {:.3e} ({}); \
         fast CPU p50 {:.2} ms p95 {:.2} ms ({} threads), f64 reference {:.1} ms; wrote {}",
        p.tile_l0,
        p.tile_l1,
        acc.max_abs_error,
        acc.rmse,
        if ok {
            "within tolerance"
        } else {
            "OUT OF TOLERANCE"
        },
        percentile(&fast_ms, 0.5),
        percentile(&fast_ms, 0.95),
        rayon::current_num_threads(),
        percentile(&ref_ms, 0.5),
        out.display()
    );
    if !ok {
        eprintln!("fast path does not match the f64 reference: {acc:?}");
        std::process::exit(1);
    }
    Ok(())
}

/// The CUDA fast path in fp16 on `seed` (the inputs rounded to fp16, as PyTorch's `.half()`
/// rounds the exported fp32 inputs): one checked call, its outputs written under
/// `outputs_cuda_fp16/`. Returns the accuracy against the f64 reference for the manifest.
fn cuda_fp16(
    overrides: &[(&str, ParamValue)],
    seed: u64,
    out: &Path,
    [b, c, h, w]: [usize; 4],
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let gpu = StandaloneGpu::open(0).map_err(|e| format!("--cuda: {e}"))?;
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let request = SetupRequest {
        params: problem::params(overrides),
        backend: Backend::Cuda,
        precision: Precision::Fp16,
        seed,
        cuda: ROption::RSome(handles),
    };
    let mut case = FfCase::new(&request).map_err(|e| e.message.to_string())?;
    case.prepare_check(seed)
        .map_err(|e| e.message.to_string())?;
    case.run().map_err(|e| e.message.to_string())?;
    stream
        .synchronize()
        .map_err(|e| cuda_error(e).message.to_string())?;
    let tol = problem::descriptor().tolerance_for(Precision::Fp16);
    let acc = case.verify(&tol).map_err(|e| e.message.to_string())?;
    let ok = acc.within(&tol) && acc.non_finite == 0;
    if !ok {
        return Err(
            format!("the CUDA fp16 fast path does not match the f64 reference: {acc:?}").into(),
        );
    }
    fs::create_dir_all(out.join("outputs_cuda_fp16"))?;
    let (heavy, detail, alpha) = case.outputs();
    let dir = out.join("outputs_cuda_fp16");
    npy_f32(&dir.join("heavy_features.npy"), &[b, c, h, w], heavy)?;
    npy_f32(&dir.join("detail_map.npy"), &[b, c, h, w], detail)?;
    npy_f32(&dir.join("alpha.npy"), &[b, 1, h, w], alpha)?;
    println!(
        "CUDA fp16 fast path ({}): max_abs_err {:.3e}, mismatch ratio {:.2e} against the f64 reference; wrote {}",
        ctx.name().unwrap_or_default(),
        acc.max_abs_error,
        acc.mismatch_ratio,
        dir.display()
    );
    Ok(json!({
        "device": ctx.name().unwrap_or_default(),
        "max_abs_err": acc.max_abs_error, "rmse": acc.rmse, "non_finite": acc.non_finite,
        "mismatch_ratio": acc.mismatch_ratio, "within_tolerance": ok,
    }))
}
