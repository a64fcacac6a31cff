//! [`SuiteConfig`] and [`load`]: reads the plugins' own `bench.yaml` files and the suite files
//! `bench.yaml.d/*.yaml` (lexical order), validating everything and collecting every error of
//! every file before returning.

use super::entry::{Entry, parse_document};
use super::errors::{ConfigError, ConfigErrorKind, ConfigErrors, Loc};
use super::reader::Reader;
use super::yaml;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which layer a file belongs to (suite files override plugin files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// `plugins/<crate>/bench.yaml`.
    Plugin,
    /// `bench.yaml.d/*.yaml`.
    Suite,
}

/// One config file that was read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConfigFile {
    /// As displayed in messages: relative to the working directory when under it.
    pub path: PathBuf,
    pub kind: FileKind,
    /// Number of entries in the file (0 for a file of comments only).
    pub entries: usize,
}

/// Every entry of every config file, in precedence order (lowest first): plugin files in the
/// order given, then suite files in lexical order, each file's entries in document order.
#[derive(Debug, Clone, Default)]
pub struct SuiteConfig {
    pub(crate) files: Vec<ConfigFile>,
    pub(crate) entries: Vec<Entry>,
}

impl SuiteConfig {
    pub fn files(&self) -> &[ConfigFile] {
        &self.files
    }
}

/// Loads and validates the configuration. `suite_dir` need not exist (then there are no suite
/// files). Files directly in `suite_dir` ending in `.yaml` or `.yml` are read; names starting with
/// `.` are ignored (editor swap files).
pub fn load(plugin_files: &[PathBuf], suite_dir: &Path) -> Result<SuiteConfig, ConfigErrors> {
    let mut errors = ConfigErrors::default();
    let mut config = SuiteConfig::default();
    let suite_files = match suite_files(suite_dir) {
        Ok(files) => files,
        Err(e) => {
            errors.push(*e);
            Vec::new()
        }
    };
    let all = plugin_files
        .iter()
        .map(|p| (p.clone(), FileKind::Plugin))
        .chain(suite_files.into_iter().map(|p| (p, FileKind::Suite)));
    for (path, kind) in all {
        let shown = Arc::new(display_path(&path));
        let text = match std::fs::read(&path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(ConfigError::new(
                        Loc::file_only(&shown),
                        "<file>",
                        ConfigErrorKind::InvalidValue(format!(
                            "not UTF-8 text (invalid byte at offset {})",
                            e.utf8_error().valid_up_to()
                        )),
                        "save the file as UTF-8",
                    ));
                    continue;
                }
            },
            Err(e) => {
                errors.push(ConfigError::new(
                    Loc::file_only(&shown),
                    "<file>",
                    ConfigErrorKind::Io(e),
                    "check that the file exists and is readable",
                ));
                continue;
            }
        };
        config.add_text(shown, &text, kind, &mut errors);
    }
    errors.into_result(config)
}

impl SuiteConfig {
    /// Parses `text` as one more file of the `kind` layer, after every file read so far (so it
    /// takes precedence over them), named `shown` in messages.
    fn add_text(
        &mut self,
        shown: Arc<PathBuf>,
        text: &str,
        kind: FileKind,
        errors: &mut ConfigErrors,
    ) {
        let entries = match yaml::parse(text, &shown) {
            Ok(None) => Vec::new(),
            Ok(Some(doc)) => {
                let mut r = Reader::new(shown.clone(), text);
                let entries = parse_document(&mut r, &doc);
                for e in r.errors {
                    errors.push(e);
                }
                entries
            }
            Err(e) => {
                errors.push(*e);
                return;
            }
        };
        self.files.push(ConfigFile {
            path: shown.to_path_buf(),
            kind,
            entries: entries.len(),
        });
        let index = self.files.len() - 1;
        self.entries.extend(entries.into_iter().map(|e| Entry {
            file_index: index,
            ..e
        }));
    }

    /// Adds a layer written by the command line (the engine flags, `cli/engine_opts.rs`) as the
    /// last suite file: it overrides every file, and its errors name it as `name`.
    pub fn add_command_line_layer(
        &mut self,
        name: &str,
        yaml_text: &str,
    ) -> Result<(), ConfigErrors> {
        let mut errors = ConfigErrors::default();
        self.add_text(
            Arc::new(PathBuf::from(name)),
            yaml_text,
            FileKind::Suite,
            &mut errors,
        );
        errors.into_result(())
    }
}

fn suite_files(dir: &Path) -> Result<Vec<PathBuf>, Box<ConfigError>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Box::new(ConfigError::new(
                Loc::file_only(&Arc::new(display_path(dir))),
                "<directory>",
                ConfigErrorKind::Io(e),
                "check that the suite directory is readable",
            )));
        }
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|d| d.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|d| d.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
        })
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// `path` relative to the working directory when it lies under it, so messages read
/// `bench.yaml.d/20-cuda.yaml:14:3` rather than an absolute path.
fn display_path(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
}
