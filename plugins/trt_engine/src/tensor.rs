//! An engine's tensors as the runtime describes them ([`IoSpec`]), and how a case's input shapes
//! are decided ([`resolve_inputs`]): a static input is used as is, a dynamic dimension takes the
//! `name=AxB` the case gives, and a dynamic dimension without one is a skip reason, never
//! silently 1 (the seed's fault, apex-x-kernels.md §6.2 item 18).

use std::fmt;

use crate::skip::SkipReason;
use crate::spec::ShapeOverride;

/// The element types the plugin knows, by their ONNX / TensorRT names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    F16,
    Bf16,
    F64,
    I8,
    U8,
    I32,
    I64,
    Bool,
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "FLOAT",
            Self::F16 => "HALF",
            Self::Bf16 => "BF16",
            Self::F64 => "DOUBLE",
            Self::I8 => "INT8",
            Self::U8 => "UINT8",
            Self::I32 => "INT32",
            Self::I64 => "INT64",
            Self::Bool => "BOOL",
        }
    }

    pub fn size_bytes(self) -> usize {
        match self {
            Self::F64 | Self::I64 => 8,
            Self::F32 | Self::I32 => 4,
            Self::F16 | Self::Bf16 => 2,
            Self::I8 | Self::U8 | Self::Bool => 1,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F16 | Self::Bf16 | Self::F64)
    }

    /// The case precision a floating-point input of this type computes in.
    pub fn precision(self) -> Option<&'static str> {
        match self {
            Self::F32 | Self::F64 => Some("fp32"),
            Self::F16 => Some("fp16"),
            Self::Bf16 => Some("bf16"),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One input or output of an engine: its name, element type (or the runtime's name for one the
/// plugin does not know) and dimensions (`-1`: dynamic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoSpec {
    pub name: String,
    pub dtype: Result<DType, String>,
    pub dims: Vec<i64>,
}

/// An input with every dimension decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedInput {
    pub name: String,
    pub dtype: DType,
    pub dims: Vec<usize>,
}

impl ResolvedInput {
    pub fn elements(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Why the case's shapes do not fit the engine (a failure of the case: the user's flags are wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("input_shapes names `{name}`, but the engine has no such input (its inputs: {inputs})")]
    UnknownInput { name: String, inputs: String },
    #[error(
        "input_shapes gives `{name}` {given} dimensions, but the engine's input has {expected} ({dims})"
    )]
    Rank {
        name: String,
        given: usize,
        expected: usize,
        dims: String,
    },
    #[error(
        "input_shapes gives `{name}` dimension {axis} = {given}, but the engine fixes it at {fixed}"
    )]
    Fixed {
        name: String,
        axis: usize,
        given: usize,
        fixed: i64,
    },
}

/// What resolving the inputs gave: the inputs, a skip reason, or the user's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Ready(Vec<ResolvedInput>),
    Skip(SkipReason),
    Invalid(ShapeError),
}

/// `[-1, 32]`.
pub fn dims_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Decides every input's shape: overrides apply by name; a dimension the engine fixes must match;
/// a dynamic dimension without an override is `unresolved_tensor_shape:<name>`; an input of a
/// type the plugin cannot generate is `unsupported_dtype:<dt>` (checked after every shape, as
/// the seed checks dtypes after shapes).
pub fn resolve_inputs(inputs: &[IoSpec], overrides: &[ShapeOverride]) -> Resolution {
    for o in overrides {
        if !inputs.iter().any(|i| i.name == o.name) {
            let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
            return Resolution::Invalid(ShapeError::UnknownInput {
                name: o.name.clone(),
                inputs: names.join(", "),
            });
        }
    }
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let dims = match overrides.iter().find(|o| o.name == input.name) {
            Some(o) => {
                if o.dims.len() != input.dims.len() {
                    return Resolution::Invalid(ShapeError::Rank {
                        name: input.name.clone(),
                        given: o.dims.len(),
                        expected: input.dims.len(),
                        dims: dims_text(&input.dims),
                    });
                }
                for (axis, (&given, &fixed)) in o.dims.iter().zip(&input.dims).enumerate() {
                    if fixed >= 0 && fixed as usize != given {
                        return Resolution::Invalid(ShapeError::Fixed {
                            name: input.name.clone(),
                            axis,
                            given,
                            fixed,
                        });
                    }
                }
                o.dims.clone()
            }
            None if input.dims.iter().any(|&d| d < 0) => {
                return Resolution::Skip(SkipReason::UnresolvedShape {
                    tensor: input.name.clone(),
                    dims: dims_text(&input.dims),
                });
            }
            None => input.dims.iter().map(|&d| d as usize).collect(),
        };
        out.push((input, dims));
    }
    let mut ready = Vec::with_capacity(out.len());
    for (input, dims) in out {
        match &input.dtype {
            Ok(dtype) => ready.push(ResolvedInput {
                name: input.name.clone(),
                dtype: *dtype,
                dims,
            }),
            Err(name) => {
                return Resolution::Skip(SkipReason::UnsupportedDtype {
                    tensor: input.name.clone(),
                    dtype: name.clone(),
                });
            }
        }
    }
    Resolution::Ready(ready)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(name: &str, dims: &[i64]) -> IoSpec {
        IoSpec {
            name: name.into(),
            dtype: Ok(DType::F32),
            dims: dims.to_vec(),
        }
    }

    fn shape(name: &str, dims: &[usize]) -> ShapeOverride {
        ShapeOverride {
            name: name.into(),
            dims: dims.to_vec(),
        }
    }

    #[test]
    fn a_dynamic_dimension_without_a_shape_is_skipped_never_one() {
        let r = resolve_inputs(&[io("x", &[-1, 32])], &[]);
        assert_eq!(
            r,
            Resolution::Skip(SkipReason::UnresolvedShape {
                tensor: "x".into(),
                dims: "[-1, 32]".into()
            })
        );
        let Resolution::Ready(ok) = resolve_inputs(&[io("x", &[-1, 32])], &[shape("x", &[8, 32])])
        else {
            panic!("a given shape resolves")
        };
        assert_eq!(ok[0].dims, vec![8, 32]);
    }

    #[test]
    fn overrides_must_name_inputs_and_agree_with_fixed_dimensions() {
        let inputs = [io("x", &[-1, 32])];
        assert!(matches!(
            resolve_inputs(&inputs, &[shape("y", &[1, 32])]),
            Resolution::Invalid(ShapeError::UnknownInput { .. })
        ));
        assert!(matches!(
            resolve_inputs(&inputs, &[shape("x", &[1, 16])]),
            Resolution::Invalid(ShapeError::Fixed { axis: 1, .. })
        ));
        assert!(matches!(
            resolve_inputs(&inputs, &[shape("x", &[1])]),
            Resolution::Invalid(ShapeError::Rank { .. })
        ));
    }

    #[test]
    fn an_unknown_dtype_is_skipped_after_the_shapes() {
        let s = IoSpec {
            name: "s".into(),
            dtype: Err("String".into()),
            dims: vec![2],
        };
        assert_eq!(
            resolve_inputs(&[s], &[]),
            Resolution::Skip(SkipReason::UnsupportedDtype {
                tensor: "s".into(),
                dtype: "String".into()
            })
        );
    }
}
