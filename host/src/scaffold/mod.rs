//! `apex-host new NAME [--cuda]`: a new plugin crate under `plugins/NAME/` from the template in
//! `template/` (a CPU kernel with its f64 reference and unit tests, optionally the same kernel
//! in CUDA compiled with NVRTC, a bench.yaml and a README). The crate joins the workspace by the
//! `plugins/*` glob, so `discover` lists it and `run` builds and measures it with no edit.
//!
//! Templates are plain files with `__NAME__` (the family, e.g. `demo`) and `__CRATE__`
//! (`apex-plugin-demo`) placeholders; lines between `//@cuda-begin` and `//@cuda-end` are kept
//! only with `--cuda`, those between `//@cpu-only-begin` and `//@cpu-only-end` only without.

use std::path::{Path, PathBuf};

/// Why a plugin could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error(
        "`{0}` is not a plugin name: use lowercase letters, digits and `_`, starting with a letter (it becomes the kernel id prefix `{0}.` and a Rust identifier)"
    )]
    BadName(String),
    #[error("`{}` already exists; pick another name or remove it", .0.display())]
    Exists(PathBuf),
    #[error(
        "`{}` is not an apex-bench checkout (no plugins/ folder beside a Cargo.toml); run from the checkout or pass --root",
        .0.display()
    )]
    NotACheckout(PathBuf),
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

const FILES: [(&str, &str); 5] = [
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    ("bench.yaml", include_str!("template/bench.yaml.tmpl")),
    ("README.md", include_str!("template/README.md.tmpl")),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl")),
    ("src/scale.rs", include_str!("template/scale.rs.tmpl")),
];

/// Whether `name` can be a plugin family: `[a-z][a-z0-9_]*`, at most 40 characters.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 40
}

/// Writes `plugins/<name>/` under `root`; returns the files written. Nothing is written when any
/// check fails, and a failure half-way removes the folder again.
pub fn scaffold(root: &Path, name: &str, cuda: bool) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !valid_name(name) {
        return Err(ScaffoldError::BadName(name.to_string()));
    }
    if !root.join("Cargo.toml").is_file() || !root.join("plugins").is_dir() {
        return Err(ScaffoldError::NotACheckout(root.to_path_buf()));
    }
    let dir = root.join("plugins").join(name);
    if dir.exists() {
        return Err(ScaffoldError::Exists(dir));
    }
    let crate_name = format!("apex-plugin-{}", name.replace('_', "-"));
    let mut written = Vec::new();
    for (file, template) in FILES {
        let path = dir.join(file);
        let text = render(template, name, &crate_name, cuda);
        let result = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(source) = result {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(ScaffoldError::Write { path, source });
        }
        written.push(path);
    }
    format_sources(&written);
    Ok(written)
}

/// Runs rustfmt (2024 edition, the workspace's) over the written Rust files, so the crate is
/// formatted for any name length. Best effort: without rustfmt the files are valid, only
/// possibly not `cargo fmt` clean.
fn format_sources(files: &[PathBuf]) {
    let sources: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .collect();
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(sources)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// `template` with the placeholders filled and the sections of the other variant dropped.
pub fn render(template: &str, name: &str, crate_name: &str, cuda: bool) -> String {
    let mut out = String::with_capacity(template.len());
    let mut keep = true;
    for line in template.lines() {
        match line.trim() {
            "//@cuda-begin" => keep = cuda,
            "//@cpu-only-begin" => keep = !cuda,
            "//@cuda-end" | "//@cpu-only-end" => keep = true,
            _ if keep => {
                out.push_str(line);
                out.push('\n');
            }
            _ => {}
        }
    }
    let (backends, doc, readme) = if cuda {
        (
            "Backend::Cpu, Backend::Cuda",
            " and in CUDA (NVRTC)",
            " and in CUDA (compiled with NVRTC at setup)",
        )
    } else {
        ("Backend::Cpu", "", "")
    };
    out.replace("__CRATE__", crate_name)
        .replace("__BACKENDS__", backends)
        .replace("__CUDA_DOC__", doc)
        .replace("__CUDA_README__", readme)
        .replace("__NAME__", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["demo", "my_family", "conv2d"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "Demo", "2d", "my-family", "a.b", &"x".repeat(41)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn each_variant_keeps_only_its_sections_and_fills_every_placeholder() {
        for cuda in [false, true] {
            for (file, template) in FILES {
                let text = render(template, "demo", "apex-plugin-demo", cuda);
                for placeholder in ["__NAME__", "__CRATE__", "__BACKENDS__", "__CUDA_"] {
                    assert!(!text.contains(placeholder), "{file}: {placeholder} is left");
                }
                assert!(!text.contains("//@"), "{file}: a marker is left");
                if file == "src/scale.rs" {
                    assert_eq!(text.contains("CudaSession"), cuda, "{file}");
                    assert!(text.contains("\"demo.scale\""));
                }
                if file == "Cargo.toml" {
                    assert_eq!(text.contains("cudarc"), cuda);
                    assert!(text.contains("name = \"apex-plugin-demo\""));
                }
            }
        }
    }

    #[test]
    fn a_plugin_is_written_once_and_nowhere_else() {
        let root = tempfile::tempdir().unwrap();
        assert!(matches!(
            scaffold(root.path(), "demo", false),
            Err(ScaffoldError::NotACheckout(_))
        ));
        std::fs::write(root.path().join("Cargo.toml"), "").unwrap();
        std::fs::create_dir(root.path().join("plugins")).unwrap();
        let files = scaffold(root.path(), "demo", true).unwrap();
        assert_eq!(files.len(), FILES.len());
        assert!(root.path().join("plugins/demo/src/scale.rs").is_file());
        let again = scaffold(root.path(), "demo", true).unwrap_err();
        assert!(again.to_string().contains("already exists"), "{again}");
        assert!(matches!(
            scaffold(root.path(), "Bad", false),
            Err(ScaffoldError::BadName(_))
        ));
    }
}
