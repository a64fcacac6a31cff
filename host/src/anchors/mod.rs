//! Anchors: other implementations' times (PyTorch, NumPy, SciPy, CuPy, …) set beside our
//! measured cases, so a report states the side-by-side comparison our goals are written in.
//!
//! ```text
//! --anchor-results FILE… ─► load (JSON lines, one AnchorRow each; errors name file:line and field)
//!                              └─► attach (match rows to cases; ratio = anchor / our p50)
//!                                    ├─► case.anchors      (summary.json, summary.md, index.html)
//!                                    └─► summary.anchors   (files with SHA-256, unmatched rows)
//! ```
//!
//! - [`row`]: [`AnchorRow`], one validated line of the documented schema
//!   (`docs/schemas/anchor_result.schema.json`, `docs/anchors.md`).
//! - [`load`]: [`load`] reads the files into an [`AnchorSet`].
//! - [`matching`]: [`attach`] puts the rows beside the cases they describe.
//! - [`errors`]: [`AnchorError`], every way a file can be unusable.
//!
//! Nothing here prints; the report renders what [`attach`] recorded.

mod errors;
mod load;
mod matching;
mod row;

pub use errors::AnchorError;
pub use load::{AnchorSet, SourcedRow, load};
pub use matching::{attach, param_matches};
pub use row::{AnchorRow, FieldError};
