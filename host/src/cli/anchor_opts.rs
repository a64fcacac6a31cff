//! `--anchor-results FILE` (repeatable), shared by `run`, `report` and `merge`: the anchor
//! scripts' JSON lines to set beside the measured cases ([`crate::anchors`]).

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use super::failure::Failure;
use crate::anchors::{AnchorSet, attach, load};
use crate::model::RunSummary;

#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Anchors")]
pub struct AnchorOpts {
    /// JSON lines written by the anchor scripts (`benches/anchors/`): other implementations'
    /// times, set beside the matching cases with the ratio (repeatable; schema: docs/anchors.md).
    #[arg(long = "anchor-results", value_name = "FILE")]
    pub anchor_results: Vec<PathBuf>,
}

impl AnchorOpts {
    /// The rows of every file, or `None` without the flag. A file that cannot be used is a
    /// configuration error (exit 3), found before anything runs.
    pub fn load(&self) -> Result<Option<AnchorSet>, Failure> {
        if self.anchor_results.is_empty() {
            return Ok(None);
        }
        load(&self.anchor_results)
            .map(Some)
            .map_err(|e| (ApexExitCode::CONFIG_ERROR, e.to_string()))
    }
}

/// Sets `anchors` beside the cases of `summary`, when there are any.
pub fn apply(summary: &mut RunSummary, anchors: Option<&AnchorSet>) {
    if let Some(set) = anchors {
        attach(summary, set);
    }
}
