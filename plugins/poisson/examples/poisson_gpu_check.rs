//! GPU self-check (and, with `--bench`, a graph-timed table) for the Poisson solvers.
//!
//! Check: `self_check::run`: every method x fp32/fp64/fp16 storage x grid (cubic, non-cubic,
//! odd-stopping hierarchy, one-level) x cap (converging and stopped short), on a stream this
//! program creates; two calls with fresh inputs and NaN-poisoned buffers, then every buffer set
//! after `rotate(4)`; each verdict is the f64 true residual and error against the manufactured
//! solution, and the device's iteration count is compared with the f64 reference solver's.
//! One line per case; exit 1 on any failure.
//!
//! Bench (`--bench`): the key profiles (64^3 and 256^3, every method, the seed's 50-iteration
//! cap and tighter ones), verified once, then N solves captured in one CUDA graph, replayed and
//! timed with events: µs per solve, µs per iteration, effective GB/s from the cost model, and a
//! 1 GiB device copy as the bandwidth reference.
//!
//! ```text
//! cargo build --release -p apex-plugin-poisson --example poisson_gpu_check
//! ./target/release/examples/poisson_gpu_check [--bench] [--only TEXT]
//! ```
//! `--only TEXT` runs only the bench profiles whose label contains TEXT, without the self-check
//! (for a profiler: `ncu ... poisson_gpu_check --only '256^3 seed cap [launches]'`).
//! Without a GPU it prints why and exits 2; `--cpu` runs the CPU path of the bench profiles
//! (what this machine can check) and exits.

use std::{process::ExitCode, sync::Arc, time::Instant};

use apex_plugin_api::{
    Backend, CudaHandles, Instance, ParamValue, Precision,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_poisson::{
    case::{PoissonCase, default_tolerance},
    device::tuning::{self, PathTuning},
    harness::{check, grid, typed_case},
    real::Storage,
    self_check,
    solve::Method,
};
use cudarc::driver::{
    CudaContext, CudaStream,
    sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

/// (label, method, grid, max_iterations, sweeps, f64 storage)
type Profile = (&'static str, Method, [i64; 3], i64, i64, bool);

fn profiles() -> Vec<Profile> {
    vec![
        (
            "cg 64^3 seed cap (expected: not converged)",
            Method::Cg,
            [64, 64, 64],
            50,
            2,
            false,
        ),
        ("cg 64^3 to 1e-5", Method::Cg, [64, 64, 64], 200, 2, false),
        // The per-iteration floor of a launch plan: 4096 points, nearly no memory traffic.
        (
            "cg 16^3 (overhead floor)",
            Method::Cg,
            [16, 16, 16],
            200,
            2,
            false,
        ),
        ("mg 64^3 seed cap", Method::Mg, [64, 64, 64], 50, 2, false),
        ("mg 64^3 cap 8", Method::Mg, [64, 64, 64], 8, 2, false),
        (
            "mgpcg 64^3 seed cap",
            Method::MgPcg,
            [64, 64, 64],
            50,
            2,
            false,
        ),
        ("mgpcg 64^3 cap 8", Method::MgPcg, [64, 64, 64], 8, 2, false),
        (
            "mgpcg V(1,1) 64^3 cap 10",
            Method::MgPcg,
            [64, 64, 64],
            10,
            1,
            false,
        ),
        (
            "cg 64^3 f64 to 1e-5",
            Method::Cg,
            [64, 64, 64],
            200,
            2,
            true,
        ),
        (
            "cg 128^3 to 1e-5",
            Method::Cg,
            [128, 128, 128],
            400,
            2,
            false,
        ),
        (
            "cg 256^3 seed cap",
            Method::Cg,
            [256, 256, 256],
            50,
            2,
            false,
        ),
        (
            "cg 256^3 f64 seed cap",
            Method::Cg,
            [256, 256, 256],
            50,
            2,
            true,
        ),
        ("mg 256^3 cap 10", Method::Mg, [256, 256, 256], 10, 2, false),
        (
            "mgpcg 256^3 cap 10",
            Method::MgPcg,
            [256, 256, 256],
            10,
            2,
            false,
        ),
        (
            "mgpcg 128x64x32 cap 10",
            Method::MgPcg,
            [128, 64, 32],
            10,
            2,
            false,
        ),
    ]
}

fn overrides(p: &Profile) -> Vec<(&'static str, ParamValue)> {
    let mut o = vec![
        ("grid_size", grid(p.2[0], p.2[1], p.2[2])),
        ("max_iterations", ParamValue::Int(p.3)),
    ];
    if p.1.uses_multigrid() {
        o.push(("smoothing_sweeps", ParamValue::Int(p.4)));
    }
    o
}

#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line example"
)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    // `--only TEXT`: bench only the profiles whose label contains TEXT, without the self-check
    // (for a profiler run).
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    if std::env::args().any(|a| a == "--cpu") {
        cpu_bench();
        return ExitCode::SUCCESS;
    }
    let gpu = match StandaloneGpu::open(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("poisson_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    if let Some(only) = &only {
        failures += run_bench(&ctx, &stream, handles, Some(only));
        println!(
            "{}",
            if failures == 0 {
                "RESULT: OK"
            } else {
                "RESULT: FAILED"
            }
        );
        return if failures == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let lines = self_check::run(handles, &sync);
    for line in &lines {
        let status = if line.passed() { "PASS" } else { "FAIL" };
        failures += usize::from(!line.passed());
        let expect = if line.expect_converged {
            "converges"
        } else {
            "capped"
        };
        match &line.result {
            Ok((verdicts, reference)) => {
                let v: Vec<String> = verdicts.iter().map(|v| v.summary()).collect();
                println!(
                    "{status} {} {} {} [{expect}; f64 reference: {} iterations]: {}",
                    line.kernel,
                    line.storage,
                    line.params,
                    reference.iterations,
                    v.join(" | ")
                );
            }
            Err(e) => println!(
                "{status} {} {} {}: error: {e}",
                line.kernel, line.storage, line.params
            ),
        }
    }
    println!(
        "checks: {} of {} passed",
        lines.len() - failures,
        lines.len()
    );
    if bench {
        failures += run_bench(&ctx, &stream, handles, None);
    }
    let (line, code) = apex_plugin_api::harness::check_result(failures);
    println!("{line}");
    code
}

#[expect(clippy::print_stdout, reason = "a command-line example")]
fn run_bench(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    handles: CudaHandles,
    only: Option<&str>,
) -> usize {
    let ev = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .expect("event")
    };
    {
        let a = stream.alloc_zeros::<f32>(1 << 28).expect("alloc");
        let mut b2 = stream.alloc_zeros::<f32>(1 << 28).expect("alloc");
        let (s, e) = (ev(), ev());
        for _ in 0..3 {
            stream.memcpy_dtod(&a, &mut b2).expect("copy");
        }
        s.record(stream).expect("record");
        for _ in 0..20 {
            stream.memcpy_dtod(&a, &mut b2).expect("copy");
        }
        e.record(stream).expect("record");
        let ms = f64::from(s.elapsed_ms(&e).expect("elapsed")) / 20.0;
        println!(
            "bench copy 1GiB: {:.1} us, {:.0} GB/s",
            ms * 1e3,
            2.0 * (1u64 << 30) as f64 / ms / 1e6
        );
    }
    println!(
        "bench {:<64} {:>5} {:>5} {:>11} {:>9} {:>8} {:>9}",
        "profile (fp32 unless f64)", "iters", "conv", "us/solve", "us/iter", "GB/s", "verify"
    );
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for p in profiles() {
        for (suffix, tuning) in path_tunings(&p) {
            let label = format!("{}{suffix}", p.0);
            if only.is_some_and(|t| !label.contains(t)) {
                continue;
            }
            let o = overrides(&p);
            let row = tuning::with(tuning, || {
                if p.5 {
                    bench_one::<f64>(&p, &label, &o, stream, handles, &sync, &ev)
                } else {
                    bench_one::<f32>(&p, &label, &o, stream, handles, &sync, &ev)
                }
            });
            match row {
                Ok((line, ok)) => {
                    failures += usize::from(!ok);
                    println!("bench {line}");
                }
                Err(e) => {
                    failures += 1;
                    println!("bench {label:<44} error: {e}");
                }
            }
        }
    }
    failures
}

/// The launch plans a profile is timed with: its default, then the per-kernel launches (CG: at
/// 16 and 64 stencil planes per thread too) and, for CG, `cg_persistent` at 2 and 4 blocks per
/// SM (capped by occupancy).
fn path_tunings(p: &Profile) -> Vec<(String, PathTuning)> {
    let launches = PathTuning {
        persistent: Some(false),
        ..PathTuning::default()
    };
    let mut v = vec![
        (String::new(), PathTuning::default()),
        (" [launches]".into(), launches),
    ];
    if p.1 == Method::Cg {
        for z in [16, 64] {
            v.push((
                format!(" [launches zch {z}]"),
                PathTuning {
                    stencil_zch: z,
                    ..launches
                },
            ));
        }
        for b in [2, 4] {
            v.push((
                format!(" [cg_persistent {b}/SM]"),
                PathTuning {
                    persistent: Some(true),
                    resident: Some(false),
                    blocks_per_sm: b,
                    stencil_zch: 0,
                },
            ));
        }
    }
    v
}

fn bench_one<T: Storage>(
    p: &Profile,
    label: &str,
    o: &[(&'static str, ParamValue)],
    stream: &Arc<CudaStream>,
    handles: CudaHandles,
    sync: &dyn Fn() -> Result<(), apex_plugin_api::PluginError>,
    ev: &dyn Fn() -> cudarc::driver::CudaEvent,
) -> Result<(String, bool), String> {
    let tol = default_tolerance(Precision::Fp32);
    let mut case: PoissonCase<T> =
        typed_case::<T>(p.1, o, Backend::Cuda, 5, Some(handles)).map_err(|e| e.to_string())?;
    let v = check(&mut case, 6, &tol, sync).map_err(|e| e.to_string())?;
    // The seed's CG cap is expected to fail verification ("did not converge"); anything else
    // must pass.
    let expected_fail = p.1 == Method::Cg && p.3 == 50;
    let ok = if expected_fail {
        v.failure
            .as_deref()
            .is_some_and(|f| f.starts_with("did not converge"))
    } else {
        v.passed(&tol)
    };
    let work = case.work();
    let bytes = (work.bytes_read + work.bytes_written) as f64;
    for _ in 0..3 {
        case.run().map_err(|e| e.to_string())?;
    }
    sync().map_err(|e| e.to_string())?;
    let n_calls = 10;
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(|e| e.to_string())?;
    for _ in 0..n_calls {
        case.run().map_err(|e| e.to_string())?;
    }
    let graph = stream
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .map_err(|e| e.to_string())?
        .ok_or("empty graph")?;
    graph.launch().map_err(|e| e.to_string())?;
    sync().map_err(|e| e.to_string())?;
    let (s, e) = (ev(), ev());
    let replays = 5;
    s.record(stream).map_err(|e| e.to_string())?;
    for _ in 0..replays {
        graph.launch().map_err(|e| e.to_string())?;
    }
    e.record(stream).map_err(|e| e.to_string())?;
    sync().map_err(|e| e.to_string())?;
    let ms = f64::from(s.elapsed_ms(&e).map_err(|e| e.to_string())?) / f64::from(n_calls * replays);
    let it = case.setup_report.iterations.max(1) as f64;
    Ok((
        format!(
            "{:<64} {:>5} {:>5} {:>11.1} {:>9.2} {:>8.0} {:>9} {:?}",
            label,
            case.setup_report.iterations,
            case.setup_report.converged,
            ms * 1e3,
            ms * 1e3 / it,
            bytes / ms / 1e6,
            if ok { "PASS" } else { "FAIL" },
            case.solve_path()
                .unwrap_or(apex_plugin_poisson::device::SolvePath::Launches)
        ),
        ok,
    ))
}

/// The CPU path of the 64^3 profiles: one solve each, wall clock (what a machine without a GPU
/// can time; `apex-host run --backends cpu` is the protocol-grade figure).
#[expect(clippy::print_stdout, reason = "a command-line example")]
fn cpu_bench() {
    let tol = default_tolerance(Precision::Fp32);
    println!("cpu threads: {}", rayon::current_num_threads());
    for p in profiles()
        .into_iter()
        .filter(|p| p.2 == [64, 64, 64] && !p.5)
    {
        let o = overrides(&p);
        let t0 = Instant::now();
        let mut case = typed_case::<f32>(p.1, &o, Backend::Cpu, 5, None).expect("setup");
        let setup_s = t0.elapsed().as_secs_f64();
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            case.run().expect("run");
            best = best.min(t.elapsed().as_secs_f64());
        }
        let v = case.verdict(&tol).expect("verdict");
        let it = v.report.iterations.max(1) as f64;
        println!(
            "cpu {:<44} setup (incl. one solve) {:>7.1} ms, solve {:>7.1} ms, {:>6.3} ms/iter, {}",
            p.0,
            setup_s * 1e3,
            best * 1e3,
            best * 1e3 / it,
            v.summary()
        );
    }
}
