//! The release attestation (`spec/apex-x-kernels.md` §4.6): every release artifact with its
//! SHA-256, every release gate with its evidence, and an overall status.
//!
//! Gate statuses come from real outputs: [`gate_from_compare`] reads a `compare_summary.json`,
//! [`parity_gate_from_run`] reads a run's accuracy results. Nothing is `PASS` unless evidence
//! says so; a gate nobody set stays `PENDING`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::AttestError;
use super::canonical::hash_file_sha256;
use crate::model::{CaseStatus, RunSummary};

pub const ATTESTATION_SCHEMA_VERSION: u32 = 1;

/// A gate's or an artifact's status, written as the seeds write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EvidenceStatus {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
    #[serde(rename = "PENDING")]
    Pending,
    #[serde(rename = "N/A")]
    NotApplicable,
}

impl EvidenceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
            Self::Pending => "PENDING",
            Self::NotApplicable => "N/A",
        }
    }
}

impl std::str::FromStr for EvidenceStatus {
    type Err = AttestError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "PASS" => Ok(Self::Pass),
            "FAIL" => Ok(Self::Fail),
            "PENDING" => Ok(Self::Pending),
            "N/A" | "NA" => Ok(Self::NotApplicable),
            _ => Err(AttestError::BadArgument {
                what: "gate status",
                value: s.into(),
                hint: "use PASS, FAIL, PENDING or N/A".into(),
            }),
        }
    }
}

/// An artifact the release is expected to carry.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactSpec {
    pub key: String,
    pub label: String,
    pub path: PathBuf,
    pub producer: String,
    pub required: bool,
}

/// The artifacts of an apex-bench release, under `reports_dir`:
/// `(key, label, file, producer, required)`.
pub const DEFAULT_ARTIFACTS: &[(&str, &str, &str, &str, bool)] = &[
    (
        "run_summary",
        "Run summary",
        "summary.json",
        "apex-host run",
        true,
    ),
    (
        "environment",
        "Environment snapshot",
        "env.json",
        "apex-host run",
        true,
    ),
    (
        "kernel_manifest",
        "Kernel manifest",
        "kernel_manifest.json",
        "apex-host run",
        true,
    ),
    (
        "replay_manifest",
        "Replay manifest",
        "replay_manifest.json",
        "apex-host run",
        true,
    ),
    (
        "compare_summary",
        "Regression gate summary",
        "compare_summary.json",
        "apex-host compare / run --compare",
        true,
    ),
    (
        "trend",
        "Normalized trend artifact",
        "trend.json",
        "apex-host compare / run --compare",
        true,
    ),
    (
        "regressions",
        "Regression report",
        "regressions.md",
        "apex-host compare / run --compare",
        false,
    ),
    (
        "summary_markdown",
        "Run report",
        "summary.md",
        "apex-host run",
        false,
    ),
];

/// [`DEFAULT_ARTIFACTS`] resolved under `reports_dir`.
pub fn default_artifacts(reports_dir: &Path) -> Vec<ArtifactSpec> {
    DEFAULT_ARTIFACTS
        .iter()
        .map(|(key, label, file, producer, required)| ArtifactSpec {
            key: (*key).into(),
            label: (*label).into(),
            path: reports_dir.join(file),
            producer: (*producer).into(),
            required: *required,
        })
        .collect()
}

/// The release gates `(key, label)`, in report order (the seeds' seven).
pub const GATES: &[(&str, &str)] = &[
    ("lint_type_tests", "Lint, type checks and tests"),
    ("cpu_perf_regression", "CPU performance regression"),
    ("gpu_perf_regression", "GPU performance regression"),
    (
        "runtime_backend_parity",
        "Runtime backend parity (accuracy)",
    ),
    (
        "runtime_capability_transparency",
        "Runtime capability transparency",
    ),
    ("security_review", "Security review"),
    ("documentation_sync", "Documentation sync"),
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    pub key: String,
    pub label: String,
    pub path: String,
    pub producer: String,
    pub required: bool,
    pub exists: bool,
    pub sha256: Option<String>,
    pub size_bytes: Option<u64>,
    pub status: EvidenceStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    pub key: String,
    pub label: String,
    pub evidence: String,
    pub status: EvidenceStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseMetadata {
    pub release_tag: String,
    pub commit_sha: String,
    pub build_date_utc: String,
    pub release_owner: String,
    /// `cpu`, `cuda` or `trt`.
    pub runtime_target: String,
    pub ci_run_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttestationSummary {
    /// `fail` if a required artifact is missing or a gate is FAIL, else `pending` if a gate is
    /// PENDING, else `pass`.
    pub overall_status: &'static str,
    pub required_artifacts_total: usize,
    pub required_artifacts_passed: usize,
    pub required_artifacts_failed: usize,
    pub gates_total: usize,
    pub gates_passed: usize,
    pub gates_failed: usize,
    pub gates_pending: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReleaseAttestation {
    pub schema_version: u32,
    pub generated_at_utc: String,
    pub release_metadata: ReleaseMetadata,
    pub artifacts: Vec<ArtifactRecord>,
    pub gates: Vec<GateRecord>,
    pub summary: AttestationSummary,
}

impl ReleaseAttestation {
    /// Whether `--strict` fails: a required artifact is missing or a gate is FAIL.
    pub fn strict_failure(&self) -> bool {
        self.summary.required_artifacts_failed > 0 || self.summary.gates_failed > 0
    }
}

/// One gate's status and evidence, as given by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct GateInput {
    pub status: EvidenceStatus,
    pub evidence: String,
}

/// Everything an attestation is built from. `generated_at_utc` is passed in (the library reads
/// no clock), which also makes golden tests possible.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseInput {
    pub generated_at_utc: String,
    pub metadata: ReleaseMetadata,
    pub artifacts: Vec<ArtifactSpec>,
    /// Gate key to status and evidence; gates not named are `PENDING` with evidence `pending`.
    pub gates: BTreeMap<String, GateInput>,
}

/// Hashes every artifact and assembles the attestation. Unknown gate keys are an error.
pub fn build_release_attestation(input: &ReleaseInput) -> Result<ReleaseAttestation, AttestError> {
    if let Some(unknown) = input
        .gates
        .keys()
        .find(|k| !GATES.iter().any(|(g, _)| g == k))
    {
        return Err(AttestError::BadArgument {
            what: "gate key",
            value: unknown.clone(),
            hint: format!(
                "known gates: {}",
                GATES.iter().map(|(g, _)| *g).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let mut artifacts = Vec::new();
    for spec in &input.artifacts {
        let (exists, sha256, size_bytes) = match hash_file_sha256(&spec.path) {
            Ok((sha, size)) => (true, Some(sha), Some(size)),
            Err(AttestError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                (false, None, None)
            }
            Err(e) => return Err(e),
        };
        let status = match (exists, spec.required) {
            (true, _) => EvidenceStatus::Pass,
            (false, true) => EvidenceStatus::Fail,
            (false, false) => EvidenceStatus::NotApplicable,
        };
        artifacts.push(ArtifactRecord {
            key: spec.key.clone(),
            label: spec.label.clone(),
            path: spec.path.to_string_lossy().into_owned(),
            producer: spec.producer.clone(),
            required: spec.required,
            exists,
            sha256,
            size_bytes,
            status,
        });
    }
    let gates: Vec<GateRecord> = GATES
        .iter()
        .map(|(key, label)| {
            let given = input.gates.get(*key);
            GateRecord {
                key: (*key).into(),
                label: (*label).into(),
                evidence: given.map_or_else(|| "pending".into(), |g| g.evidence.clone()),
                status: given.map_or(EvidenceStatus::Pending, |g| g.status),
            }
        })
        .collect();
    let required: Vec<&ArtifactRecord> = artifacts.iter().filter(|a| a.required).collect();
    let required_artifacts_passed = required.iter().filter(|a| a.exists).count();
    let count = |s| gates.iter().filter(|g| g.status == s).count();
    let (gates_passed, gates_failed, gates_pending) = (
        count(EvidenceStatus::Pass),
        count(EvidenceStatus::Fail),
        count(EvidenceStatus::Pending),
    );
    let required_artifacts_failed = required.len() - required_artifacts_passed;
    let overall_status = if required_artifacts_failed > 0 || gates_failed > 0 {
        "fail"
    } else if gates_pending > 0 {
        "pending"
    } else {
        "pass"
    };
    Ok(ReleaseAttestation {
        schema_version: ATTESTATION_SCHEMA_VERSION,
        generated_at_utc: input.generated_at_utc.clone(),
        release_metadata: input.metadata.clone(),
        summary: AttestationSummary {
            overall_status,
            required_artifacts_total: required.len(),
            required_artifacts_passed,
            required_artifacts_failed,
            gates_total: gates.len(),
            gates_passed,
            gates_failed,
            gates_pending,
        },
        artifacts,
        gates,
    })
}

/// A gate from a `compare_summary.json`: `pass` → PASS, `fail` → FAIL, with the file's hash and
/// its counts as evidence.
pub fn gate_from_compare(path: &Path) -> Result<GateInput, AttestError> {
    let text = std::fs::read_to_string(path).map_err(|source| AttestError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        AttestError::parse(
            path,
            "pass the `compare_summary.json` written by `apex-host compare`",
            e,
        )
    })?;
    let not_summary = |detail: &str| AttestError::NotACompareSummary {
        path: path.to_path_buf(),
        detail: detail.into(),
    };
    let status = match v.get("status").and_then(|s| s.as_str()) {
        Some("pass") => EvidenceStatus::Pass,
        Some("fail") => EvidenceStatus::Fail,
        Some(other) => {
            return Err(not_summary(&format!(
                "`status` is `{other}`, expected `pass` or `fail`"
            )));
        }
        None => return Err(not_summary("no string `status` key")),
    };
    let checks = v
        .get("checks")
        .and_then(|c| c.as_array())
        .ok_or_else(|| not_summary("no `checks` array"))?;
    let passed = checks
        .iter()
        .filter(|c| c.get("status").and_then(|s| s.as_str()) == Some("pass"))
        .count();
    let (sha, _) = hash_file_sha256(path)?;
    let mut evidence = format!(
        "{} (sha256 {}): status {}, {passed}/{} checks passed",
        path.display(),
        &sha[..16],
        status.as_str().to_lowercase(),
        checks.len()
    );
    if let Some(counts) = v.get("counts") {
        for key in [
            "over_limit",
            "missing",
            "case_not_ok",
            "failed_accuracy",
            "verdict_regress",
            "verdict_improve",
        ] {
            if let Some(n) = counts.get(key).and_then(|n| n.as_u64()).filter(|n| *n > 0) {
                evidence.push_str(&format!(", {key} {n}"));
            }
        }
    }
    Ok(GateInput { status, evidence })
}

/// The backend-parity gate from a run: FAIL when any case is `failed_accuracy`, PASS when at
/// least one case was verified `ok`, N/A when nothing was verified.
pub fn parity_gate_from_run(run: &RunSummary, origin: &Path) -> GateInput {
    let bad: Vec<&str> = run
        .benchmarks
        .iter()
        .filter(|(_, c)| c.status == CaseStatus::FailedAccuracy)
        .map(|(id, _)| id.as_str())
        .collect();
    let verified = run
        .benchmarks
        .values()
        .filter(|c| c.status == CaseStatus::Ok && c.accuracy.as_ref().is_some_and(|a| a.passed))
        .count();
    let (status, evidence) = if !bad.is_empty() {
        (
            EvidenceStatus::Fail,
            format!(
                "{}: {} case(s) failed accuracy: {}",
                origin.display(),
                bad.len(),
                bad.join(", ")
            ),
        )
    } else if verified > 0 {
        (
            EvidenceStatus::Pass,
            format!(
                "{}: {verified} case(s) verified against their references",
                origin.display()
            ),
        )
    } else {
        (
            EvidenceStatus::NotApplicable,
            format!("{}: no case was verified", origin.display()),
        )
    };
    GateInput { status, evidence }
}
