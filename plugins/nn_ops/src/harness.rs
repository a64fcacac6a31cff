//! Driving a kernel outside the host: parameters from the declared defaults with overrides, setup
//! requests, and the check cycle the host runs (fresh inputs, poisoned outputs, run, verify).
//! The tests, the GPU self-check example and the CPU timing example share it.

use abi_stable::std_types::ROption;
use apex_plugin_api::{
    Accuracy, Backend, CudaHandles, Instance, Kernel, ParamValue, Params, PluginError, Precision,
    SetupRequest, Tolerance,
};

/// The kernel's declared defaults, with `overrides` replacing or adding values.
pub fn params(kernel: &dyn Kernel, overrides: &[(&str, ParamValue)]) -> Params {
    let mut p = Params::default();
    for spec in kernel.descriptor().params.iter() {
        let value = overrides
            .iter()
            .find(|(name, _)| *name == spec.name.as_str())
            .map_or_else(|| spec.default.clone(), |(_, v)| v.clone());
        p.push(spec.name.as_str(), value);
    }
    p
}

pub fn request(
    params: Params,
    backend: Backend,
    precision: Precision,
    seed: u64,
    cuda: Option<CudaHandles>,
) -> SetupRequest {
    SetupRequest {
        params,
        backend,
        precision,
        seed,
        cuda: cuda.map_or(ROption::RNone, ROption::RSome),
    }
}

/// One check: new inputs from `seed`, poisoned outputs, one call, then verify. For CUDA the
/// caller's `sync` runs between the call and verify, as the host synchronizes there.
pub fn check(
    instance: &mut dyn Instance,
    seed: u64,
    tolerance: &Tolerance,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Result<Accuracy, PluginError> {
    instance.prepare_check(seed)?;
    instance.run()?;
    sync()?;
    instance.verify(tolerance)
}

/// A readable parameter list for messages: `batch=2 seq=3 dim=7` (only the overrides).
pub fn describe(overrides: &[(&str, ParamValue)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `batch`, `seq`, `dim` overrides.
pub fn bsd(batch: i64, seq: i64, dim: i64) -> Vec<(&'static str, ParamValue)> {
    vec![
        ("batch", ParamValue::Int(batch)),
        ("seq", ParamValue::Int(seq)),
        ("dim", ParamValue::Int(dim)),
    ]
}

/// Test support: run the check cycle on the CPU for every precision and two fresh seeds, and
/// prove that outputs never written fail verification.
#[cfg(test)]
pub(crate) fn assert_cpu_checks(
    kernel: &dyn Kernel,
    overrides: &[(&str, ParamValue)],
    tolerance: impl Fn(Precision) -> Tolerance,
) {
    for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
        let tol = tolerance(precision);
        let p = params(kernel, overrides);
        let mut inst = kernel
            .setup(&request(p, Backend::Cpu, precision, 3, None))
            .unwrap_or_else(|e| panic!("setup {} {precision}: {e}", describe(overrides)));
        for seed in [21, 22] {
            let acc = check(inst.as_mut(), seed, &tol, &|| Ok(())).unwrap();
            assert!(
                acc.within(&tol) && acc.non_finite == 0,
                "{} {precision} seed {seed} {}: {acc:?}",
                kernel.descriptor().id,
                describe(overrides)
            );
        }
        inst.prepare_check(23).unwrap();
        let acc = inst.verify(&tol).unwrap();
        assert!(
            acc.non_finite > 0 && !acc.within(&tol),
            "poison not caught: {} {precision} {}: {acc:?}",
            kernel.descriptor().id,
            describe(overrides)
        );
    }
}
