//! The engine flags of `apex-host run`, with the seeds' names (apex-x-kernels.md §3):
//! `--trt-engine-path`, `--trt-input-shape name=AxBx…` (repeatable), `--shape-case
//! "name=AxB;name2=CxD"` (repeatable: the engine shape sweep), `--trt-batch-dim input:axis`
//! (the dimension `frames_per_s` counts; never guessed) and `--trt-plugin-lib` (the TileSSM
//! TensorRT plugin; else `APEXX_TRT_PLUGIN_LIB`).
//!
//! They become one more configuration layer, written as bench.yaml text and read by the same
//! parser ([`EngineOpts::layer`]), above every file: with `--trt-engine-path`, the
//! `trt_engine.engine` cases are that engine, one case `default` (the `--trt-input-shape`
//! shapes) followed by one per `--shape-case`, labelled as the seed's sweep labels them,
//! `case_%03d_<the first tensor's dims, x → _>`.

use std::path::PathBuf;

use crate::config::shape_spec::{ShapeCase, ShapeSpec, parse_shape, parse_shape_case};

/// The name the layer has in configuration messages.
pub const LAYER_NAME: &str = "<command line: engine flags>";

#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Engines (trt_engine)")]
pub struct EngineOpts {
    /// The engine to benchmark: a serialized TensorRT engine, or an ONNX model (`.onnx`, run by
    /// ONNX Runtime; `@models/NAME.onnx` is one of the plugin's committed models).
    #[arg(long, value_name = "FILE")]
    pub trt_engine_path: Option<String>,
    /// An input shape, `name=AxBx…` (repeatable; one per dynamic input: a dynamic dimension
    /// without one is skipped, never taken as 1).
    #[arg(long, value_name = "NAME=AxB…", value_parser = shape)]
    pub trt_input_shape: Vec<ShapeSpec>,
    /// One case of the engine shape sweep, `"name=AxB;name2=CxD"` (`,` separates too;
    /// repeatable); each adds a case after `default`, labelled `case_%03d_<dims>`.
    #[arg(long, value_name = "SHAPES", value_parser = shape_case)]
    pub shape_case: Vec<ShapeCase>,
    /// The batch dimension `frames_per_s` counts: `input:axis` (`input` alone: axis 0).
    /// Without it there is no `frames_per_s`.
    #[arg(long, value_name = "INPUT:AXIS")]
    pub trt_batch_dim: Option<String>,
    /// The TileSSM TensorRT plugin library (else the environment's APEXX_TRT_PLUGIN_LIB).
    #[arg(long, value_name = "FILE")]
    pub trt_plugin_lib: Option<PathBuf>,
}

fn shape(s: &str) -> Result<ShapeSpec, String> {
    parse_shape(s).map_err(|e| e.to_string())
}

fn shape_case(s: &str) -> Result<ShapeCase, String> {
    parse_shape_case(s).map_err(|e| e.to_string())
}

/// A JSON string is a YAML string: paths and shapes stay one scalar whatever they hold.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The seed's sweep label: `case_001_1_3_256_256`.
pub fn label(index: usize, case: &ShapeCase) -> String {
    let dims = case.0.first().map_or(String::new(), |s| {
        s.dims
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("_")
    });
    format!("case_{index:03}_{dims}")
}

/// Each case's shapes: the `--trt-input-shape` ones, replaced by name by the case's own.
fn merged(base: &[ShapeSpec], case: &ShapeCase) -> String {
    let mut all: Vec<ShapeSpec> = base
        .iter()
        .filter(|b| !case.0.iter().any(|c| c.name == b.name))
        .cloned()
        .collect();
    all.extend(case.0.iter().cloned());
    ShapeCase(all).to_string()
}

impl EngineOpts {
    /// The flags that need an engine, given without one.
    fn orphans(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.trt_engine_path.is_none() {
            if !self.trt_input_shape.is_empty() {
                out.push("--trt-input-shape");
            }
            if !self.shape_case.is_empty() {
                out.push("--shape-case");
            }
            if self.trt_batch_dim.is_some() {
                out.push("--trt-batch-dim");
            }
        }
        out
    }

    /// The layer's YAML text, or `None` when no engine flag was given; an error for flags that
    /// need `--trt-engine-path` without it.
    pub fn layer(&self) -> Result<Option<String>, String> {
        let orphans = self.orphans();
        if !orphans.is_empty() {
            return Err(format!(
                "{} need(s) --trt-engine-path FILE (the engine whose inputs they shape)",
                orphans.join(", ")
            ));
        }
        let mut yaml = String::new();
        if let Some(engine) = &self.trt_engine_path {
            // `@models/…` is the plugin's; anything else is made absolute here, where the user
            // typed it, so every message and the case id name the same file.
            let engine = if engine.starts_with("@models/") {
                engine.clone()
            } else {
                std::path::absolute(engine)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| engine.clone())
            };
            let base = ShapeCase(self.trt_input_shape.clone()).to_string();
            let mut shapes = vec![quoted(&base)];
            let mut labels = vec![quoted("default")];
            for (i, case) in self.shape_case.iter().enumerate() {
                shapes.push(quoted(&merged(&self.trt_input_shape, case)));
                labels.push(quoted(&label(i + 1, case)));
            }
            let onnx = engine.to_ascii_lowercase().ends_with(".onnx");
            yaml.push_str(&format!(
                "- kernel: trt_engine.engine\n  problem_size:\n    engine: {}\n    input_shapes: [{}]\n    shape_case: [{}]\n    batch_dim: {}\n    runtime: auto\n    reference: \"\"\n  zip: [input_shapes, shape_case]\n  backends: [{}]\n",
                quoted(&engine),
                shapes.join(", "),
                labels.join(", "),
                quoted(self.trt_batch_dim.as_deref().unwrap_or("")),
                if onnx { "cpu, trt" } else { "trt" },
            ));
        }
        if let Some(lib) = &self.trt_plugin_lib {
            let lib = std::path::absolute(lib).unwrap_or_else(|_| lib.clone());
            yaml.push_str(&format!(
                "- kernel: trt_engine.tilessm_plugin\n  problem_size:\n    plugin_lib: {}\n",
                quoted(&lib.display().to_string())
            ));
        }
        Ok((!yaml.is_empty()).then_some(yaml))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(engine: Option<&str>, shapes: &[&str], cases: &[&str]) -> EngineOpts {
        EngineOpts {
            trt_engine_path: engine.map(str::to_string),
            trt_input_shape: shapes.iter().map(|s| parse_shape(s).unwrap()).collect(),
            shape_case: cases.iter().map(|s| parse_shape_case(s).unwrap()).collect(),
            ..EngineOpts::default()
        }
    }

    #[test]
    fn labels_are_the_seeds() {
        let c = parse_shape_case("input=1x3x256x256;mask=1x1x8x8").unwrap();
        assert_eq!(label(1, &c), "case_001_1_3_256_256");
        assert_eq!(label(12, &c), "case_012_1_3_256_256");
    }

    #[test]
    fn the_layer_is_a_zipped_sweep_default_first() {
        let y = opts(
            Some("/e/model.onnx"),
            &["x=4x32"],
            &["x=8x32", "x=16x32,y=2"],
        )
        .layer()
        .unwrap()
        .unwrap();
        assert!(y.contains(r#"engine: "/e/model.onnx""#), "{y}");
        assert!(
            y.contains(r#"input_shapes: ["x=4x32", "x=8x32", "x=16x32;y=2"]"#),
            "{y}"
        );
        assert!(
            y.contains(r#"shape_case: ["default", "case_001_8_32", "case_002_16_32"]"#),
            "{y}"
        );
        assert!(y.contains("backends: [cpu, trt]"), "{y}");
        let trt = opts(Some("/e/a.engine"), &[], &[])
            .layer()
            .unwrap()
            .unwrap();
        assert!(trt.contains("backends: [trt]"), "{trt}");
    }

    #[test]
    fn shape_flags_without_an_engine_are_an_error() {
        let e = opts(None, &["x=1"], &[]).layer().unwrap_err();
        assert!(
            e.contains("--trt-input-shape") && e.contains("--trt-engine-path"),
            "{e}"
        );
        assert_eq!(opts(None, &[], &[]).layer().unwrap(), None);
    }
}
