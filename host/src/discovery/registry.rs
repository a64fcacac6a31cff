//! [`discover`]: scan, build and load everything, then reject duplicate kernel ids. The result is
//! a [`Registry`]: the plugins that loaded, and one [`LoadFailure`] per thing that did not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::{CrateInfo, build_stale, load_library, scan};
use crate::model::KernelInfo;

/// Where to look and what to do on the way.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// The source checkout (its `plugins/` is scanned and its crates built); None outside one.
    pub root: Option<PathBuf>,
    /// Where cargo puts the plugin libraries (`<target>/<profile>`).
    pub target_dir: PathBuf,
    /// `--plugin-dir` folders, then the `APEX_PLUGIN_PATH` entries.
    pub plugin_dirs: Vec<PathBuf>,
    /// `--no-build`: load what is built, never run cargo.
    pub no_build: bool,
    /// Build with `--release` (the host's own profile).
    pub release: bool,
    /// Also load crates marked `[package.metadata.apex] fixture = true` (test plugins).
    pub fixtures: bool,
}

/// A library that loaded.
#[derive(Debug, Clone, Serialize)]
pub struct LoadedPlugin {
    pub name: String,
    pub version: String,
    pub library: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crate_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench_yaml: Option<PathBuf>,
    pub kernels: Vec<KernelInfo>,
    pub load_ms: f64,
}

/// Something that was found but could not be used, with a one-line reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadFailure {
    /// The library file, crate directory or manifest concerned.
    pub path: PathBuf,
    pub reason: String,
}

/// Everything discovery found.
#[derive(Default, Serialize)]
pub struct Registry {
    pub scanned_paths: Vec<PathBuf>,
    pub plugins: Vec<LoadedPlugin>,
    pub failures: Vec<LoadFailure>,
    /// Packages cargo built during this discovery.
    pub built: Vec<String>,
}

impl Registry {
    /// Every kernel that loaded, in plugin order, then by kernel id within a plugin.
    pub fn kernels(&self) -> impl Iterator<Item = &KernelInfo> {
        self.plugins.iter().flat_map(|p| p.kernels.iter())
    }

    /// The plugins' own bench.yaml files, in plugin order.
    pub fn bench_files(&self) -> Vec<PathBuf> {
        self.plugins
            .iter()
            .filter_map(|p| p.bench_yaml.clone())
            .collect()
    }

    /// The `kernel_manifest.json` document (schema: `docs/schemas/kernel_manifest.schema.json`).
    pub fn manifest(&self) -> serde_json::Value {
        serde_json::json!({
            "schema_version": 1,
            "scanned_paths": self.scanned_paths,
            "plugins": self.plugins,
            "failures": self.failures,
        })
    }
}

/// Scans, builds (unless `no_build`) and loads every plugin; never stops at the first failure.
pub fn discover(opts: &DiscoverOptions) -> Registry {
    let plugins_dir = opts.root.as_ref().map(|r| r.join("plugins"));
    let found = scan(plugins_dir.as_deref(), &opts.target_dir, &opts.plugin_dirs);
    let mut reg = Registry {
        scanned_paths: found.scanned.clone(),
        ..Registry::default()
    };
    reg.failures
        .extend(found.unreadable.iter().map(|(p, r)| LoadFailure {
            path: p.clone(),
            reason: r.clone(),
        }));

    let crates: Vec<&CrateInfo> = found
        .crates
        .iter()
        .filter(|c| opts.fixtures || !c.fixture)
        .collect();
    let mut build_failed = BTreeMap::new();
    if let (false, Some(root)) = (opts.no_build, opts.root.as_ref()) {
        let outcome = build_stale(root, &crates, opts.release);
        reg.built = outcome.built;
        build_failed = outcome.failed;
    }

    let mut seen = std::collections::BTreeSet::new();
    for krate in &crates {
        if let Some(reason) = build_failed.get(&krate.package) {
            reg.failures.push(LoadFailure {
                path: krate.dir.clone(),
                reason: reason.clone(),
            });
        } else if !krate.library.is_file() {
            reg.failures.push(LoadFailure {
                path: krate.dir.clone(),
                reason: format!(
                    "not built: `{}` does not exist (hint: run without --no-build, or `cargo build -p {}`)",
                    krate.library.display(),
                    krate.package
                ),
            });
        } else {
            seen.insert(krate.library.clone());
            load_into(&mut reg, &krate.library, Some(krate));
        }
    }
    for lib in &found.libraries {
        if seen.insert(lib.clone()) {
            load_into(&mut reg, lib, None);
        }
    }
    reject_duplicate_ids(&mut reg);
    reg
}

fn load_into(reg: &mut Registry, library: &Path, krate: Option<&CrateInfo>) {
    let start = Instant::now();
    match load_library(library, krate.map(|c| c.dir.as_path())) {
        Ok(lib) => {
            let mut kernels = Vec::new();
            // The FFI objects are dropped here: the host only plans with descriptors; workers
            // load the library again and run the kernel in their own process.
            for (info, _) in lib.kernels {
                if kernels.iter().any(|k: &KernelInfo| k.id == info.id) {
                    reg.failures.push(LoadFailure {
                        path: library.to_path_buf(),
                        reason: format!(
                            "declares kernel id `{}` twice; the second is ignored",
                            info.id
                        ),
                    });
                    continue;
                }
                kernels.push(info);
            }
            // `inventory` yields registrations in link order, which moves when unrelated code
            // changes; the plan (and so the report and the rounds) follows kernel ids instead.
            kernels.sort_by(|a, b| a.id.cmp(&b.id));
            reg.plugins.push(LoadedPlugin {
                name: lib.name,
                version: lib.version,
                library: lib.path,
                crate_dir: krate.map(|c| c.dir.clone()),
                bench_yaml: krate.and_then(|c| c.bench_yaml.clone()),
                kernels,
                load_ms: start.elapsed().as_secs_f64() * 1e3,
            });
        }
        Err(reason) => reg.failures.push(LoadFailure {
            path: library.to_path_buf(),
            reason,
        }),
    }
}

/// A kernel id declared by two plugins is ambiguous: it is removed from both, with one failure
/// per library naming the other.
fn reject_duplicate_ids(reg: &mut Registry) {
    let mut owners: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
    for p in &reg.plugins {
        for k in &p.kernels {
            owners
                .entry(k.id.clone())
                .or_default()
                .push((p.name.clone(), p.library.clone()));
        }
    }
    for (id, who) in owners.into_iter().filter(|(_, w)| w.len() > 1) {
        for (name, lib) in &who {
            let others: Vec<String> = who
                .iter()
                .filter(|(_, l)| l != lib)
                .map(|(n, _)| format!("`{n}`"))
                .collect();
            reg.failures.push(LoadFailure {
                path: lib.clone(),
                reason: format!(
                    "duplicate kernel id `{id}`: plugin `{name}` and {} both declare it; neither is run (hint: rename one)",
                    others.join(", ")
                ),
            });
        }
        for p in &mut reg.plugins {
            p.kernels.retain(|k| k.id != id);
        }
    }
}
