//! The GPU self-check of `ff_model.infer` (run on the GPU machine), and with `--bench` a timing
//! of the fast path's refine block fused, lean and split.
//!
//! Check: every checked shape of the fast path and five of the eager path, in fp16, bf16 and fp32;
//! the fast path once per refine path asked for (`auto`, the plugin's default: per level the
//! fused kernel of fewer cluster waves; `fused`: `ff_refine_apply` on each level whose tiles fit
//! one thread-block cluster, split on the others; `lean`: `ff_refine_apply_lean` on the same
//! levels; `split`: `ff_refine` + `ff_apply` everywhere). Each case: two calls on fresh
//! inputs with poisoned outputs, a call after `rotate(4)`, and a never-run poisoned output that
//! must fail; per output (heavy_features, detail_map, alpha) the largest error against the f64
//! reference and the share of its tolerance bound it used.
//!
//! `--precision P[,P..]` (fp16, bf16, fp32) restricts the check to those storages (default all
//! three) and sets the bench's (default fp16).
//!
//! Bench (`--bench`, or `--bench-only` to skip the check): each storage asked for (fp16 by
//! default), the shapes `--only` names (by default `profile` and `B=8`), each refine path asked
//! for; every row verified once, then timed
//! like apex-host's batch mode: `rotate` to buffer sets whose declared bytes total at least 3 × L2,
//! the calls (a multiple of the sets, at least 50) captured in one CUDA graph, the median of 10
//! replays between events, per call. Then the frames/s of `B=8` over `profile` (B=1) per path
//! and storage. `--seed N` draws the timed inputs from seed N (default 21, the figures of every
//! session so far; `apex-host run` times seed 123's unless told `--seed`): a frame's tile
//! selection, and so where its tiles lie, follows its inputs. `--order host` runs apex-host's
//! sequence before the timing: `HOST_ORDER_CALLS` plain calls on one buffer set, each on a drained
//! stream (as apex-host's cold and launch modes run them), then the rotation and the capture with
//! no call between them; the default, `--order bench`, runs a frame and three calls after the rotation. The host
//! order reads the profile ~3.6 µs a call slower, as apex-host does (H200, thirty-fifth session,
//! `benches/results/ff_model_host_order_h200_2026-11-29_s35.txt`: 46.3 against 42.6-42.9 µs; the
//! captured graphs are the same; why is not known yet).
//! `--stage refines` times only the two levels' refine blocks of each call (after the verified
//! frames, which leave the packed tiles and FiLM vectors they read): their cost apart from the
//! rest of the frame, for a side-by-side with `benches/probes/ff_refine_block_torch.py`. Their
//! outputs rotate with the sets; the packed tiles they read are one buffer a level (L2-warm).
//!
//! ```text
//! ff_model_gpu_check [--only LABEL[,LABEL..]] [--refine PATH[,PATH..]] [--bench | --bench-only]
//!                    [--stage frame|refines] [--precision P[,P..]] [--seed N]
//!                    [--order bench|host]
//! ```
//! PATH: `auto`, `fused`, `lean` or `split` (default `auto,split`).
//! Exits 0 when every check (and every bench row's verify) passes, 1 when one fails, 2 without a
//! GPU, 3 on a bad argument.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::{process::ExitCode, sync::Arc};

use abi_stable::std_types::ROption;
use apex_plugin_api::{
    Backend, CudaHandles, Instance, ParamValue, PluginError, Precision, SetupRequest, Tolerance,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_ff_model::{FfCase, device::Refine, problem};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaStream,
    sys::{CUdevice_attribute, CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

type Overrides = Vec<(&'static str, ParamValue)>;

/// What a bench row times (`--stage`).
#[derive(Clone, Copy)]
enum Stage {
    /// Whole frames.
    Frame,
    /// Only the two levels' refine blocks of each call.
    Refines,
}

impl Stage {
    /// One call of the case at this stage.
    fn call(self) -> fn(&mut FfCase) -> Result<(), PluginError> {
        match self {
            Self::Frame => FfCase::run,
            Self::Refines => FfCase::run_refines,
        }
    }

    /// What the bench's lines add to say so.
    fn note(self) -> &'static str {
        match self {
            Self::Frame => "",
            Self::Refines => " (the refine blocks alone)",
        }
    }
}

/// The shapes the bench times when `--only` names none.
const BENCH_SHAPES: [&str; 2] = ["profile", "B=8"];

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
        (
            // Every L0 tile and 160 L1 tiles: FiLM's scan over more than one 32-token chunk.
            "K=64/160",
            vec![
                ("budget_b1", ParamValue::Float(1e4)),
                ("budget_b2", ParamValue::Float(1e4)),
                i("kmax_l0", 64),
                i("kmax_l1", 160),
            ],
        ),
        (
            // The same in several runs of frames: the pack-free levels' scans over two chunks.
            "B=4 K=64/160",
            vec![
                i("batch", 4),
                ("budget_b1", ParamValue::Float(1e4)),
                ("budget_b2", ParamValue::Float(1e4)),
                i("kmax_l0", 64),
                i("kmax_l1", 160),
            ],
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
fn is_eager(overrides: &Overrides) -> bool {
    overrides
        .iter()
        .any(|(n, v)| *n == "path" && matches!(v, ParamValue::Str(s) if s.as_str() == "eager"))
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

/// A case of `overrides` in `precision`, its refine block run `refine`'s way (`None`: the
/// eager path, which has no such choice).
fn setup(
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
fn plan(case: &FfCase) -> String {
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

fn check_case(
    case: &mut FfCase,
    tol: &Tolerance,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Result<String, String> {
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
        let acc = case.verify(tol).map_err(|e| format!("verify: {e}"))?;
        let want = case.reference().map_err(|e| format!("reference: {e}"))?;
        let (h, d, a) = case.outputs();
        let parts = [
            ("heavy", errors(h, &want.heavy, tol)),
            ("detail", errors(d, &want.detail, tol)),
            ("alpha", errors(a, &want.alpha, tol)),
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
        if !acc.within(tol) || acc.non_finite > 0 {
            return Err(format!("{}\n    {acc:?}", lines.join("\n    ")));
        }
    }
    case.prepare_check(14)
        .map_err(|e| format!("prepare: {e}"))?;
    match case.verify(tol) {
        Ok(acc) if acc.non_finite > 0 && !acc.within(tol) => lines.push(format!(
            "poisoned outputs caught; note: {}",
            case.verify_note()
        )),
        Ok(acc) => return Err(format!("poison not caught: {acc:?}")),
        Err(e) => return Err(format!("verify of poison: {e}")),
    }
    Ok(lines.join("\n    "))
}

/// Times `calls` of the fast path as apex-host's batch mode does: DRAM-cold buffer sets, one
/// captured graph, the median of the replays per call.
struct Timer<'a> {
    ctx: &'a Arc<CudaContext>,
    stream: &'a Arc<CudaStream>,
    l2: u64,
    /// The seed of the inputs every row times (`--seed`).
    seed: u64,
    /// What runs between the verified call and the capture (`--order`).
    order: Order,
}

/// The calls before a bench row's capture (`--order`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// The rotation, then a frame and three calls of the row.
    Bench,
    /// apex-host's: [`HOST_ORDER_CALLS`] calls on one buffer set, each on a drained stream, then
    /// the rotation, then the capture.
    Host,
}

/// The plain calls `--order host` runs before the rotation (apex-host's cold and launch modes run
/// a few hundred; 300 reproduced its figures, thirty-fifth session).
const HOST_ORDER_CALLS: usize = 300;

/// One bench row's figures.
struct Timing {
    us: f64,
    sets: u32,
    calls: usize,
}

const REPLAYS: usize = 10;

impl Timer<'_> {
    fn event(&self) -> Result<CudaEvent, String> {
        self.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| cuda_error(e).to_string())
    }

    /// Times `call` (one call of the case: a frame, or its refines alone).
    fn time(
        &self,
        case: &mut FfCase,
        call: fn(&mut FfCase) -> Result<(), PluginError>,
    ) -> Result<Timing, String> {
        let work = case.work();
        let bytes = (work.bytes_read + work.bytes_written).max(1);
        let want = (3 * self.l2).div_ceil(bytes).clamp(1, 256) as u32;
        if self.order == Order::Host {
            for _ in 0..HOST_ORDER_CALLS {
                self.stream.synchronize().map_err(|e| e.to_string())?;
                call(case).map_err(|e| format!("run: {e}"))?;
            }
        }
        let sets = case.rotate(want).map_err(|e| format!("rotate: {e}"))?;
        let calls = 50usize.div_ceil(sets as usize) * sets as usize;
        if self.order == Order::Bench {
            // A frame first: it leaves the state a refines-only call reads.
            case.run().map_err(|e| format!("run: {e}"))?;
            for _ in 0..3 {
                call(case).map_err(|e| format!("run: {e}"))?;
            }
        }
        self.stream.synchronize().map_err(|e| e.to_string())?;
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| format!("begin capture: {e}"))?;
        let mut captured = Ok(());
        for _ in 0..calls {
            if let Err(e) = call(case) {
                captured = Err(format!("run in capture: {e}"));
                break;
            }
        }
        // Always end the capture: a stream left capturing rejects every later launch.
        let graph = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(|e| format!("end capture: {e}"))?;
        captured?;
        let graph = graph.ok_or("the capture recorded no work")?;
        graph.launch().map_err(|e| format!("graph: {e}"))?;
        let mut per_call = Vec::with_capacity(REPLAYS);
        for _ in 0..REPLAYS {
            let (s, e) = (self.event()?, self.event()?);
            s.record(self.stream).map_err(|e| e.to_string())?;
            graph.launch().map_err(|e| format!("graph: {e}"))?;
            e.record(self.stream).map_err(|e| e.to_string())?;
            let ms = s.elapsed_ms(&e).map_err(|e| e.to_string())?;
            per_call.push(f64::from(ms) * 1e3 / calls as f64);
        }
        per_call.sort_by(f64::total_cmp);
        Ok(Timing {
            us: per_call[REPLAYS / 2],
            sets,
            calls,
        })
    }
}

/// Verifies once on fresh inputs, then times: the row's line, its frames/s and whether it
/// verified.
fn bench_row(
    timer: &Timer<'_>,
    overrides: &Overrides,
    handles: CudaHandles,
    refine: Refine,
    stage: Stage,
    precision: Precision,
) -> Result<(String, f64, bool), String> {
    let tol = problem::descriptor().tolerance_for(precision);
    let mut case = setup(overrides, precision, handles, Some(refine))?;
    case.prepare_check(timer.seed)
        .map_err(|e| format!("prepare: {e}"))?;
    case.run().map_err(|e| format!("run: {e}"))?;
    timer.stream.synchronize().map_err(|e| e.to_string())?;
    let acc = case.verify(&tol).map_err(|e| format!("verify: {e}"))?;
    let ok = acc.within(&tol) && acc.non_finite == 0;
    let t = timer.time(&mut case, stage.call())?;
    let fps = case.problem().batch as f64 * 1e6 / t.us;
    let line = format!(
        "{:<20} {:>9.2} {:>10.0}   {:>2} x {:<3}  {}",
        plan(&case),
        t.us,
        fps,
        t.sets,
        t.calls / t.sets as usize,
        if ok { "ok" } else { "FAIL" }
    );
    Ok((line, fps, ok))
}

/// The value after `flag`, split at commas.
fn list(args: &[String], flag: &str) -> Option<Vec<String>> {
    let i = args.iter().position(|a| a == flag)?;
    Some(
        args.get(i + 1)
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default(),
    )
}

/// The bench of one storage: a row per shape and refine path, then B=8's frames/s over B=1's
/// per path. Returns the rows that failed.
fn bench_precision(
    timer: &Timer<'_>,
    only: Option<&[String]>,
    refines: &[Refine],
    handles: CudaHandles,
    stage: Stage,
    precision: Precision,
) -> usize {
    let mut failures = 0;
    println!(
        "bench {precision}{}, DRAM-cold batch (sets x calls a set in one graph, median of \
         {REPLAYS} replays){}",
        stage.note(),
        match timer.order {
            Order::Bench => "",
            Order::Host => ", in apex-host's order",
        }
    );
    println!(
        "{:<12} {:<20} {:>9} {:>10}   {:<8}  verify",
        "shape", "refine", "us/call", "frames/s", "graph"
    );
    let mut fps = Vec::new();
    for (label, overrides) in shapes() {
        let benched = match only {
            Some(o) => o.iter().any(|x| x == label),
            None => BENCH_SHAPES.contains(&label),
        };
        if !benched || is_eager(&overrides) {
            continue;
        }
        for &refine in refines {
            match bench_row(timer, &overrides, handles, refine, stage, precision) {
                Ok((line, f, ok)) => {
                    failures += usize::from(!ok);
                    fps.push((label, refine, f));
                    println!("{label:<12} {line}");
                }
                Err(e) => {
                    failures += 1;
                    println!("{label:<12} {refine:?}: error: {e}");
                }
            }
        }
    }
    for &refine in refines {
        let at = |shape: &str| {
            fps.iter()
                .find(|(l, r, _)| *l == shape && *r == refine)
                .map(|f| f.2)
        };
        if let (Some(one), Some(eight)) = (at("profile"), at("B=8")) {
            println!(
                "scaling {precision} {refine:?}: B=8 frames/s / B=1 frames/s = {:.2}x{}",
                eight / one,
                stage.note()
            );
        }
    }
    failures
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = list(&args, "--only");
    let bench_only = args.iter().any(|a| a == "--bench-only");
    let bench = bench_only || args.iter().any(|a| a == "--bench");
    let mut refines = Vec::new();
    for name in list(&args, "--refine").unwrap_or_else(|| vec!["auto".into(), "split".into()]) {
        refines.push(match name.as_str() {
            "auto" => Refine::Auto,
            "fused" => Refine::Fused,
            "lean" => Refine::FusedLean,
            "wg" => Refine::Wg,
            "split" => Refine::Split,
            other => {
                eprintln!(
                    "ff_model_gpu_check: --refine {other}: expected auto, fused, lean, wg or split \
                     (or a comma list of them)"
                );
                return ExitCode::from(3);
            }
        });
    }
    let stage = match list(&args, "--stage").as_deref() {
        None => Stage::Frame,
        Some([stage]) if stage == "frame" => Stage::Frame,
        Some([stage]) if stage == "refines" => Stage::Refines,
        Some(other) => {
            eprintln!(
                "ff_model_gpu_check: --stage {}: expected frame or refines",
                other.join(",")
            );
            return ExitCode::from(3);
        }
    };
    let seed_arg = list(&args, "--seed");
    let seed = match seed_arg.as_deref() {
        None => Some(21),
        Some([n]) => n.parse::<u64>().ok(),
        Some(_) => None,
    };
    let Some(seed) = seed else {
        eprintln!(
            "ff_model_gpu_check: --seed {}: expected one unsigned integer",
            seed_arg.unwrap_or_default().join(",")
        );
        return ExitCode::from(3);
    };
    let order = match list(&args, "--order").as_deref() {
        None => Order::Bench,
        Some([o]) if o == "bench" => Order::Bench,
        Some([o]) if o == "host" => Order::Host,
        Some(other) => {
            eprintln!(
                "ff_model_gpu_check: --order {}: expected bench or host",
                other.join(",")
            );
            return ExitCode::from(3);
        }
    };
    let precisions = match list(&args, "--precision") {
        None => None,
        Some(names) => {
            let mut out = Vec::new();
            for name in names {
                match Precision::parse(&name) {
                    Some(p @ (Precision::Fp16 | Precision::Bf16 | Precision::Fp32)) => out.push(p),
                    _ => {
                        eprintln!(
                            "ff_model_gpu_check: --precision {name}: expected fp16, bf16 or fp32 \
                             (or a comma list of them)"
                        );
                        return ExitCode::from(3);
                    }
                }
            }
            Some(out)
        }
    };
    let checked = precisions
        .clone()
        .unwrap_or_else(|| vec![Precision::Fp16, Precision::Bf16, Precision::Fp32]);
    let benched_precisions = precisions.unwrap_or_else(|| vec![Precision::Fp16]);
    let wanted = |label: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == label));
    // One stream, ordered by this program: no per-buffer events (illegal in the bench's captures).
    let gpu = match StandaloneGpu::open_untracked(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("ff_model_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for (label, overrides) in shapes()
        .into_iter()
        .filter(|(l, _)| !bench_only && wanted(l))
    {
        let paths: Vec<Option<Refine>> = if is_eager(&overrides) {
            vec![None]
        } else {
            refines.iter().copied().map(Some).collect()
        };
        for &precision in &checked {
            let tol = problem::descriptor().tolerance_for(precision);
            for &refine in &paths {
                let result = setup(&overrides, precision, handles, refine).and_then(|mut case| {
                    let how = plan(&case);
                    check_case(&mut case, &tol, &sync).map(|text| (how, text))
                });
                match result {
                    Ok((how, text)) => println!("ok   {label} {precision} {how}\n    {text}"),
                    Err(text) => {
                        failures += 1;
                        let asked = refine.map_or("eager".into(), |r| format!("{r:?}"));
                        println!("FAIL {label} {precision} {asked}\n    {text}");
                    }
                }
            }
        }
    }
    if bench {
        let l2 = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .map_or(50 << 20, |v| v as u64);
        let timer = Timer {
            ctx: &ctx,
            stream: &stream,
            l2,
            seed,
            order,
        };
        for &precision in &benched_precisions {
            failures +=
                bench_precision(&timer, only.as_deref(), &refines, handles, stage, precision);
        }
    }
    let (line, code) = apex_plugin_api::harness::check_result(failures);
    println!("{line}");
    code
}
