//! [`RunWriter`]: writes one run's report into `--output-dir`, streaming and crash-safe.
//!
//! ```text
//! begin   → <out>/.partial/<run_id>/                      (created; must not exist yet)
//! record  → <out>/.partial/<run_id>/cases.jsonl            one line per finished case, fsynced
//!           <out>/.partial/<run_id>/kernels/<case>.json     the same case, written atomically
//! finish  → <out>/env.json, kernel_manifest.json, kernels/<kernel id>.json, summary.json,
//!           summary.md (each atomically, in this order), then removes .partial/<run_id>/
//! ```
//!
//! Nothing outside `.partial/` is touched before `finish`, so a host killed mid-run (even by
//! SIGKILL) leaves the previous report as it was, and the cases this run finished readable in
//! `cases.jsonl` ([`read_partial`]). A kill during `finish` leaves each file whole, old or new;
//! `summary.json` comes after everything it refers to.

use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::markdown::render_summary_markdown;
use super::paths::{self, file_stem};
use super::{WriteError, write_atomic, write_json_atomic};
use crate::model::{CaseResult, RunSummary};

/// The `schema_version` of `kernels/<kernel id>.json`.
pub const KERNEL_REPORT_SCHEMA_VERSION: u32 = 1;

/// The report of one run in progress. Dropping it without [`RunWriter::finish`] keeps the
/// partial folder: that is the crash path, on purpose.
#[derive(Debug)]
pub struct RunWriter {
    output_dir: PathBuf,
    partial: PathBuf,
    jsonl_path: PathBuf,
    jsonl: File,
    recorded: usize,
    regressions_md: Option<String>,
}

impl RunWriter {
    /// Creates `<output_dir>/.partial/<run_id>/` and its empty `cases.jsonl`. Fails if that folder
    /// already exists: run ids are unique, and appending to another run's cases would mix them.
    pub fn begin(output_dir: &Path, run_id: &str) -> Result<RunWriter, WriteError> {
        let partial = paths::partial_dir(output_dir, run_id);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WriteError::Io { path, source }
        };
        let parent = output_dir.join(paths::PARTIAL_DIR);
        std::fs::create_dir_all(&parent).map_err(io(&parent))?;
        std::fs::create_dir(&partial).map_err(io(&partial))?;
        let kernels = partial.join(paths::KERNELS_DIR);
        std::fs::create_dir(&kernels).map_err(io(&kernels))?;
        let jsonl_path = partial.join(paths::CASES_JSONL);
        let jsonl = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&jsonl_path)
            .map_err(io(&jsonl_path))?;
        // Make the new folder entries themselves durable, so the fsynced lines can be found.
        sync_dir(&partial)?;
        sync_dir(&parent)?;
        Ok(RunWriter {
            output_dir: output_dir.to_path_buf(),
            partial,
            jsonl_path,
            jsonl,
            recorded: 0,
            regressions_md: None,
        })
    }

    /// Where this run's finished cases are kept until `finish`.
    pub fn partial_dir(&self) -> &Path {
        &self.partial
    }

    /// Cases recorded so far.
    pub fn recorded(&self) -> usize {
        self.recorded
    }

    /// Appends one finished case to `cases.jsonl` (fsynced before returning) and writes it to
    /// `kernels/<case id, file-safe>.json` in the partial folder.
    pub fn record(&mut self, case: &CaseResult) -> Result<(), WriteError> {
        let mut line = compact_sorted(case).map_err(|source| WriteError::Json {
            path: self.jsonl_path.clone(),
            source,
        })?;
        line.push('\n');
        let io = |source| WriteError::Io {
            path: self.jsonl_path.clone(),
            source,
        };
        self.jsonl.write_all(line.as_bytes()).map_err(io)?;
        self.jsonl.sync_data().map_err(io)?;
        let per_case = self
            .partial
            .join(paths::KERNELS_DIR)
            .join(format!("{}.json", file_stem(&case.id)));
        write_json_atomic(&per_case, case)?;
        self.recorded += 1;
        Ok(())
    }

    /// The `## Regressions` block that `finish` puts into `summary.md` (a compare result).
    pub fn set_regressions_markdown(&mut self, markdown: Option<String>) {
        self.regressions_md = markdown;
    }

    /// Writes the final report and removes the partial folder. Returns the files written, in
    /// the order written. `summary` is authoritative: the per-kernel files hold its cases, and
    /// `kernels/*.json` left from an earlier run for kernels not in this run are removed.
    pub fn finish(
        self,
        summary: &RunSummary,
        manifest: &Value,
        env: &Value,
    ) -> Result<Vec<PathBuf>, WriteError> {
        let out = &self.output_dir;
        let mut written = Vec::new();

        let env_path = out.join(paths::ENV_JSON);
        write_json_atomic(&env_path, env)?;
        written.push(env_path);

        let manifest_path = out.join(paths::MANIFEST_JSON);
        write_json_atomic(&manifest_path, manifest)?;
        written.push(manifest_path);

        let kernels_dir = out.join(paths::KERNELS_DIR);
        let mut kernel_files = BTreeSet::new();
        for (kernel, doc) in kernel_reports(summary) {
            let name = format!("{}.json", file_stem(&kernel));
            let path = kernels_dir.join(&name);
            write_json_atomic(&path, &doc)?;
            kernel_files.insert(name);
            written.push(path);
        }
        remove_stale_kernel_files(&kernels_dir, &kernel_files)?;

        let summary_path = out.join(paths::SUMMARY_JSON);
        write_json_atomic(&summary_path, summary)?;
        written.push(summary_path);

        let md_path = out.join(paths::SUMMARY_MD);
        let md = render_summary_markdown(summary, self.regressions_md.as_deref());
        write_atomic(&md_path, md.as_bytes())?;
        written.push(md_path);

        self.remove_partial()?;
        Ok(written)
    }

    /// Ends a run that finished no case (interrupted before the first one): removes its partial
    /// folder and writes nothing, so the previous report stays as it was.
    pub fn discard(self) -> Result<(), WriteError> {
        self.remove_partial()
    }

    fn remove_partial(self) -> Result<(), WriteError> {
        let partial = self.partial.clone();
        drop(self);
        std::fs::remove_dir_all(&partial).map_err(|source| WriteError::Io {
            path: partial.clone(),
            source,
        })?;
        // `.partial/` itself goes too once no other run (live or killed) has cases in it.
        if let Some(parent) = partial.parent() {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(())
    }
}

/// The documents of `kernels/<kernel id>.json`: per kernel id, its cases sorted by case id.
pub fn kernel_reports(summary: &RunSummary) -> BTreeMap<String, Value> {
    let mut by_kernel: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for case in summary.benchmarks.values() {
        by_kernel.entry(&case.key.kernel).or_default().push(case);
    }
    by_kernel
        .into_iter()
        .map(|(kernel, mut cases)| {
            cases.sort_by(|a, b| a.id.cmp(&b.id));
            let plugin = cases.first().map(|c| c.plugin.clone()).unwrap_or_default();
            let doc = json!({
                "schema_version": KERNEL_REPORT_SCHEMA_VERSION,
                "suite": summary.suite,
                "timestamp_utc": summary.timestamp_utc,
                "kernel": kernel,
                "plugin": plugin,
                "cases": cases,
            });
            (kernel.to_string(), doc)
        })
        .collect()
}

/// Re-renders `<dir>/summary.md` (atomically) from a summary, e.g. once a compare result exists.
pub fn write_summary_markdown(
    dir: &Path,
    summary: &RunSummary,
    regressions: Option<&str>,
) -> Result<PathBuf, WriteError> {
    let path = dir.join(paths::SUMMARY_MD);
    write_atomic(
        &path,
        render_summary_markdown(summary, regressions).as_bytes(),
    )?;
    Ok(path)
}

/// Why the finished cases of a killed run could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadPartialError {
    #[error("failed to read `{path}`: {source}\n(hint: list `{}` to see which runs left cases)", path.parent().and_then(Path::parent).unwrap_or(path).display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "failed to parse `{path}` line {line}: {source}\n(hint: only the last line may be cut short by a kill; an earlier bad line means the file was edited)"
    )]
    Json {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
}

/// The cases a run recorded before it stopped (finished or killed). A last line cut short by a
/// kill mid-write is ignored; any other unreadable line is an error.
pub fn read_partial(output_dir: &Path, run_id: &str) -> Result<Vec<CaseResult>, ReadPartialError> {
    let path = paths::partial_dir(output_dir, run_id).join(paths::CASES_JSONL);
    let text = std::fs::read_to_string(&path).map_err(|source| ReadPartialError::Io {
        path: path.clone(),
        source,
    })?;
    let complete_lines = if text.ends_with('\n') || text.is_empty() {
        text.lines().count()
    } else {
        text.lines().count() - 1
    };
    text.lines()
        .take(complete_lines)
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| ReadPartialError::Json {
                path: path.clone(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

fn remove_stale_kernel_files(dir: &Path, keep: &BTreeSet<String>) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_report = name.ends_with(".json") && !name.starts_with('.');
        if is_report && !keep.contains(&name) && entry.path().is_file() {
            std::fs::remove_file(entry.path()).map_err(|source| WriteError::Io {
                path: entry.path(),
                source,
            })?;
        }
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<(), WriteError> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|source| WriteError::Io {
            path: dir.to_path_buf(),
            source,
        })
}

/// One line of JSON with keys sorted at every level (the workspace's `preserve_order` would
/// otherwise keep declaration order).
fn compact_sorted<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    fn sort(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.sort_keys();
                map.values_mut().for_each(sort);
            }
            Value::Array(items) => items.iter_mut().for_each(sort),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(value)?;
    sort(&mut v);
    serde_json::to_string(&v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{sample_summary, skipped_case};

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn finish_writes_the_layout_and_removes_the_partial_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("reports");
        let summary = sample_summary();
        let mut w = RunWriter::begin(&out, "run-1").unwrap();
        for case in summary.benchmarks.values() {
            w.record(case).unwrap();
        }
        assert_eq!(w.recorded(), summary.benchmarks.len());
        let files = w
            .finish(
                &summary,
                &json!({"schema_version": 1}),
                &json!({"host": {}}),
            )
            .unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(&out).unwrap().display().to_string())
            .collect();
        assert_eq!(names.first().unwrap(), "env.json");
        assert_eq!(names[1], "kernel_manifest.json");
        assert_eq!(&names[names.len() - 2..], ["summary.json", "summary.md"]);
        assert!(names.contains(&"kernels/tile_ops.tile_pack.json".to_string()));
        assert!(!out.join(".partial").exists());

        let text = read(&out.join("summary.json"));
        let back: RunSummary = serde_json::from_str(&text).unwrap();
        // Floats may move by one ulp through text (serde_json is built without
        // `float_roundtrip`), so compare what is exact.
        let ids = |s: &RunSummary| s.benchmarks.keys().cloned().collect::<Vec<_>>();
        assert_eq!(ids(&back), ids(&summary));
        assert_eq!(
            (back.counts, back.status),
            (summary.counts.clone(), summary.status.clone())
        );
        assert!(
            back.benchmarks
                .values()
                .zip(summary.benchmarks.values())
                .all(|(a, b)| a.status == b.status && a.key == b.key)
        );
        let kernel: Value =
            serde_json::from_str(&read(&out.join("kernels/tile_ops.tile_pack.json"))).unwrap();
        let ids: Vec<&str> = kernel["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "cases of a kernel are sorted by id");
        assert!(ids.iter().all(|id| id.starts_with("tile_ops.tile_pack/")));
        assert!(read(&out.join("summary.md")).contains("## Leaderboard"));
    }

    #[test]
    fn a_killed_run_keeps_the_previous_report_and_its_finished_cases() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let previous = sample_summary();
        RunWriter::begin(out, "run-1")
            .unwrap()
            .finish(&previous, &json!({}), &json!({}))
            .unwrap();
        let before: Vec<(PathBuf, String)> = ["summary.json", "summary.md", "env.json"]
            .iter()
            .map(|n| (out.join(n), read(&out.join(n))))
            .collect();

        let mut w = RunWriter::begin(out, "run-2").unwrap();
        let first = skipped_case("tile_ops.tile_pack", "cuda", "cuda_unavailable: no libcuda");
        w.record(&first).unwrap();
        let second = skipped_case("nn_ops.gelu", "cuda", "cuda_unavailable: no libcuda");
        w.record(&second).unwrap();
        let partial = w.partial_dir().to_path_buf();
        // What SIGKILL leaves: no finish, no destructor work beyond closing the file.
        drop(w);
        // A kill in the middle of a `write` leaves a cut-off last line.
        let mut f = OpenOptions::new()
            .append(true)
            .open(partial.join("cases.jsonl"))
            .unwrap();
        f.write_all(b"{\"id\":\"cut").unwrap();

        for (path, text) in &before {
            assert_eq!(&read(path), text, "{} unchanged", path.display());
        }
        let recovered = read_partial(out, "run-2").unwrap();
        assert_eq!(recovered, vec![first.clone(), second]);
        assert!(
            partial
                .join("kernels")
                .join(format!("{}.json", file_stem(&first.id)))
                .is_file()
        );
        // The same run id cannot be begun twice.
        assert!(RunWriter::begin(out, "run-2").is_err());
    }

    #[test]
    fn a_corrupt_middle_line_is_an_error_with_its_line_number() {
        let dir = tempfile::tempdir().unwrap();
        let w = RunWriter::begin(dir.path(), "r").unwrap();
        std::fs::write(w.partial_dir().join("cases.jsonl"), "not json\n{}\n").unwrap();
        let err = read_partial(dir.path(), "r").unwrap_err().to_string();
        assert!(
            err.contains("line 1") && err.contains("cases.jsonl"),
            "{err}"
        );
    }

    #[test]
    fn finish_removes_kernel_files_of_kernels_no_longer_run() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join("kernels/old_family.gone.json");
        std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
        std::fs::write(&stale, "{}\n").unwrap();
        RunWriter::begin(dir.path(), "r")
            .unwrap()
            .finish(&sample_summary(), &json!({}), &json!({}))
            .unwrap();
        assert!(!stale.exists());
    }

    #[test]
    fn cases_jsonl_lines_have_sorted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = RunWriter::begin(dir.path(), "r").unwrap();
        w.record(&skipped_case("a.b", "cpu", "x")).unwrap();
        let line = read(&w.partial_dir().join("cases.jsonl"));
        assert_eq!(line.lines().count(), 1);
        let at = |k: &str| line.find(&format!("\"{k}\"")).unwrap();
        assert!(at("id") < at("key") && at("key") < at("plugin") && at("plugin") < at("status"));
        assert!(at("backend") < at("kernel") && at("kernel") < at("precision"));
    }
}
