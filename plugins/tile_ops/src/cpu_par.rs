//! When the CPU paths use threads. Below [`PARALLEL_MIN_BYTES`] moved per call, a call runs on the
//! calling thread: waking rayon's workers costs tens of microseconds, and on a small machine
//! whether the second worker is scheduled promptly decides the time, so a small call measured on
//! two cores swung by up to 1.7x between otherwise identical runs. Above it, the chunks run on
//! rayon's pool ([`apex_plugin_api::par`] runs the chunks).

pub use apex_plugin_api::par::{for_each_chunk, for_each_chunk_pair};

/// Bytes moved per call (read + written, the declared work) from which a call uses all cores.
pub const PARALLEL_MIN_BYTES: u64 = 4 << 20;

/// Whether a call moving `bytes` runs on rayon's pool: from [`PARALLEL_MIN_BYTES`], and only when
/// the pool has more than one thread (with one, as the CPU gate runs, the pool only adds its
/// scheduling to the call).
pub fn worth_threads(bytes: u64) -> bool {
    bytes >= PARALLEL_MIN_BYTES && apex_plugin_api::par::pool_has_threads()
}
