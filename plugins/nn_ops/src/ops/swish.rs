//! `nn_ops.swish`: Swish / SiLU, `x * sigmoid(x)`, over `x[batch, seq, dim]`, elementwise (see
//! [`super::activation`]).

use apex_plugin_api::{
    Accuracy, KernelDescriptor, Params, PluginError, Precision, Tolerance, Work,
};

use super::activation::{Activation, Func};
use crate::{
    Element,
    device::DeviceState,
    op::{
        CudaProgram, DeviceFacts, Inputs, NnOp, OutputLens, Outputs, base_descriptor, rows_dim,
        with_bsd,
    },
};

/// A validated Swish case.
#[derive(Debug, Clone, Copy)]
pub struct Swish(pub Activation);

impl NnOp for Swish {
    fn descriptor() -> KernelDescriptor {
        with_bsd(base_descriptor(
            "nn_ops.swish",
            "Swish (SiLU) over x[batch, seq, dim]: x * sigmoid(x)",
        ))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let (rows, dim) = rows_dim(params)?;
        Ok(Self(Activation {
            n: rows * dim,
            func: Func::Swish,
        }))
    }

    fn work(&self, precision: Precision) -> Work {
        self.0.work(precision)
    }
    fn output_lens(&self) -> OutputLens {
        self.0.output_lens()
    }
    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        self.0.generate(seed)
    }
    fn run_cpu<T: Element>(&self, inputs: &Inputs<T>, outputs: &mut Outputs<T>, parallel: bool) {
        self.0.run_cpu(inputs, outputs, parallel);
    }
    fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy {
        self.0.verify(inputs, outputs, tolerance)
    }
    fn cuda_program(
        &self,
        precision: Precision,
        _facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError> {
        self.0.cuda_program(precision)
    }
    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        self.0.launch(device, set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, bsd},
    };

    #[test]
    fn matches_the_reference_for_every_precision() {
        let kernel = OpKernel::<Swish>::default();
        for (b, s, d) in [(1, 1, 1), (2, 3, 7), (16, 4, 512)] {
            assert_cpu_checks(&kernel, &bsd(b, s, d), Tolerance::default_for);
        }
    }
}
