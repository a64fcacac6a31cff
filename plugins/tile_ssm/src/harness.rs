//! Driving a kernel outside the host: `apex_plugin_api::harness` (parameters, setup requests,
//! the host's check cycle), which the tests, the GPU self-check example and the CPU timing example
//! use through this module.

pub use apex_plugin_api::harness::{check, describe, params, params_for, request};
#[cfg(test)]
use apex_plugin_api::{Kernel, ParamValue};

/// Test support: [`apex_plugin_api::harness::assert_cpu_checks`] at the kernel's declared
/// tolerances.
#[cfg(test)]
pub(crate) fn assert_cpu_checks(kernel: &dyn Kernel, overrides: &[(&str, ParamValue)]) {
    apex_plugin_api::harness::assert_cpu_checks(kernel, overrides, |p| {
        kernel.descriptor().tolerance_for(p)
    });
}
