//! `nn_ops.swish`: Swish / SiLU, `x * sigmoid(x)`, over `x[batch, seq, dim]`, elementwise (see
//! [`super::activation`]).

use apex_plugin_api::{KernelDescriptor, Params, PluginError};

use super::activation::{Activation, Func, activation_methods};
use crate::op::{NnOp, base_descriptor, rows_dim, with_bsd};

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

    activation_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, bsd},
    };
    use apex_plugin_api::Tolerance;

    #[test]
    fn matches_the_reference_for_every_precision() {
        let kernel = OpKernel::<Swish>::default();
        for (b, s, d) in [(1, 1, 1), (2, 3, 7), (16, 4, 512)] {
            assert_cpu_checks(&kernel, &bsd(b, s, d), Tolerance::default_for);
        }
    }
}
