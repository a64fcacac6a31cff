//! Release evidence: the release attestation (every artifact's SHA-256 and every release gate's
//! real status) and the replay manifest (seed, config hash, artifact hashes, manifest hash), in
//! the seeds' formats (`spec/apex-x-kernels.md` §4.6–4.7).
//!
//! Builders are pure apart from reading the files they hash; no clock is read here (the caller
//! passes `generated_at_utc`). Files are written through `report::write_*`.

mod canonical;
mod error;
mod markdown;
mod release;
mod replay;

pub use canonical::{canonical_json, hash_file_sha256, hash_json_sha256, python_float_repr};
pub use error::AttestError;
pub use markdown::render_release_markdown;
pub use release::{
    ATTESTATION_SCHEMA_VERSION, ArtifactRecord, ArtifactSpec, AttestationSummary,
    DEFAULT_ARTIFACTS, EvidenceStatus, GATES, GateInput, GateRecord, ReleaseAttestation,
    ReleaseInput, ReleaseMetadata, build_release_attestation, default_artifacts, gate_from_compare,
    parity_gate_from_run,
};
pub use replay::{
    ArtifactHash, REPLAY_MANIFEST_FILE, ReplayManifest, ReplayMismatch, build_replay_manifest,
    manifest_hash, read_replay_manifest, verify_replay_manifest,
};

#[cfg(test)]
mod tests;
