//! [`AnchorError`]: why an anchor file cannot be used. Each names the file (and the line, and the
//! field) so the fix is one edit; a row that matches no case is not an error (it is listed as
//! unmatched in the report).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error(
        "failed to read the anchor results `{path}`: {source}\n(hint: check the path given to \
         `--anchor-results`)"
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "failed to parse the anchor results at `{path}:{line}:{column}`: {message}\n(hint: every \
         line is one JSON object, as the scripts under benches/anchors/ write them; see \
         docs/anchors.md)"
    )]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "failed to read the anchor row at `{path}:{line}`: `{field}` {problem}\n(hint: the \
         fields are listed in docs/anchors.md; the schema is \
         docs/schemas/anchor_result.schema.json)"
    )]
    Field {
        path: PathBuf,
        line: usize,
        field: String,
        problem: String,
    },
    #[error(
        "failed to use the anchor results `{path}`: the file holds no row\n(hint: did the anchor \
         script run? It writes one JSON line per measured implementation)"
    )]
    Empty { path: PathBuf },
}
