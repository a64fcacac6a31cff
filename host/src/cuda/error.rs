//! [`CudaError`]: every failure of the host's CUDA layer, and the one place that turns a cudarc
//! [`DriverError`] into the `CUDA_ERROR_NAME: text` form that case reasons start with.

use cudarc::driver::DriverError;

use crate::measure::MeasureError;

/// A failure of the host's CUDA layer.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// No usable CUDA driver or device: the CPU path still runs. The reason starts with
    /// `cuda_unavailable:` so that reports and skip reasons can match on it.
    #[error("{reason}\n(hint: {hint})")]
    Unavailable { reason: String, hint: &'static str },
    /// A CUDA driver call failed; `message` starts with the CUDA error name.
    #[error("failed to {call}: {message}")]
    Driver { call: &'static str, message: String },
    /// `--device N` names a device that is not visible.
    #[error(
        "CUDA device {requested} does not exist: {count} device(s) are visible\n(hint: pass `--device` between 0 and {max}, or check CUDA_VISIBLE_DEVICES)",
        max = count.saturating_sub(1)
    )]
    NoSuchDevice { requested: usize, count: usize },
    /// NVRTC could not be loaded; CUDA cases that compile at run time cannot run.
    #[error(
        "nvrtc_unavailable: {reason}\n(hint: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc`, or set APEX_NVRTC=/path/to/libnvrtc.so.13)"
    )]
    NvrtcUnavailable { reason: String },
    /// NVRTC rejected a source; the log names the line.
    #[error("failed to compile `{name}` with NVRTC for {arch}: {message}\n{log}")]
    Compile {
        name: String,
        arch: String,
        message: String,
        log: String,
    },
    /// cudarc panicked (a missing symbol in an old driver, usually); caught, never propagated.
    #[error(
        "the CUDA layer panicked during {call}: {message}\n(hint: the driver may be older than the CUDA 13.0 API apex-host uses; update the NVIDIA driver)"
    )]
    Panicked { call: &'static str, message: String },
    /// The device or driver answered something the host cannot use.
    #[error("{0}")]
    Unsupported(String),
}

impl CudaError {
    /// `libcuda.so.1` could not be loaded.
    pub fn no_driver() -> Self {
        Self::Unavailable {
            reason: "cuda_unavailable: libcuda.so.1 not found".into(),
            hint: "install the NVIDIA driver or put libcuda.so.1 on the loader path; CPU cases still run",
        }
    }

    /// Wraps a driver error from `call` (a lowercase verb phrase, e.g. `record the end event`).
    pub fn driver(call: &'static str, error: DriverError) -> Self {
        Self::Driver {
            call,
            message: driver_message(error),
        }
    }

    /// The text a case reason carries: for driver errors it starts with the CUDA error name.
    pub fn case_reason(&self) -> String {
        match self {
            Self::Driver { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

impl From<CudaError> for MeasureError {
    fn from(e: CudaError) -> Self {
        MeasureError::Cuda(e.case_reason())
    }
}

/// `CUDA_ERROR_NAME: description`. The name comes from the binding's enum, so it is right even
/// when the driver cannot be asked; the description comes from `cuGetErrorString` when libcuda
/// is loaded.
pub fn driver_message(error: DriverError) -> String {
    let name = format!("{:?}", error.0);
    let text = if super::guard::libcuda_present() {
        std::panic::catch_unwind(|| {
            error
                .error_string()
                .map(|s| s.to_string_lossy().into_owned())
                .ok()
        })
        .ok()
        .flatten()
    } else {
        None
    };
    match text {
        Some(text) if !text.is_empty() => format!("{name}: {text}"),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::CUresult;

    #[test]
    fn driver_errors_start_with_the_cuda_error_name() {
        let e = CudaError::driver(
            "synchronize the stream",
            DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
        );
        assert!(e.case_reason().starts_with("CUDA_ERROR_ILLEGAL_ADDRESS"));
        assert!(
            e.to_string()
                .starts_with("failed to synchronize the stream: CUDA_ERROR_ILLEGAL_ADDRESS")
        );
        match MeasureError::from(e) {
            MeasureError::Cuda(m) => assert!(m.starts_with("CUDA_ERROR_ILLEGAL_ADDRESS"), "{m}"),
            other => panic!("expected MeasureError::Cuda, got {other:?}"),
        }
    }

    #[test]
    fn unavailable_names_the_library_and_says_what_to_do() {
        let text = CudaError::no_driver().to_string();
        assert!(
            text.starts_with("cuda_unavailable: libcuda.so.1 not found"),
            "{text}"
        );
        assert!(text.contains("(hint: "), "{text}");
        let e = CudaError::NoSuchDevice {
            requested: 3,
            count: 1,
        };
        assert!(e.to_string().contains("between 0 and 0"), "{e}");
    }
}
