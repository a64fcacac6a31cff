//! Plain data that crosses the boundary: backends, precisions, work per call, tolerances,
//! the kernel descriptor and the setup request.

use abi_stable::{
    StableAbi,
    std_types::{ROption, RString, RVec},
};
use std::fmt;

use crate::{ParamSpec, Params};

/// Where a kernel runs.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Backend {
    Cpu,
    Cuda,
    Trt,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Cpu, Backend::Cuda, Backend::Trt];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
            Self::Trt => "trt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == s)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The element type a case computes in.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
    Fp8,
}

impl Precision {
    pub const ALL: [Precision; 4] = [
        Precision::Fp32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Fp16 => "fp16",
            Self::Bf16 => "bf16",
            Self::Fp8 => "fp8",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            Self::Fp32 => 4,
            Self::Fp16 | Self::Bf16 => 2,
            Self::Fp8 => 1,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The unit of the work items a call processes; it names the throughput metric
/// (`tiles_per_s`, `tokens_per_s`, `elements_per_s`, `frames_per_s`).
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkUnit {
    Elements,
    Tiles,
    Tokens,
    Frames,
}

impl WorkUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Elements => "elements",
            Self::Tiles => "tiles",
            Self::Tokens => "tokens",
            Self::Frames => "frames",
        }
    }
}

/// The logical work of one call, from the kernel's cost model (not measured).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub flops: f64,
    pub items: f64,
    pub unit: WorkUnit,
}

/// Accuracy bounds. An element mismatches when `|out - ref| > atol + rtol * |ref|`; a case passes
/// when `rmse <= rmse`, and the fraction of mismatching elements is at most `max_mismatch_ratio`.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
    pub rmse: f64,
    pub max_mismatch_ratio: f64,
}

impl Tolerance {
    /// Bit-exact: no error of any size is allowed.
    pub const EXACT: Tolerance = Tolerance {
        atol: 0.0,
        rtol: 0.0,
        rmse: 0.0,
        max_mismatch_ratio: 0.0,
    };

    /// Typical defaults per precision (the Apex-X `ToleranceConfig` for fp16/bf16, tighter for fp32).
    pub fn default_for(precision: Precision) -> Tolerance {
        match precision {
            Precision::Fp32 => Tolerance {
                atol: 1e-5,
                rtol: 1e-4,
                rmse: 1e-5,
                max_mismatch_ratio: 0.0,
            },
            Precision::Fp16 => Tolerance {
                atol: 1e-3,
                rtol: 1e-2,
                rmse: 1e-3,
                max_mismatch_ratio: 1e-3,
            },
            Precision::Bf16 => Tolerance {
                atol: 2e-3,
                rtol: 2e-2,
                rmse: 8e-3,
                max_mismatch_ratio: 1e-3,
            },
            Precision::Fp8 => Tolerance {
                atol: 2e-2,
                rtol: 1.25e-1,
                rmse: 5e-2,
                max_mismatch_ratio: 1e-2,
            },
        }
    }
}

/// A per-precision default tolerance in the descriptor.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct PrecisionTolerance {
    pub precision: Precision,
    pub tolerance: Tolerance,
}

/// Everything the host needs to know about a kernel before it runs anything.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct KernelDescriptor {
    /// Stable id, `family.op` (e.g. `tile_ops.tile_pack`).
    pub id: RString,
    pub description: RString,
    pub backends: RVec<Backend>,
    pub precisions: RVec<Precision>,
    pub params: RVec<ParamSpec>,
    /// Default tolerances per precision; precisions not listed use [`Tolerance::default_for`].
    pub tolerances: RVec<PrecisionTolerance>,
    /// Whether `Instance::run` may be captured in a CUDA graph (no host syncs, no allocation).
    pub graph_capturable: bool,
}

impl KernelDescriptor {
    pub fn new(id: &str, description: &str) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            backends: RVec::new(),
            precisions: RVec::new(),
            params: RVec::new(),
            tolerances: RVec::new(),
            graph_capturable: false,
        }
    }
    pub fn backends(mut self, backends: &[Backend]) -> Self {
        self.backends = backends.iter().copied().collect();
        self
    }
    pub fn precisions(mut self, precisions: &[Precision]) -> Self {
        self.precisions = precisions.iter().copied().collect();
        self
    }
    pub fn param(mut self, spec: ParamSpec) -> Self {
        self.params.push(spec);
        self
    }
    pub fn tolerance(mut self, precision: Precision, tolerance: Tolerance) -> Self {
        self.tolerances.push(PrecisionTolerance {
            precision,
            tolerance,
        });
        self
    }
    pub fn graph_capturable(mut self, yes: bool) -> Self {
        self.graph_capturable = yes;
        self
    }

    /// The declared default tolerance for `precision`.
    pub fn tolerance_for(&self, precision: Precision) -> Tolerance {
        self.tolerances
            .iter()
            .find(|t| t.precision == precision)
            .map(|t| t.tolerance)
            .unwrap_or_else(|| Tolerance::default_for(precision))
    }
}

/// The CUDA resources the host hands a CUDA case: the device and the stream every launch must be
/// enqueued on. The host owns both; the plugin must not destroy them, synchronize inside `run`,
/// or allocate inside `run`.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaHandles {
    pub device_ordinal: u32,
    /// `CUstream` as an integer. The context is the device's primary context.
    pub stream: usize,
    pub compute_capability_major: u32,
    pub compute_capability_minor: u32,
}

/// What the host asks a kernel to set up: one case.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct SetupRequest {
    pub params: Params,
    pub backend: Backend,
    pub precision: Precision,
    /// Seeds every input; the same seed gives the same inputs.
    pub seed: u64,
    /// Present for `Backend::Cuda` cases.
    pub cuda: ROption<CudaHandles>,
}
