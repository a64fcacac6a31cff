//! [`KernelInfo`]: a kernel's descriptor as plain Rust data, copied out of the plugin once at load
//! time, plus where it came from. Everything after discovery uses this, never the FFI types.

use apex_plugin_api::{Backend, Precision, Tolerance};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A declared parameter with its default (as JSON: integer, float, bool or string).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamInfo {
    pub name: String,
    pub default: serde_json::Value,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelInfo {
    pub id: String,
    pub description: String,
    #[serde(with = "backend_names")]
    pub backends: Vec<Backend>,
    #[serde(with = "precision_names")]
    pub precisions: Vec<Precision>,
    pub params: Vec<ParamInfo>,
    /// Declared default tolerance per precision name (`fp16` → {atol, rtol, rmse, max_mismatch_ratio}).
    pub tolerances: BTreeMap<String, BTreeMap<String, f64>>,
    pub graph_capturable: bool,
    /// The plugin (Cargo package name) and the library file it was loaded from.
    pub plugin: String,
    pub library: PathBuf,
    /// The crate directory, when the plugin was found as a crate under `plugins/`.
    pub crate_dir: Option<PathBuf>,
}

impl KernelInfo {
    /// The declared default tolerance for `precision`.
    pub fn tolerance(&self, precision: Precision) -> Tolerance {
        match self.tolerances.get(precision.as_str()) {
            Some(t) => Tolerance {
                atol: t.get("atol").copied().unwrap_or(0.0),
                rtol: t.get("rtol").copied().unwrap_or(0.0),
                rmse: t.get("rmse").copied().unwrap_or(0.0),
                max_mismatch_ratio: t.get("max_mismatch_ratio").copied().unwrap_or(0.0),
            },
            None => Tolerance::default_for(precision),
        }
    }
}

/// Tolerance as the name → value map used in JSON and `bench.yaml`.
pub fn tolerance_map(t: &Tolerance) -> BTreeMap<String, f64> {
    BTreeMap::from([
        ("atol".to_string(), t.atol),
        ("rtol".to_string(), t.rtol),
        ("rmse".to_string(), t.rmse),
        ("max_mismatch_ratio".to_string(), t.max_mismatch_ratio),
    ])
}

mod backend_names {
    use apex_plugin_api::Backend;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[Backend], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|b| b.as_str()))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Backend>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|s| {
                Backend::parse(s).ok_or_else(|| D::Error::custom(format!("unknown backend `{s}`")))
            })
            .collect()
    }
}

mod precision_names {
    use apex_plugin_api::Precision;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[Precision], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|p| p.as_str()))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Precision>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|s| {
                Precision::parse(s)
                    .ok_or_else(|| D::Error::custom(format!("unknown precision `{s}`")))
            })
            .collect()
    }
}
