//! [`load`]: reads the `--anchor-results` files (JSON lines) into an [`AnchorSet`], each row
//! with its `file:line`. The first unusable line stops the load with an error naming the file,
//! the line and the field; blank lines are skipped.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{AnchorError, AnchorRow};
use crate::model::AnchorFile;

/// Every row of the given files, in file and line order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnchorSet {
    pub files: Vec<AnchorFile>,
    pub rows: Vec<SourcedRow>,
}

/// A row and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedRow {
    pub row: AnchorRow,
    /// `path:line`, as the report cites it.
    pub source: String,
}

/// Reads `paths` in order.
pub fn load(paths: &[PathBuf]) -> Result<AnchorSet, AnchorError> {
    let mut set = AnchorSet::default();
    for path in paths {
        let bytes = std::fs::read(path).map_err(|source| AnchorError::Read {
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let rows = parse_lines(path, &text)?;
        if rows.is_empty() {
            return Err(AnchorError::Empty { path: path.clone() });
        }
        set.files.push(AnchorFile {
            path: path.display().to_string(),
            sha256: Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            rows: rows.len(),
        });
        set.rows.extend(rows);
    }
    Ok(set)
}

fn parse_lines(path: &Path, text: &str) -> Result<Vec<SourcedRow>, AnchorError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| AnchorError::Syntax {
                path: path.to_path_buf(),
                line: n,
                column: e.column(),
                message: e.to_string(),
            })?;
        let row = AnchorRow::from_json(&value).map_err(|e| AnchorError::Field {
            path: path.to_path_buf(),
            line: n,
            field: e.field,
            problem: e.problem,
        })?;
        rows.push(SourcedRow {
            row,
            source: format!("{}:{n}", path.display()),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {"n": 1024}, "precision": "fp32", "backend": "cpu", "us_per_call": 3.5}"#;

    fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn rows_keep_their_file_and_line_and_files_their_hash() {
        let dir = tempfile::tempdir().unwrap();
        let a = file(dir.path(), "a.jsonl", &format!("{GOOD}\n\n{GOOD}\n"));
        let b = file(dir.path(), "b.jsonl", &format!("{GOOD}\n"));
        let set = load(&[a.clone(), b.clone()]).unwrap();
        let sources: Vec<&str> = set.rows.iter().map(|r| r.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                format!("{}:1", a.display()),
                format!("{}:3", a.display()),
                format!("{}:1", b.display())
            ]
        );
        assert_eq!(set.files.len(), 2);
        assert_eq!(set.files[0].rows, 2);
        assert_eq!(set.files[0].sha256.len(), 64);
        assert_ne!(set.files[0].sha256, set.files[1].sha256);
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let a = file(dir.path(), "a.jsonl", &format!("{GOOD}\n{{\"kernel\": \n"));
        let e = load(std::slice::from_ref(&a)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&format!("`{}:2:", a.display())), "{msg}");
        assert!(matches!(e, AnchorError::Syntax { line: 2, .. }));
    }

    #[test]
    fn a_field_error_names_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let bad = GOOD.replace("\"cpu\"", "\"gpu\"");
        let a = file(dir.path(), "a.jsonl", &format!("{GOOD}\n{GOOD}\n{bad}\n"));
        let msg = load(std::slice::from_ref(&a)).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("`{}:3`: `backend` is `gpu`", a.display())),
            "{msg}"
        );
        assert!(msg.contains("(hint:"), "{msg}");
    }

    #[test]
    fn missing_and_empty_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(&[dir.path().join("none.jsonl")]).unwrap_err();
        assert!(matches!(e, AnchorError::Read { .. }), "{e}");
        let empty = file(dir.path(), "empty.jsonl", "\n\n");
        let e = load(&[empty]).unwrap_err();
        assert!(matches!(e, AnchorError::Empty { .. }), "{e}");
    }
}
