//! [`AnchorMatch`] and [`AnchorSummary`]: what `--anchor-results` adds to a report. An anchor is
//! another implementation's time for one of our cases (PyTorch, NumPy, SciPy, …), written by the
//! scripts under `benches/anchors/` (schema: `docs/schemas/anchor_result.schema.json`); the
//! `anchors` module reads and matches them, the report shows them beside our figures.

use serde::{Deserialize, Serialize};

/// One anchor row set beside a case (`anchors` of a case in `summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnchorMatch {
    /// The other implementation (`torch_compile`, `numpy`, …).
    #[serde(rename = "impl")]
    pub implementation: String,
    /// The anchor's time per call in microseconds; absent when the row has an `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_call: Option<f64>,
    /// Anchor time / our p50: above 1 we are faster. Our p50 is the headline's, or that of
    /// [`AnchorMatch::ours_mode`]. Absent when either side has no valid time (an anchor error;
    /// a case that is not `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The timing mode of ours the ratio uses when it is not the headline: the one whose cache
    /// state is the anchor's where the headline's is not (`batch_hot`, from `run --l2-hot`,
    /// beside an `l2_hot` anchor row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    /// Where the anchor ran (a GPU or CPU model), as the row says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `dram_cold` or `l2_hot`, as the row says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the anchor has no time (it failed, or was skipped), as the row says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `file:line` of the row.
    pub source: String,
}

/// The anchors of a report as a whole (`anchors` at the top of `summary.json`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AnchorSummary {
    /// Every file given to `--anchor-results`, in order.
    pub files: Vec<AnchorFile>,
    /// Rows that matched at least one case.
    pub matched_rows: usize,
    /// Rows that matched no case of this report, in file order.
    #[serde(default)]
    pub unmatched: Vec<UnmatchedAnchor>,
}

/// One anchor file: where it was and what it held, so the report says which figures it used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorFile {
    pub path: String,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
    pub rows: usize,
}

/// An anchor row that matched no case (another shape, a backend or precision not run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedAnchor {
    pub kernel: String,
    pub backend: String,
    pub precision: String,
    pub params: serde_json::Map<String, serde_json::Value>,
    #[serde(rename = "impl")]
    pub implementation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_call: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `file:line` of the row.
    pub source: String,
}
