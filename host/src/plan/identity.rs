//! [`PlanIdentity`] and [`config_digest`]: what every run records about its plan so that
//! `apex-host merge` can prove that shards belong together (same cases, same flags, same suite
//! files) and name the cases no shard ran.

use std::path::PathBuf;

use crate::attest::{hash_file_sha256, hash_json_sha256};

/// What identifies a plan across machines: the SHA-256 of its case ids in plan order (of their
/// canonical JSON list), and the ids themselves, so a merge can name the cases no shard ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanIdentity {
    pub digest: String,
    pub case_ids: Vec<String>,
}

impl PlanIdentity {
    pub fn of(case_ids: Vec<String>) -> PlanIdentity {
        let digest = hash_json_sha256(&serde_json::json!(case_ids));
        PlanIdentity { digest, case_ids }
    }
}

/// SHA-256 over what shapes the measurements besides the case ids: `flags` (the run's
/// configuration as JSON, already without the keys that may differ between shards) and the
/// contents of the suite `files` (order and location do not matter: checkouts live in different
/// folders on different machines). A file that cannot be read counts as its error text.
pub fn config_digest(flags: &serde_json::Value, files: &[PathBuf]) -> String {
    let mut per_file: Vec<String> = files
        .iter()
        .map(|f| match hash_file_sha256(f) {
            Ok((sha, _)) => sha,
            Err(e) => format!("unreadable: {e}"),
        })
        .collect();
    per_file.sort();
    hash_json_sha256(&serde_json::json!({ "flags": flags, "files": per_file }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_digest_depends_on_every_id_and_their_order() {
        let a = PlanIdentity::of(vec!["a".into(), "b".into()]);
        let b = PlanIdentity::of(vec!["b".into(), "a".into()]);
        let c = PlanIdentity::of(vec!["ab".into()]);
        assert_ne!(a.digest, b.digest);
        assert_ne!(a.digest, c.digest);
        assert_eq!(a.digest.len(), 64);
    }

    #[test]
    fn the_config_digest_ignores_where_files_live_but_not_what_they_say() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            d.path().join("a.yaml"),
            d.path().join("b.yaml"),
            d.path().join("c.yaml"),
        );
        std::fs::write(&a, "x: 1").unwrap();
        std::fs::write(&b, "y: 2").unwrap();
        std::fs::write(&c, "x: 1").unwrap();
        let flags = serde_json::json!({"quick": true});
        let base = config_digest(&flags, &[a.clone(), b.clone()]);
        assert_eq!(base, config_digest(&flags, &[b.clone(), a.clone()]));
        assert_eq!(base, config_digest(&flags, &[c.clone(), b.clone()]));
        assert_ne!(base, config_digest(&flags, std::slice::from_ref(&a)));
        assert_ne!(
            base,
            config_digest(&serde_json::json!({"quick": false}), &[a, b])
        );
    }
}
