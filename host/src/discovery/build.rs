//! Building plugin crates in a source checkout: only crates whose library is missing or older than
//! their sources (or the plugin API's) are built, all in one `cargo build --keep-going`, and a crate
//! that does not compile is reported with the compiler's first error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use walkdir::WalkDir;

use super::CrateInfo;

/// What building did: which packages were built, and the first error of each that failed.
#[derive(Debug, Default)]
pub struct BuildOutcome {
    pub built: Vec<String>,
    pub failed: BTreeMap<String, String>,
}

/// The newest modification time of the files under `dir` that feed a build.
fn newest_source(dir: &Path) -> Option<SystemTime> {
    WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.ends_with(".rs") || n == "Cargo.toml" || n.ends_with(".cu") || n.ends_with(".cuh")
        })
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Whether the crate's library is missing or older than its sources or `api_dir`'s.
pub fn is_stale(krate: &CrateInfo, api_dir: Option<&Path>) -> bool {
    let Some(built) = std::fs::metadata(&krate.library)
        .and_then(|m| m.modified())
        .ok()
    else {
        return true;
    };
    // Nested crates (fixtures under plugins/fixtures/) are their own crates: only look at src/.
    let own = newest_source(&krate.dir.join("src")).into_iter().chain(
        std::fs::metadata(krate.dir.join("Cargo.toml"))
            .and_then(|m| m.modified())
            .ok(),
    );
    let api = api_dir.and_then(newest_source);
    own.chain(api).any(|t| t > built)
}

/// Builds the stale crates among `crates` with cargo in `root`, in the host's own profile.
pub fn build_stale(root: &Path, crates: &[&CrateInfo], release: bool) -> BuildOutcome {
    let api_dir = root.join("plugin-api");
    let stale: Vec<&CrateInfo> = crates
        .iter()
        .copied()
        .filter(|c| is_stale(c, Some(&api_dir)))
        .collect();
    let mut outcome = BuildOutcome::default();
    if stale.is_empty() {
        return outcome;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root).args([
        "build",
        "--keep-going",
        "--message-format=json-render-diagnostics",
        "--lib",
    ]);
    if release {
        cmd.arg("--release");
    }
    for c in &stale {
        cmd.args(["-p", &c.package]);
    }
    let started = SystemTime::now();
    let output = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            let reason = format!(
                "cannot run `{}` to build it: {e} (hint: build the plugins yourself, or pass --no-build)",
                PathBuf::from(&cargo).display()
            );
            for c in stale {
                outcome.failed.insert(c.package.clone(), reason.clone());
            }
            return outcome;
        }
    };
    let first_errors = first_error_per_package(&String::from_utf8_lossy(&output.stdout));
    // A crate that failed without an error of its own failed in a dependency it shares with
    // others (plugin-api, say): that dependency's first error is its reason too.
    let shared = first_errors
        .iter()
        .find(|(p, _)| !stale.iter().any(|c| &c.package == *p));
    for c in stale {
        if let Some(err) = first_errors.get(&c.package) {
            outcome.failed.insert(c.package.clone(), err.clone());
        } else if let (Some((dep, err)), false) = (shared, output.status.success()) {
            outcome
                .failed
                .insert(c.package.clone(), format!("dependency `{dep}` {err}"));
        } else if modified(&c.library).is_some_and(|t| t >= started) {
            outcome.built.push(c.package.clone());
        } else if c.library.is_file() && output.status.success() {
            // Cargo decides staleness by content fingerprints, this module by modification
            // times: a file rewritten with the same content leaves cargo's output untouched and
            // older than it. Cargo just said the library is up to date, so mark it as such.
            let _ = std::fs::File::options()
                .write(true)
                .open(&c.library)
                .and_then(|f| f.set_modified(SystemTime::now()));
            outcome.built.push(c.package.clone());
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            outcome.failed.insert(
                c.package.clone(),
                format!("cargo build did not produce the library: {last}"),
            );
        }
    }
    outcome
}

/// The first `error` diagnostic of each package in cargo's JSON message stream, condensed to its
/// headline and location (`error[E0425]: cannot find value `x` --> src/lib.rs:3:5`).
fn first_error_per_package(stream: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in stream.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-message" || msg["message"]["level"] != "error" {
            continue;
        }
        let package = package_name(msg["package_id"].as_str().unwrap_or_default());
        if out.contains_key(&package) {
            continue;
        }
        let rendered = msg["message"]["rendered"].as_str().unwrap_or_default();
        let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
        let headline = lines.next().unwrap_or("compile error");
        let location = lines.find(|l| l.starts_with("-->")).unwrap_or_default();
        out.insert(
            package,
            format!("does not compile: {headline} {location}")
                .trim_end()
                .to_string(),
        );
    }
    out
}

/// The package name inside a cargo package id (`path+file:///x/plugins/a#apex-a@0.1.0` or the
/// older `apex-a 0.1.0 (path+file:///...)`).
fn package_name(id: &str) -> String {
    if let Some((_, rest)) = id.rsplit_once('#') {
        let name = rest.split('@').next().unwrap_or(rest);
        // `#0.1.0` alone means the name is the last path segment.
        if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            return id
                .split('#')
                .next()
                .unwrap_or(id)
                .rsplit('/')
                .next()
                .unwrap_or(id)
                .to_string();
        }
        return name.to_string();
    }
    id.split(' ').next().unwrap_or(id).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_from_both_id_formats() {
        assert_eq!(
            package_name("path+file:///w/plugins/a#apex-a@0.1.0"),
            "apex-a"
        );
        assert_eq!(
            package_name("path+file:///w/plugins/apex-a#0.1.0"),
            "apex-a"
        );
        assert_eq!(package_name("apex-a 0.1.0 (path+file:///w)"), "apex-a");
    }

    #[test]
    fn first_error_is_condensed() {
        let line = serde_json::json!({
            "reason": "compiler-message",
            "package_id": "path+file:///w/plugins/a#apex-a@0.1.0",
            "message": {"level": "error", "rendered": "error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5\n  |\n"}
        });
        let second = serde_json::json!({
            "reason": "compiler-message",
            "package_id": "path+file:///w/plugins/a#apex-a@0.1.0",
            "message": {"level": "error", "rendered": "error: aborting"}
        });
        let m = first_error_per_package(&format!("{line}\n{second}\nnot json\n"));
        assert_eq!(
            m["apex-a"],
            "does not compile: error[E0425]: cannot find value `x` --> src/lib.rs:3:5"
        );
    }
}
