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
//! no call between them; the default, `--order bench`, runs a frame and three calls after the
//! rotation. The host order reads the profile ~3.6 µs a call slower, as apex-host does (H200,
//! thirty-fifth session, `benches/results/ff_model_host_order_h200_2026-11-29_s35.txt`: 46.3
//! against 42.6-42.9 µs; the captured graphs are the same; why is not known yet).
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
//!
//! The parts: `args.rs` the command line, `cases.rs` the shapes and how a case is set up,
//! `check.rs` the self-check of one case, `bench.rs` the timing.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod bench;
mod cases;
mod check;

use std::process::ExitCode;

use apex_plugin_api::{
    Precision,
    cuda::{StandaloneGpu, cuda_error},
};
use cudarc::driver::sys::CUdevice_attribute;

use args::Args;
use bench::{Timer, bench_precision};
use check::check_shapes;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Args {
        only,
        bench_only,
        bench,
        refines,
        stage,
        seed,
        order,
        precisions,
    } = match Args::parse(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ff_model_gpu_check: {e}");
            return ExitCode::from(3);
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
    if !bench_only {
        failures += check_shapes(handles, &sync, &wanted, &refines, &checked);
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
