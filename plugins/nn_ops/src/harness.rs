//! Driving a kernel outside the host: `apex_plugin_api::harness` (parameters, setup requests,
//! the host's check cycle), which the tests, the GPU self-check example and the CPU timing example
//! use through this module, plus nn_ops' own shape overrides.

use apex_plugin_api::ParamValue;
pub use apex_plugin_api::harness::{assert_cpu_checks, check, describe, params, request};

/// `batch`, `seq`, `dim` overrides.
pub fn bsd(batch: i64, seq: i64, dim: i64) -> Vec<(&'static str, ParamValue)> {
    vec![
        ("batch", ParamValue::Int(batch)),
        ("seq", ParamValue::Int(seq)),
        ("dim", ParamValue::Int(dim)),
    ]
}
