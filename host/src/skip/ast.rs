//! The syntax tree of a parsed skip condition: [`Node`]s over [`Fact`]s and literal [`Value`]s.
//! Every node keeps the column it starts at, so an evaluation error can point into the text.

use super::value::Value;

/// A name the expression may read. The set is closed: anything else is a parse error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fact {
    CudaAvailable,
    CudaDeviceCount,
    CudaComputeCapability,
    CudaDriverVersion,
    CudaDeviceName,
    NvmlAvailable,
    TrtAvailable,
    Os,
    Arch,
    /// `env.NAME`: the environment variable's value, or null when unset.
    Env(String),
    Backend,
    Precision,
    /// `param.NAME`: the case's resolved parameter, or null when the kernel has no such parameter.
    Param(String),
}

/// The fixed fact names, with the type each one evaluates to (for docs and hints).
pub const FIXED_FACTS: [(&str, &str); 11] = [
    ("cuda.available", "bool"),
    ("cuda.device_count", "number"),
    ("cuda.compute_capability", "number or null (e.g. 9.0)"),
    ("cuda.driver_version", "string or null (e.g. \"13.0\")"),
    ("cuda.device_name", "string or null"),
    ("nvml.available", "bool"),
    ("trt.available", "bool"),
    ("os", "string (e.g. \"linux\")"),
    ("arch", "string (e.g. \"x86_64\")"),
    ("backend", "string: cpu, cuda or trt"),
    ("precision", "string: fp32, fp16, bf16 or fp8"),
];

impl Fact {
    /// Resolves a dotted name (`["cuda", "available"]`) to a fact.
    pub(crate) fn from_path(parts: &[String]) -> Option<Fact> {
        let strs: Vec<&str> = parts.iter().map(String::as_str).collect();
        Some(match strs.as_slice() {
            ["cuda", "available"] => Fact::CudaAvailable,
            ["cuda", "device_count"] => Fact::CudaDeviceCount,
            ["cuda", "compute_capability"] => Fact::CudaComputeCapability,
            ["cuda", "driver_version"] => Fact::CudaDriverVersion,
            ["cuda", "device_name"] => Fact::CudaDeviceName,
            ["nvml", "available"] => Fact::NvmlAvailable,
            ["trt", "available"] => Fact::TrtAvailable,
            ["os"] => Fact::Os,
            ["arch"] => Fact::Arch,
            ["backend"] => Fact::Backend,
            ["precision"] => Fact::Precision,
            ["env", name] => Fact::Env((*name).to_string()),
            ["param", name] => Fact::Param((*name).to_string()),
            _ => return None,
        })
    }

    pub fn name(&self) -> String {
        match self {
            Fact::CudaAvailable => "cuda.available".into(),
            Fact::CudaDeviceCount => "cuda.device_count".into(),
            Fact::CudaComputeCapability => "cuda.compute_capability".into(),
            Fact::CudaDriverVersion => "cuda.driver_version".into(),
            Fact::CudaDeviceName => "cuda.device_name".into(),
            Fact::NvmlAvailable => "nvml.available".into(),
            Fact::TrtAvailable => "trt.available".into(),
            Fact::Os => "os".into(),
            Fact::Arch => "arch".into(),
            Fact::Env(n) => format!("env.{n}"),
            Fact::Backend => "backend".into(),
            Fact::Precision => "precision".into(),
            Fact::Param(n) => format!("param.{n}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Lit {
        value: Value,
        col: usize,
    },
    Fact {
        fact: Fact,
        col: usize,
    },
    Not {
        inner: Box<Node>,
        col: usize,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cmp {
        op: CmpOp,
        lhs: Box<Node>,
        rhs: Box<Node>,
        col: usize,
    },
}

impl Node {
    /// Visits every fact the expression reads.
    pub(crate) fn facts<'a>(&'a self, out: &mut Vec<&'a Fact>) {
        match self {
            Node::Lit { .. } => {}
            Node::Fact { fact, .. } => out.push(fact),
            Node::Not { inner, .. } => inner.facts(out),
            Node::And(a, b) | Node::Or(a, b) => {
                a.facts(out);
                b.facts(out);
            }
            Node::Cmp { lhs, rhs, .. } => {
                lhs.facts(out);
                rhs.facts(out);
            }
        }
    }
}
