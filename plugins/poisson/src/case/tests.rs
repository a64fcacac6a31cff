//! The kernels through the plugin API on the CPU: the host's check cycle, non-convergence as a
//! verification failure, a deliberately wrong output, parameter errors and the cost model.

use apex_plugin_api::{Backend, Instance, Kernel, ParamValue, Precision};

use super::*;
use crate::harness::{check, grid, params, request, typed_case};

fn small(n: i64, max: i64) -> Vec<(&'static str, ParamValue)> {
    vec![
        ("grid_size", grid(n, n, n)),
        ("max_iterations", ParamValue::Int(max)),
    ]
}

#[test]
fn descriptors_declare_the_seed_defaults() {
    for m in Method::ALL {
        let d = PoissonKernel(m).descriptor();
        assert_eq!(d.id.as_str(), m.id());
        let p = params(&PoissonKernel(m), &[]);
        assert_eq!(p.shape("grid_size").unwrap(), vec![64, 64, 64]);
        assert_eq!(p.usize("max_iterations").unwrap(), 50);
        assert_eq!(p.float("tolerance").unwrap(), 1e-5);
        assert_eq!(p.get("smoothing_sweeps").is_some(), m.uses_multigrid());
        assert!(d.graph_capturable);
    }
}

#[test]
fn cpu_cases_pass_two_fresh_checks_in_every_storage_type() {
    let tol = default_tolerance(Precision::Fp32);
    let ok = |_: ()| Ok(());
    for m in Method::ALL {
        let max = if m == Method::Cg { 200 } else { 20 };
        let o = small(16, max);
        let mut c32 = typed_case::<f32>(m, &o, Backend::Cpu, 1, None).unwrap();
        let mut c64 = typed_case::<f64>(m, &o, Backend::Cpu, 1, None).unwrap();
        assert!(c32.setup_report.converged && c64.setup_report.converged);
        for seed in [21, 22] {
            let v = check(&mut c32, seed, &tol, &|| ok(())).unwrap();
            assert!(v.passed(&tol), "{m:?} fp32 {}", v.summary());
            let v = check(&mut c64, seed, &tol, &|| ok(())).unwrap();
            assert!(
                v.passed(&tol) && v.true_relres <= 1e-5,
                "{m:?} f64 {}",
                v.summary()
            );
        }
        // fp16 storage reaches 1e-2, not 1e-5.
        let tol16 = default_tolerance(Precision::Fp16);
        let mut o16 = o.clone();
        o16.push(("tolerance", ParamValue::Float(1e-2)));
        let mut c16 = typed_case::<half::f16>(m, &o16, Backend::Cpu, 1, None).unwrap();
        let v = check(&mut c16, 23, &tol16, &|| ok(())).unwrap();
        assert!(v.passed(&tol16), "{m:?} fp16 {}", v.summary());
        // Poisoned and never solved: verify must fail, not pass on stale data.
        c32.prepare_check(24).unwrap();
        assert!(c32.verify(&tol).is_err());
    }
}

#[test]
fn a_solve_stopped_at_max_iterations_fails_with_the_reason() {
    let k = PoissonKernel(Method::Cg);
    let p = params(&k, &small(32, 50));
    let mut inst = k
        .setup(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
        .unwrap();
    let tol = default_tolerance(Precision::Fp32);
    inst.prepare_check(2).unwrap();
    inst.run().unwrap();
    let acc = inst.verify(&tol).unwrap();
    assert!(!acc.within(&tol) && acc.mismatch_ratio == 1.0, "{acc:?}");
    assert!(
        acc.max_rel_error > 1e-5,
        "the true relative residual travels in max_rel_error"
    );
    let mut case = typed_case::<f32>(Method::Cg, &small(32, 50), Backend::Cpu, 1, None).unwrap();
    let v = check(&mut case, 2, &tol, &|| Ok(())).unwrap();
    let f = v.failure.unwrap();
    assert!(
        f.starts_with("did not converge: 50 iterations, relative residual "),
        "{f}"
    );
}

#[test]
fn a_deliberately_wrong_solution_is_caught() {
    let tol = default_tolerance(Precision::Fp32);
    let mut case = typed_case::<f32>(Method::Mg, &small(16, 20), Backend::Cpu, 1, None).unwrap();
    case.prepare_check(5).unwrap();
    case.run().unwrap();
    assert!(case.verify(&tol).unwrap().within(&tol));
    case.cpu_x_mut().unwrap()[77] += 0.05;
    let acc = case.verify(&tol).unwrap();
    assert!(!acc.within(&tol), "{acc:?}");
    case.cpu_x_mut().unwrap()[78] = f32::NAN;
    assert_eq!(case.verify(&tol).unwrap().non_finite, 1);
}

#[test]
fn bad_parameters_are_clear_errors() {
    let setup = |m: Method, o: &[(&str, ParamValue)], prec: Precision| {
        let k = PoissonKernel(m);
        k.setup(&request(params(&k, o), Backend::Cpu, prec, 1, None))
            .err()
            .map(|e| e.message.to_string())
    };
    let e = setup(
        Method::Mg,
        &[("grid_size", grid(100, 100, 100))],
        Precision::Fp32,
    )
    .unwrap();
    assert!(e.contains("poisson.cg"), "{e}");
    assert!(
        setup(
            Method::Cg,
            &[
                ("grid_size", grid(10, 6, 5)),
                ("max_iterations", ParamValue::Int(3))
            ],
            Precision::Fp32
        )
        .is_none()
    );
    let e = setup(
        Method::Cg,
        &[("f64_solve", ParamValue::Bool(true))],
        Precision::Fp16,
    )
    .unwrap();
    assert!(e.contains("f64_solve needs precision fp32"), "{e}");
    let e = setup(
        Method::Mg,
        &[("smoothing_sweeps", ParamValue::Int(0))],
        Precision::Fp32,
    )
    .unwrap();
    assert!(e.contains("smoothing_sweeps"), "{e}");
    let e = setup(
        Method::Cg,
        &[("grid_size", ParamValue::Int(64))],
        Precision::Fp32,
    )
    .unwrap();
    assert!(e.contains("must be a shape"), "{e}");
    let e = setup(
        Method::Cg,
        &[("tolerance", ParamValue::Float(0.0))],
        Precision::Fp32,
    )
    .unwrap();
    assert!(e.contains("tolerance"), "{e}");
    let e = setup(Method::Cg, &[], Precision::Bf16).unwrap();
    assert!(e.contains("no bf16 path"), "{e}");
}

#[test]
fn work_counts_the_iterations_of_the_setup_solve() {
    let mut case = typed_case::<f32>(Method::Cg, &small(16, 200), Backend::Cpu, 1, None).unwrap();
    let it = case.setup_report.iterations;
    assert!(it > 10 && case.setup_report.converged);
    let w = case.work();
    let n = 16.0f64.powi(3);
    assert_eq!(w.items, n * it as f64);
    assert_eq!(w.bytes_read, ((1.0 + 6.0 * it as f64) * n * 4.0) as u64);
    assert_eq!(w.bytes_written, ((2.0 + 4.0 * it as f64) * n * 4.0) as u64);
    assert_eq!(case.rotate(4).unwrap(), 1, "CPU cases keep one buffer set");
    let mg = typed_case::<f32>(Method::Mg, &small(16, 20), Backend::Cpu, 1, None).unwrap();
    let per_iter = (mg.work().bytes_read + mg.work().bytes_written) as f64
        / (n * 4.0)
        / mg.setup_report.iterations as f64;
    assert!(
        (20.0..40.0).contains(&per_iter),
        "{per_iter} words per point per V(2,2) cycle"
    );
}
