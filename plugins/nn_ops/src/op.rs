//! [`NnOp`]: what one op supplies (descriptor, cost model, inputs, fast CPU path, verification
//! against its f64 reference, CUDA program and launch). [`crate::case`] turns any `NnOp` into a
//! kernel with CPU and CUDA cases.

use apex_plugin_api::{
    Accuracy, Backend, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work,
};
use cudarc::driver::LaunchConfig;

use crate::{Element, device::DeviceState};

/// The inputs of one call: floating tensors in the case's storage type, and int64 class
/// targets (cross-entropy only; empty otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs<T> {
    pub data: Vec<Vec<T>>,
    pub targets: Vec<i64>,
}

/// The outputs of one call: tensors in the storage type, and f32 scalars (the losses).
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs<T> {
    pub tensors: Vec<Vec<T>>,
    pub scalars: Vec<f32>,
}

/// Lengths of the outputs an op writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLens {
    pub tensors: Vec<usize>,
    pub scalars: usize,
}

impl<T: Element> Outputs<T> {
    /// Poisoned outputs: NaN tensors, and `+inf` scalars. A scalar loss may legitimately be NaN
    /// (cross-entropy over zero rows, as in PyTorch), and NaN matching NaN is not a mismatch, so
    /// the scalars are poisoned with a value no correct call writes.
    pub fn poisoned(lens: &OutputLens) -> Self {
        Self {
            tensors: lens.tensors.iter().map(|&n| vec![T::POISON; n]).collect(),
            scalars: vec![SCALAR_POISON; lens.scalars],
        }
    }

    pub fn poison(&mut self) {
        for t in &mut self.tensors {
            t.fill(T::POISON);
        }
        self.scalars.fill(SCALAR_POISON);
    }
}

/// The poison of scalar outputs (see [`Outputs::poisoned`]).
pub const SCALAR_POISON: f32 = f32::INFINITY;

/// A specialised CUDA program: one kernel, its launch (grid, block, dynamic shared memory), and
/// the zeroed `u32` scratch words it needs (counters that the kernel resets itself, per-block
/// partials).
#[derive(Debug, Clone)]
pub struct CudaProgram {
    pub name: &'static str,
    pub source: String,
    pub function: &'static str,
    pub config: LaunchConfig,
    pub scratch_words: usize,
    /// Blocks per row that wait for each other (split-row plans); setup checks that the device
    /// can hold that many blocks at once.
    pub co_resident_blocks: usize,
    /// The kernel loops over its `config.grid_dim.x` work items (`for work = blockIdx.x; work <
    /// GRID; work += gridDim.x`), so setup may launch only as many blocks as the device holds at
    /// once: one wave, no partial last wave.
    pub grid_stride: bool,
}

/// The device facts a program may depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceFacts {
    pub sm_count: usize,
    /// Compute capability `(major, minor)`: the architecture NVRTC compiles for.
    pub compute_capability: (u32, u32),
    /// Shared memory of one SM, bytes (all its resident blocks together, with the 1 KiB the
    /// driver reserves per block).
    pub smem_per_sm: usize,
    /// Most shared memory one block may opt into, static and dynamic together, bytes.
    pub smem_per_block_optin: usize,
    /// Most resident threads per SM.
    pub threads_per_sm: usize,
}

impl DeviceFacts {
    /// Blocks of `block` threads the device holds at once when threads are the only limit: one
    /// wave of a kernel whose registers and shared memory allow full occupancy.
    pub fn blocks_per_wave(&self, block: usize) -> usize {
        self.sm_count * (self.threads_per_sm / block.max(1)).max(1)
    }

    /// What unit tests and compile checks assume (an H100 SXM: sm_90, 228 KiB of shared memory
    /// per SM, 227 KiB per block).
    pub const H100: DeviceFacts = DeviceFacts {
        sm_count: 132,
        compute_capability: (9, 0),
        smem_per_sm: 228 * 1024,
        smem_per_block_optin: 227 * 1024,
        threads_per_sm: 2048,
    };
}

/// The descriptor every op starts from: CPU and CUDA, fp32/fp16/bf16, graph-capturable (every
/// `run` is one kernel launch and nothing else).
pub fn base_descriptor(id: &str, description: &str) -> KernelDescriptor {
    KernelDescriptor::new(id, description)
        .backends(&[Backend::Cpu, Backend::Cuda])
        .precisions(&[Precision::Fp32, Precision::Fp16, Precision::Bf16])
        .graph_capturable(true)
}

/// `batch`, `seq`, `dim`: the seed's `[batch, sequence, dimension]` tensors (rows = batch·seq).
pub fn with_bsd(d: KernelDescriptor) -> KernelDescriptor {
    d.param(ParamSpec::int(
        "batch",
        16,
        "batch size (rows = batch x seq)",
    ))
    .param(ParamSpec::int("seq", 256, "sequence length"))
    .param(ParamSpec::int(
        "dim",
        512,
        "tensor dimension (the normalised / innermost axis)",
    ))
}

/// `[batch, seq, dim]` from the parameters, as `(rows, dim)`.
pub fn rows_dim(params: &Params) -> Result<(usize, usize), PluginError> {
    let (b, s, d) = (
        params.usize("batch")?,
        params.usize("seq")?,
        params.usize("dim")?,
    );
    if b == 0 || s == 0 || d == 0 {
        return Err(PluginError::invalid(format!(
            "batch = {b}, seq = {s}, dim = {d}: every dimension must be at least 1"
        )));
    }
    let rows = b
        .checked_mul(s)
        .filter(|r| r.checked_mul(d).is_some_and(|n| n <= MAX_ELEMENTS))
        .ok_or_else(|| too_large(b.saturating_mul(s), d))?;
    Ok((rows, d))
}

/// Largest tensor (elements): 32-bit element counts per row and `u32` vector indices on the
/// device stay in range, and 8 GiB of fp16 is beyond every benchmark here.
pub const MAX_ELEMENTS: usize = 1 << 32;

pub fn too_large(rows: usize, cols: usize) -> PluginError {
    PluginError::invalid(format!(
        "{rows} x {cols} elements exceed {MAX_ELEMENTS} (hint: a smaller shape)"
    ))
}

/// One op. `Self` is the validated plan of one case.
pub trait NnOp: Sized + Send + Sync + 'static {
    fn descriptor() -> KernelDescriptor;
    fn plan(params: &Params) -> Result<Self, PluginError>;
    /// The minimum traffic of one call (every input read once, every output written once),
    /// the flops, and the elements processed.
    fn work(&self, precision: Precision) -> Work;
    fn output_lens(&self) -> OutputLens;
    /// Deterministic inputs for `seed`.
    fn generate<T: Element>(&self, seed: u64) -> Inputs<T>;
    /// The fast CPU path; `parallel` lets it use every core.
    fn run_cpu<T: Element>(&self, inputs: &Inputs<T>, outputs: &mut Outputs<T>, parallel: bool);
    /// Compares `outputs` with the f64 reference computed from `inputs`.
    fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy;
    /// The CUDA program for `precision` on a device with `facts`.
    fn cuda_program(
        &self,
        precision: Precision,
        facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError>;
    /// Enqueues one call on buffer set `set`: one kernel launch.
    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError>;
}
