//! [`gather`]: measures the machine's facts once, before planning.

use super::env::EnvSnapshot;
use super::record::Facts;
use super::{cuda_probe, nvml_probe, trt_probe};

/// Probes CUDA, NVML and TensorRT (none of which may panic or fail the run) and snapshots the OS,
/// architecture and environment.
pub fn gather() -> Facts {
    Facts {
        cuda: cuda_probe::probe(),
        nvml: nvml_probe::probe(),
        trt: trt_probe::probe(),
        os: std::env::consts::OS.into(),
        arch: std::env::consts::ARCH.into(),
        env: EnvSnapshot::capture(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_serializes_without_the_environment() {
        let f = gather();
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["os"], std::env::consts::OS);
        assert!(json.get("env").is_none());
        assert!(json["cuda"]["available"].is_boolean());
    }
}
