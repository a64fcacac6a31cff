//! `--compare-to REF`: read a baseline as it is committed at a git ref (`git show REF:path`).

use std::path::Path;
use std::process::Command;

use super::{Baseline, CompareError};

/// Reads `path` (relative to the repository root) at `git_ref` in `repo_root` and parses it as
/// a baseline (or a run summary, see [`Baseline::parse`]).
///
/// The ref is checked first (`git rev-parse --verify --quiet REF^{commit}`) so that "no such ref"
/// and "no such file at that ref" are two different, clear errors.
pub fn baseline_from_ref(
    repo_root: &Path,
    git_ref: &str,
    path: &Path,
) -> Result<Baseline, CompareError> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(repo_root)
            .args(args)
            .output()
            .map_err(|source| CompareError::GitSpawn {
                repo: repo_root.to_path_buf(),
                args: args.join(" "),
                source,
            })
    };
    let commit = format!("{git_ref}^{{commit}}");
    if !git(&["rev-parse", "--verify", "--quiet", &commit])?
        .status
        .success()
    {
        return Err(CompareError::GitRefMissing {
            repo: repo_root.to_path_buf(),
            git_ref: git_ref.into(),
        });
    }
    // Git pathspecs use forward slashes; `./` would make the path relative to the current
    // folder instead of the repository root.
    let path = path.to_string_lossy().replace('\\', "/");
    let rel = path.trim_start_matches("./");
    let spec = format!("{git_ref}:{rel}");
    let out = git(&["show", &spec])?;
    if !out.status.success() {
        return Err(CompareError::GitPathMissing {
            git_ref: git_ref.into(),
            path: rel.into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Baseline::parse(&text, Path::new(&spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn reads_committed_baseline_and_explains_failures() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        sh(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("baselines")).unwrap();
        std::fs::write(
            root.join("baselines/cpu.json"),
            r#"{"schema_version":1,"suite":"apex_bench","baseline_notes":"v1","metrics":{"k/cpu/fp32/-/p50_ms":{"value_ms":1.5}}}"#,
        )
        .unwrap();
        sh(root, &["add", "baselines/cpu.json"]);
        sh(root, &["commit", "-q", "-m", "baseline"]);
        sh(root, &["tag", "v1"]);
        // A later working-tree edit must not leak into the ref's version.
        std::fs::write(root.join("baselines/cpu.json"), "not json").unwrap();

        let b = baseline_from_ref(root, "v1", Path::new("./baselines/cpu.json")).unwrap();
        assert_eq!(b.baseline_notes, "v1");
        assert_eq!(b.metrics["k/cpu/fp32/-/p50_ms"].value_ms, 1.5);

        let err =
            baseline_from_ref(root, "no-such-ref", Path::new("baselines/cpu.json")).unwrap_err();
        assert!(matches!(err, CompareError::GitRefMissing { .. }), "{err}");
        assert!(err.to_string().contains("no-such-ref") && err.to_string().contains("hint:"));

        let err = baseline_from_ref(root, "v1", Path::new("baselines/gpu.json")).unwrap_err();
        assert!(matches!(err, CompareError::GitPathMissing { .. }), "{err}");
        assert!(err.to_string().contains("baselines/gpu.json"));
    }
}
