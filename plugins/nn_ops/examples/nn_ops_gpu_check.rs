//! GPU self-check (and, with `--bench`, a quick DRAM-cold batch timing) for the nn ops.
//!
//! Check: every op × variant × {fp32, fp16, bf16} at row lengths 1, 7, 8, 512, 8,193 and 262,144
//! (and all-ignored cross-entropy targets), set up on a stream this program creates, verified
//! against the f64 reference on three calls with fresh inputs and poisoned outputs (two seeds,
//! then once more after `rotate(4)` and a call on every set). One line per case; exit 1 on any
//! failure.
//!
//! Bench (`--bench`): the LLM-sized grid and the seed's 2 M-element shape, each verified once at
//! full size, then timed like apex-host's batch mode: `rotate` to buffer sets totalling at least
//! 3 × L2 (4 to 16 sets), 40 round-robin calls captured in one CUDA graph, the graph replayed 5
//! times between events, divided; GB/s from the declared minimum traffic, and % of a float4
//! device-copy kernel measured the same way (1 GiB, DRAM to DRAM). For ops that read as many
//! bytes as they write, `%copy@size` is the time of that copy kernel moving the op's bytes (the
//! same buffer sets' count, round-robin) over the op's time: what one launch of that size can
//! reach, ramp and tail included.
//!
//! ```text
//! cargo build --release -p apex-plugin-nn-ops --example nn_ops_gpu_check
//! ./target/release/examples/nn_ops_gpu_check [--bench] [--bench-only] [--only TEXT]
//!     [--launch dependent|plain]
//!     (--only: the check cases whose "kernel params" and the bench profiles whose
//!     "name precision params" contain TEXT; --launch plain: without programmatic dependent
//!     launch, which every case uses by default, as in apex-host)
//! ./target/release/examples/nn_ops_gpu_check --dry-run [--hashes]
//!     (no GPU: plans and compiles every case; --hashes prints a hash of each program's PTX)
//! ```

use std::process::ExitCode;
use std::sync::Arc;

use apex_plugin_api::{
    Backend, CudaHandles, Kernel, ParamValue, PluginError, Precision,
    cuda::{StandaloneGpu, compile_ptx, cuda_error},
};
use apex_plugin_nn_ops::{
    case::OpKernel,
    harness::{check, describe, params, request},
    launch::with_dependent_launch,
    ops::{
        CrossEntropy, Gelu, LayerNorm, MseLoss, Swish, cross_entropy::tuning::GradPlan,
        layer_norm::tuning::Schedule,
    },
    self_check::{self, Variant},
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
    sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

#[expect(clippy::print_stderr, reason = "a command-line example")]
fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--dry-run") {
        return dry_run();
    }
    // `--launch plain`: every case set up to launch without programmatic dependent launch (the
    // default, `dependent`, is what apex-host runs), to verify and time both.
    let args: Vec<String> = std::env::args().collect();
    let dependent = match args
        .iter()
        .position(|a| a == "--launch")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
    {
        None | Some("dependent") => true,
        Some("plain") => false,
        Some(other) => {
            eprintln!("nn_ops_gpu_check: --launch {other}: expected dependent or plain");
            return ExitCode::from(2);
        }
    };
    with_dependent_launch(dependent, checked_main)
}

#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line example"
)]
fn checked_main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench" || a == "--bench-only");
    let check_cases = !std::env::args().any(|a| a == "--bench-only");
    // One stream, ordered by this program: no per-buffer events (they would also be illegal
    // inside the graph captures of --bench).
    let gpu = match StandaloneGpu::open_untracked(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("nn_ops_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    let mut total = 0;
    if check_cases {
        // `--only TEXT`: the check cases whose "kernel params" contain TEXT, and the bench
        // profiles whose "name precision params" do.
        let args: Vec<String> = std::env::args().collect();
        let only = args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1).cloned());
        for line in self_check::run(handles, &sync, only.as_deref()) {
            total += 1;
            let status = if line.passed() { "PASS" } else { "FAIL" };
            failures += usize::from(!line.passed());
            match &line.result {
                Ok(calls) => {
                    let figures: Vec<String> = calls
                        .iter()
                        .map(|a| {
                            format!(
                                "max_abs={:.2e} rmse={:.2e} mismatch={:.1e} non_finite={}",
                                a.max_abs_error, a.rmse, a.mismatch_ratio, a.non_finite
                            )
                        })
                        .collect();
                    println!(
                        "{status} {} {} {}: {}",
                        line.kernel,
                        line.precision,
                        line.params,
                        figures.join(" | ")
                    );
                }
                Err(e) => println!(
                    "{status} {} {} {}: error: {e}",
                    line.kernel, line.precision, line.params
                ),
            }
        }
        println!("checks: {} of {total} passed", total - failures);
    }
    if bench {
        failures += run_bench(&ctx, &stream, handles);
    }
    println!(
        "{}",
        if failures == 0 {
            "RESULT: OK".to_string()
        } else {
            format!("RESULT: {failures} FAILED")
        }
    );
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Without a GPU: plans every check case and bench profile and compiles each distinct CUDA
/// source with NVRTC for sm_90 (when libnvrtc loads), so a bad shape or source shows here.
#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line example"
)]
fn dry_run() -> ExitCode {
    use apex_plugin_nn_ops::op::{DeviceFacts, NnOp};
    let programs = match self_check::all_programs() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("dry run: a check case does not plan: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut sources: Vec<(String, String)> = programs
        .into_iter()
        .map(|(label, p)| (label, p.source))
        .collect();
    let checks = sources.len();
    for (name, kernel, overrides, precision, variant) in profiles() {
        let p = params(kernel.as_ref(), &overrides);
        let facts = DeviceFacts::H100;
        let program = variant.apply(|| match kernel.descriptor().id.as_str() {
            "nn_ops.layer_norm" => {
                LayerNorm::plan(&p).and_then(|o| o.cuda_program(precision, facts))
            }
            "nn_ops.gelu" => Gelu::plan(&p).and_then(|o| o.cuda_program(precision, facts)),
            "nn_ops.swish" => Swish::plan(&p).and_then(|o| o.cuda_program(precision, facts)),
            "nn_ops.mse_loss" => MseLoss::plan(&p).and_then(|o| o.cuda_program(precision, facts)),
            _ => CrossEntropy::plan(&p).and_then(|o| o.cuda_program(precision, facts)),
        });
        match program {
            Ok(prog) => {
                println!(
                    "profile {name} {precision} {}{}: grid {} x block {}, {} B dynamic shared memory, scratch {} words, {} blocks per row",
                    describe(&overrides),
                    variant.suffix(),
                    prog.config.grid_dim.0,
                    prog.config.block_dim.0,
                    prog.config.shared_mem_bytes,
                    prog.scratch_words,
                    prog.co_resident_blocks
                );
                sources.push((
                    format!(
                        "{name} {precision} {}{}",
                        describe(&overrides),
                        variant.suffix()
                    ),
                    prog.source,
                ));
            }
            Err(e) => {
                eprintln!("dry run: profile {name} {precision} does not plan: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    sources.sort_by(|a, b| a.1.cmp(&b.1));
    sources.dedup_by(|a, b| a.1 == b.1);
    if !apex_plugin_api::cuda::nvrtc_present() {
        println!(
            "dry run: {checks} check programs and {} distinct sources planned; NVRTC not loadable, not compiled",
            sources.len()
        );
        return ExitCode::SUCCESS;
    }
    // `--hashes`: a hash of each program's PTX, so a refactor of the CUDA sources can show that
    // it changes no instruction (compare the lists before and after).
    let hashes = std::env::args().any(|a| a == "--hashes");
    for (label, source) in &sources {
        match compile_ptx("nn_ops", source, "sm_90") {
            Ok(ptx) if hashes => {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                ptx.to_src().hash(&mut h);
                println!("ptx {:016x} {label}", h.finish());
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("dry run: {label}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "dry run: {checks} check programs planned, {} distinct sources compiled for sm_90: OK",
        sources.len()
    );
    ExitCode::SUCCESS
}

/// A label, the kernel, its parameter overrides, the precision and the launch plan.
type Profile = (
    &'static str,
    Box<dyn Kernel>,
    Vec<(&'static str, ParamValue)>,
    Precision,
    Variant,
);

fn profiles() -> Vec<Profile> {
    let bsd = |b: i64, s: i64, d: i64| apex_plugin_nn_ops::harness::bsd(b, s, d);
    let with = |mut o: Vec<(&'static str, ParamValue)>, k: &'static str, v: ParamValue| {
        o.push((k, v));
        o
    };
    let mut out: Vec<Profile> = Vec::new();
    for precision in [Precision::Bf16, Precision::Fp32] {
        for dim in [512, 1024, 2048, 4096, 8192] {
            // The default (the schedule `Schedule::for_row` picks), then each by name.
            let variants =
                std::iter::once(Variant::Default).chain(Schedule::ALL.map(Variant::LayerNorm));
            for variant in variants {
                out.push((
                    "layer_norm",
                    Box::new(OpKernel::<LayerNorm>::default()),
                    bsd(1, 8192, dim),
                    precision,
                    variant,
                ));
            }
        }
        for dim in [4096, 8192] {
            out.push((
                "gelu",
                Box::new(OpKernel::<Gelu>::default()),
                bsd(1, 8192, dim),
                precision,
                Variant::Default,
            ));
            out.push((
                "gelu_tanh",
                Box::new(OpKernel::<Gelu>::default()),
                with(
                    bsd(1, 8192, dim),
                    "approximate",
                    ParamValue::Str("tanh".into()),
                ),
                precision,
                Variant::Default,
            ));
            out.push((
                "swish",
                Box::new(OpKernel::<Swish>::default()),
                bsd(1, 8192, dim),
                precision,
                Variant::Default,
            ));
            out.push((
                "mse_loss",
                Box::new(OpKernel::<MseLoss>::default()),
                bsd(1, 8192, dim),
                precision,
                Variant::Default,
            ));
        }
        for vocab in [32_768, 131_072, 262_144] {
            // The forward, then the forward + gradient under the default plan and, for
            // comparison, every other plan of `tuning::GradPlan` (resident, shared memory at
            // each slice budget).
            let grad_variants = GradPlan::ALL
                .into_iter()
                .filter(|&p| p != GradPlan::DEFAULT)
                .map(|p| (true, "cross_entropy+grad", Variant::Grad(p)));
            let variants = [
                (false, "cross_entropy", Variant::Default),
                (true, "cross_entropy+grad", Variant::Default),
            ]
            .into_iter()
            .chain(grad_variants);
            for (grad, label, variant) in variants {
                out.push((
                    label,
                    Box::new(OpKernel::<CrossEntropy>::default()),
                    vec![
                        ("rows", ParamValue::Int(4096)),
                        ("vocab", ParamValue::Int(vocab)),
                        ("grad", ParamValue::Bool(grad)),
                    ],
                    precision,
                    variant,
                ));
            }
        }
    }
    // The seed's 2 M-element shape (16 x 256 x 512).
    for precision in [Precision::Bf16, Precision::Fp32] {
        out.push((
            "layer_norm",
            Box::new(OpKernel::<LayerNorm>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "gelu",
            Box::new(OpKernel::<Gelu>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "swish",
            Box::new(OpKernel::<Swish>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "mse_loss",
            Box::new(OpKernel::<MseLoss>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "cross_entropy",
            Box::new(OpKernel::<CrossEntropy>::default()),
            vec![
                ("rows", ParamValue::Int(4096)),
                ("vocab", ParamValue::Int(512)),
            ],
            precision,
            Variant::Default,
        ));
    }
    out
}

/// Calls per CUDA graph and graph replays per timing.
const GRAPH_CALLS: usize = 40;
const REPLAYS: usize = 5;

/// µs per call of `run`, DRAM-cold: `GRAPH_CALLS` calls captured in one graph, replayed
/// `REPLAYS` times between two events.
fn batch_us(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    mut run: impl FnMut() -> Result<(), PluginError>,
) -> Result<f64, PluginError> {
    for _ in 0..3 {
        run()?;
    }
    stream.synchronize().map_err(cuda_error)?;
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(cuda_error)?;
    let captured = (0..GRAPH_CALLS).try_for_each(|_| run());
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(cuda_error)?;
    captured?;
    let graph = graph.ok_or_else(|| PluginError::other("empty graph"))?;
    graph.launch().map_err(cuda_error)?;
    stream.synchronize().map_err(cuda_error)?;
    let ev = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda_error)
    };
    let (start, end) = (ev()?, ev()?);
    start.record(stream).map_err(cuda_error)?;
    for _ in 0..REPLAYS {
        graph.launch().map_err(cuda_error)?;
    }
    end.record(stream).map_err(cuda_error)?;
    stream.synchronize().map_err(cuda_error)?;
    let ms = f64::from(start.elapsed_ms(&end).map_err(cuda_error)?);
    Ok(ms * 1e3 / (GRAPH_CALLS * REPLAYS) as f64)
}

const COPY_SRC: &str = r#"
extern "C" __global__ void copy4(const uint4* __restrict__ a, uint4* __restrict__ b, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}
"#;

/// The float4 copy kernel, loaded once, and its launch shape (8 blocks of 256 a SM).
struct CopyKernel {
    f: CudaFunction,
    cfg: LaunchConfig,
}

impl CopyKernel {
    fn load(ctx: &Arc<CudaContext>, arch: &'static str) -> Result<Self, PluginError> {
        let ptx = compile_ptx("copy4", COPY_SRC, arch)?;
        let module = ctx.load_module(ptx).map_err(cuda_error)?;
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(cuda_error)? as u32;
        Ok(Self {
            f: module.load_function("copy4").map_err(cuda_error)?,
            cfg: LaunchConfig {
                grid_dim: (sms * 8, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
        })
    }

    /// µs per call over `sets` pairs of `bytes`-byte buffers (a multiple of 16), walked
    /// round-robin and timed like the ops.
    fn us(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: usize,
        sets: usize,
    ) -> Result<f64, PluginError> {
        let n = (bytes / 16) as u64;
        let buffers = (0..sets)
            .map(|_| {
                let a = stream.alloc_zeros::<u8>(bytes).map_err(cuda_error)?;
                let b = stream.alloc_zeros::<u8>(bytes).map_err(cuda_error)?;
                Ok((a, b))
            })
            .collect::<Result<Vec<_>, PluginError>>()?;
        let mut next = 0;
        batch_us(ctx, stream, || {
            let (a, b) = &buffers[next];
            next = (next + 1) % buffers.len();
            let mut l = stream.launch_builder(&self.f);
            l.arg(a).arg(b).arg(&n);
            // SAFETY: copy4(a, b, n) over two buffers of n uint4.
            unsafe { l.launch(self.cfg) }.map(drop).map_err(cuda_error)
        })
    }

    /// GB/s over 1 GiB (two 1 GiB buffers: DRAM to DRAM): the bench's copy line.
    fn line_gbps(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
    ) -> Result<f64, PluginError> {
        let us = self.us(ctx, stream, 1 << 30, 1)?;
        Ok(2.0 * (1u64 << 30) as f64 / us / 1e3)
    }

    /// The same-size copy's µs for an op that reads as many bytes as it writes (within 5 %): a
    /// copy of its written bytes over as many buffer sets, the time any kernel moving those bytes
    /// in one launch pays, ramp and tail included. `None` for ops whose traffic is not a copy's
    /// shape.
    fn same_size_us(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        (read, written): (u64, u64),
        sets: usize,
    ) -> Option<Result<f64, PluginError>> {
        let (r, w) = (read as f64, written as f64);
        ((r - w).abs() <= 0.05 * (r + w)).then(|| {
            let bytes = (written as usize).div_ceil(16) * 16;
            self.us(ctx, stream, bytes, sets)
        })
    }
}

#[expect(clippy::print_stdout, reason = "a command-line example")]
fn run_bench(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, handles: CudaHandles) -> usize {
    let arch: &'static str = Box::leak(
        format!(
            "sm_{}{}",
            handles.compute_capability_major, handles.compute_capability_minor
        )
        .into_boxed_str(),
    );
    let l2 = ctx
        .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .unwrap_or(50 << 20) as f64;
    let copy_kernel = match CopyKernel::load(ctx, arch) {
        Ok(k) => k,
        Err(e) => {
            println!("bench copy: error {e}");
            return 1;
        }
    };
    let copy = match copy_kernel.line_gbps(ctx, stream) {
        Ok(g) => g,
        Err(e) => {
            println!("bench copy: error {e}");
            return 1;
        }
    };
    println!(
        "bench copy line (float4 kernel, 1 GiB, graph): {copy:.0} GB/s; L2 {:.0} MiB",
        l2 / 1048576.0
    );
    println!(
        "{:<20} {:<5} {:<36} {:>5} {:>10} {:>8} {:>6} {:>10}  verify",
        "op", "prec", "params", "sets", "us/call", "GB/s", "%copy", "%copy@size"
    );
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    // `--only TEXT`: bench only the profiles whose "name precision params" line contains TEXT
    // (for a profiler run).
    let args: Vec<String> = std::env::args().collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    for (name, kernel, overrides, precision, variant) in profiles() {
        let shown = format!("{}{}", describe(&overrides), variant.suffix());
        let line = format!("{name} {precision} {shown}");
        if only.as_ref().is_some_and(|t| !line.contains(t.as_str())) {
            continue;
        }
        let tol = kernel.descriptor().tolerance_for(precision);
        let p = params(kernel.as_ref(), &overrides);
        let result = variant
            .apply(|| kernel.setup(&request(p, Backend::Cuda, precision, 5, Some(handles))))
            .and_then(|mut inst| {
                let acc = check(inst.as_mut(), 6, &tol, &sync)?;
                let work = inst.work();
                let bytes = (work.bytes_read + work.bytes_written) as f64;
                let want = (3.0 * l2 / bytes).ceil().clamp(4.0, 16.0) as u32;
                let sets = inst.rotate(want)?;
                let us = batch_us(ctx, stream, || inst.run())?;
                let traffic = (work.bytes_read, work.bytes_written);
                let same = copy_kernel
                    .same_size_us(ctx, stream, traffic, sets as usize)
                    .transpose()?;
                Ok((acc, bytes, sets, us, same))
            });
        match result {
            Ok((acc, bytes, sets, us, same)) => {
                let ok = acc.within(&tol);
                failures += usize::from(!ok);
                let gbps = bytes / us / 1e3;
                let at_size = same.map_or("-".to_string(), |c| format!("{:.1}", 100.0 * c / us));
                println!(
                    "{name:<20} {precision:<5} {shown:<36} {sets:>5} {us:>10.2} {gbps:>8.0} {:>6.1} {at_size:>10}  {}",
                    100.0 * gbps / copy,
                    if ok {
                        "PASS".to_string()
                    } else {
                        format!("FAIL {acc:?}")
                    }
                );
            }
            Err(e) => {
                failures += 1;
                println!("{name:<20} {precision:<5} {shown:<36} error: {e}");
            }
        }
    }
    failures
}
