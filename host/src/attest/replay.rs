//! The replay manifest (`spec/apex-x-kernels.md` §4.7): what reproduces a run and proves its
//! artifacts are the ones it produced.
//!
//! | key | content |
//! | --- | --- |
//! | `seed` | the run's `--seed` |
//! | `config` | the resolved configuration |
//! | `config_sha256` | `hash_json_sha256(config)` |
//! | `artifact_hashes` | `{name: {path, sha256}}` |
//! | `artifact_sha256` | `{name: sha256}` |
//! | `manifest_sha256` | `hash_json_sha256({"artifact_sha256": …, "config_sha256": …, "seed": …})` |
//!
//! The manifest hash covers neither paths nor the machine, so the same files give the same hash
//! from any directory.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::AttestError;
use super::canonical::{hash_file_sha256, hash_json_sha256};

pub const REPLAY_MANIFEST_FILE: &str = "replay_manifest.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactHash {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayManifest {
    pub seed: u64,
    pub config: Value,
    pub config_sha256: String,
    pub artifact_hashes: BTreeMap<String, ArtifactHash>,
    pub artifact_sha256: BTreeMap<String, String>,
    pub manifest_sha256: String,
}

/// Hashes every artifact (`name -> path`) and builds the manifest. Paths are recorded as given.
pub fn build_replay_manifest(
    seed: u64,
    config: &Value,
    artifacts: &BTreeMap<String, PathBuf>,
) -> Result<ReplayManifest, AttestError> {
    let mut artifact_hashes = BTreeMap::new();
    let mut artifact_sha256 = BTreeMap::new();
    for (name, path) in artifacts {
        let (sha, _) = hash_file_sha256(path)?;
        artifact_hashes.insert(
            name.clone(),
            ArtifactHash {
                path: path.to_string_lossy().into_owned(),
                sha256: sha.clone(),
            },
        );
        artifact_sha256.insert(name.clone(), sha);
    }
    let config_sha256 = hash_json_sha256(config);
    let manifest_sha256 = manifest_hash(seed, &config_sha256, &artifact_sha256);
    Ok(ReplayManifest {
        seed,
        config: config.clone(),
        config_sha256,
        artifact_hashes,
        artifact_sha256,
        manifest_sha256,
    })
}

/// `hash_json_sha256({"seed", "config_sha256", "artifact_sha256"})`.
pub fn manifest_hash(
    seed: u64,
    config_sha256: &str,
    artifact_sha256: &BTreeMap<String, String>,
) -> String {
    hash_json_sha256(&json!({
        "seed": seed,
        "config_sha256": config_sha256,
        "artifact_sha256": artifact_sha256,
    }))
}

/// One difference found by [`verify_replay_manifest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayMismatch {
    ConfigHash {
        recorded: String,
        actual: String,
    },
    ManifestHash {
        recorded: String,
        actual: String,
    },
    ArtifactMissing {
        name: String,
        path: PathBuf,
    },
    ArtifactHash {
        name: String,
        recorded: String,
        actual: String,
    },
}

impl std::fmt::Display for ReplayMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ConfigHash { recorded, actual } => {
                write!(
                    f,
                    "config_sha256 is {recorded} but the config hashes to {actual}"
                )
            }
            Self::ManifestHash { recorded, actual } => {
                write!(
                    f,
                    "manifest_sha256 is {recorded} but the recorded hashes give {actual}"
                )
            }
            Self::ArtifactMissing { name, path } => {
                write!(f, "artifact `{name}` is missing at `{}`", path.display())
            }
            Self::ArtifactHash {
                name,
                recorded,
                actual,
            } => {
                write!(
                    f,
                    "artifact `{name}` hashes to {actual}, the manifest recorded {recorded}"
                )
            }
        }
    }
}

/// Re-hashes the config and every artifact (relative paths resolved against `base_dir`) and
/// lists every difference; empty means the artifacts are exactly the recorded ones.
pub fn verify_replay_manifest(manifest: &ReplayManifest, base_dir: &Path) -> Vec<ReplayMismatch> {
    let mut out = Vec::new();
    let config = hash_json_sha256(&manifest.config);
    if config != manifest.config_sha256 {
        out.push(ReplayMismatch::ConfigHash {
            recorded: manifest.config_sha256.clone(),
            actual: config,
        });
    }
    let actual = manifest_hash(
        manifest.seed,
        &manifest.config_sha256,
        &manifest.artifact_sha256,
    );
    if actual != manifest.manifest_sha256 {
        out.push(ReplayMismatch::ManifestHash {
            recorded: manifest.manifest_sha256.clone(),
            actual,
        });
    }
    for (name, rec) in &manifest.artifact_hashes {
        let path = base_dir.join(&rec.path);
        match hash_file_sha256(&path) {
            Err(_) => out.push(ReplayMismatch::ArtifactMissing {
                name: name.clone(),
                path,
            }),
            Ok((sha, _)) if sha != rec.sha256 => out.push(ReplayMismatch::ArtifactHash {
                name: name.clone(),
                recorded: rec.sha256.clone(),
                actual: sha,
            }),
            Ok(_) => {}
        }
    }
    out
}

/// Reads a manifest written by [`crate::report::write_json_atomic`].
pub fn read_replay_manifest(path: &Path) -> Result<ReplayManifest, AttestError> {
    let text = std::fs::read_to_string(path).map_err(|source| AttestError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        AttestError::parse(path, "expected {seed, config, config_sha256, artifact_hashes, artifact_sha256, manifest_sha256}", e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_set(dir: &Path) -> BTreeMap<String, PathBuf> {
        std::fs::create_dir_all(dir.join("k")).unwrap();
        std::fs::write(dir.join("summary.json"), "{\"a\": 1}\n").unwrap();
        std::fs::write(dir.join("k/trace.bin"), [0u8, 1, 2, 255]).unwrap();
        BTreeMap::from([
            ("summary".to_string(), dir.join("summary.json")),
            ("trace".to_string(), dir.join("k/trace.bin")),
        ])
    }

    #[test]
    fn same_files_in_two_directories_give_the_same_manifest_hash() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let config = json!({"kmax": 4, "budget": 3.0});
        let ma = build_replay_manifest(7, &config, &write_set(a.path())).unwrap();
        let mb = build_replay_manifest(7, &config, &write_set(b.path())).unwrap();
        assert_ne!(
            ma.artifact_hashes["trace"].path,
            mb.artifact_hashes["trace"].path
        );
        assert_eq!(ma.manifest_sha256, mb.manifest_sha256);
        assert_eq!(ma.artifact_sha256, mb.artifact_sha256);
        // The seed and the config are covered.
        let other_seed = build_replay_manifest(8, &config, &write_set(a.path())).unwrap();
        assert_ne!(other_seed.manifest_sha256, ma.manifest_sha256);
        let other_cfg =
            build_replay_manifest(7, &json!({"kmax": 4, "budget": 3.5}), &write_set(a.path()))
                .unwrap();
        assert_ne!(other_cfg.manifest_sha256, ma.manifest_sha256);
    }

    #[test]
    fn verify_finds_changed_and_missing_artifacts() {
        let dir = tempfile::tempdir().unwrap();
        let m = build_replay_manifest(1, &json!({}), &write_set(dir.path())).unwrap();
        assert!(verify_replay_manifest(&m, Path::new("/")).is_empty());
        std::fs::write(dir.path().join("summary.json"), "{\"a\": 2}\n").unwrap();
        std::fs::remove_file(dir.path().join("k/trace.bin")).unwrap();
        let found = verify_replay_manifest(&m, Path::new("/"));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(matches!(found[0], ReplayMismatch::ArtifactHash { .. }));
        assert!(matches!(found[1], ReplayMismatch::ArtifactMissing { .. }));
    }
}
