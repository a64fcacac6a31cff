//! [`Facts`]: what the host measured about this machine (CUDA, NVML, TensorRT, OS, architecture,
//! environment). Skip conditions read these; `discover --json` and `env.json` serialize them.

use super::env::EnvSnapshot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    pub cuda: CudaFacts,
    pub nvml: NvmlFacts,
    pub trt: TrtFacts,
    /// `std::env::consts::OS`, e.g. `linux`.
    pub os: String,
    /// `std::env::consts::ARCH`, e.g. `x86_64`.
    pub arch: String,
    /// Never serialized: the environment can hold secrets, and `env.json` must not leak them.
    #[serde(skip)]
    pub env: EnvSnapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaFacts {
    pub available: bool,
    /// Why CUDA is unavailable, e.g. `cuda_unavailable: libcuda.so.1 not found`; `None` when available.
    pub reason: Option<String>,
    pub device_count: u32,
    /// Of device 0, as `major.minor` (9.0 for sm_90).
    pub compute_capability: Option<f64>,
    /// The driver's CUDA version, e.g. `"13.0"`.
    pub driver_version: Option<String>,
    /// Of device 0.
    pub device_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NvmlFacts {
    pub available: bool,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrtFacts {
    pub available: bool,
    pub reason: Option<String>,
    /// The library name that loaded, e.g. `libnvinfer.so.10`.
    pub library: Option<String>,
}

impl CudaFacts {
    /// CUDA absent, with the reason a skipped case reports.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self {
            available: false,
            reason: Some(reason.into()),
            device_count: 0,
            compute_capability: None,
            driver_version: None,
            device_name: None,
        }
    }
}

impl Facts {
    /// A machine with nothing but a CPU, for tests and for callers that must not probe.
    pub fn cpu_only() -> Self {
        Self {
            cuda: CudaFacts::unavailable(super::cuda_probe::LIB_ABSENT),
            nvml: NvmlFacts {
                available: false,
                reason: Some("nvml_unavailable: not probed".into()),
            },
            trt: TrtFacts {
                available: false,
                reason: Some(super::trt_probe::LIB_ABSENT.into()),
                library: None,
            },
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            env: EnvSnapshot::default(),
        }
    }
}
