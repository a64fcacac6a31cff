//! `apex-host calibrate`: times kernels of known duration in both CUDA modes, reports the error
//! against the truth, and measures the copy bandwidth that `% of peak` is relative to
//! (`docs/cuda.md` §Calibration).

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use crate::cuda::calibrate::{self, CalibrateOptions, CalibrationReport};
use crate::cuda::{CudaError, Device};
use crate::report::term::{errln, out, outln};
use crate::report::{WriteError, to_sorted_json, write_json_atomic};

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Calibrate options")]
pub struct CalibrateArgs {
    /// The CUDA device ordinal to calibrate.
    #[arg(long, value_name = "N", default_value_t = 0, env = "APEX_DEVICE")]
    pub device: usize,

    /// Print the report as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Only measure the copy bandwidth (and report the device): what `run` uses for `% of peak`.
    #[arg(long)]
    pub bandwidth_only: bool,

    /// Timed samples per row.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub samples: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("{0}")]
    Cuda(#[from] CudaError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("failed to serialize the calibration report: {0}")]
    Json(#[from] serde_json::Error),
}

impl CalibrateError {
    /// [`ApexExitCode::NO_DEVICE`] when there is no usable GPU (no driver, no device, no NVRTC,
    /// a bad `--device`), [`ApexExitCode::INTERNAL`] for any other failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Cuda(
                CudaError::Unavailable { .. }
                | CudaError::NoSuchDevice { .. }
                | CudaError::NvrtcUnavailable { .. },
            ) => ApexExitCode::NO_DEVICE,
            _ => ApexExitCode::INTERNAL,
        }
    }
}

/// Calibrates `--device`, prints the table (or JSON) and writes `--output`; returns the exit code.
pub fn exec(args: &CalibrateArgs) -> Result<i32, CalibrateError> {
    let device = Device::open(args.device)?;
    if args.bandwidth_only {
        return bandwidth_only(args, &device);
    }
    let options = CalibrateOptions {
        samples: args.samples as usize,
        ..CalibrateOptions::default()
    };
    let report = calibrate::run(&device, &options)?;
    if let Some(path) = &args.output {
        write_json_atomic(path, &report)?;
    }
    show(args, &report)?;
    Ok(ApexExitCode::OK)
}

/// `--bandwidth-only`: `{device, copy_bandwidth_gbps, add_line_gbps, read_line_gbps,
/// l2_line_gbps}` as JSON (stdout and `--output`).
fn bandwidth_only(args: &CalibrateArgs, device: &Device) -> Result<i32, CalibrateError> {
    let lines = calibrate::bandwidth_lines(device)?;
    let doc = serde_json::json!({
        "device": device.info()?,
        "copy_bandwidth_gbps": lines.best_gbps,
        "add_line_gbps": lines.add_line_gbps,
        "read_line_gbps": lines.read_line_gbps,
        "l2_line_gbps": calibrate::l2_line_gbps(device, 10)?,
    });
    if let Some(path) = &args.output {
        write_json_atomic(path, &doc)?;
    }
    if args.json {
        out!("{}", to_sorted_json(&doc)?);
    } else {
        outln!(
            "copy bandwidth: {:.1} GB/s",
            doc["copy_bandwidth_gbps"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(ApexExitCode::OK)
}

/// [`exec`], with any error printed to stderr and mapped to its exit code.
pub fn exec_to_code(args: &CalibrateArgs) -> i32 {
    match exec(args) {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            e.exit_code()
        }
    }
}

fn show(args: &CalibrateArgs, report: &CalibrationReport) -> Result<(), CalibrateError> {
    if args.json {
        out!("{}", to_sorted_json(report)?);
    } else {
        out!("{}", crate::report::calibration::render_calibration(report));
    }
    Ok(())
}

fn print_error(e: &CalibrateError) {
    errln!("apex-host calibrate: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_calibrate_fails_with_no_device_and_names_libcuda() {
        if crate::cuda::guard::libcuda_present() {
            return;
        }
        let args = CalibrateArgs {
            device: 0,
            json: false,
            output: None,
            bandwidth_only: false,
            samples: 3,
        };
        let err = exec(&args).unwrap_err();
        assert_eq!(err.exit_code(), ApexExitCode::NO_DEVICE);
        assert!(
            err.to_string()
                .starts_with("cuda_unavailable: libcuda.so.1 not found"),
            "{err}"
        );
    }

    #[test]
    fn other_cuda_failures_are_internal_errors() {
        let e = CalibrateError::Cuda(CudaError::Driver {
            call: "x",
            message: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".into(),
        });
        assert_eq!(e.exit_code(), ApexExitCode::INTERNAL);
    }
}
