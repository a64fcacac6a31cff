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
//!     [--launch dependent|plain] [--l2-hot]
//!     (--only: the check cases whose "kernel params" and the bench profiles whose
//!     "name precision params" contain TEXT; --launch plain: without programmatic dependent
//!     launch, which every case uses by default, as in apex-host; --l2-hot: the bench times
//!     every profile on one buffer set instead of DRAM-cold sets)
//! ./target/release/examples/nn_ops_gpu_check --dry-run [--hashes] [--ptx-dir DIR]
//!     (no GPU: plans and compiles every case; --hashes prints a hash of each program's PTX;
//!     --ptx-dir writes each program's PTX to DIR, named by its label, for ptxas and nvdisasm)
//! ```
//!
//! This file: the arguments, the check and the dry run; `profiles.rs`: what the bench times;
//! `bench.rs`: the timing and the copy kernel it is held against.

mod bench;
mod profiles;

use std::process::ExitCode;

use apex_plugin_api::cuda::{StandaloneGpu, compile_ptx, cuda_error};
use apex_plugin_nn_ops::{
    harness::{describe, params},
    launch::with_dependent_launch,
    ops::{CrossEntropy, Gelu, LayerNorm, MseLoss, Swish},
    self_check,
};

use profiles::profiles;

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

/// `--only TEXT`: the check cases whose "kernel params" contain TEXT, and the bench profiles
/// whose "name precision params" do.
fn only_arg() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned())
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
    let only = only_arg();
    if check_cases {
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
        let l2_hot = std::env::args().any(|a| a == "--l2-hot");
        failures += bench::run(&ctx, &stream, handles, only.as_deref(), l2_hot);
    }
    let (line, code) = apex_plugin_api::harness::check_result(failures);
    println!("{line}");
    code
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
    let ptx_dir = std::env::args()
        .skip_while(|a| a != "--ptx-dir")
        .nth(1)
        .map(std::path::PathBuf::from);
    for (label, source) in &sources {
        match compile_ptx("nn_ops", source, "sm_90") {
            Ok(ptx) => {
                let src = ptx.to_src();
                if hashes {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    src.hash(&mut h);
                    println!("ptx {:016x} {label}", h.finish());
                }
                if let Some(dir) = &ptx_dir {
                    let name: String = label
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    let path = dir.join(format!("{name}.ptx"));
                    if let Err(e) = std::fs::write(&path, &src) {
                        eprintln!("dry run: --ptx-dir: cannot write {}: {e}", path.display());
                        return ExitCode::FAILURE;
                    }
                }
            }
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
