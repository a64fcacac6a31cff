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
    /// No tensors yet ([`TileOp::generate_into`] sizes them).
    pub fn empty() -> Self {
        Inputs {
            data: Vec::new(),
            ints: Vec::new(),
        }
    }

    /// `data` and `ints` with exactly `data` and `ints` tensors, keeping the buffers already there.
    pub fn shape_for(&mut self, data: usize, ints: usize) {
        self.data.resize_with(data, Vec::new);
        self.ints.resize_with(ints, Vec::new);
    }

    /// The host part of the inputs of the ops that read tiles out of one map (TilePack and the
    /// fused stage): the tile ids of `pattern` from `seed`, and room for the map
    /// ([`tiled_map_specs`]: drawn uniform).
    pub fn fill_ids(&mut self, shape: &crate::TileShape, pattern: &crate::IdPattern, seed: u64) {
        use crate::selection::Rng;
        self.shape_for(1, 1);
        self.ints[0] = pattern.generate(shape, &mut Rng::new(seed, 1));
    }
}

/// How the values of one data tensor are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Draw {
    /// Uniform in `[lo, hi)`, element `i` from draw `i` of `Rng::new(seed, stream)`: a CUDA case
    /// draws these on the device ([`crate::device_check::CheckKit::draw`]), the same values.
    Uniform { stream: u64, lo: f64, hi: f64 },
    /// By the op's own host code ([`TileOp::generate_host`]).
    Host,
}

/// One data tensor of an op's inputs: its length (batch-major: `batch` rows of equal length) and
/// how its values are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataSpec {
    pub len: usize,
    pub draw: Draw,
}

/// The data of the ops that read tiles out of one map (TilePack, the fused stage): the map,
/// uniform from stream 2 (their ids come from stream 1: [`Inputs::fill_ids`]).
pub fn tiled_map_specs(shape: &crate::TileShape) -> Vec<DataSpec> {
    vec![map_spec(shape.map_len(), 2)]
}

/// A `[B,C,H,W]` map uniform in `[-2, 2)` from stream `stream`.
pub fn map_spec(len: usize, stream: u64) -> DataSpec {
    DataSpec {
        len,
        draw: Draw::Uniform {
            stream,
            lo: -2.0,
            hi: 2.0,
        },
    }
}

/// [`TileOp::batch`] and [`TileOp::one_row`] of an op whose geometry is its `shape` field (a
/// [`crate::TileShape`] or [`crate::MapShape`]) and that is `Clone`: every op here.
#[macro_export]
macro_rules! batch_rows_of_shape {
    () => {
        fn batch(&self) -> usize {
            self.shape.batch
        }

        fn one_row(&self) -> Self {
            Self {
                shape: self.shape.one_row(),
                ..self.clone()
            }
        }
    };
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
    /// Lengths of the output tensors, in the order `run` writes them (batch-major, like every
    /// input).
    fn output_lens(&self) -> Vec<usize>;
    /// The batch size `B`: every tensor holds `B` rows of equal length.
    fn batch(&self) -> usize;
    /// The same op on one batch row (`B = 1`): what checks a row of the device reference.
    fn one_row(&self) -> Self;
    /// The data tensors, in order.
    fn data_specs(&self) -> Vec<DataSpec>;
    /// The index tensors and the [`Draw::Host`] data tensors for `seed`, written over `inputs`
    /// with exactly `data_specs().len()` data tensors ([`Inputs::shape_for`]); the
    /// [`Draw::Uniform`] ones are left as they are.
    fn generate_host<T: Element>(&self, seed: u64, inputs: &mut Inputs<T>);
    /// Deterministic inputs for `seed`, written over `inputs` (its buffers are reused where their
    /// sizes match: [`crate::selection::uniform_into`]): the host part, then every uniform tensor.
    fn generate_into<T: Element>(&self, seed: u64, inputs: &mut Inputs<T>) {
        use crate::selection::{Rng, uniform_range_into};
        self.generate_host(seed, inputs);
        for (tensor, spec) in inputs.data.iter_mut().zip(self.data_specs()) {
            if let Draw::Uniform { stream, lo, hi } = spec.draw {
                uniform_range_into(tensor, 0, spec.len, lo, hi, &Rng::new(seed, stream));
            }
        }
    }
    /// Deterministic inputs for `seed`, in new buffers.
    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        let mut inputs = Inputs::empty();
        self.generate_into(seed, &mut inputs);
        inputs
    }
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
    /// Enqueues the kernels of [`crate::device_check`] that write the f64 reference of the
    /// device's current inputs into `device.check`'s reference buffer, laid out as
    /// [`TileOp::reference`] returns it; `ints` are the index tensors (on the host too).
    fn launch_reference(
        &self,
        ints: &[Vec<i32>],
        device: &mut DeviceState,
    ) -> Result<(), PluginError>;
}

#[cfg(test)]
mod tests {
    use apex_plugin_api::ParamValue;

    use super::*;
    use crate::{
        case::OpKernel,
        harness::{params, small_shape},
        ops::{FusedStage, FusionGate, TilePack, TileUnpack},
    };

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Inputs as bits (fusion_gate's proxies hold NaNs, which `==` never matches).
    fn input_bits(i: &Inputs<f32>) -> (Vec<Vec<u32>>, &[Vec<i32>]) {
        let data = i
            .data
            .iter()
            .map(|d| d.iter().map(|x| x.to_bits()).collect())
            .collect();
        (data, &i.ints)
    }

    /// Regenerating into the buffers of another seed's inputs gives exactly what new buffers give,
    /// and so does the reference computed from them.
    fn reused_buffers_hold_nothing_of_the_last_check<O: TileOp>(
        extra: &[(&'static str, ParamValue)],
    ) {
        let kernel = OpKernel::<O>::default();
        let mut o = small_shape(2, 3, 32, 8, 12);
        o.extend_from_slice(extra);
        let op = O::plan(&params(&kernel, &o)).expect("plan");
        let fresh = op.generate::<f32>(1);
        let mut reused = op.generate::<f32>(2);
        assert!(
            input_bits(&reused) != input_bits(&fresh),
            "two seeds, two inputs"
        );
        op.generate_into(1, &mut reused);
        assert!(
            input_bits(&reused) == input_bits(&fresh),
            "regenerated inputs differ"
        );
        assert!(
            bits(&op.reference(&reused)) == bits(&op.reference(&fresh)),
            "the reference of regenerated inputs differs"
        );
    }

    #[test]
    fn every_op_regenerates_into_reused_buffers() {
        let overlap = [("ids", ParamValue::Str("overlap".into()))];
        reused_buffers_hold_nothing_of_the_last_check::<TilePack>(&overlap);
        reused_buffers_hold_nothing_of_the_last_check::<TileUnpack>(&overlap);
        reused_buffers_hold_nothing_of_the_last_check::<FusedStage>(&overlap);
        reused_buffers_hold_nothing_of_the_last_check::<FusionGate>(&[]);
    }
}
