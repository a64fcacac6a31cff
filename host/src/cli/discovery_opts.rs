//! The discovery flags shared by `run` and `discover`, and their resolution into
//! [`DiscoverOptions`]: the source checkout, the target folder, extra plugin folders.

use std::path::{Path, PathBuf};

use crate::discovery::{DiscoverOptions, find_project_root};

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Discovery")]
pub struct DiscoveryOpts {
    /// Also load the plugin libraries in DIR (repeatable). `APEX_PLUGIN_PATH` (colon-separated)
    /// adds more.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,
    /// Load what is already built; never run cargo to build stale plugin crates.
    #[arg(long)]
    pub no_build: bool,
    /// Also load test plugins (crates with `[package.metadata.apex] fixture = true`).
    #[arg(long)]
    pub fixtures: bool,
    /// The source checkout whose `plugins/` is scanned [default: the nearest ancestor of the
    /// current folder with `plugins/` and `Cargo.toml`].
    #[arg(long, value_name = "DIR", env = "APEX_ROOT")]
    pub root: Option<PathBuf>,
    /// The suite configs merged over each plugin's bench.yaml, in lexical order [default:
    /// `bench.yaml.d/` of the checkout].
    #[arg(long, value_name = "DIR", env = "APEX_CONFIG_DIR")]
    pub config_dir: Option<PathBuf>,
}

impl DiscoveryOpts {
    /// The suite config folder: `--config-dir`, else `<root>/bench.yaml.d`, else `./bench.yaml.d`.
    pub fn suite_dir(&self, root: Option<&Path>) -> PathBuf {
        self.config_dir
            .clone()
            .unwrap_or_else(|| root.unwrap_or(Path::new(".")).join("bench.yaml.d"))
    }

    pub fn resolve(&self) -> DiscoverOptions {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let root = self.root.clone().or_else(|| find_project_root(&cwd));
        let mut plugin_dirs = self.plugin_dirs.clone();
        if let Some(path) = std::env::var_os("APEX_PLUGIN_PATH") {
            plugin_dirs.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
        }
        let release = !cfg!(debug_assertions);
        let profile = if release { "release" } else { "debug" };
        let target_base = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(|| root.as_ref().map(|r| r.join("target")))
            .unwrap_or_else(|| PathBuf::from("target"));
        DiscoverOptions {
            root,
            target_dir: target_base.join(profile),
            plugin_dirs,
            no_build: self.no_build,
            release,
            fixtures: self.fixtures,
        }
    }
}
