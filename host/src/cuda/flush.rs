//! [`L2Flush`]: evicts the L2 cache before a cold sample by writing a buffer of at least twice the
//! L2 size on the measurement stream, outside the timed interval (nvbench's `l2flush.cuh` writes
//! one L2's worth; twice is safer on parts whose L2 is split into partitions with their own
//! replacement state, like the H100's two halves).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut};

use super::CudaError;

/// The smallest flush buffer, for devices that report a tiny or zero L2 size.
const MIN_FLUSH_BYTES: usize = 8 << 20;

/// Bytes to write for an L2 of `l2_bytes`: twice the L2, rounded up to whole MiB.
pub fn flush_bytes(l2_bytes: usize) -> usize {
    let twice = l2_bytes.saturating_mul(2).max(MIN_FLUSH_BYTES);
    twice.div_ceil(1 << 20) << 20
}

/// A device buffer that is overwritten before each cold sample.
pub struct L2Flush {
    buffer: CudaSlice<u8>,
    value: u8,
}

impl L2Flush {
    pub fn new(stream: &Arc<CudaStream>, l2_bytes: usize) -> Result<Self, CudaError> {
        // SAFETY: the contents are never read; every flush overwrites the whole buffer.
        let buffer = unsafe { stream.alloc::<u8>(flush_bytes(l2_bytes)) }
            .map_err(|e| CudaError::driver("allocate the L2 flush buffer", e))?;
        Ok(Self { buffer, value: 0 })
    }

    pub fn bytes(&self) -> usize {
        self.buffer.len()
    }

    /// Enqueues the overwrite on `stream`. The value changes every time so that no part of the
    /// memory system can skip a write of unchanged data.
    pub fn enqueue(&mut self, stream: &Arc<CudaStream>) -> Result<(), CudaError> {
        self.value = self.value.wrapping_add(1);
        let bytes = self.buffer.len();
        let (ptr, _sync) = self.buffer.device_ptr_mut(stream);
        // SAFETY: `ptr` points to `bytes` bytes owned by `self.buffer`, alive past the enqueue.
        unsafe {
            cudarc::driver::result::memset_d8_async(ptr, self.value, bytes, stream.cu_stream())
        }
        .map_err(|e| CudaError::driver("flush the L2 cache", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_is_at_least_twice_the_l2_in_whole_mib() {
        // H100 SXM: 50 MiB of L2 → 100 MiB; H200 reports 60 MiB → 120 MiB.
        assert_eq!(flush_bytes(50 << 20), 100 << 20);
        assert_eq!(flush_bytes(60 << 20), 120 << 20);
        // Odd sizes round up, never down.
        assert_eq!(flush_bytes((40 << 20) + 1), 81 << 20);
        // A missing L2 size still flushes something.
        assert_eq!(flush_bytes(0), MIN_FLUSH_BYTES);
        for l2 in [1usize, 4 << 20, 6 << 20, 96 << 20, (72 << 20) + 12345] {
            let b = flush_bytes(l2);
            assert!(b >= 2 * l2 && b.is_multiple_of(1 << 20), "{l2} -> {b}");
        }
    }
}
