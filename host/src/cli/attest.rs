//! `apex-host attest`: release evidence over a run's artifacts.
//!
//! - `attest release`: the release attestation (JSON + Markdown) with every artifact's SHA-256
//!   and every gate's status taken from real outputs (`--gate-from-compare`, `--parity-from`) or
//!   set explicitly (`--gate`), never assumed.
//! - `attest replay`: the replay manifest of a run (seed, config hash, artifact hashes).
//! - `attest verify`: re-hashes the artifacts of a replay manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::compare::load_run;
use super::exit_codes::ApexExitCode;
use crate::attest::{
    AttestError, EvidenceStatus, GateInput, REPLAY_MANIFEST_FILE, ReleaseInput, ReleaseMetadata,
    build_release_attestation, build_replay_manifest, default_artifacts, gate_from_compare,
    parity_gate_from_run, read_replay_manifest, render_release_markdown, verify_replay_manifest,
};
use crate::compare::CompareError;
use crate::report::term::{errln, outln};
use crate::report::{write_atomic, write_json_atomic};

#[derive(Debug, Clone, clap::Args)]
pub struct AttestArgs {
    #[command(subcommand)]
    pub command: AttestCommand,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum AttestCommand {
    /// Write the release attestation (JSON + Markdown) over a run's artifacts.
    Release(Box<ReleaseArgs>),
    /// Write the replay manifest of a run (seed, config hash, artifact hashes).
    Replay(ReplayArgs),
    /// Re-hash the artifacts of a replay manifest; exit 2 on any difference.
    Verify(VerifyArgs),
}

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Release options")]
pub struct ReleaseArgs {
    /// The report folder whose artifacts are attested.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports_dir: PathBuf,
    #[arg(
        long,
        value_name = "TAG",
        env = "GITHUB_REF_NAME",
        default_value = "unversioned"
    )]
    pub release_tag: String,
    /// [default: $GITHUB_SHA, else `git rev-parse HEAD`, else `unknown`]
    #[arg(long, value_name = "SHA", env = "GITHUB_SHA")]
    pub commit_sha: Option<String>,
    #[arg(
        long,
        value_name = "NAME",
        env = "GITHUB_ACTOR",
        default_value = "unknown"
    )]
    pub release_owner: String,
    /// `cpu`, `cuda` or `trt`.
    #[arg(long, value_name = "TARGET", default_value = "cpu", value_parser = ["cpu", "cuda", "trt"])]
    pub runtime_target: String,
    /// [default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID when all are set]
    #[arg(long, value_name = "URL")]
    pub ci_run_url: Option<String>,
    /// Override or add an artifact: `key=path` (repeatable).
    #[arg(long = "artifact", value_name = "KEY=PATH")]
    pub artifacts: Vec<String>,
    /// Set a gate from a compare summary: `key=compare_summary.json` (repeatable).
    #[arg(long = "gate-from-compare", value_name = "KEY=PATH")]
    pub gate_from_compare: Vec<String>,
    /// Set `runtime_backend_parity` from a run's accuracy results (a summary.json).
    #[arg(long, value_name = "FILE")]
    pub parity_from: Option<PathBuf>,
    /// Set a gate explicitly: `key=PASS|FAIL|PENDING|N/A` (repeatable).
    #[arg(long = "gate", value_name = "KEY=STATUS")]
    pub gates: Vec<String>,
    /// Evidence text for a gate set with --gate: `key=text` (repeatable).
    #[arg(long = "gate-evidence", value_name = "KEY=TEXT")]
    pub gate_evidence: Vec<String>,
    /// [default: <reports-dir>/release/release_attestation.json]
    #[arg(long, value_name = "FILE")]
    pub output_json: Option<PathBuf>,
    /// [default: <reports-dir>/release/release_attestation.md]
    #[arg(long, value_name = "FILE")]
    pub output_md: Option<PathBuf>,
    /// Exit 2 when a required artifact is missing or a gate is FAIL.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Replay options")]
pub struct ReplayArgs {
    /// Take the seed (`config.seed`) and the config from this run summary.
    #[arg(long, value_name = "FILE", default_value = "reports/summary.json")]
    pub from: PathBuf,
    /// Override the seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// An artifact to hash: `name=path` (repeatable) [default: the summary itself as `summary`].
    #[arg(long = "artifact", value_name = "NAME=PATH")]
    pub artifacts: Vec<String>,
    /// [default: <folder of --from>/replay_manifest.json]
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// The replay manifest to check.
    #[arg(value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// Folder relative artifact paths are resolved against.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub base_dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum AttestCliError {
    #[error(transparent)]
    Attest(#[from] AttestError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error(
        "`--{flag} {value}` is not `KEY=VALUE`\n(hint: for example `--{flag} cpu_perf_regression=reports/compare_summary.json`)"
    )]
    Pair { flag: &'static str, value: String },
    #[error("`{path}` has no unsigned integer `config.seed`\n(hint: pass `--seed N`)")]
    NoSeed { path: PathBuf },
}

impl AttestCliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Attest(AttestError::Write(_)) | Self::Compare(CompareError::Write(_)) => {
                ApexExitCode::INTERNAL
            }
            _ => ApexExitCode::CONFIG_ERROR,
        }
    }
}

pub fn exec(args: &AttestArgs) -> Result<i32, AttestCliError> {
    match &args.command {
        AttestCommand::Release(a) => exec_release(a),
        AttestCommand::Replay(a) => exec_replay(a),
        AttestCommand::Verify(a) => exec_verify(a),
    }
}

/// [`exec`], with any error printed to stderr and mapped to its exit code.
pub fn exec_to_code(args: &AttestArgs) -> i32 {
    match exec(args) {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            e.exit_code()
        }
    }
}

fn pair<'a>(flag: &'static str, value: &'a str) -> Result<(&'a str, &'a str), AttestCliError> {
    value
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| AttestCliError::Pair {
            flag,
            value: value.into(),
        })
}

fn commit_sha(given: Option<&str>) -> String {
    if let Some(s) = given {
        return s.into();
    }
    Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn ci_run_url() -> Option<String> {
    let var = |k| std::env::var(k).ok().filter(|v| !v.is_empty());
    Some(format!(
        "{}/{}/actions/runs/{}",
        var("GITHUB_SERVER_URL")?,
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?
    ))
}

fn exec_release(args: &ReleaseArgs) -> Result<i32, AttestCliError> {
    let mut artifacts = default_artifacts(&args.reports_dir);
    for a in &args.artifacts {
        let (key, path) = pair("artifact", a)?;
        match artifacts.iter_mut().find(|s| s.key == key) {
            Some(spec) => spec.path = PathBuf::from(path),
            None => artifacts.push(crate::attest::ArtifactSpec {
                key: key.into(),
                label: key.into(),
                path: path.into(),
                producer: "given with --artifact".into(),
                required: true,
            }),
        }
    }
    let mut gates = BTreeMap::new();
    if let Some(p) = &args.parity_from {
        gates.insert(
            "runtime_backend_parity".to_string(),
            parity_gate_from_run(&load_run(p)?, p),
        );
    }
    for g in &args.gate_from_compare {
        let (key, path) = pair("gate-from-compare", g)?;
        gates.insert(key.to_string(), gate_from_compare(Path::new(path))?);
    }
    let evidence: BTreeMap<&str, &str> = args
        .gate_evidence
        .iter()
        .map(|e| pair("gate-evidence", e))
        .collect::<Result<_, _>>()?;
    for g in &args.gates {
        let (key, status) = pair("gate", g)?;
        let status: EvidenceStatus = status.parse()?;
        gates.insert(
            key.to_string(),
            GateInput {
                status,
                evidence: evidence
                    .get(key)
                    .map_or_else(|| "set with --gate".into(), |e| (*e).into()),
            },
        );
    }
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let input = ReleaseInput {
        generated_at_utc: now.clone(),
        metadata: ReleaseMetadata {
            release_tag: args.release_tag.clone(),
            commit_sha: commit_sha(args.commit_sha.as_deref()),
            build_date_utc: now,
            release_owner: args.release_owner.clone(),
            runtime_target: args.runtime_target.clone(),
            ci_run_url: args.ci_run_url.clone().or_else(ci_run_url),
        },
        artifacts,
        gates,
    };
    let att = build_release_attestation(&input)?;
    let release_dir = args.reports_dir.join("release");
    let json_path = args
        .output_json
        .clone()
        .unwrap_or_else(|| release_dir.join("release_attestation.json"));
    let md_path = args
        .output_md
        .clone()
        .unwrap_or_else(|| release_dir.join("release_attestation.md"));
    write_json_atomic(&json_path, &att).map_err(AttestError::from)?;
    write_atomic(&md_path, render_release_markdown(&att).as_bytes()).map_err(AttestError::from)?;
    show_lines(&[
        format!(
            "release attestation: {} (required artifacts {}/{}, gates {} passed, {} failed, {} pending)",
            att.summary.overall_status,
            att.summary.required_artifacts_passed,
            att.summary.required_artifacts_total,
            att.summary.gates_passed,
            att.summary.gates_failed,
            att.summary.gates_pending
        ),
        format!("wrote {}", json_path.display()),
        format!("wrote {}", md_path.display()),
    ]);
    Ok(if args.strict && att.strict_failure() {
        ApexExitCode::GATE_FAILED
    } else {
        ApexExitCode::OK
    })
}

fn exec_replay(args: &ReplayArgs) -> Result<i32, AttestCliError> {
    let run = load_run(&args.from)?;
    let seed = match args.seed {
        Some(s) => s,
        None => run
            .config
            .get("seed")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| AttestCliError::NoSeed {
                path: args.from.clone(),
            })?,
    };
    let mut artifacts = BTreeMap::new();
    for a in &args.artifacts {
        let (name, path) = pair("artifact", a)?;
        artifacts.insert(name.to_string(), PathBuf::from(path));
    }
    if artifacts.is_empty() {
        artifacts.insert("summary".to_string(), args.from.clone());
    }
    let manifest = build_replay_manifest(seed, &run.config, &artifacts)?;
    let out = args.output.clone().unwrap_or_else(|| {
        args.from
            .parent()
            .unwrap_or(Path::new("."))
            .join(REPLAY_MANIFEST_FILE)
    });
    write_json_atomic(&out, &manifest).map_err(AttestError::from)?;
    show_lines(&[
        format!("manifest_sha256 {}", manifest.manifest_sha256),
        format!("wrote {}", out.display()),
    ]);
    Ok(ApexExitCode::OK)
}

fn exec_verify(args: &VerifyArgs) -> Result<i32, AttestCliError> {
    let manifest = read_replay_manifest(&args.manifest)?;
    let mismatches = verify_replay_manifest(&manifest, &args.base_dir);
    let mut lines: Vec<String> = mismatches
        .iter()
        .map(|m| format!("mismatch: {m}"))
        .collect();
    lines.push(format!(
        "replay manifest {}: {} artifact(s), {}",
        args.manifest.display(),
        manifest.artifact_hashes.len(),
        if mismatches.is_empty() {
            "verified"
        } else {
            "DIFFERS"
        }
    ));
    show_lines(&lines);
    Ok(if mismatches.is_empty() {
        ApexExitCode::OK
    } else {
        ApexExitCode::GATE_FAILED
    })
}

fn show_lines(lines: &[String]) {
    for l in lines {
        outln!("{l}");
    }
}

fn print_error(e: &AttestCliError) {
    errln!("apex-host attest: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: AttestArgs,
    }

    fn parse(argv: &[&str]) -> Result<AttestArgs, clap::Error> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("attest").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn release_reads_the_gate_from_the_compare_output() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("att.json");
        let md = dir.path().join("att.md");
        let args = parse(&[
            "release",
            "--reports-dir",
            "tests/fixtures/attest/reports",
            "--commit-sha",
            "abc",
            "--gate-from-compare",
            "cpu_perf_regression=tests/fixtures/attest/reports/compare_summary.json",
            "--gate",
            "security_review=PASS",
            "--gate-evidence",
            "security_review=reviewed",
            "--output-json",
            json.to_str().unwrap(),
            "--output-md",
            md.to_str().unwrap(),
            "--strict",
        ])
        .unwrap();
        // The fixture's compare summary failed, so --strict fails.
        assert_eq!(exec(&args).unwrap(), ApexExitCode::GATE_FAILED);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let gates = v["gates"].as_array().unwrap();
        let gate = |k: &str| gates.iter().find(|g| g["key"] == k).unwrap().clone();
        assert_eq!(gate("cpu_perf_regression")["status"], "FAIL");
        assert_eq!(gate("security_review")["status"], "PASS");
        assert_eq!(gate("security_review")["evidence"], "reviewed");
        assert_eq!(gate("lint_type_tests")["status"], "PENDING");
        assert!(
            std::fs::read_to_string(&md)
                .unwrap()
                .starts_with("# apex-bench Release Evidence")
        );
        let bad = parse(&["release", "--gate", "nonsense"]).unwrap();
        assert_eq!(
            exec(&bad).unwrap_err().exit_code(),
            ApexExitCode::CONFIG_ERROR
        );
    }

    #[test]
    fn replay_then_verify() {
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("summary.json");
        std::fs::copy("tests/fixtures/attest/reports/summary.json", &summary).unwrap();
        let manifest = dir.path().join(REPLAY_MANIFEST_FILE);
        let args = parse(&["replay", "--from", summary.to_str().unwrap()]).unwrap();
        assert_eq!(exec(&args).unwrap(), ApexExitCode::OK);
        let m = read_replay_manifest(&manifest).unwrap();
        assert_eq!(m.seed, 123, "the seed comes from the run's config");
        let verify = parse(&["verify", manifest.to_str().unwrap()]).unwrap();
        assert_eq!(exec(&verify).unwrap(), ApexExitCode::OK);
        std::fs::write(&summary, "changed").unwrap();
        assert_eq!(exec(&verify).unwrap(), ApexExitCode::GATE_FAILED);
    }
}
