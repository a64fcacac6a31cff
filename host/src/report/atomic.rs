//! Atomic file writes: a temporary file in the same directory, fsync, then rename, so a reader
//! (or a killed run) sees either the old file or the new one, never half of one.

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("failed to write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to serialize `{path}`: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Writes `bytes` to `path` atomically, creating parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)
}

/// Writes `value` as pretty JSON with sorted keys and one trailing newline, atomically.
///
/// Keys are sorted by going through `serde_json::Value`, whose maps are ordered; the workspace
/// enables `preserve_order`, so the sort is explicit here.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), WriteError> {
    let text = to_sorted_json(value).map_err(|source| WriteError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    write_atomic(path, text.as_bytes())
}

/// Pretty JSON, keys sorted at every level, with one trailing newline.
pub fn to_sorted_json<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(value)?;
    sort_keys(&mut v);
    let mut text = serde_json::to_string_pretty(&v)?;
    text.push('\n');
    Ok(text)
}

fn sort_keys(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_sorted_keys_and_one_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b.json");
        write_json_atomic(&p, &serde_json::json!({"z": 1, "a": {"y": 2, "b": 3}})).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.find("\"a\"").unwrap() < text.find("\"z\"").unwrap());
        assert!(text.find("\"b\"").unwrap() < text.find("\"y\"").unwrap());
        assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }
}
