//! CPU timing of the TileSSM kernels at the fixed profile (B=1, K=256, C=128), every direction
//! (bidirectional with the avg merge), fp16 and fp32: median of 200 calls after 20 warm-up calls,
//! one JSON line per case in the shape of benches/anchors/tile_ssm_numpy.py, so the two can be
//! compared in one run. Not a benchmark protocol (apex-host owns that); a quick side-by-side.
//!
//! `cargo run --release -p apex-plugin-tile-ssm --example tile_ssm_cpu_bench`

use std::time::Instant;

use apex_plugin_api::{Backend, Kernel, Precision};
use apex_plugin_tile_ssm::{
    case::ScanKernel,
    harness::{check, params, request},
    problem::Direction,
};

fn median_us(mut f: impl FnMut(), n: usize, warmup: usize) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let mut xs: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
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
    for direction in Direction::ALL {
        let kernel = ScanKernel::new(direction);
        for precision in [Precision::Fp16, Precision::Fp32] {
            let p = params(&kernel, &[]);
            let mut inst = kernel
                .setup(&request(p, Backend::Cpu, precision, 0, None))
                .expect("setup");
            let tol = kernel.descriptor().tolerance_for(precision);
            let acc = check(inst.as_mut(), 7, &tol, &|| Ok(())).expect("check");
            assert!(acc.within(&tol), "{direction:?} {precision}: {acc:?}");
            let us = median_us(|| inst.run().expect("run"), 200, 20);
            let w = inst.work();
            let gbps = (w.bytes_read + w.bytes_written) as f64 / us / 1e3;
            println!(
                "{{\"kernel\": \"{}\", \"impl\": \"rust_cpu\", \"params\": {{\"B\": 1, \"K\": 256, \"C\": 128{}}}, \"precision\": \"{precision}\", \"us_per_call\": {us:.2}, \"gbps\": {gbps:.3}, \"threads\": {}}}",
                direction.kernel_id(),
                if direction == Direction::Bidirectional {
                    ", \"merge\": \"avg\""
                } else {
                    ""
                },
                rayon::current_num_threads()
            );
        }
    }
}
