//! CPU timing of the tile ops at the NumPy anchor's shapes (benches/anchors/tile_ops_numpy.py):
//! median of 200 calls after 20 warm-up calls, fp32, one JSON line per op, so the two can be
//! compared in one run. Not a benchmark protocol (apex-host owns that); a quick side-by-side.
//!
//! `cargo run --release -p apex-plugin-tile-ops --example tile_ops_cpu_bench`

use std::time::Instant;

use apex_plugin_api::{Backend, Kernel, ParamValue, Precision, Tolerance};
use apex_plugin_tile_ops::{
    case::OpKernel,
    harness::{check, params, request},
    ops::{FusedStage, FusionGate, TilePack, TileUnpack},
};

fn median_ms(mut f: impl FnMut(), n: usize, warmup: usize) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let mut xs: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    xs.sort_by(f64::total_cmp);
    xs[n / 2]
}

#[expect(
    clippy::print_stdout,
    reason = "an example that prints its measurements"
)]
fn main() {
    let kernels: [(&str, Box<dyn Kernel>); 4] = [
        ("tile_pack", Box::new(OpKernel::<TilePack>::default())),
        ("tile_unpack", Box::new(OpKernel::<TileUnpack>::default())),
        ("fusion_gate", Box::new(OpKernel::<FusionGate>::default())),
        ("fused_stage", Box::new(OpKernel::<FusedStage>::default())),
    ];
    let precisions: Vec<Precision> = match std::env::args().nth(1).as_deref() {
        Some("all") => vec![Precision::Fp32, Precision::Fp16, Precision::Bf16],
        _ => vec![Precision::Fp32],
    };
    for (b, c, hw, t, k) in [(1i64, 64i64, 128i64, 16i64, 10i64), (1, 128, 128, 8, 32)] {
        for (name, kernel) in &kernels {
            for &precision in &precisions {
                let overrides = [
                    ("batch", ParamValue::Int(b)),
                    ("channels", ParamValue::Int(c)),
                    ("height", ParamValue::Int(hw)),
                    ("width", ParamValue::Int(hw)),
                    ("tile_size", ParamValue::Int(t)),
                    ("kmax", ParamValue::Int(k)),
                ];
                let p = params(kernel.as_ref(), &overrides);
                let mut inst = kernel
                    .setup(&request(p, Backend::Cpu, precision, 0, None))
                    .expect("setup");
                let tol = if *name == "tile_pack" || *name == "tile_unpack" {
                    Tolerance::EXACT
                } else {
                    kernel.descriptor().tolerance_for(precision)
                };
                let acc = check(inst.as_mut(), 7, &tol, &|| Ok(())).expect("check");
                assert!(acc.within(&tol), "{name} {precision}: {acc:?}");
                let ms = median_ms(|| inst.run().expect("run"), 200, 20);
                let w = inst.work();
                let gbps = (w.bytes_read + w.bytes_written) as f64 / ms / 1e6;
                println!(
                    "{{\"op\": \"{name}\", \"impl\": \"rust_cpu\", \"dtype\": \"{precision}\", \"ms\": {ms:.5}, \"gbps\": {gbps:.2}, \"B\": {b}, \"C\": {c}, \"H\": {hw}, \"W\": {hw}, \"t\": {t}, \"K\": {k}, \"threads\": {}}}",
                    rayon::current_num_threads()
                );
            }
        }
    }
}
