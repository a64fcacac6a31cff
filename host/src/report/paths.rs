//! Where report files go inside `--output-dir`, and how ids become file names.
//!
//! Kernel ids (`tile_ops.tile_pack`) are file names as they are; anything else (case ids carry
//! `/`, `=` and `,`) is reduced to `[A-Za-z0-9._-]` and given a short hash of the full id, so two
//! ids never share a file and every name stays well under the 255-byte file-name limit.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub const ENV_JSON: &str = "env.json";
pub const MANIFEST_JSON: &str = "kernel_manifest.json";
pub const SUMMARY_JSON: &str = "summary.json";
pub const SUMMARY_MD: &str = "summary.md";
pub const INDEX_HTML: &str = "index.html";
pub const KERNELS_DIR: &str = "kernels";
/// Finished cases of runs in progress (or killed) live under `<out>/.partial/<run_id>/`.
pub const PARTIAL_DIR: &str = ".partial";
/// One JSON line per finished case, fsynced as it arrives.
pub const CASES_JSONL: &str = "cases.jsonl";

/// The partial folder of run `run_id` under `output_dir`.
pub fn partial_dir(output_dir: &Path, run_id: &str) -> PathBuf {
    output_dir.join(PARTIAL_DIR).join(file_stem(run_id))
}

/// A file-name stem for `id`: `id` itself when it is already safe, otherwise the safe
/// characters of it plus `-` and 8 hex digits of its SHA-256.
pub fn file_stem(id: &str) -> String {
    const MAX: usize = 120;
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if !id.is_empty() && id.len() <= MAX && id.chars().all(safe) && !id.starts_with('.') {
        return id.to_string();
    }
    let mut stem: String = id
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .take(MAX)
        .collect();
    // A leading dot would hide the file and `..` would be a parent reference.
    if stem.starts_with('.') {
        stem.replace_range(0..1, "_");
    }
    let digest = Sha256::digest(id.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{stem}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_ids_stay_readable() {
        assert_eq!(file_stem("tile_ops.tile_pack"), "tile_ops.tile_pack");
        assert_eq!(file_stem("run-2026_01_01"), "run-2026_01_01");
    }

    #[test]
    fn case_ids_are_made_safe_and_distinct() {
        let a = file_stem("k.op/cpu/fp32/n=1,m=2");
        let b = file_stem("k.op/cpu/fp32/n_1,m=2");
        assert!(a.starts_with("k.op_cpu_fp32_n_1_m_2-"), "{a}");
        assert_ne!(
            a, b,
            "ids differing only in unsafe characters get different names"
        );
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        );
        let long = file_stem(&"x=1,".repeat(200));
        assert!(long.len() <= 130);
        assert!(!file_stem("..").starts_with('.'));
        assert!(!file_stem("").is_empty());
    }
}
