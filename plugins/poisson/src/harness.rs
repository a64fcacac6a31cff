//! Driving a kernel outside the host: parameters from the declared defaults with overrides, setup
//! requests, and the check cycle the host runs (fresh inputs, poisoned outputs, run, verify).
//! The tests, the GPU self-check and its example share it.

pub use apex_plugin_api::harness::{describe, params, request};
use apex_plugin_api::{Backend, CudaHandles, ParamValue, PluginError, Precision, Tolerance};

use crate::{
    case::{Config, PoissonCase, PoissonKernel},
    real::Storage,
    solve::Method,
    verdict::Verdict,
};

/// `grid_size` as a parameter value.
pub fn grid(nx: i64, ny: i64, nz: i64) -> ParamValue {
    ParamValue::Shape([nx, ny, nz].into_iter().collect())
}

/// A typed case (the `Instance` the kernel would box), so callers can read its verdict.
pub fn typed_case<T: Storage>(
    method: Method,
    overrides: &[(&str, ParamValue)],
    backend: Backend,
    seed: u64,
    cuda: Option<CudaHandles>,
) -> Result<PoissonCase<T>, PluginError> {
    let kernel = PoissonKernel(method);
    let p = params(&kernel, overrides);
    let config = Config::parse(method, &p)?;
    let precision = if T::NAME == "fp16" {
        Precision::Fp16
    } else {
        Precision::Fp32
    };
    PoissonCase::<T>::new(config, &request(p, backend, precision, seed, cuda))
}

/// One check as the host runs it: new inputs from `seed`, poisoned outputs, one call, `sync`,
/// then the verdict.
pub fn check<T: Storage>(
    case: &mut PoissonCase<T>,
    seed: u64,
    tolerance: &Tolerance,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Result<Verdict, PluginError> {
    use apex_plugin_api::Instance;
    case.prepare_check(seed)?;
    case.run()?;
    sync()?;
    case.verdict(tolerance)
}
