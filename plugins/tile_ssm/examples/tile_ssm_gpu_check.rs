//! GPU self-check (and, with `--bench`, a timing table) for the TileSSM kernels.
//!
//! Check (`apex_plugin_tile_ssm::self_check`): every kernel × variant (merge sum/avg/gated with a
//! [C] or [B,1,C] gate, initial state none/[B,C]/[B,2,C], NaN/±inf tokens with clamp 1.5) ×
//! K ∈ {1, 17, 256, 4096, 65536} × {fp32, fp16, bf16}, on a stream this program creates: two
//! calls with fresh inputs and poisoned outputs, then `rotate(4)` with every set poisoned, run and
//! verified, then one more call; plus B = 64 (C = 33) and a change of K within the process (two
//! instances, K = 256 and 4,099, run back to back and both verified, no second compile). One
//! line per case; exit 1 on any failure.
//!
//! Bench (`--bench`, or `--bench-only` to skip the check; `--profile fixed,mid` narrows it): the
//! fixed profile (B=1, K=256, C=128, fp16) and the large profile (B=8, K=4096, C=1536, fp16) for
//! every direction and each CUDA tuning of `program::bench_tunings`; `mid` shapes between them
//! with the two production tunings (where the shape rule's crossover lies); K = 65,536 and the
//! large profile in fp32 with the tuning the rule picks. Each row is verified first, then timed
//! three ways:
//!   cold:  L2 flushed (256 MiB memset) before each call, CUDA events around it, median of 100;
//!   hot:   100 calls captured in one CUDA graph, replayed 10 times, mean per call (one buffer set);
//!   dram:  as hot after `rotate(n)`, n sets covering 3 × L2 (apex-host's batch mode), the graph
//!          holding max(100, n) calls. GB/s from the declared bytes (Work) at the dram figure.
//! A 1 GiB device copy gives the bandwidth line.
//!
//! `--cpu` runs the same check plan on the CPU backend (no GPU needed; no rotation there).
//!
//! ```text
//! cargo build --release -p apex-plugin-tile-ssm --example tile_ssm_gpu_check
//! ./target/release/examples/tile_ssm_gpu_check [--bench | --bench-only [--profile P,..] | --cpu]
//! ```

use std::{process::ExitCode, sync::Arc};

use apex_plugin_api::{
    Backend, CudaHandles, Instance, Kernel, ParamValue, Precision,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_tile_ssm::{
    case::ScanKernel,
    harness::{check, params, request},
    problem::{Direction, tolerance},
    program::{CudaTuning, bench_tunings, production_tunings},
    self_check,
};
use cudarc::driver::{
    CudaContext, CudaStream,
    sys::{CUdevice_attribute, CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line example"
)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let bench_only = args.iter().any(|a| a == "--bench-only");
    let bench = bench_only || args.iter().any(|a| a == "--bench");
    // `--profile fixed,mid`: only those bench profiles (default: every one).
    let profiles: Vec<String> = args
        .iter()
        .position(|a| a == "--profile")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    if args.iter().any(|a| a == "--cpu") {
        // The same check plan on the CPU backend (no GPU needed): proves the plan and the reference.
        let lines = self_check::run(None, &|| Ok(()));
        let failures = report(&lines);
        return if failures == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let gpu = match StandaloneGpu::open(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("tile_ssm_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    if !bench_only {
        let lines = self_check::run(Some(handles), &sync);
        failures += report(&lines);
    }
    if bench {
        failures += run_bench(&ctx, &stream, handles, &profiles);
    }
    let (line, code) = apex_plugin_api::harness::check_result(failures);
    println!("{line}");
    code
}

/// Prints one line per checked case and a summary; returns the failures.
#[expect(clippy::print_stdout, reason = "a command-line example")]
fn report(lines: &[self_check::CheckLine]) -> usize {
    let mut failures = 0;
    for line in lines {
        let status = if line.passed() { "PASS" } else { "FAIL" };
        failures += usize::from(!line.passed());
        match &line.result {
            Ok(acc) => {
                let worst = |f: fn(&apex_plugin_api::Accuracy) -> f64| {
                    acc.iter().map(f).fold(0.0f64, f64::max)
                };
                let rel = if line.scale > 0.0 {
                    format!(" max_abs/scale={:.2e}", line.max_abs_error() / line.scale)
                } else {
                    String::new()
                };
                println!(
                    "{status} {} {} {}: {} calls, max_abs={:.3e} rmse={:.3e} mismatch={:.2e} non_finite={}{rel}",
                    line.kernel,
                    line.precision,
                    line.params,
                    acc.len(),
                    line.max_abs_error(),
                    worst(|a| a.rmse),
                    worst(|a| a.mismatch_ratio),
                    acc.iter().map(|a| a.non_finite).sum::<u64>(),
                );
            }
            Err(e) => println!(
                "{status} {} {} {}: error: {e}",
                line.kernel, line.precision, line.params
            ),
        }
    }
    println!(
        "check: {} cases, {} passed, {} failed",
        lines.len(),
        lines.len() - failures,
        failures
    );
    failures
}

/// Which block shapes a profile times.
#[derive(Clone, Copy)]
enum Tunings {
    /// Every shape of `program::bench_tunings`.
    All,
    /// The two the shape rule chooses between (`program::production_tunings`): the crossover.
    Production,
    /// Only the one the shape rule picks for the profile's B and C.
    Rule,
}

/// A profile: label, B, K, C, precision, and the tunings it compares.
type Profile = (&'static str, i64, i64, i64, Precision, Tunings);

const PROFILES: [Profile; 11] = [
    ("fixed", 1, 256, 128, Precision::Fp16, Tunings::All),
    ("large", 8, 4096, 1536, Precision::Fp16, Tunings::All),
    ("mid", 1, 256, 1536, Precision::Fp16, Tunings::Production),
    ("mid", 1, 4096, 1536, Precision::Fp16, Tunings::Production),
    ("mid", 2, 4096, 1536, Precision::Fp16, Tunings::Production),
    ("mid", 4, 4096, 1024, Precision::Fp16, Tunings::Production),
    ("mid", 4, 4096, 1536, Precision::Fp16, Tunings::Production),
    ("mid", 8, 4096, 1024, Precision::Fp16, Tunings::Production),
    ("mid", 8, 256, 1536, Precision::Fp16, Tunings::Production),
    ("long", 1, 65_536, 128, Precision::Fp16, Tunings::Rule),
    ("large", 8, 4096, 1536, Precision::Fp32, Tunings::Rule),
];

/// apex-host's rule (host `measure::rotation`): sets covering 3 × L2, at most 2048.
fn buffer_sets(l2: u64, bytes_per_call: u64) -> u32 {
    (3 * l2).div_ceil(bytes_per_call.max(1)).clamp(1, 2048) as u32
}

/// One timed row: µs per call cold / L2-hot / DRAM-cold, the sets rotated over, GB/s and
/// Gtokens/s at the DRAM-cold figure, and whether both verifications passed.
struct Row {
    cold: f64,
    hot: f64,
    dram: f64,
    sets: u32,
    gbps: f64,
    gtok: f64,
    ok: bool,
}

struct Timer<'a> {
    ctx: &'a Arc<CudaContext>,
    stream: &'a Arc<CudaStream>,
}

impl Timer<'_> {
    fn event(&self) -> Result<cudarc::driver::CudaEvent, String> {
        self.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| cuda_error(e).to_string())
    }

    /// Median µs of 100 single calls, each after an L2 flush.
    fn cold_us(
        &self,
        inst: &mut dyn Instance,
        flush: &mut cudarc::driver::CudaSlice<u8>,
    ) -> Result<f64, String> {
        let mut times = Vec::new();
        for _ in 0..100 {
            self.stream.memset_zeros(flush).map_err(|e| e.to_string())?;
            let (s, e) = (self.event()?, self.event()?);
            s.record(self.stream).map_err(|e| e.to_string())?;
            inst.run().map_err(|e| e.to_string())?;
            e.record(self.stream).map_err(|e| e.to_string())?;
            times.push(f64::from(s.elapsed_ms(&e).map_err(|e| e.to_string())?) * 1e3);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// Mean µs per call of `calls` calls captured in one graph, replayed `replays` times.
    fn graph_us(
        &self,
        inst: &mut dyn Instance,
        calls: usize,
        replays: usize,
    ) -> Result<f64, String> {
        for _ in 0..3 {
            inst.run().map_err(|e| e.to_string())?;
        }
        self.stream.synchronize().map_err(|e| e.to_string())?;
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| e.to_string())?;
        let mut captured = Ok(());
        for _ in 0..calls {
            if let Err(e) = inst.run() {
                captured = Err(e.to_string());
                break;
            }
        }
        let graph = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(|e| e.to_string())?;
        captured?;
        let graph = graph.ok_or("the capture produced no graph")?;
        graph.launch().map_err(|e| e.to_string())?;
        self.stream.synchronize().map_err(|e| e.to_string())?;
        let (s, e) = (self.event()?, self.event()?);
        s.record(self.stream).map_err(|e| e.to_string())?;
        for _ in 0..replays {
            graph.launch().map_err(|e| e.to_string())?;
        }
        e.record(self.stream).map_err(|e| e.to_string())?;
        let ms = f64::from(s.elapsed_ms(&e).map_err(|e| e.to_string())?);
        Ok(ms * 1e3 / (calls * replays) as f64)
    }
}

#[expect(clippy::print_stdout, reason = "a command-line example")]
fn run_bench(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    handles: CudaHandles,
    profiles: &[String],
) -> usize {
    let timer = Timer { ctx, stream };
    let l2 = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .map_or(50 << 20, |v| v as u64);
    let mut flush = match stream.alloc_zeros::<u8>(256 << 20) {
        Ok(f) => f,
        Err(e) => {
            println!("bench: flush buffer: {}", cuda_error(e));
            return 1;
        }
    };
    // Copy bandwidth line: 1 GiB device-to-device.
    let copy = (|| -> Result<f64, String> {
        let a = stream
            .alloc_zeros::<f32>(1 << 28)
            .map_err(|e| e.to_string())?;
        let mut b = stream
            .alloc_zeros::<f32>(1 << 28)
            .map_err(|e| e.to_string())?;
        for _ in 0..3 {
            stream.memcpy_dtod(&a, &mut b).map_err(|e| e.to_string())?;
        }
        let (s, e) = (timer.event()?, timer.event()?);
        s.record(stream).map_err(|e| e.to_string())?;
        for _ in 0..20 {
            stream.memcpy_dtod(&a, &mut b).map_err(|e| e.to_string())?;
        }
        e.record(stream).map_err(|e| e.to_string())?;
        Ok(f64::from(s.elapsed_ms(&e).map_err(|e| e.to_string())?) / 20.0)
    })();
    match copy {
        Ok(ms) => println!(
            "bench copy 1GiB: {:.1} us, {:.0} GB/s (read+write)",
            ms * 1e3,
            2.0 * (1u64 << 30) as f64 / ms / 1e6
        ),
        Err(e) => println!("bench copy 1GiB: error {e}"),
    }
    println!("bench L2: {} MiB", l2 >> 20);
    println!(
        "bench {:<6} {:<24} {:<5} {:>6} {:>6} {:>5} {:<18} {:>9} {:>9} {:>9} {:>5} {:>8} {:>9}  verify",
        "prof",
        "kernel",
        "prec",
        "B",
        "K",
        "C",
        "tuning",
        "cold_us",
        "hot_us",
        "dram_us",
        "sets",
        "GB/s",
        "Gtok/s"
    );
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for (label, b, k, c, precision, which) in PROFILES {
        if !profiles.is_empty() && !profiles.iter().any(|p| p == label) {
            continue;
        }
        let tunings: Vec<CudaTuning> = match which {
            Tunings::All => bench_tunings(),
            Tunings::Production => production_tunings().to_vec(),
            Tunings::Rule => vec![CudaTuning::for_shape(b as usize, c as usize)],
        };
        for direction in Direction::ALL {
            for &tuning in &tunings {
                let kernel = ScanKernel::with_tuning(direction, tuning);
                let overrides = [
                    ("batch", ParamValue::Int(b)),
                    ("steps", ParamValue::Int(k)),
                    ("channels", ParamValue::Int(c)),
                ];
                let tol = tolerance(precision);
                let row = (|| -> Result<Row, String> {
                    let p = params(&kernel, &overrides);
                    let mut inst = kernel
                        .setup(&request(p, Backend::Cuda, precision, 5, Some(handles)))
                        .map_err(|e| e.to_string())?;
                    let ok1 = check(inst.as_mut(), 6, &tol, &sync)
                        .map_err(|e| e.to_string())?
                        .within(&tol);
                    let work = inst.work();
                    let bytes = work.bytes_read + work.bytes_written;
                    let cold = timer.cold_us(inst.as_mut(), &mut flush)?;
                    let hot = timer.graph_us(inst.as_mut(), 100, 10)?;
                    let sets = inst
                        .rotate(buffer_sets(l2, bytes))
                        .map_err(|e| e.to_string())?;
                    let dram = timer.graph_us(inst.as_mut(), 100.max(sets as usize), 5)?;
                    let ok2 = check(inst.as_mut(), 7, &tol, &sync)
                        .map_err(|e| e.to_string())?
                        .within(&tol);
                    Ok(Row {
                        cold,
                        hot,
                        dram,
                        sets,
                        gbps: bytes as f64 / dram / 1e3,
                        gtok: work.items / dram / 1e3,
                        ok: ok1 && ok2,
                    })
                })();
                let name = direction.kernel_id();
                let t = tuning.label();
                match row {
                    Ok(Row {
                        cold,
                        hot,
                        dram,
                        sets,
                        gbps,
                        gtok,
                        ok,
                    }) => {
                        failures += usize::from(!ok);
                        println!(
                            "bench {label:<6} {name:<24} {precision:<5} {b:>6} {k:>6} {c:>5} {t:<18} {cold:>9.2} {hot:>9.2} {dram:>9.2} {sets:>5} {gbps:>8.0} {gtok:>9.2}  {}",
                            if ok { "PASS" } else { "FAIL" }
                        );
                    }
                    Err(e) => {
                        failures += 1;
                        println!(
                            "bench {label:<6} {name:<24} {precision:<5} {b:>6} {k:>6} {c:>5} {t:<18} error: {e}"
                        );
                    }
                }
            }
        }
    }
    failures
}
