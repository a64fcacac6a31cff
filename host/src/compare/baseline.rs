//! [`Baseline`]: the committed baseline file (seed format, `baselines/*.json`), its defaults, and
//! loading from disk. Machine-written, so unknown keys are tolerated.
//!
//! ```json
//! {"schema_version": 1, "suite": "apex_bench", "baseline_notes": "...", "required_status": "ok",
//!  "metrics": {"tile_ops.tile_pack/cpu/fp32/kmax=32,tile_size=8/p50_ms":
//!      {"value_ms": 0.25, "max_regression_ratio": 0.75, "max_regression_abs_ms": 2.0}}}
//! ```
//!
//! A baseline can also be built from a run summary ([`Baseline::from_run`]); then it carries
//! that run as its *reference*, whose raw samples enable the two-sample verdicts.
//!
//! A **seed-style baseline** has the same layout with the seeds' own keys instead of metric ids:
//! seed 000's dotted paths into the GPU report (`benchmarks.tile_ops.tilepack.dispatch.p50_ms`)
//! or seed 001's flat CPU keys (`tile_pack_p50_ms`). [`Baseline::seed_keys`] records which; the
//! gate resolves each key through the matching export (`report::exports::seed_keys`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::CompareError;
use super::template::{TemplateOptions, emit_template};
use crate::model::RunSummary;
use crate::report::exports::seed_keys::SeedExport;

pub const BASELINE_SCHEMA_VERSION: u32 = 1;

/// The seeds' defaults when a metric omits a tolerance.
pub const DEFAULT_MAX_REGRESSION_RATIO: f64 = 0.50;
pub const DEFAULT_MAX_REGRESSION_ABS_MS: f64 = 0.0;

fn default_ratio() -> f64 {
    DEFAULT_MAX_REGRESSION_RATIO
}

fn default_abs() -> f64 {
    DEFAULT_MAX_REGRESSION_ABS_MS
}

fn default_schema() -> u32 {
    BASELINE_SCHEMA_VERSION
}

/// One baselined metric and its tolerances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BaselineMetric {
    pub value_ms: f64,
    #[serde(default = "default_ratio")]
    pub max_regression_ratio: f64,
    #[serde(default = "default_abs")]
    pub max_regression_abs_ms: f64,
}

impl BaselineMetric {
    /// `value_ms * (1 + max_regression_ratio) + max_regression_abs_ms`.
    pub fn allowed_max_ms(&self) -> f64 {
        super::rule::allowed_max(
            self.value_ms,
            self.max_regression_ratio,
            self.max_regression_abs_ms,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    #[serde(default = "default_schema")]
    pub schema_version: u32,
    #[serde(default)]
    pub suite: String,
    #[serde(default)]
    pub baseline_notes: String,
    /// When set, the run's overall `status` must equal it (the seeds' GPU/TRT `__status__` check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_status: Option<String>,
    /// The commit whose build the values were measured from: the build to run on another
    /// machine before gating there with `compare --rebase` ([`super::rebase`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_commit: Option<String>,
    /// Metric id (`CaseKey::metric`), or a seed key (see [`Baseline::seed_keys`]), to value and
    /// tolerances.
    pub metrics: BTreeMap<String, BaselineMetric>,
    /// When the keys are a seed export's keys rather than metric ids: which export. Set by
    /// [`Baseline::parse`] from the keys themselves.
    #[serde(skip)]
    pub seed_keys: Option<SeedExport>,
    /// The run this baseline was built from, when it was built from a run summary: its raw
    /// samples (if saved with `--save-samples`) feed the two-sample verdicts.
    #[serde(skip)]
    pub reference: Option<Box<RunSummary>>,
}

impl Baseline {
    /// Parses a baseline file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Self, CompareError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            CompareError::parse(
                origin,
                "a baseline is JSON; regenerate it with `apex-host baseline emit`",
                e,
            )
        })?;
        if value.get("benchmarks").is_some() && value.get("metrics").is_none() {
            let run: RunSummary = serde_json::from_value(value).map_err(|e| {
                CompareError::parse(
                    origin,
                    "this looks like a run summary but does not match `summary.json`'s format",
                    e,
                )
            })?;
            return Ok(Self::from_run(run, &TemplateOptions::default()));
        }
        let mut baseline: Baseline = serde_json::from_str(text).map_err(|e| {
            CompareError::parse(
                origin,
                "expected {schema_version, suite, baseline_notes, metrics: {KEY: {value_ms, max_regression_ratio, max_regression_abs_ms}}}",
                e,
            )
        })?;
        baseline.validate(origin)?;
        baseline.seed_keys =
            SeedExport::of_keys(baseline.metrics.keys().map(String::as_str)).map_err(|detail| {
                CompareError::InvalidBaseline {
                    path: origin.to_path_buf(),
                    detail,
                    hint: "keys are `CaseKey::metric` ids, e.g. `tile_ops.tile_pack/cpu/fp32/kmax=32,tile_size=8/p50_ms` (regenerate with `apex-host baseline emit`), or all of them keys of one seed export (README, \"Exports\")".into(),
                }
            })?;
        Ok(baseline)
    }

    /// Reads and parses `path`: a baseline file, or a run's `summary.json` (then the baseline is
    /// the run's template with default tolerances, and the run is kept as the reference).
    pub fn load(path: &Path) -> Result<Self, CompareError> {
        let text = std::fs::read_to_string(path).map_err(|e| CompareError::read(path, e))?;
        Self::parse(&text, path)
    }

    /// A baseline from a run: its template ([`emit_template`]) plus the run as reference.
    pub fn from_run(run: RunSummary, opts: &TemplateOptions) -> Self {
        let mut baseline = emit_template(&run, opts).baseline;
        baseline.reference = Some(Box::new(run));
        baseline
    }

    /// The metric id `key` names in `run`: the key itself, or for a seed-style baseline the
    /// case the matching export fills it from (else why the export has no number there).
    pub(crate) fn metric_id(&self, run: &RunSummary, key: &str) -> Result<String, String> {
        match self.seed_keys {
            Some(seed) => seed
                .resolve(run, key)
                .map_err(|reason| format!("{}: {reason}", seed.format_name())),
            None => Ok(key.to_string()),
        }
    }

    /// Attaches a reference run (for example the run the baseline file was emitted from).
    pub fn with_reference(mut self, run: RunSummary) -> Self {
        self.reference = Some(Box::new(run));
        self
    }

    fn validate(&self, origin: &Path) -> Result<(), CompareError> {
        for (key, m) in &self.metrics {
            let bad = |what: &str, v: f64| CompareError::InvalidBaseline {
                path: origin.to_path_buf(),
                detail: format!("metrics.\"{key}\".{what} is {v}, expected a finite number >= 0"),
                hint: format!("fix `{what}` of `{key}` or remove the metric"),
            };
            if !(m.value_ms.is_finite() && m.value_ms >= 0.0) {
                return Err(bad("value_ms", m.value_ms));
            }
            if !(m.max_regression_ratio.is_finite() && m.max_regression_ratio >= 0.0) {
                return Err(bad("max_regression_ratio", m.max_regression_ratio));
            }
            if !(m.max_regression_abs_ms.is_finite() && m.max_regression_abs_ms >= 0.0) {
                return Err(bad("max_regression_abs_ms", m.max_regression_abs_ms));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_when_tolerances_are_absent() {
        let b = Baseline::parse(
            r#"{"schema_version":1,"suite":"s","baseline_notes":"n","metrics":{"k/cpu/fp32/-/p50_ms":{"value_ms":2.0}}}"#,
            Path::new("b.json"),
        )
        .unwrap();
        let m = b.metrics["k/cpu/fp32/-/p50_ms"];
        assert_eq!(
            (m.max_regression_ratio, m.max_regression_abs_ms),
            (0.5, 0.0)
        );
        assert_eq!(m.allowed_max_ms(), 3.0);
        assert!(b.required_status.is_none());
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let err = Baseline::parse(
            "{\n  \"metrics\": {\n    \"a\": {\"value_ms\": \"x\"}}}",
            Path::new("baselines/cpu.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("baselines/cpu.json") && err.contains("3:"),
            "{err}"
        );
        assert!(err.contains("hint:"), "{err}");
        let err = Baseline::parse(
            r#"{"metrics":{"k/cpu/fp32/-/p50_ms":{"value_ms":-1}}}"#,
            Path::new("b.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("value_ms is -1"), "{err}");
    }

    #[test]
    fn seed_baselines_are_recognized_by_their_keys() {
        // seeds/001's CPU example, verbatim in shape.
        let b = Baseline::parse(
            r#"{"schema_version":1,"suite":"apex_x_cpu_perf_regression","baseline_notes":"CPU baseline with tolerant thresholds for CI variance.","metrics":{"infer_p50_ms":{"value_ms":0.24996,"max_regression_ratio":0.75,"max_regression_abs_ms":2.0},"tile_pack_p50_ms":{"value_ms":0.458}}}"#,
            Path::new("perf_baseline_cpu.json"),
        )
        .unwrap();
        assert_eq!(b.seed_keys, Some(SeedExport::ApexXCpu));
        let err = Baseline::parse(
            r#"{"metrics":{"tile_pack_p50_ms":{"value_ms":1},"tile_pack_p90_ms":{"value_ms":1}}}"#,
            Path::new("b.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("b.json") && err.contains("`tile_pack_p90_ms`") && err.contains("hint:"),
            "{err}"
        );
    }
}
