//! [`CaseKey`]: what identifies one case (kernel × params × backend × precision) and its stable
//! metric id `kernel/backend/precision/k=v,k=v`, used as the baseline key.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Resolved parameter values of a case, sorted by name.
pub type ParamMap = BTreeMap<String, serde_json::Value>;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CaseKey {
    pub kernel: String,
    pub backend: String,
    pub precision: String,
    pub params: BTreeMap<String, String>,
}

impl CaseKey {
    pub fn new(kernel: &str, backend: &str, precision: &str, params: &ParamMap) -> Self {
        let params = params
            .iter()
            .map(|(k, v)| (k.clone(), render_param_value(v)))
            .collect();
        Self {
            kernel: kernel.into(),
            backend: backend.into(),
            precision: precision.into(),
            params,
        }
    }

    /// `k=v,k=v` in name order; `-` when the kernel has no parameters.
    pub fn params_label(&self) -> String {
        if self.params.is_empty() {
            return "-".into();
        }
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The stable id of this case: `kernel/backend/precision/params`.
    pub fn id(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.kernel,
            self.backend,
            self.precision,
            self.params_label()
        )
    }

    /// The metric id of one statistic of this case, e.g. `.../p50_ms`.
    pub fn metric(&self, stat: &str) -> String {
        format!("{}/{stat}", self.id())
    }
}

impl fmt::Display for CaseKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

/// A parameter value in a case id: strings bare, shapes (lists of integers) as `64x64x64` like the
/// plugin API prints them, everything else as JSON (numbers in shortest form).
pub fn render_param_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(dims) if !dims.is_empty() && dims.iter().all(|d| d.is_i64()) => {
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("x")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_reads_like_the_plugin_api_prints_it() {
        let mut p = ParamMap::new();
        p.insert("grid_size".into(), serde_json::json!([64, 32, 16]));
        let key = CaseKey::new("poisson.cg", "cpu", "fp32", &p);
        assert_eq!(key.id(), "poisson.cg/cpu/fp32/grid_size=64x32x16");
    }

    #[test]
    fn id_is_sorted_and_stable() {
        let mut p = ParamMap::new();
        p.insert("tile_size".into(), 8.into());
        p.insert("kmax".into(), 32.into());
        p.insert("mode".into(), "blend".into());
        let k = CaseKey::new("tile_ops.tile_pack", "cuda", "fp16", &p);
        assert_eq!(
            k.id(),
            "tile_ops.tile_pack/cuda/fp16/kmax=32,mode=blend,tile_size=8"
        );
        assert_eq!(k.metric("p50_ms"), format!("{}/p50_ms", k.id()));
    }
}
