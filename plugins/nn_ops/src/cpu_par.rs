//! When the CPU paths use threads. Below [`PARALLEL_MIN_BYTES`] moved per call, a call runs on the
//! calling thread: waking rayon's workers costs tens of microseconds, and on a small machine
//! whether the second worker is scheduled promptly decides the time, so a small call measured on
//! two cores swung by up to 1.7x between otherwise identical runs. Above it, the chunks run on
//! rayon's pool. The limit was 4 MiB; at 1 MiB the seed's dim-64 shapes (2 MiB moved) use both
//! cores as PyTorch does (its grain is 32,768 elements): on the 2-core machine GELU, Swish and
//! LayerNorm at 16 x 256 x 64 ran 0.19-0.48x PyTorch's speed single-threaded (2026-11-25).
//! [`rows_per_block`] is the other half of the CPU paths' work split: how many rows a task's
//! loop converts to f32 and processes at a time.

pub use apex_plugin_api::par::{for_each_chunk, for_each_chunk_pair};

/// Bytes moved per call (read + written, the declared work) from which a call uses all cores.
pub const PARALLEL_MIN_BYTES: u64 = 1 << 20;

/// Whether a call moving `bytes` runs on rayon's pool: from [`PARALLEL_MIN_BYTES`], and only when
/// the pool has more than one thread. With one (`RAYON_NUM_THREADS=1`, as the CPU gate runs),
/// the pool would only add its scheduling to the call: MSE at 16 x 256 x 64 (2 MiB) took 51 µs
/// through a one-thread pool against 33 µs for the commit before the 1 MiB limit (2026-11-25).
pub fn worth_threads(bytes: u64) -> bool {
    bytes >= PARALLEL_MIN_BYTES && apex_plugin_api::par::pool_has_threads()
}

/// Rows of `row_len` elements per block of a task's loop: about 2 K elements (8 KiB of f32), so
/// a block stays in L1 from its conversion to f32 through the passes over each row to its store.
pub fn rows_per_block(row_len: usize) -> usize {
    (2_048 / row_len.max(1)).max(1)
}
