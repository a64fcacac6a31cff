//! [`TileOp`]: what one tile op supplies (descriptor, cost model, inputs, CPU path, f64
//! reference, CUDA program and launches). [`crate::case`] turns any `TileOp` into a kernel.

use apex_plugin_api::{KernelDescriptor, Params, PluginError, Precision, Work};

use crate::{Element, device::DeviceState};

/// The inputs of one call: floating tensors in the case's storage type and `i32` index tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs<T> {
    pub data: Vec<Vec<T>>,
    pub ints: Vec<Vec<i32>>,
}

impl<T: crate::Element> Inputs<T> {
    /// A feature map `F` uniform in [-2, 2) and the tile ids of `pattern`, from `seed` (the inputs
    /// of the ops that read tiles out of one map: TilePack and the fused stage).
    pub fn map_and_ids(shape: &crate::TileShape, pattern: &crate::IdPattern, seed: u64) -> Self {
        use crate::selection::{Rng, uniform};
        let ids = pattern.generate(shape, &mut Rng::new(seed, 1));
        let f = uniform(shape.map_len(), -2.0, 2.0, &mut Rng::new(seed, 2));
        Inputs {
            data: vec![f],
            ints: vec![ids],
        }
    }
}

/// The descriptor every tile op starts from: CPU and CUDA, fp32/fp16/bf16, graph-capturable (every
/// `run` only enqueues), and the shape parameters of [`crate::TileShape`].
pub fn base_descriptor(id: &str, description: &str) -> KernelDescriptor {
    descriptor_with(id, description, crate::TileShape::param_specs())
}

/// The common descriptor with the given shape parameters (FusionGate: the map's only).
pub fn descriptor_with(
    id: &str,
    description: &str,
    shape_params: impl IntoIterator<Item = apex_plugin_api::ParamSpec>,
) -> KernelDescriptor {
    use apex_plugin_api::Backend;
    shape_params.into_iter().fold(
        KernelDescriptor::new(id, description)
            .backends(&[Backend::Cpu, Backend::Cuda])
            .precisions(&[Precision::Fp32, Precision::Fp16, Precision::Bf16])
            .graph_capturable(true),
        KernelDescriptor::param,
    )
}

/// Reusable CPU working memory, sized at setup so that `run` does not grow it.
#[derive(Debug, Default)]
pub struct CpuScratch {
    pub f32s: Vec<f32>,
    pub order: Vec<u32>,
    /// Whether the fast CPU path may use all cores (see [`crate::cpu_par`]).
    pub parallel: bool,
}

/// The CUDA C source of an op (already specialised with `#define`s for one shape and precision),
/// the functions it exports, and the `i32` device scratch buffers its launches need.
#[derive(Debug, Clone)]
pub struct CudaProgram {
    pub name: &'static str,
    pub source: String,
    pub functions: &'static [&'static str],
    pub scratch_i32: Vec<usize>,
}

/// One tile op. `Self` is the validated plan of one case (shape plus op parameters).
pub trait TileOp: Sized + Send + Sync + 'static {
    fn descriptor() -> KernelDescriptor;
    fn plan(params: &Params) -> Result<Self, PluginError>;
    /// The logical minimum each call must move for these `inputs` (the actual selection: empty
    /// slots, overlaps and uncovered pixels count for what they cost, not as full tiles).
    fn work<T: Element>(&self, inputs: &Inputs<T>) -> Work;
    /// Lengths of the output tensors, in the order `run` writes them.
    fn output_lens(&self) -> Vec<usize>;
    /// Deterministic inputs for `seed`.
    fn generate<T: Element>(&self, seed: u64) -> Inputs<T>;
    fn cpu_scratch(&self) -> CpuScratch {
        CpuScratch::default()
    }
    /// The fast CPU path.
    fn run_cpu<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &mut [Vec<T>],
        scratch: &mut CpuScratch,
    );
    /// The f64 reference of every output, concatenated in output order.
    fn reference<T: Element>(&self, inputs: &Inputs<T>) -> Vec<f64>;
    fn cuda_program(&self, precision: Precision) -> CudaProgram;
    /// Enqueues one call on the session's stream: launches and memsets only.
    fn launch(&self, precision: Precision, device: &mut DeviceState) -> Result<(), PluginError>;
}
