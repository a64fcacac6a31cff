//! Probes NVML: `Nvml::init()` loads `libnvidia-ml.so.1` at run time and returns `Err` (no panic)
//! where it is absent.

use super::record::NvmlFacts;

pub fn probe() -> NvmlFacts {
    match nvml_wrapper::Nvml::init() {
        Ok(_) => NvmlFacts {
            available: true,
            reason: None,
        },
        Err(e) => NvmlFacts {
            available: false,
            reason: Some(format!("nvml_unavailable: {e}")),
        },
    }
}
