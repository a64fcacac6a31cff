//! `nn_ops.gelu`: GELU over `x[batch, seq, dim]`, erf form (`approximate: none`, PyTorch's
//! default) or tanh form (`approximate: tanh`), elementwise (see [`super::activation`]).

use apex_plugin_api::{KernelDescriptor, ParamSpec, Params, PluginError};

use super::activation::{Activation, Func, activation_methods};
use crate::op::{NnOp, base_descriptor, rows_dim, with_bsd};

/// A validated GELU case.
#[derive(Debug, Clone, Copy)]
pub struct Gelu(pub Activation);

impl NnOp for Gelu {
    fn descriptor() -> KernelDescriptor {
        with_bsd(base_descriptor(
            "nn_ops.gelu",
            "GELU over x[batch, seq, dim]: 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation",
        ))
        .param(ParamSpec::str(
            "approximate",
            "none",
            "none (erf form, PyTorch's default) or tanh",
        ))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let (rows, dim) = rows_dim(params)?;
        let func = match params.str("approximate")? {
            "none" => Func::GeluErf,
            "tanh" => Func::GeluTanh,
            other => {
                return Err(PluginError::invalid(format!(
                    "approximate = `{other}` is not a GELU form (hint: none or tanh, as PyTorch's F.gelu)"
                )));
            }
        };
        Ok(Self(Activation {
            n: rows * dim,
            func,
        }))
    }

    activation_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::OpKernel,
        harness::{assert_cpu_checks, bsd, params},
    };
    use apex_plugin_api::{ParamValue, Tolerance};

    #[test]
    fn both_forms_match_the_reference_for_every_precision() {
        let kernel = OpKernel::<Gelu>::default();
        for form in ["none", "tanh"] {
            for (b, s, d) in [(1, 1, 1), (2, 3, 7), (16, 4, 512), (1, 1, 8193)] {
                let mut o = bsd(b, s, d);
                o.push(("approximate", ParamValue::Str(form.into())));
                assert_cpu_checks(&kernel, &o, Tolerance::default_for);
            }
        }
        let bad = params(&kernel, &[("approximate", ParamValue::Str("fast".into()))]);
        assert!(
            Gelu::plan(&bad)
                .unwrap_err()
                .message
                .contains("none or tanh")
        );
    }
}
