//! CPU timing of the nn ops at the CPU anchor's shapes (benches/anchors/nn_ops_cpu.py): median of
//! 30 calls after 3 warm-up calls, fp32, one JSON line per case, each verified once against the
//! f64 reference first. Not a benchmark protocol (apex-host owns that); a quick side-by-side.
//!
//! `cargo run --release -p apex-plugin-nn-ops --example nn_ops_cpu_bench`

use std::time::Instant;

use apex_plugin_api::{Backend, Kernel, ParamValue, Precision};
use apex_plugin_nn_ops::{
    case::OpKernel,
    harness::{bsd, check, describe, params, request},
    ops::{CrossEntropy, Gelu, LayerNorm, MseLoss, Swish},
};

/// A kernel and its parameter overrides.
type Case = (Box<dyn Kernel>, Vec<(&'static str, ParamValue)>);

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
    let mut cases: Vec<Case> = Vec::new();
    for d in [8, 64, 512] {
        cases.push((Box::new(OpKernel::<LayerNorm>::default()), bsd(16, 256, d)));
        cases.push((Box::new(OpKernel::<Gelu>::default()), bsd(16, 256, d)));
        cases.push((Box::new(OpKernel::<Swish>::default()), bsd(16, 256, d)));
        cases.push((Box::new(OpKernel::<MseLoss>::default()), bsd(16, 256, d)));
    }
    for v in [8, 512] {
        for grad in [false, true] {
            cases.push((
                Box::new(OpKernel::<CrossEntropy>::default()),
                vec![
                    ("rows", ParamValue::Int(4096)),
                    ("vocab", ParamValue::Int(v)),
                    ("grad", ParamValue::Bool(grad)),
                ],
            ));
        }
    }
    for (kernel, overrides) in cases {
        let precision = Precision::Fp32;
        let tol = kernel.descriptor().tolerance_for(precision);
        let p = params(kernel.as_ref(), &overrides);
        let mut inst = kernel
            .setup(&request(p, Backend::Cpu, precision, 0, None))
            .expect("setup");
        let acc = check(inst.as_mut(), 1, &tol, &|| Ok(())).expect("check");
        assert!(acc.within(&tol), "{}: {acc:?}", describe(&overrides));
        let ms = median_ms(|| inst.run().expect("run"), 30, 3);
        println!(
            "{{\"kernel\": \"{}\", \"impl\": \"rust_cpu\", \"params\": \"{}\", \"precision\": \"fp32\", \"ms\": {ms:.4}}}",
            kernel.descriptor().id,
            describe(&overrides)
        );
    }
}
