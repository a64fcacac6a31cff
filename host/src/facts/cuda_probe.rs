//! Probes the CUDA driver through cudarc's run-time loading, without panicking where libcuda is
//! absent: `is_culib_present()` first (cudarc panics on a missing library), then `cuInit` and the
//! device queries inside `catch_unwind` (a symbol missing from an old driver also panics).

use super::record::CudaFacts;
use cudarc::driver::{result, sys};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The reason every CUDA case reports on a machine without the driver library (product.md §1).
pub const LIB_ABSENT: &str = "cuda_unavailable: libcuda.so.1 not found";

pub fn probe() -> CudaFacts {
    // SAFETY: `is_culib_present` only dlopens candidate library names and drops them.
    if !unsafe { sys::is_culib_present() } {
        return CudaFacts::unavailable(LIB_ABSENT);
    }
    match catch_unwind(AssertUnwindSafe(query)) {
        Ok(Ok(facts)) => facts,
        Ok(Err(reason)) => CudaFacts::unavailable(reason),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            CudaFacts::unavailable(format!(
                "cuda_unavailable: loading the driver failed: {}",
                first_line(msg)
            ))
        }
    }
}

fn query() -> Result<CudaFacts, String> {
    result::init().map_err(|e| init_reason(e.0))?;
    let count = result::device::get_count().map_err(|e| {
        format!(
            "cuda_unavailable: cuDeviceGetCount failed: {}",
            code_name(e.0)
        )
    })?;
    let mut driver = 0i32;
    // SAFETY: cuDriverGetVersion writes one int through a valid pointer.
    let driver_version = unsafe { sys::cuDriverGetVersion(&mut driver) }
        .result()
        .ok()
        .map(|()| format!("{}.{}", driver / 1000, (driver % 1000) / 10));
    if count <= 0 {
        return Err("cuda_unavailable: no CUDA device (CUDA_ERROR_NO_DEVICE)".into());
    }
    let dev = result::device::get(0).map_err(|e| {
        format!(
            "cuda_unavailable: cuDeviceGet(0) failed: {}",
            code_name(e.0)
        )
    })?;
    let attr = |a| {
        // SAFETY: `dev` came from cuDeviceGet above.
        unsafe { result::device::get_attribute(dev, a) }.ok()
    };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    let compute_capability = match (major, minor) {
        (Some(ma), Some(mi)) => Some(f64::from(ma) + f64::from(mi) / 10.0),
        _ => None,
    };
    Ok(CudaFacts {
        available: true,
        reason: None,
        device_count: u32::try_from(count).unwrap_or(0),
        compute_capability,
        driver_version,
        device_name: result::device::get_name(dev).ok(),
    })
}

fn init_reason(code: sys::CUresult) -> String {
    match code {
        sys::CUresult::CUDA_ERROR_NO_DEVICE => {
            "cuda_unavailable: no CUDA device (CUDA_ERROR_NO_DEVICE)".into()
        }
        sys::CUresult::CUDA_ERROR_STUB_LIBRARY => {
            "cuda_unavailable: the libcuda that loaded is the \
             toolkit stub (CUDA_ERROR_STUB_LIBRARY); put the driver's libcuda.so.1 ahead of \
             `stubs/` on LD_LIBRARY_PATH"
                .into()
        }
        other => format!("cuda_unavailable: cuInit failed: {}", code_name(other)),
    }
}

fn code_name(code: sys::CUresult) -> String {
    format!("{code:?}")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_never_panics_and_explains_absence() {
        let f = probe();
        if !f.available {
            let reason = f.reason.expect("an unavailable CUDA always has a reason");
            assert!(reason.starts_with("cuda_unavailable: "), "{reason}");
            assert_eq!(f.device_count, 0);
        } else {
            assert!(f.device_count > 0);
            assert!(f.reason.is_none());
        }
    }

    #[test]
    fn init_errors_map_to_clear_reasons() {
        assert!(init_reason(sys::CUresult::CUDA_ERROR_NO_DEVICE).contains("no CUDA device"));
        assert!(init_reason(sys::CUresult::CUDA_ERROR_STUB_LIBRARY).contains("stub"));
    }
}
