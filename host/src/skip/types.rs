//! The static types of the skip-condition language, checked at load time against one kernel's
//! declared parameters ([`Expr::check_types`](super::Expr::check_types)). A condition that passes
//! this check cannot fail to evaluate on any machine, so no evaluation error ever becomes a skip.
//!
//! | type | facts and literals | compares with |
//! | --- | --- | --- |
//! | bool | `cuda.available`, `nvml.available`, `trt.available`, `true` | bool (`==`, `!=`) |
//! | number | `cuda.device_count`, `cuda.compute_capability`, numeric `param.*`, `8.0` | number, version |
//! | version | `cuda.driver_version`, a string literal of dotted integers (`"12.4"`) | number, string, version |
//! | string | `os`, `arch`, `backend`, `precision`, `cuda.device_name`, `env.*`, string `param.*` | string, version |
//! | list | `[...]` literals, shape `param.*` | list (`==`), right side of `in` |
//! | null | `null` | anything with `==` / `!=` |
//!
//! Facts that may be absent on a machine (`cuda.compute_capability`, `cuda.driver_version`,
//! `cuda.device_name`, `env.*`) evaluate to null there: orderings with null are false and null
//! equals only null, which needs no type rule.

use super::ast::{CmpOp, Fact, Node};
use super::value::Value;
use std::fmt;

/// The type of an expression node.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Null,
    Bool,
    Num,
    Version,
    Str,
    /// A list; `None` when its items have no single type (or it is empty).
    List(Option<Box<Ty>>),
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Null => f.write_str("null"),
            Ty::Bool => f.write_str("bool"),
            Ty::Num => f.write_str("number"),
            Ty::Version => f.write_str("version"),
            Ty::Str => f.write_str("string"),
            Ty::List(Some(t)) => write!(f, "list of {t}"),
            Ty::List(None) => f.write_str("list"),
        }
    }
}

impl Ty {
    /// The type of a parameter whose declared default is `default`.
    pub fn of_json(default: &serde_json::Value) -> Ty {
        Ty::of_value(&Value::from_json(default))
    }

    fn of_value(v: &Value) -> Ty {
        match v {
            Value::Null => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Num(_) => Ty::Num,
            Value::Str(s) if super::value::is_version(s) => Ty::Version,
            Value::Str(_) => Ty::Str,
            Value::List(items) => {
                let mut types = items.iter().map(Ty::of_value);
                let first = types.next();
                let same = first.filter(|f| types.all(|t| &t == f));
                Ty::List(same.map(Box::new))
            }
        }
    }

    /// Whether `==` between the two can be evaluated (null equals only null, lists item by item).
    fn equatable(&self, other: &Ty) -> bool {
        match (self, other) {
            (Ty::Null, _) | (_, Ty::Null) => true,
            (Ty::List(a), Ty::List(b)) => match (a, b) {
                (Some(a), Some(b)) => a.equatable(b),
                _ => true,
            },
            (Ty::Bool, Ty::Bool) => true,
            _ => self.orderable(other),
        }
    }

    /// Whether `<` between the two can be evaluated.
    fn orderable(&self, other: &Ty) -> bool {
        matches!(
            (self, other),
            (Ty::Num, Ty::Num)
                | (Ty::Str | Ty::Version, Ty::Str | Ty::Version)
                | (Ty::Num, Ty::Version)
                | (Ty::Version, Ty::Num)
        )
    }
}

/// A type error, with the 1-based column inside the expression and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    pub message: String,
    pub column: usize,
    pub hint: String,
}

/// The type of `node`; `param` gives the type of `param.NAME` for the kernel being checked.
pub(crate) fn type_of(node: &Node, param: &dyn Fn(&str) -> Option<Ty>) -> Result<Ty, TypeError> {
    Ok(match node {
        Node::Lit { value, .. } => Ty::of_value(value),
        Node::Fact { fact, col } => fact_type(fact, param).ok_or_else(|| TypeError {
            message: format!("`{}` is not a parameter of this kernel", fact.name()),
            column: *col,
            hint: "use a parameter the kernel declares (`apex-host discover --verbose` lists them), or narrow `kernel`".into(),
        })?,
        Node::Not { inner, .. } => {
            type_of(inner, param)?;
            Ty::Bool
        }
        Node::And(a, b) | Node::Or(a, b) => {
            type_of(a, param)?;
            type_of(b, param)?;
            Ty::Bool
        }
        Node::Cmp { op, lhs, rhs, col } => {
            let (l, r) = (type_of(lhs, param)?, type_of(rhs, param)?);
            let ok = match op {
                CmpOp::Eq | CmpOp::Ne => l.equatable(&r),
                CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => l.orderable(&r),
                CmpOp::In | CmpOp::NotIn => match &r {
                    Ty::List(Some(item)) => l.equatable(item),
                    Ty::List(None) | Ty::Null => true,
                    Ty::Str | Ty::Version => matches!(l, Ty::Str | Ty::Version | Ty::Null),
                    _ => false,
                },
            };
            if !ok {
                return Err(TypeError {
                    message: format!("`{}` cannot compare {l} with {r}", op.as_str()),
                    column: *col,
                    hint: hint_for(*op, &l, &r),
                });
            }
            Ty::Bool
        }
    })
}

fn fact_type(fact: &Fact, param: &dyn Fn(&str) -> Option<Ty>) -> Option<Ty> {
    Some(match fact {
        Fact::CudaAvailable | Fact::NvmlAvailable | Fact::TrtAvailable => Ty::Bool,
        Fact::CudaDeviceCount | Fact::CudaComputeCapability => Ty::Num,
        Fact::CudaDriverVersion => Ty::Version,
        Fact::CudaDeviceName
        | Fact::Os
        | Fact::Arch
        | Fact::Backend
        | Fact::Precision
        | Fact::Env(_) => Ty::Str,
        Fact::Param(name) => return param(name),
    })
}

fn hint_for(op: CmpOp, l: &Ty, r: &Ty) -> String {
    if matches!(op, CmpOp::In | CmpOp::NotIn) {
        return "`in` needs a list on the right, e.g. `precision in ['fp16', 'bf16']`, or a string for a substring test".into();
    }
    match (l, r) {
        (Ty::Num, Ty::Str) | (Ty::Str, Ty::Num) => {
            "write the number without quotes, or a version as \"12.4\"".into()
        }
        (Ty::Bool, _) | (_, Ty::Bool) => {
            "a bool fact is a condition on its own: `cuda.available`, `not cuda.available`".into()
        }
        _ => "compare values of one type (facts and their types: docs/config-reference.md, \"Skip conditions\")".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skip::Expr;

    fn check(src: &str) -> Result<(), TypeError> {
        let param = |name: &str| match name {
            "tile_size" => Some(Ty::Num),
            "mode" => Some(Ty::Str),
            "grid_size" => Some(Ty::of_json(&serde_json::json!([64, 64, 64]))),
            _ => None,
        };
        Expr::parse(src).unwrap().check_types(&param)
    }

    #[test]
    fn well_typed_conditions_pass() {
        for src in [
            "not cuda.available",
            "cuda.device_count >= 2",
            "cuda.compute_capability < 9.0",
            "cuda.driver_version >= 12.4",
            "cuda.driver_version < \"12.10\"",
            "'H200' in cuda.device_name",
            "backend == 'cuda' and precision in ['fp16', 'bf16']",
            "param.tile_size > 8 and param.mode == 'blend'",
            "param.grid_size == [64, 64, 64]",
            "env.CI == 'true' or not env.UNSET",
            "env.CI",
            "os in ['linux', 'macos'] and arch != 'aarch64'",
        ] {
            assert_eq!(check(src), Ok(()), "{src}");
        }
    }

    #[test]
    fn mistyped_conditions_fail_at_their_column_with_a_hint() {
        // Issue 11, finding 1: this skipped every case and the run said ok.
        let e = check("cuda.device_count < \"two\"").unwrap_err();
        assert_eq!(e.column, 19);
        assert!(
            e.message.contains("cannot compare number with string"),
            "{e:?}"
        );
        assert!(e.hint.contains("without quotes"), "{e:?}");
        for src in [
            "os < 3",
            "cuda.available == 'yes'",
            "backend in 3",
            "param.tile_size == 'big'",
            "param.grid_size < 3",
            "env.CUDA_VERSION >= 12",
            "precision in [1, 2]",
        ] {
            assert!(check(src).is_err(), "{src}");
        }
    }

    #[test]
    fn a_parameter_the_kernel_does_not_declare_is_an_error() {
        let e = check("param.kmax > 8").unwrap_err();
        assert_eq!(e.column, 1);
        assert!(
            e.message.contains("`param.kmax` is not a parameter"),
            "{e:?}"
        );
    }
}
