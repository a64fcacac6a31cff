//! GPU self-check (and, with `--bench`, a quick event-timed comparison) for the tile ops.
//!
//! Check: every op × t ∈ {8,16,32} × {fp32,fp16,bf16} × variants (overlap, levels, off-grid,
//! blend), set up on a stream this program creates, run twice with fresh inputs and poisoned
//! outputs, verified against the f64 reference. One line per case; exit 1 on any failure.
//!
//! Bench (`--bench`): the fixed profile and the large profiles of benches/anchors/tile_ops_torch.py,
//! verified once at full size, then timed like Triton's do_bench (L2 flushed before each call,
//! CUDA events around it, median of 100) and back-to-back (mean over 200 calls); GB/s from the
//! declared bytes, and a 1 GiB device copy as the bandwidth reference.
//!
//! ```text
//! cargo build --release -p apex-plugin-tile-ops --example tile_ops_gpu_check
//! ./target/release/examples/tile_ops_gpu_check [--bench]
//! ```

use std::process::ExitCode;

use apex_plugin_api::{
    Backend, CudaHandles, Instance, Kernel, ParamValue, Precision,
    cuda::{StandaloneGpu, cuda_error},
};
use apex_plugin_tile_ops::{
    case::OpKernel,
    harness::{check, params, request},
    ops::{FusedStage, FusionGate, TilePack, TileUnpack},
    self_check,
};
use cudarc::driver::{CudaContext, CudaStream, sys::CUevent_flags};

#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line example"
)]
fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let gpu = match StandaloneGpu::open(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("tile_ops_gpu_check: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", gpu.describe());
    let (ctx, stream, handles) = (gpu.ctx, gpu.stream, gpu.handles);
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for (b, c, size) in [(2, 16, 128), (1, 128, 128)] {
        for line in self_check::run(handles, b, c, size, &sync) {
            let status = if line.passed() { "PASS" } else { "FAIL" };
            failures += usize::from(!line.passed());
            match &line.result {
                Ok([a, b2]) => println!(
                    "{status} {} {} B={b} C={c} {size}x{size} {}: call1 max_abs={:.3e} mismatch={:.2e} non_finite={} | call2 max_abs={:.3e} mismatch={:.2e} non_finite={}",
                    line.kernel,
                    line.precision,
                    line.params,
                    a.max_abs_error,
                    a.mismatch_ratio,
                    a.non_finite,
                    b2.max_abs_error,
                    b2.mismatch_ratio,
                    b2.non_finite
                ),
                Err(e) => println!(
                    "{status} {} {} {}: error: {e}",
                    line.kernel, line.precision, line.params
                ),
            }
        }
    }
    // Negative controls: verification must fail outputs never written and stale outputs.
    for control in self_check::controls(handles, 2, &sync) {
        let status = if control.caught() { "PASS" } else { "FAIL" };
        failures += usize::from(!control.caught());
        match &control.result {
            Ok(a) => println!(
                "{status} control {}: verify failed it as it must: {} (mismatch={:.2e} non_finite={})",
                control.label,
                !a.within(&control.tolerance),
                a.mismatch_ratio,
                a.non_finite
            ),
            Err(e) => println!("{status} control {}: error: {e}", control.label),
        }
    }
    if bench {
        failures += run_bench(&ctx, &stream, handles);
    }
    let (line, code) = apex_plugin_api::harness::check_result(failures);
    println!("{line}");
    code
}

/// A label, the kernel, and its parameter overrides.
type BenchKernel = (
    &'static str,
    Box<dyn Kernel>,
    Vec<(&'static str, ParamValue)>,
);

#[expect(clippy::print_stdout, reason = "a command-line example")]
fn run_bench(
    ctx: &std::sync::Arc<CudaContext>,
    stream: &std::sync::Arc<CudaStream>,
    handles: CudaHandles,
) -> usize {
    let kernels: [BenchKernel; 5] = [
        (
            "tile_pack",
            Box::new(OpKernel::<TilePack>::default()),
            vec![],
        ),
        (
            "tile_unpack",
            Box::new(OpKernel::<TileUnpack>::default()),
            vec![],
        ),
        (
            "tile_unpack_overlap",
            Box::new(OpKernel::<TileUnpack>::default()),
            vec![
                ("ids", ParamValue::Str("overlap".into())),
                ("offgrid", ParamValue::Bool(true)),
            ],
        ),
        (
            "fusion_gate",
            Box::new(OpKernel::<FusionGate>::default()),
            vec![],
        ),
        (
            "fused_stage",
            Box::new(OpKernel::<FusedStage>::default()),
            vec![],
        ),
    ];
    let profiles = [
        (1i64, 128i64, 128i64, 8i64, 32i64, Precision::Fp16),
        (8, 256, 256, 8, 256, Precision::Fp16),
        (8, 256, 256, 16, 256, Precision::Fp16),
        (8, 256, 256, 32, 64, Precision::Fp16),
        (8, 256, 256, 16, 256, Precision::Fp32),
    ];
    let flush_len = 256 << 20;
    let mut flush = stream.alloc_zeros::<u8>(flush_len).expect("flush buffer");
    let ev = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .expect("event")
    };
    // Copy bandwidth reference: 1 GiB device-to-device, as the torch anchor's `copy` row.
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
    let mut failures = 0;
    let sync = || stream.synchronize().map_err(cuda_error);
    for (b, c, hw, t, k, precision) in profiles {
        for (name, kernel, extra) in &kernels {
            let mut overrides = vec![
                ("batch", ParamValue::Int(b)),
                ("channels", ParamValue::Int(c)),
                ("height", ParamValue::Int(hw)),
                ("width", ParamValue::Int(hw)),
                ("tile_size", ParamValue::Int(t)),
                ("kmax", ParamValue::Int(k)),
            ];
            overrides.extend(extra.iter().cloned());
            let tol = self_check::tolerance_for(kernel.as_ref(), &overrides, precision);
            let p = params(kernel.as_ref(), &overrides);
            let mut inst: Box<dyn Instance> = kernel
                .setup(&request(p, Backend::Cuda, precision, 5, Some(handles)))
                .expect("setup");
            let acc = check(inst.as_mut(), 6, &tol, &sync).expect("check");
            let ok = acc.within(&tol);
            failures += usize::from(!ok);
            let work = inst.work();
            let bytes = (work.bytes_read + work.bytes_written) as f64;
            for _ in 0..20 {
                inst.run().expect("run");
            }
            sync().expect("sync");
            let mut cold = Vec::new();
            for _ in 0..100 {
                stream.memset_zeros(&mut flush).expect("flush");
                let (s, e) = (ev(), ev());
                s.record(stream).expect("record");
                inst.run().expect("run");
                e.record(stream).expect("record");
                cold.push(f64::from(s.elapsed_ms(&e).expect("elapsed")));
            }
            cold.sort_by(f64::total_cmp);
            let cold_ms = cold[cold.len() / 2];
            let (s, e) = (ev(), ev());
            s.record(stream).expect("record");
            for _ in 0..200 {
                inst.run().expect("run");
            }
            e.record(stream).expect("record");
            let batch_ms = f64::from(s.elapsed_ms(&e).expect("elapsed")) / 200.0;
            println!(
                "bench {name} {precision} B={b} C={c} {hw}x{hw} t={t} K={k}: cold {:.1} us ({:.0} GB/s), batch {:.1} us ({:.0} GB/s), verify {}",
                cold_ms * 1e3,
                bytes / cold_ms / 1e6,
                batch_ms * 1e3,
                bytes / batch_ms / 1e6,
                if ok {
                    "PASS".to_string()
                } else {
                    format!("FAIL {acc:?}")
                }
            );
        }
    }
    failures
}
