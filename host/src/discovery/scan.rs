//! Finding candidates: plugin crates under `plugins/` (any depth, by their `Cargo.toml`) and
//! library files in `--plugin-dir` folders and `APEX_PLUGIN_PATH`.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// A plugin crate found in the source tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateInfo {
    pub package: String,
    pub dir: PathBuf,
    /// The library file cargo produces for it in the target directory.
    pub library: PathBuf,
    /// `[package.metadata.apex] fixture = true`: a misbehaving test plugin, loaded only on request.
    pub fixture: bool,
    /// The crate's own `bench.yaml`, if it has one.
    pub bench_yaml: Option<PathBuf>,
}

/// Something that may be a plugin library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub library: PathBuf,
    pub from_crate: Option<CrateInfo>,
}

/// What a scan found, plus crate manifests it could not read (reported as failures).
#[derive(Debug, Default)]
pub struct ScanResult {
    pub scanned: Vec<PathBuf>,
    pub crates: Vec<CrateInfo>,
    pub libraries: Vec<PathBuf>,
    pub unreadable: Vec<(PathBuf, String)>,
}

/// The nearest ancestor of `start` (itself included) that has a `plugins/` folder and a
/// `Cargo.toml`: the source checkout apex-host runs in.
pub fn find_project_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join("plugins").is_dir() && d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// The file name cargo gives a cdylib of `package` on this OS.
pub fn library_file_name(package: &str) -> String {
    let stem = package.replace('-', "_");
    format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Scans `plugins_dir` for plugin crates and each of `extra_dirs` for library files.
pub fn scan(plugins_dir: Option<&Path>, target_dir: &Path, extra_dirs: &[PathBuf]) -> ScanResult {
    let mut out = ScanResult::default();
    if let Some(dir) = plugins_dir {
        out.scanned.push(dir.to_path_buf());
        for entry in WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
        {
            if entry.file_name() != "Cargo.toml"
                || entry.path().components().any(|c| c.as_os_str() == "target")
            {
                continue;
            }
            match read_crate(entry.path(), target_dir) {
                Ok(Some(info)) => out.crates.push(info),
                Ok(None) => {}
                Err(reason) => out.unreadable.push((entry.path().to_path_buf(), reason)),
            }
        }
    }
    for dir in extra_dirs {
        out.scanned.push(dir.clone());
        let Ok(entries) = std::fs::read_dir(dir) else {
            out.unreadable
                .push((dir.clone(), "cannot read this plugin directory".into()));
            continue;
        };
        let mut libs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().and_then(|e| e.to_str()) == Some(std::env::consts::DLL_EXTENSION)
            })
            .collect();
        libs.sort();
        out.libraries.extend(libs);
    }
    out
}

/// Reads one `Cargo.toml`; `Ok(None)` when it is not a cdylib crate.
fn read_crate(manifest: &Path, target_dir: &Path) -> Result<Option<CrateInfo>, String> {
    let text = std::fs::read_to_string(manifest).map_err(|e| format!("cannot read: {e}"))?;
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("invalid Cargo.toml: {}", e.message()))?;
    let Some(package) = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
    else {
        return Ok(None);
    };
    let is_cdylib = doc
        .get("lib")
        .and_then(|l| l.get("crate-type"))
        .and_then(|t| t.as_array())
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some("cdylib")));
    if !is_cdylib {
        return Ok(None);
    }
    let fixture = doc
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("apex"))
        .and_then(|a| a.get("fixture"))
        .and_then(|f| f.as_bool())
        .unwrap_or(false);
    let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
    let bench_yaml = Some(dir.join("bench.yaml")).filter(|p| p.is_file());
    Ok(Some(CrateInfo {
        package: package.to_string(),
        library: target_dir.join(library_file_name(package)),
        dir,
        fixture,
        bench_yaml,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn finds_cdylib_crates_at_any_depth_and_skips_others() {
        let d = tempfile::tempdir().unwrap();
        let plugins = d.path().join("plugins");
        write(
            &plugins.join("a/Cargo.toml"),
            "[package]\nname='a-b'\n[lib]\ncrate-type=['cdylib','rlib']\n",
        );
        write(&plugins.join("a/bench.yaml"), "kernel: x\n");
        write(&plugins.join("rlib/Cargo.toml"), "[package]\nname='r'\n");
        write(
            &plugins.join("fixtures/f/Cargo.toml"),
            "[package]\nname='f'\n[package.metadata.apex]\nfixture=true\n[lib]\ncrate-type=['cdylib']\n",
        );
        write(&plugins.join("bad/Cargo.toml"), "[package\n");
        let r = scan(Some(&plugins), Path::new("/t"), &[]);
        let names: Vec<_> = r.crates.iter().map(|c| c.package.as_str()).collect();
        assert_eq!(names, ["a-b", "f"]);
        assert_eq!(
            r.crates[0].library,
            Path::new("/t").join(library_file_name("a-b"))
        );
        assert!(r.crates[0].bench_yaml.is_some() && !r.crates[0].fixture);
        assert!(r.crates[1].fixture);
        assert_eq!(r.unreadable.len(), 1);
    }
}
