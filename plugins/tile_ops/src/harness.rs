//! Driving a kernel outside the host: `apex_plugin_api::harness` (parameters, setup requests,
//! the host's check cycle), which the tests, the GPU self-check example and the CPU timing example
//! use through this module, plus tile_ops' own shape overrides.

#[cfg(test)]
use apex_plugin_api::ParamValue;
pub use apex_plugin_api::harness::{assert_cpu_checks, check, describe, params, request};

/// Test support: shape overrides for a small map.
#[cfg(test)]
pub(crate) fn small_shape(
    batch: i64,
    channels: i64,
    size: i64,
    tile: i64,
    kmax: i64,
) -> Vec<(&'static str, ParamValue)> {
    vec![
        ("batch", ParamValue::Int(batch)),
        ("channels", ParamValue::Int(channels)),
        ("height", ParamValue::Int(size)),
        ("width", ParamValue::Int(size)),
        ("tile_size", ParamValue::Int(tile)),
        ("kmax", ParamValue::Int(kmax)),
    ]
}
