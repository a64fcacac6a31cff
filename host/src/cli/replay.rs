//! `replay_manifest.json`, written last by `run` and `merge`: the seed, the config hash and the
//! SHA-256 of every JSON artifact the command wrote, so a rerun can be checked byte for byte
//! (spec §4.7).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::failure::{Failure, internal};
use crate::model::RunSummary;

/// Writes `<output_dir>/replay_manifest.json` over the JSON files among `written`.
pub fn write_replay_manifest(
    output_dir: &Path,
    seed: u64,
    summary: &RunSummary,
    written: &[PathBuf],
) -> Result<(), Failure> {
    let artifacts: BTreeMap<String, PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| {
            Some((
                p.strip_prefix(output_dir)
                    .ok()?
                    .to_string_lossy()
                    .into_owned(),
                p.clone(),
            ))
        })
        .collect();
    let manifest = crate::attest::build_replay_manifest(seed, &summary.config, &artifacts)
        .map_err(internal)?;
    crate::report::write_json_atomic(
        &output_dir.join(crate::attest::REPLAY_MANIFEST_FILE),
        &manifest,
    )
    .map_err(internal)
}
