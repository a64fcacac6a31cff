//! [`Device`]: one CUDA device as the host uses it: the primary context, one non-blocking stream
//! (created with `new_stream`, so it can be captured into graphs; the legacy default stream
//! cannot), cudarc's per-buffer event tracking turned off before anything is allocated (one
//! stream, synchronized by hand), and the built-in kernels compiled on first use.

use std::sync::{Arc, Mutex, OnceLock};

use apex_plugin_api::CudaHandles;
use cudarc::driver::{CudaContext, CudaStream, sys};

use super::builtin::Builtins;
use super::guard::guarded;
use super::{CudaError, DeviceInfo};

/// An open CUDA device. Cloning is cheap and shares the context, stream and built-in kernels.
#[derive(Clone)]
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    compute_capability: (i32, i32),
    l2_bytes: usize,
    builtins: Arc<OnceLock<Result<Arc<Mutex<Builtins>>, String>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal)
            .field("compute_capability", &self.compute_capability)
            .finish_non_exhaustive()
    }
}

/// How many CUDA devices are visible (`Err` when there is no driver).
pub fn device_count() -> Result<usize, CudaError> {
    guarded("count CUDA devices", || {
        init()?;
        CudaContext::device_count()
            .map(|n| n.max(0) as usize)
            .map_err(|e| CudaError::driver("count CUDA devices", e))
    })
}

fn init() -> Result<(), CudaError> {
    match cudarc::driver::result::init() {
        Ok(()) => Ok(()),
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE => Err(CudaError::Unavailable {
            reason: "cuda_unavailable: the driver is installed but no CUDA device is visible"
                .into(),
            hint: "check CUDA_VISIBLE_DEVICES and `nvidia-smi`; CPU cases still run",
        }),
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_STUB_LIBRARY => Err(CudaError::Unavailable {
            reason: "cuda_unavailable: a stub libcuda.so was loaded instead of the driver's".into(),
            hint: "remove the toolkit's lib64/stubs folder from LD_LIBRARY_PATH",
        }),
        Err(e) => Err(CudaError::driver("initialize the CUDA driver (cuInit)", e)),
    }
}

impl Device {
    /// Opens device `ordinal`. Never panics: without libcuda it returns
    /// [`CudaError::Unavailable`] (`cuda_unavailable: libcuda.so.1 not found`).
    pub fn open(ordinal: usize) -> Result<Device, CudaError> {
        guarded("open the CUDA device", || {
            init()?;
            let count = CudaContext::device_count()
                .map_err(|e| CudaError::driver("count CUDA devices", e))?
                .max(0) as usize;
            if ordinal >= count {
                return Err(CudaError::NoSuchDevice {
                    requested: ordinal,
                    count,
                });
            }
            let ctx = CudaContext::new(ordinal)
                .map_err(|e| CudaError::driver("retain the primary context", e))?;
            // SAFETY: nothing has been allocated on this context object yet, and the host orders
            // all work on its one stream itself.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx
                .new_stream()
                .map_err(|e| CudaError::driver("create the measurement stream", e))?;
            let compute_capability = ctx
                .compute_capability()
                .map_err(|e| CudaError::driver("read the compute capability", e))?;
            let l2 = ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
                .map_err(|e| CudaError::driver("read the L2 cache size", e))?;
            Ok(Device {
                ctx,
                stream,
                ordinal,
                compute_capability,
                l2_bytes: l2.max(0) as usize,
                builtins: Arc::new(OnceLock::new()),
            })
        })
    }

    /// What a CUDA case's plugin needs: device, stream and architecture.
    pub fn handles(&self) -> CudaHandles {
        CudaHandles {
            device_ordinal: self.ordinal as u32,
            stream: self.stream.cu_stream() as usize,
            compute_capability_major: self.compute_capability.0 as u32,
            compute_capability_minor: self.compute_capability.1 as u32,
        }
    }

    /// Waits for all work on the measurement stream; a kernel fault surfaces here as
    /// `CUDA_ERROR_...`.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        guarded("synchronize", || {
            self.stream
                .synchronize()
                .map_err(|e| CudaError::driver("synchronize the measurement stream", e))
        })
    }

    /// Facts about the device for `env.json` and reports.
    pub fn info(&self) -> Result<DeviceInfo, CudaError> {
        guarded("read the device facts", || DeviceInfo::read(self))
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// L2 cache size in bytes.
    pub fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every measured call is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The built-in kernels, compiled with NVRTC on first use.
    pub fn builtins(&self) -> Result<Arc<Mutex<Builtins>>, CudaError> {
        self.builtins
            .get_or_init(|| {
                Builtins::load(&self.ctx, &self.stream, self.compute_capability)
                    .map(|b| Arc::new(Mutex::new(b)))
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|e| match e.strip_prefix("nvrtc_unavailable: ") {
                // Keep the kind: without NVRTC the GPU is not usable for apex-host at all.
                Some(reason) => CudaError::NvrtcUnavailable {
                    reason: reason.lines().next().unwrap_or(reason).to_string(),
                },
                None => {
                    CudaError::Unsupported(format!("the built-in kernels are unavailable: {e}"))
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_without_libcuda_is_an_error_not_a_panic() {
        if super::super::guard::libcuda_present() {
            // The no-driver path cannot be exercised on a machine with a driver.
            return;
        }
        let err = Device::open(0).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cuda_unavailable: libcuda.so.1 not found"),
            "{err}"
        );
        assert!(matches!(device_count(), Err(CudaError::Unavailable { .. })));
    }
}
