//! DRAM-cold batch timing: how many buffer sets a CUDA case rotates over so that a batch of
//! back-to-back calls streams its working set from DRAM instead of re-reading what the previous
//! call left in L2 (quack's `_bench_cuda_graph_l2_rotate`), and how a batch figure is labelled.
//!
//! The host asks the plugin for `sets` copies ([`apex_plugin_api::Instance::rotate`]); a plugin
//! that does not implement it keeps one set, and its batch figure is labelled `l2_hot` unless
//! one call alone already moves several L2s of data. `run --l2-hot` adds a batch on one set
//! ([`HOT_BATCH_MODE`]) beside the DRAM-cold one, for kernels whose inputs come from L2 in use.

use serde::{Deserialize, Serialize};

/// The timing mode of `run --l2-hot`: a batch on the case's one buffer set, measured before the
/// rotation (its label is still computed by [`cache_state`]: a call that moves several L2s of
/// data is DRAM-cold even there).
pub const HOT_BATCH_MODE: &str = "batch_hot";
/// The working set of a DRAM-cold batch, in multiples of the L2 size.
pub const COLD_WORKING_SET_L2S: u64 = 3;
/// At most this many sets (a tiny kernel would otherwise ask for thousands).
pub const MAX_BUFFER_SETS: u64 = 2048;
/// The copies may take at most this fraction of the free device memory.
const FREE_MEMORY_SHARE: u64 = 4;

/// How the batch figure relates to the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// The calls of a sample touched at least [`COLD_WORKING_SET_L2S`] × L2 of distinct data.
    DramCold,
    /// Less than that: some of each call's data can still be in L2 from an earlier call.
    L2Hot,
}

impl CacheState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DramCold => "dram_cold",
            Self::L2Hot => "l2_hot",
        }
    }
}

/// The sets to ask for: enough that `sets × bytes_per_call ≥ 3 × l2`, at least 1, at most
/// [`MAX_BUFFER_SETS`], and within a quarter of `free` device memory (each set costs one call's
/// bytes, an upper bound on its buffers).
pub fn buffer_sets(l2: u64, bytes_per_call: u64, free: u64) -> u32 {
    if bytes_per_call == 0 {
        return 1;
    }
    let wanted = (COLD_WORKING_SET_L2S * l2).div_ceil(bytes_per_call);
    let affordable = (free / FREE_MEMORY_SHARE) / bytes_per_call;
    let sets = wanted.min(MAX_BUFFER_SETS).min(affordable.max(1)).max(1);
    u32::try_from(sets).unwrap_or(u32::MAX)
}

/// The label of a batch figure: `sets` in use, `calls_per_sample` per sample, and whether the
/// sample was a captured graph (a graph replays the sets its capture saw: fewer calls than sets
/// touch only that many; plain launches keep rotating across samples).
pub fn cache_state(
    l2: u64,
    bytes_per_call: u64,
    sets: u32,
    calls_per_sample: u64,
    graph: bool,
) -> CacheState {
    let touched = if graph {
        u64::from(sets).min(calls_per_sample.max(1))
    } else {
        u64::from(sets)
    };
    if touched.saturating_mul(bytes_per_call) >= COLD_WORKING_SET_L2S.saturating_mul(l2) {
        CacheState::DramCold
    } else {
        CacheState::L2Hot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L2: u64 = 50 << 20;
    const FREE: u64 = 80 << 30;

    #[test]
    fn sets_cover_three_l2s_within_bounds() {
        assert_eq!(buffer_sets(L2, 1 << 20, FREE), 150);
        assert_eq!(
            buffer_sets(L2, 200 << 20, FREE),
            1,
            "one call is already 4 L2s"
        );
        assert_eq!(buffer_sets(L2, 1000, FREE), MAX_BUFFER_SETS as u32);
        assert_eq!(buffer_sets(L2, 0, FREE), 1);
        // 100 MiB free: a quarter is 25 MiB, so 25 sets of 1 MiB.
        assert_eq!(buffer_sets(L2, 1 << 20, 100 << 20), 25);
        assert_eq!(buffer_sets(L2, 1 << 30, 0), 1);
    }

    #[test]
    fn the_label_counts_the_sets_a_sample_touches() {
        let mib = 1 << 20;
        assert_eq!(cache_state(L2, mib, 150, 1000, true), CacheState::DramCold);
        assert_eq!(cache_state(L2, mib, 150, 100, true), CacheState::L2Hot);
        assert_eq!(cache_state(L2, mib, 150, 100, false), CacheState::DramCold);
        assert_eq!(cache_state(L2, mib, 1, 1000, true), CacheState::L2Hot);
        assert_eq!(cache_state(L2, 200 * mib, 1, 5, true), CacheState::DramCold);
        assert_eq!(CacheState::L2Hot.as_str(), "l2_hot");
    }
}
