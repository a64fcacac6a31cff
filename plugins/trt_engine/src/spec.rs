//! The parameters of an engine case, parsed: the model path (`@models/…` is the plugin's own
//! committed models), the input shapes in the seeds' `name=AxBxC` form (`;` or `,` between
//! entries, as `--shape-case` takes them), the sweep label, and the batch dimension the user
//! names for `frames_per_s`.

use std::path::{Path, PathBuf};

use apex_plugin_api::{Params, PluginError};

/// The folder of the committed test models, as `@models/` in a path.
pub fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

/// `@models/x.onnx` → the committed model; an absolute path as is; a relative one against the
/// working directory (where `apex-host` was started), made absolute so every message names it.
pub fn resolve_path(text: &str) -> PathBuf {
    if let Some(rest) = text.strip_prefix("@models/") {
        return models_dir().join(rest);
    }
    let p = Path::new(text);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// One tensor's shape override, `name=AxBxC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeOverride {
    pub name: String,
    pub dims: Vec<usize>,
}

/// Parses `name=AxB;name2=CxD` (`,` also separates entries; the empty string is no overrides).
/// Every dimension must be > 0, every name distinct.
pub fn parse_shapes(text: &str) -> Result<Vec<ShapeOverride>, String> {
    let mut out: Vec<ShapeOverride> = Vec::new();
    for entry in text
        .split([';', ','])
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let (name, dims) = entry
            .split_once('=')
            .ok_or_else(|| format!("`{entry}` has no `=` (write name=AxBxC)"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("`{entry}` has no tensor name before `=`"));
        }
        let dims = dims
            .trim()
            .split('x')
            .map(|d| match d.trim().parse::<usize>() {
                Ok(v) if v > 0 => Ok(v),
                _ => Err(format!(
                    "`{entry}`: dimension `{d}` is not an integer > 0 (write name=AxBxC)"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!("tensor `{name}` is given twice in `{text}`"));
        }
        out.push(ShapeOverride {
            name: name.to_string(),
            dims,
        });
    }
    Ok(out)
}

/// The batch dimension the user names, `input:axis`: `frames_per_s` counts that dimension of
/// that input per query. Never guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchDim {
    pub input: String,
    pub axis: usize,
}

/// Parses `name:axis` (`name` alone means axis 0); the empty string is none.
pub fn parse_batch_dim(text: &str) -> Result<Option<BatchDim>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let (input, axis) = match text.rsplit_once(':') {
        Some((n, a)) => (
            n.trim(),
            a.trim()
                .parse::<usize>()
                .map_err(|_| format!("batch dimension `{text}`: `{a}` is not an axis index"))?,
        ),
        None => (text, 0),
    };
    if input.is_empty() {
        return Err(format!("batch dimension `{text}` names no input"));
    }
    Ok(Some(BatchDim {
        input: input.to_string(),
        axis,
    }))
}

/// Which runtime a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeChoice {
    /// By the file: `.onnx` is ONNX Runtime, anything else a serialized TensorRT engine.
    Auto,
    OnnxRuntime,
    TensorRt,
}

/// Everything an engine case's parameters say.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineSpec {
    /// As written in the parameter (empty: no engine given).
    pub engine_text: String,
    pub engine: PathBuf,
    pub shapes: Vec<ShapeOverride>,
    pub label: String,
    pub batch_dim: Option<BatchDim>,
    pub runtime: RuntimeChoice,
    /// The committed model whose f64 reference verifies the outputs (`mlp`, `fusion_gate`), or
    /// empty for an engine without one.
    pub reference: String,
}

impl EngineSpec {
    pub fn from_params(params: &Params) -> Result<Self, PluginError> {
        let engine_text = params.str("engine")?.trim().to_string();
        let shapes = parse_shapes(params.str("input_shapes")?)
            .map_err(|e| PluginError::invalid(format!("input_shapes: {e}")))?;
        let batch_dim = parse_batch_dim(params.str("batch_dim")?)
            .map_err(|e| PluginError::invalid(format!("batch_dim: {e}")))?;
        let runtime = match params.str("runtime")? {
            "auto" => RuntimeChoice::Auto,
            "onnxruntime" => RuntimeChoice::OnnxRuntime,
            "tensorrt" => RuntimeChoice::TensorRt,
            other => {
                return Err(PluginError::invalid(format!(
                    "runtime `{other}` is not one of auto, onnxruntime, tensorrt"
                )));
            }
        };
        Ok(Self {
            engine: resolve_path(&engine_text),
            engine_text,
            shapes,
            label: params.str("shape_case")?.to_string(),
            batch_dim,
            runtime,
            reference: params.str("reference")?.trim().to_string(),
        })
    }

    /// The runtime this case uses once `Auto` is decided by the file's extension.
    pub fn runtime(&self) -> RuntimeChoice {
        match self.runtime {
            RuntimeChoice::Auto => {
                let onnx = self
                    .engine
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("onnx"));
                if onnx {
                    RuntimeChoice::OnnxRuntime
                } else {
                    RuntimeChoice::TensorRt
                }
            }
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_in_the_seeds_forms() {
        let s = parse_shapes("input=1x3x128x128; mask=1x1x8x8").unwrap();
        assert_eq!(s[0].dims, vec![1, 3, 128, 128]);
        assert_eq!(s[1].name, "mask");
        assert_eq!(parse_shapes("a=2x3,b=4").unwrap().len(), 2);
        assert!(parse_shapes("").unwrap().is_empty());
        for bad in ["x", "=1x2", "x=1x0", "x=1xa", "x=1;x=2"] {
            assert!(parse_shapes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn batch_dims_name_an_input_and_an_axis() {
        assert_eq!(parse_batch_dim("").unwrap(), None);
        assert_eq!(
            parse_batch_dim("x:1").unwrap(),
            Some(BatchDim {
                input: "x".into(),
                axis: 1
            })
        );
        assert_eq!(parse_batch_dim("x").unwrap().unwrap().axis, 0);
        assert!(parse_batch_dim("x:a").is_err());
        assert!(parse_batch_dim(":1").is_err());
    }

    #[test]
    fn committed_models_resolve_under_the_crate() {
        let p = resolve_path("@models/mlp.onnx");
        assert!(p.ends_with("models/mlp.onnx") && p.is_absolute());
        assert!(resolve_path("rel/x.engine").is_absolute());
    }
}
