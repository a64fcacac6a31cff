//! [`AnchorRow`]: one line of an anchor file, validated. The raw line is JSON; this is the
//! checked shape the matcher works with. Fields (`docs/anchors.md`):
//!
//! | field | required | meaning |
//! | --- | --- | --- |
//! | `kernel` | yes | our kernel id, e.g. `tile_ssm.forward` |
//! | `impl` | yes | the other implementation, e.g. `torch_compile` |
//! | `params` | yes | our bench.yaml parameter names → values (a subset of the case's) |
//! | `precision` | yes | `fp32`, `fp16`, `bf16` or `fp8` |
//! | `backend` | yes | `cpu`, `cuda` or `trt` |
//! | `us_per_call` | one of the two, unless `error` | the time per call in µs (canonical) |
//! | `ms` | | the time per call in ms (accepted; must agree with `us_per_call` when both are given) |
//! | `error` | | why there is no time (the implementation failed or was skipped) |
//! | `gbps`, `device`, `note`, `cache` | no | shown beside the time; `cache` is `dram_cold` or `l2_hot` |
//!
//! Any other key is allowed and ignored: the scripts keep their own detail.

use apex_plugin_api::{Backend, Precision};
use serde_json::{Map, Value};

/// The largest relative difference tolerated between `us_per_call` and `ms` × 1000 when a row
/// gives both (rounding in the script).
const TIME_AGREEMENT: f64 = 1e-3;

/// One anchor row, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorRow {
    pub kernel: String,
    pub implementation: String,
    pub params: Map<String, Value>,
    pub precision: String,
    pub backend: String,
    /// Microseconds per call; `None` only when `error` says why.
    pub us_per_call: Option<f64>,
    pub gbps: Option<f64>,
    pub device: Option<String>,
    pub note: Option<String>,
    pub cache: Option<String>,
    pub error: Option<String>,
}

/// What is wrong with one field of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

impl FieldError {
    fn new(field: &str, problem: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl AnchorRow {
    /// Checks one parsed line against the schema.
    pub fn from_json(value: &Value) -> Result<Self, FieldError> {
        let Value::Object(obj) = value else {
            return Err(FieldError::new("<row>", "is not a JSON object"));
        };
        let kernel = required_str(obj, "kernel")?;
        let implementation = required_str(obj, "impl")?;
        let params = match obj.get("params") {
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(FieldError::new("params", "must be an object")),
            None => return Err(missing("params")),
        };
        for (name, v) in &params {
            if !is_param_value(v) {
                return Err(FieldError::new(
                    &format!("params.{name}"),
                    "must be a string, a number, a boolean or a list of integers (a shape)",
                ));
            }
        }
        let precision = required_str(obj, "precision")?;
        if Precision::parse(&precision).is_none() {
            return Err(FieldError::new(
                "precision",
                format!(
                    "is `{precision}`; expected one of fp32, fp16, bf16, fp8 (an f64 solve is \
                     precision fp32 with its kernel's f64 parameter)"
                ),
            ));
        }
        let backend = required_str(obj, "backend")?;
        if Backend::parse(&backend).is_none() {
            return Err(FieldError::new(
                "backend",
                format!("is `{backend}`; expected one of cpu, cuda, trt"),
            ));
        }
        let error = optional_str(obj, "error")?;
        let us = positive(obj, "us_per_call")?;
        let ms = positive(obj, "ms")?;
        let us_per_call = match (us, ms) {
            (Some(us), Some(ms)) => {
                if (us - ms * 1e3).abs() > TIME_AGREEMENT * us {
                    return Err(FieldError::new(
                        "ms",
                        format!(
                            "is {ms} but `us_per_call` is {us}; they must agree (ms = \
                             us_per_call / 1000)"
                        ),
                    ));
                }
                Some(us)
            }
            (Some(us), None) => Some(us),
            (None, Some(ms)) => Some(ms * 1e3),
            (None, None) => None,
        };
        if us_per_call.is_none() && error.is_none() {
            return Err(FieldError::new(
                "us_per_call",
                "is missing (give `us_per_call` or `ms`; a row without a time needs an `error` \
                 that says why)",
            ));
        }
        let cache = optional_str(obj, "cache")?;
        if let Some(c) = &cache
            && c != "dram_cold"
            && c != "l2_hot"
        {
            return Err(FieldError::new(
                "cache",
                format!("is `{c}`; expected dram_cold or l2_hot"),
            ));
        }
        Ok(Self {
            kernel,
            implementation,
            params,
            precision,
            backend,
            us_per_call,
            gbps: non_negative(obj, "gbps")?,
            device: optional_str(obj, "device")?,
            note: optional_str(obj, "note")?,
            cache,
            error,
        })
    }
}

fn missing(field: &str) -> FieldError {
    FieldError::new(field, "is missing")
}

fn required_str(obj: &Map<String, Value>, field: &str) -> Result<String, FieldError> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(missing(field)),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(FieldError::new(field, "is empty")),
        Some(_) => Err(FieldError::new(field, "must be a string")),
    }
}

fn optional_str(obj: &Map<String, Value>, field: &str) -> Result<Option<String>, FieldError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(FieldError::new(field, "must be a string")),
    }
}

fn number(obj: &Map<String, Value>, field: &str) -> Result<Option<f64>, FieldError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| FieldError::new(field, "must be a finite number")),
        Some(_) => Err(FieldError::new(field, "must be a number")),
    }
}

fn positive(obj: &Map<String, Value>, field: &str) -> Result<Option<f64>, FieldError> {
    match number(obj, field)? {
        Some(x) if x <= 0.0 => Err(FieldError::new(
            field,
            format!("is {x}; a time per call must be above 0"),
        )),
        other => Ok(other),
    }
}

fn non_negative(obj: &Map<String, Value>, field: &str) -> Result<Option<f64>, FieldError> {
    match number(obj, field)? {
        Some(x) if x < 0.0 => Err(FieldError::new(field, format!("is {x}; must be >= 0"))),
        other => Ok(other),
    }
}

fn is_param_value(v: &Value) -> bool {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
        Value::Array(dims) => !dims.is_empty() && dims.iter().all(Value::is_i64),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"kernel": "tile_ssm.forward", "impl": "numpy", "params": {"batch": 1, "steps": 256},
               "precision": "fp16", "backend": "cpu", "us_per_call": 846.96, "gbps": 0.1575})
    }

    fn with(key: &str, v: Value) -> Value {
        let mut row = base();
        row[key] = v;
        row
    }

    fn without(key: &str) -> Value {
        let mut row = base();
        row.as_object_mut().unwrap().remove(key);
        row
    }

    fn field_of(v: &Value) -> String {
        AnchorRow::from_json(v).unwrap_err().field
    }

    #[test]
    fn a_complete_row_reads() {
        let r = AnchorRow::from_json(&base()).unwrap();
        assert_eq!(r.kernel, "tile_ssm.forward");
        assert_eq!(r.implementation, "numpy");
        assert_eq!(r.us_per_call, Some(846.96));
        assert_eq!(r.gbps, Some(0.1575));
        assert_eq!(r.params["steps"], json!(256));
    }

    #[test]
    fn ms_is_accepted_and_converted_to_microseconds() {
        let r = AnchorRow::from_json(&with("ms", json!(0.84696))).unwrap();
        assert_eq!(r.us_per_call, Some(846.96));
        let mut only_ms = without("us_per_call");
        only_ms["ms"] = json!(1.5);
        assert_eq!(
            AnchorRow::from_json(&only_ms).unwrap().us_per_call,
            Some(1500.0)
        );
    }

    #[test]
    fn us_and_ms_that_disagree_are_an_error_on_ms() {
        let e = AnchorRow::from_json(&with("ms", json!(8.4696))).unwrap_err();
        assert_eq!(e.field, "ms");
        assert!(e.problem.contains("must agree"), "{}", e.problem);
    }

    #[test]
    fn each_required_field_is_named_when_missing() {
        for f in ["kernel", "impl", "params", "precision", "backend"] {
            assert_eq!(field_of(&without(f)), f);
        }
        assert_eq!(field_of(&without("us_per_call")), "us_per_call");
    }

    #[test]
    fn a_row_with_an_error_needs_no_time() {
        let mut row = without("us_per_call");
        row["error"] = json!("skipped: torch.compile would trace a 4096-step loop");
        let r = AnchorRow::from_json(&row).unwrap();
        assert_eq!(r.us_per_call, None);
        assert!(r.error.unwrap().starts_with("skipped"));
        row["us_per_call"] = Value::Null;
        assert!(AnchorRow::from_json(&row).is_ok());
    }

    #[test]
    fn wrong_values_name_their_field() {
        assert_eq!(field_of(&with("precision", json!("fp64"))), "precision");
        assert_eq!(field_of(&with("backend", json!("gpu"))), "backend");
        assert_eq!(field_of(&with("us_per_call", json!(-1.0))), "us_per_call");
        assert_eq!(field_of(&with("us_per_call", json!("12"))), "us_per_call");
        assert_eq!(field_of(&with("cache", json!("warm"))), "cache");
        assert_eq!(field_of(&with("gbps", json!(-3))), "gbps");
        assert_eq!(field_of(&with("kernel", json!(""))), "kernel");
        assert_eq!(field_of(&with("params", json!([1, 2]))), "params");
        assert_eq!(
            field_of(&with("params", json!({"grid_size": {"x": 1}}))),
            "params.grid_size"
        );
        assert_eq!(field_of(&json!([1])), "<row>");
    }

    #[test]
    fn shapes_and_other_keys_are_allowed() {
        let mut row = with(
            "params",
            json!({"grid_size": [64, 64, 64], "f64_solve": true}),
        );
        row["iterations"] = json!(89);
        row["cache"] = json!("dram_cold");
        let r = AnchorRow::from_json(&row).unwrap();
        assert_eq!(r.cache.as_deref(), Some("dram_cold"));
    }
}
