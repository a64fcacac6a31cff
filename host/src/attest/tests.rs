//! Golden tests over `host/tests/fixtures/attest/`:
//!
//! - the replay manifest against `replay_manifest.golden.json`, written by an independent Python
//!   implementation of the seeds' rules (`generate.py`);
//! - the compare outputs and the release attestation (JSON and Markdown) against the committed
//!   files in `reports/` and `release_attestation.golden.*`.
//!
//! `APEX_BLESS=1 cargo test -p apex-host --lib attest::tests -- --test-threads=1` rewrites the Rust-produced golden
//! files (never the Python one) after an intended format change; review the diff.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::compare::{self, Baseline, GateOptions};
use crate::model::{CaseKey, CaseResult, CaseStatus, ModeTiming, ParamMap, RunSummary};
use crate::report::{to_sorted_json, write_atomic, write_json_atomic};

/// Paths are relative to `host/`, the working directory of `cargo test`.
const FIXTURES: &str = "tests/fixtures/attest";

fn fixtures() -> PathBuf {
    PathBuf::from(FIXTURES)
}

fn bless() -> bool {
    std::env::var_os("APEX_BLESS").is_some_and(|v| v == "1")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn replay_input() -> (u64, Value, BTreeMap<String, PathBuf>) {
    let input = read_json(&fixtures().join("replay_input.json"));
    let artifacts = input["artifacts"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), PathBuf::from(v.as_str().unwrap())))
        .collect();
    (
        input["seed"].as_u64().unwrap(),
        input["config"].clone(),
        artifacts,
    )
}

#[test]
fn replay_manifest_matches_the_python_oracle() {
    let golden = read_json(&fixtures().join("replay_manifest.golden.json"));
    let (seed, config, artifacts) = replay_input();
    assert_eq!(
        canonical_json(&config),
        golden["canonical_config"].as_str().unwrap()
    );
    let m = build_replay_manifest(seed, &config, &artifacts).unwrap();
    let mut ours = serde_json::to_value(&m).unwrap();
    ours.as_object_mut().unwrap().insert(
        "canonical_config".into(),
        golden["canonical_config"].clone(),
    );
    assert_eq!(ours, golden);
}

#[test]
fn replay_manifest_hash_is_the_same_from_another_directory() {
    let golden = read_json(&fixtures().join("replay_manifest.golden.json"));
    let (seed, config, artifacts) = replay_input();
    let dir = tempfile::tempdir().unwrap();
    let moved: BTreeMap<String, PathBuf> = artifacts
        .iter()
        .map(|(name, path)| {
            let to = dir.path().join("elsewhere").join(path.file_name().unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(path, &to).unwrap();
            (name.clone(), to)
        })
        .collect();
    let m = build_replay_manifest(seed, &config, &moved).unwrap();
    assert_ne!(
        m.artifact_hashes["trace"].path,
        golden["artifact_hashes"]["trace"]["path"]
    );
    assert_eq!(
        m.manifest_sha256,
        golden["manifest_sha256"].as_str().unwrap()
    );
    // The written manifest reads back and verifies against the moved files.
    let path = dir.path().join(REPLAY_MANIFEST_FILE);
    write_json_atomic(&path, &m).unwrap();
    let back = read_replay_manifest(&path).unwrap();
    assert!(verify_replay_manifest(&back, Path::new("/")).is_empty());
}

/// The synthetic run behind the compare fixtures: one ok CPU case with samples, one skipped
/// CUDA case, and a baseline that the CPU case passes and the CUDA case fails.
fn synthetic_run() -> RunSummary {
    let mut p = ParamMap::new();
    p.insert("kmax".into(), 32.into());
    p.insert("tile_size".into(), 8.into());
    let cpu = CaseKey::new("tile_ops.tile_pack", "cpu", "fp32", &p);
    let samples: Vec<f64> = (0..40).map(|i| 0.18 + f64::from(i % 7) * 0.001).collect();
    let stats = crate::stats::summarize(&samples, 123).unwrap();
    let mut ok = CaseResult::without_measurements(cpu, "tile_ops", CaseStatus::Ok, String::new());
    ok.reason = None;
    ok.headline = Some("cpu".into());
    ok.p50_ms = Some(stats.p50_ms);
    ok.p95_ms = Some(stats.p95_ms);
    ok.timing.insert(
        "cpu".into(),
        ModeTiming {
            calls_per_sample: 4,
            graph: false,
            cache: None,
            buffer_sets: None,
            short_holds: None,
            stats,
            samples_ms: Some(samples),
            samples_per_process: None,
        },
    );
    let cuda = CaseKey::new("tile_ops.tile_pack", "cuda", "fp16", &p);
    let skipped = CaseResult::without_measurements(
        cuda,
        "tile_ops",
        CaseStatus::Skipped,
        "cuda_unavailable: libcuda.so.1 not found".into(),
    );
    let cases = vec![ok, skipped];
    RunSummary {
        schema_version: 1,
        suite: "apex_bench".into(),
        timestamp_utc: "2026-11-21T05:30:00+00:00".into(),
        environment: serde_json::json!({"git": {"commit": "0123456789abcdef0123456789abcdef01234567"}}),
        config: serde_json::json!({"seed": 123, "backends": ["cpu", "cuda"]}),
        status: RunSummary::status_of(&cases).into(),
        counts: BTreeMap::from([("ok".into(), 1), ("skipped".into(), 1), ("total".into(), 2)]),
        benchmarks: cases.into_iter().map(|c| (c.id.clone(), c)).collect(),
        time_accounting: None,
        plan: None,
        anchors: None,
    }
}

fn check_or_bless(path: &Path, produced: &str) {
    if bless() {
        write_atomic(path, produced.as_bytes()).unwrap();
    }
    let golden = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (hint: APEX_BLESS=1 writes it)", path.display()));
    assert_eq!(
        produced,
        golden,
        "{} differs (APEX_BLESS=1 rewrites it after an intended change)",
        path.display()
    );
}

#[test]
fn compare_outputs_match_their_golden_files() {
    let reports = fixtures().join("reports");
    if bless() {
        let run = synthetic_run();
        let summary = reports.join("summary.json");
        write_json_atomic(&summary, &run).unwrap();
        let artifacts = BTreeMap::from([("summary".to_string(), summary)]);
        let manifest = build_replay_manifest(123, &run.config, &artifacts).unwrap();
        write_json_atomic(&reports.join(REPLAY_MANIFEST_FILE), &manifest).unwrap();
    }
    let run: RunSummary = serde_json::from_value(read_json(&reports.join("summary.json"))).unwrap();
    let baseline = Baseline::load(&fixtures().join("baseline.json")).unwrap();
    let cmp = compare::gate(&run, &baseline, &GateOptions::default());
    assert_eq!(
        cmp.overall_status(),
        "fail",
        "the skipped CUDA case fails the gate"
    );
    check_or_bless(
        &reports.join("compare_summary.json"),
        &to_sorted_json(&compare::compare_summary_json(&cmp)).unwrap(),
    );
    check_or_bless(
        &reports.join("trend.json"),
        &to_sorted_json(&compare::trend_json(&cmp)).unwrap(),
    );
    check_or_bless(
        &reports.join("regressions.md"),
        &compare::render_regressions_markdown(&cmp),
    );
}

fn release_input() -> ReleaseInput {
    let reports = fixtures().join("reports");
    let gates = BTreeMap::from([
        (
            "cpu_perf_regression".to_string(),
            gate_from_compare(&reports.join("compare_summary.json")).unwrap(),
        ),
        ("runtime_backend_parity".to_string(), {
            let run: RunSummary =
                serde_json::from_value(read_json(&reports.join("summary.json"))).unwrap();
            parity_gate_from_run(&run, &reports.join("summary.json"))
        }),
        (
            "gpu_perf_regression".to_string(),
            GateInput {
                status: EvidenceStatus::NotApplicable,
                evidence: "cpu-only release".into(),
            },
        ),
    ]);
    ReleaseInput {
        generated_at_utc: "2026-11-21T06:00:00Z".into(),
        metadata: ReleaseMetadata {
            release_tag: "v0.1.0".into(),
            commit_sha: "0123456789abcdef0123456789abcdef01234567".into(),
            build_date_utc: "2026-11-21T06:00:00Z".into(),
            release_owner: "ci".into(),
            runtime_target: "cpu".into(),
            ci_run_url: Some("https://github.com/example/apex-bench/actions/runs/1".into()),
        },
        artifacts: default_artifacts(&reports),
        gates,
    }
}

#[test]
fn release_attestation_matches_its_golden_files() {
    let att = build_release_attestation(&release_input()).unwrap();
    // The gate comes from the real compare output (which failed), never a hard-coded PASS.
    let cpu_gate = att
        .gates
        .iter()
        .find(|g| g.key == "cpu_perf_regression")
        .unwrap();
    assert_eq!(cpu_gate.status, EvidenceStatus::Fail);
    assert!(
        cpu_gate.evidence.contains("compare_summary.json"),
        "{}",
        cpu_gate.evidence
    );
    assert_eq!(att.summary.overall_status, "fail");
    assert!(att.strict_failure());
    // summary.md is optional and absent: N/A, not a failure.
    let md_artifact = att
        .artifacts
        .iter()
        .find(|a| a.key == "summary_markdown")
        .unwrap();
    assert_eq!(
        (md_artifact.exists, md_artifact.status),
        (false, EvidenceStatus::NotApplicable)
    );
    let compare_artifact = att
        .artifacts
        .iter()
        .find(|a| a.key == "compare_summary")
        .unwrap();
    let (sha, size) = hash_file_sha256(&fixtures().join("reports/compare_summary.json")).unwrap();
    assert_eq!(compare_artifact.sha256.as_deref(), Some(sha.as_str()));
    assert_eq!(compare_artifact.size_bytes, Some(size));
    check_or_bless(
        &fixtures().join("release_attestation.golden.json"),
        &to_sorted_json(&att).unwrap(),
    );
    check_or_bless(
        &fixtures().join("release_attestation.golden.md"),
        &render_release_markdown(&att),
    );
}

#[test]
fn unknown_gate_keys_and_statuses_are_errors() {
    let mut input = release_input();
    input.gates.insert(
        "speed".into(),
        GateInput {
            status: EvidenceStatus::Pass,
            evidence: String::new(),
        },
    );
    let err = build_release_attestation(&input).unwrap_err().to_string();
    assert!(
        err.contains("`speed`") && err.contains("cpu_perf_regression"),
        "{err}"
    );
    assert!("maybe".parse::<EvidenceStatus>().is_err());
    assert_eq!(
        "n/a".parse::<EvidenceStatus>().unwrap(),
        EvidenceStatus::NotApplicable
    );
}
