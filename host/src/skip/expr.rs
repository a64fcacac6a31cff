//! [`Expr`]: a parsed skip condition with its source text, and its pure evaluation against
//! [`Facts`] and one case's [`CaseContext`]. Evaluation performs no I/O: `env.NAME` reads the
//! snapshot taken by `facts::gather`.

use super::ast::{CmpOp, Fact, Node};
use super::errors::{EvalError, ParseError};
use super::parser::parse;
use super::types::{Ty, TypeError};
use super::value::Value;
use crate::facts::Facts;
use crate::model::ParamMap;
use apex_plugin_api::{Backend, Precision};
use serde::{Serialize, Serializer};
use std::cmp::Ordering;

/// The case a condition is evaluated for.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseContext {
    pub backend: Backend,
    pub precision: Precision,
    pub params: ParamMap,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    text: String,
    root: Node,
}

impl Expr {
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        Ok(Expr {
            text: text.to_string(),
            root: parse(text)?,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `param.NAME` names the condition reads, so resolution can check them against the
    /// kernel's declared parameters.
    pub fn params(&self) -> Vec<&str> {
        let mut facts = Vec::new();
        self.root.facts(&mut facts);
        facts
            .into_iter()
            .filter_map(|f| match f {
                Fact::Param(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Checks the expression's types for one kernel (`types.rs`); `param` gives the type of each
    /// `param.NAME` the kernel declares. Passing means evaluation cannot fail.
    pub fn check_types(&self, param: &dyn Fn(&str) -> Option<Ty>) -> Result<(), TypeError> {
        super::types::type_of(&self.root, param).map(|_| ())
    }

    /// The truthiness of the expression's value (see `value.rs` for the rules).
    pub fn eval(&self, facts: &Facts, ctx: &CaseContext) -> Result<bool, EvalError> {
        Ok(self.value(&self.root, facts, ctx)?.truthy())
    }

    fn value(&self, node: &Node, facts: &Facts, ctx: &CaseContext) -> Result<Value, EvalError> {
        Ok(match node {
            Node::Lit { value, .. } => value.clone(),
            Node::Fact { fact, .. } => fact_value(fact, facts, ctx),
            Node::Not { inner, .. } => Value::Bool(!self.value(inner, facts, ctx)?.truthy()),
            Node::And(a, b) => Value::Bool(
                self.value(a, facts, ctx)?.truthy() && self.value(b, facts, ctx)?.truthy(),
            ),
            Node::Or(a, b) => Value::Bool(
                self.value(a, facts, ctx)?.truthy() || self.value(b, facts, ctx)?.truthy(),
            ),
            Node::Cmp { op, lhs, rhs, col } => {
                let l = self.value(lhs, facts, ctx)?;
                let r = self.value(rhs, facts, ctx)?;
                let result = match op {
                    CmpOp::Eq => l.equals(&r),
                    CmpOp::Ne => l.equals(&r).map(|b| !b),
                    CmpOp::In => l.contained_in(&r),
                    CmpOp::NotIn => l.contained_in(&r).map(|b| !b),
                    CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => l.order(&r).map(|o| match o {
                        None => false,
                        Some(o) => match op {
                            CmpOp::Lt => o == Ordering::Less,
                            CmpOp::Le => o != Ordering::Greater,
                            CmpOp::Gt => o == Ordering::Greater,
                            _ => o != Ordering::Less,
                        },
                    }),
                };
                Value::Bool(result.map_err(|message| EvalError {
                    message: format!("`{}`: {message}", op.as_str()),
                    column: *col,
                    expression: self.text.clone(),
                })?)
            }
        })
    }
}

fn fact_value(fact: &Fact, facts: &Facts, ctx: &CaseContext) -> Value {
    let opt_str = |s: &Option<String>| s.clone().map_or(Value::Null, Value::Str);
    match fact {
        Fact::CudaAvailable => Value::Bool(facts.cuda.available),
        Fact::CudaDeviceCount => Value::Num(f64::from(facts.cuda.device_count)),
        Fact::CudaComputeCapability => facts
            .cuda
            .compute_capability
            .map_or(Value::Null, Value::Num),
        Fact::CudaDriverVersion => opt_str(&facts.cuda.driver_version),
        Fact::CudaDeviceName => opt_str(&facts.cuda.device_name),
        Fact::NvmlAvailable => Value::Bool(facts.nvml.available),
        Fact::TrtAvailable => Value::Bool(facts.trt.available),
        Fact::Os => Value::Str(facts.os.clone()),
        Fact::Arch => Value::Str(facts.arch.clone()),
        Fact::Env(name) => facts
            .env
            .get(name)
            .map_or(Value::Null, |v| Value::Str(v.to_string())),
        Fact::Backend => Value::Str(ctx.backend.as_str().into()),
        Fact::Precision => Value::Str(ctx.precision.as_str().into()),
        Fact::Param(name) => ctx.params.get(name).map_or(Value::Null, Value::from_json),
    }
}

/// Serialized as its source text (for `discover --json`).
impl Serialize for Expr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{CudaFacts, EnvSnapshot};

    fn gpu_facts() -> Facts {
        let mut f = Facts::cpu_only();
        f.cuda = CudaFacts {
            available: true,
            reason: None,
            device_count: 1,
            compute_capability: Some(9.0),
            driver_version: Some("13.0".into()),
            device_name: Some("NVIDIA H200".into()),
        };
        f.os = "linux".into();
        f.arch = "x86_64".into();
        f.env = EnvSnapshot::from_pairs([("CI", "true"), ("EMPTY", "")]);
        f
    }

    fn ctx() -> CaseContext {
        let mut params = ParamMap::new();
        params.insert("tile_size".into(), 16.into());
        params.insert("mode".into(), "blend".into());
        CaseContext {
            backend: Backend::Cuda,
            precision: Precision::Fp16,
            params,
        }
    }

    fn eval(src: &str, facts: &Facts) -> Result<bool, EvalError> {
        Expr::parse(src).unwrap().eval(facts, &ctx())
    }

    #[test]
    fn evaluates_facts_and_operators() {
        let gpu = gpu_facts();
        let cpu = Facts::cpu_only();
        let table = [
            ("not cuda.available", false, true),
            ("cuda.device_count >= 1", true, false),
            ("cuda.compute_capability < 8.0", false, false),
            ("cuda.compute_capability >= 9.0", true, false),
            ("cuda.driver_version >= 12.4", true, false),
            ("cuda.driver_version < \"12.10\"", false, false),
            ("'H200' in cuda.device_name", true, false),
            (
                "backend == 'cuda' and precision in ['fp16', 'bf16']",
                true,
                true,
            ),
            ("precision not in ['fp16']", false, false),
            (
                "param.tile_size > 8 and param.mode == \"blend\"",
                true,
                true,
            ),
            ("param.missing == 3", false, false),
            ("env.CI == 'true'", true, false),
            ("env.CI", true, false),
            ("env.EMPTY or env.UNSET", false, false),
            ("not env.UNSET", true, true),
            (
                "os == 'linux' and arch != 'aarch64'",
                true,
                cpu.os == "linux",
            ),
            ("trt.available or nvml.available", false, false),
            ("true and (false or 1 == 1.0)", true, true),
        ];
        for (src, on_gpu, on_cpu) in table {
            assert_eq!(eval(src, &gpu), Ok(on_gpu), "gpu: {src}");
            if cpu.os == "linux" {
                assert_eq!(eval(src, &cpu).map(|_| ()), Ok(()), "cpu: {src}");
            }
            if !src.contains("env.") {
                assert_eq!(eval(src, &cpu), Ok(on_cpu), "cpu: {src}");
            }
        }
    }

    #[test]
    fn type_errors_name_the_expression() {
        let e = eval("os < 3", &gpu_facts()).unwrap_err();
        assert_eq!(e.column, 4);
        assert!(e.to_string().contains("`os < 3`"), "{e}");
        assert!(e.message.contains("cannot compare string"), "{e}");
        assert!(eval("cuda.available == 'yes'", &gpu_facts()).is_err());
        assert!(eval("backend in 3", &gpu_facts()).is_err());
    }

    #[test]
    fn reports_param_names_and_serializes_as_text() {
        let e = Expr::parse("param.a > 1 or param.b").unwrap();
        assert_eq!(e.params(), vec!["a", "b"]);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            "\"param.a > 1 or param.b\""
        );
    }
}
