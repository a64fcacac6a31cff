//! Driving a kernel outside the host, for plugins' tests, GPU self-checks and timing examples (not
//! part of the ABI): parameters from the declared defaults with overrides, setup requests, and the
//! check cycle the host runs (fresh inputs, poisoned outputs, run, verify).

use abi_stable::std_types::ROption;

use crate::{
    Accuracy, Backend, CudaHandles, Instance, Kernel, KernelDescriptor, ParamValue, Params,
    PluginError, Precision, SetupRequest, Tolerance,
};

/// The declared defaults of `descriptor`, with `overrides` replacing them (an override of an
/// undeclared name is ignored: the kernel's `plan` never sees it).
pub fn params_for(descriptor: &KernelDescriptor, overrides: &[(&str, ParamValue)]) -> Params {
    let mut p = Params::default();
    for spec in descriptor.params.iter() {
        let value = overrides
            .iter()
            .find(|(name, _)| *name == spec.name.as_str())
            .map_or_else(|| spec.default.clone(), |(_, v)| v.clone());
        p.push(spec.name.as_str(), value);
    }
    p
}

/// The kernel's declared defaults, with `overrides` replacing them.
pub fn params(kernel: &dyn Kernel, overrides: &[(&str, ParamValue)]) -> Params {
    params_for(&kernel.descriptor(), overrides)
}

/// A setup request as the host builds one.
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

/// The last line a GPU self-check example prints (`RESULT: OK`, or `RESULT: N FAILED`: the
/// device scripts grep for it) and the exit status that goes with it.
pub fn check_result(failures: usize) -> (String, std::process::ExitCode) {
    if failures == 0 {
        ("RESULT: OK".to_string(), std::process::ExitCode::SUCCESS)
    } else {
        (
            format!("RESULT: {failures} FAILED"),
            std::process::ExitCode::FAILURE,
        )
    }
}

/// A readable parameter list for messages: `batch=2 seq=3 dim=7` (the overrides only).
pub fn describe(overrides: &[(&str, ParamValue)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Test support (it panics on a failure): the check cycle on the CPU for fp32, fp16 and bf16 and
/// two fresh seeds each, then proof that outputs never written (poisoned) fail verification.
pub fn assert_cpu_checks(
    kernel: &dyn Kernel,
    overrides: &[(&str, ParamValue)],
    tolerance: impl Fn(Precision) -> Tolerance,
) {
    let id = kernel.descriptor().id;
    for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
        let tol = tolerance(precision);
        let p = params(kernel, overrides);
        let mut inst = kernel
            .setup(&request(p, Backend::Cpu, precision, 3, None))
            .unwrap_or_else(|e| panic!("setup {id} {precision} {}: {e}", describe(overrides)));
        for seed in [21, 22] {
            let acc = check(inst.as_mut(), seed, &tol, &|| Ok(()))
                .unwrap_or_else(|e| panic!("check {id} {precision} seed {seed}: {e}"));
            assert!(
                acc.within(&tol) && acc.non_finite == 0,
                "{id} {precision} seed {seed} {}: {acc:?}",
                describe(overrides)
            );
        }
        inst.prepare_check(23)
            .unwrap_or_else(|e| panic!("prepare_check {id} {precision}: {e}"));
        let acc = inst
            .verify(&tol)
            .unwrap_or_else(|e| panic!("verify {id} {precision}: {e}"));
        assert!(
            acc.non_finite > 0 && !acc.within(&tol),
            "poison not caught: {id} {precision} {}: {acc:?}",
            describe(overrides)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::check_result;

    #[test]
    fn the_result_line_counts_failures_and_sets_the_exit_status() {
        let (ok, ok_code) = check_result(0);
        assert_eq!(ok, "RESULT: OK");
        assert_eq!(ok_code, std::process::ExitCode::SUCCESS);
        let (failed, failed_code) = check_result(3);
        assert_eq!(failed, "RESULT: 3 FAILED");
        assert_eq!(failed_code, std::process::ExitCode::FAILURE);
    }
}
