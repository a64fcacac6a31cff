//! [`PeakMemory`]: the peak device memory of one case. cudarc allocates from the device's default
//! memory pool (`cuMemAllocAsync`) when the device supports pools, and so does a plugin attached
//! through `CudaSession`; the pool's used high-water mark, reset before setup and read after the
//! measurement, is the case's peak. Allocations outside the pool (`cuMemAlloc`, libraries with
//! their own allocators) are caught by the fallback: the drop of `cuMemGetInfo`'s free memory
//! between the start and the end. The larger of the two is reported.

use cudarc::driver::sys;

use super::{CudaError, Device};

const MIB: f64 = 1024.0 * 1024.0;

/// A measurement of peak device memory in progress.
pub struct PeakMemory {
    device: Device,
    pool: Option<sys::CUmemoryPool>,
    pool_used_at_start: u64,
    free_at_start: usize,
    /// The lowest free memory seen by [`PeakMemory::observe`].
    min_free: usize,
}

impl PeakMemory {
    /// Resets the pool's high-water mark and records the free memory. Call before setup.
    pub fn start(device: &Device) -> Result<Self, CudaError> {
        super::guard::guarded("start the peak memory probe", || {
            let pool = default_pool(device).ok();
            let mut used = 0u64;
            if let Some(pool) = pool {
                set_attr(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                    0,
                )?;
                used = get_attr(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                )?;
            }
            let (free, _) = device
                .context()
                .mem_get_info()
                .map_err(|e| CudaError::driver("read free device memory", e))?;
            Ok(Self {
                device: device.clone(),
                pool,
                pool_used_at_start: used,
                free_at_start: free,
                min_free: free,
            })
        })
    }

    /// Samples free memory now (call after setup and after the measurement, when the case's
    /// buffers are still alive), for the fallback.
    pub fn observe(&mut self) -> Result<(), CudaError> {
        let (free, _) = self
            .device
            .context()
            .mem_get_info()
            .map_err(|e| CudaError::driver("read free device memory", e))?;
        self.min_free = self.min_free.min(free);
        Ok(())
    }

    /// The case's peak device memory in MiB (reported as `peak_device_memory_mb`).
    pub fn finish(mut self) -> Result<f64, CudaError> {
        self.observe()?;
        let pool_high = match self.pool {
            Some(pool) => get_attr(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            )?,
            None => 0,
        };
        Ok(peak_mib(
            pool_high,
            self.pool_used_at_start,
            self.free_at_start,
            self.min_free,
        ))
    }
}

/// The larger of the pool's growth over its starting use and the drop in free memory, in MiB.
pub fn peak_mib(pool_high: u64, pool_start: u64, free_start: usize, min_free: usize) -> f64 {
    let from_pool = pool_high.saturating_sub(pool_start);
    let from_free = free_start.saturating_sub(min_free) as u64;
    from_pool.max(from_free) as f64 / MIB
}

fn default_pool(device: &Device) -> Result<sys::CUmemoryPool, CudaError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is valid for writing; the device handle comes from a live context.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, device.context().cu_device()) }
        .result()
        .map_err(|e| CudaError::driver("get the default memory pool", e))?;
    Ok(pool)
}

fn get_attr(pool: sys::CUmemoryPool, attr: sys::CUmemPool_attribute) -> Result<u64, CudaError> {
    let mut v = 0u64;
    // SAFETY: the used/reserved attributes are 64-bit values.
    unsafe { sys::cuMemPoolGetAttribute(pool, attr, (&raw mut v).cast()) }
        .result()
        .map_err(|e| CudaError::driver("read a memory pool attribute", e))?;
    Ok(v)
}

fn set_attr(
    pool: sys::CUmemoryPool,
    attr: sys::CUmemPool_attribute,
    value: u64,
) -> Result<(), CudaError> {
    let mut v = value;
    // SAFETY: as above; setting a high-water attribute to 0 resets it to the current use.
    unsafe { sys::cuMemPoolSetAttribute(pool, attr, (&raw mut v).cast()) }
        .result()
        .map_err(|e| CudaError::driver("reset the memory pool high-water mark", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_the_larger_of_pool_growth_and_free_drop() {
        let mib = 1u64 << 20;
        // 768 MiB through the pool (cudaprobe's 3 x 256 MiB), on top of 100 MiB already in use.
        assert_eq!(peak_mib(868 * mib, 100 * mib, 0, 0), 768.0);
        // An allocation outside the pool shows only in free memory.
        assert_eq!(peak_mib(0, 0, (10 * mib) as usize, (6 * mib) as usize), 4.0);
        // Free memory can grow (another process freed memory): never negative.
        assert_eq!(peak_mib(0, 0, 5, 10), 0.0);
    }
}
