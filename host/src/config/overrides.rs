//! [`CliOverrides`]: the command-line layer, the highest precedence (product.md §4).

use apex_plugin_api::{Backend, Precision};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CliOverrides {
    /// `--backends`: replaces the configured list; intersected with what each kernel declares.
    pub backends: Option<Vec<Backend>>,
    /// `--precision`: replaces the configured list; intersected with what each kernel declares.
    pub precisions: Option<Vec<Precision>>,
    /// `--iters`: a fixed number of samples (the fixed stopping rule).
    pub iters: Option<u64>,
    pub warmup: Option<u64>,
    pub timeout_s: Option<f64>,
    /// `--quick`: `ProtocolSettings::quick()` is the base the config layers apply to.
    pub quick: bool,
    /// `--l2-hot`: CUDA cases also time an L2-hot batch (`ProtocolSettings::l2_hot_batch`).
    pub l2_hot: bool,
}
