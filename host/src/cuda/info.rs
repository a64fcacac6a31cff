//! [`DeviceInfo`]: the facts about a CUDA device that `env.json` records and `% of peak` needs.

use cudarc::driver::sys::{self, CUdevice_attribute as A};
use serde::{Deserialize, Serialize};

use super::guard::loaded_library;
use super::{CudaError, Device, nvrtc};

/// Facts about one CUDA device, its driver and the NVRTC in use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, the form NVML and `nvidia-smi` use.
    pub uuid: String,
    /// `9.0`.
    pub compute_capability: String,
    pub sm_count: u32,
    pub memory_total_bytes: u64,
    pub l2_bytes: u64,
    pub sm_clock_max_mhz: u32,
    pub memory_clock_mhz: u32,
    pub memory_bus_width_bits: u32,
    /// `2 * memory clock * bus width / 8`: the data sheet's number, not what a copy reaches.
    pub theoretical_peak_bw_gbps: f64,
    /// The kernel driver's version (`580.159.04`), from `/proc/driver/nvidia/version` or NVML.
    pub driver_version: Option<String>,
    /// The CUDA driver API version (`13.0`, from `cuDriverGetVersion`).
    pub cuda_driver_api: String,
    pub libcuda: Option<String>,
    pub nvrtc_version: Option<String>,
    pub libnvrtc: Option<String>,
    /// Why NVRTC is missing, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvrtc_unavailable: Option<String>,
}

impl DeviceInfo {
    pub(super) fn read(device: &Device) -> Result<Self, CudaError> {
        let ctx = device.context();
        let attr = |a: A, what: &'static str| {
            ctx.attribute(a)
                .map(|v| v.max(0) as u32)
                .map_err(|e| CudaError::driver(what, e))
        };
        let mem_clock_khz = attr(
            A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
            "read the memory clock",
        )?;
        let bus = attr(
            A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
            "read the bus width",
        )?;
        let mut api = 0i32;
        // SAFETY: `api` is valid for writing.
        unsafe { sys::cuDriverGetVersion(&mut api) }
            .result()
            .map_err(|e| CudaError::driver("read the CUDA driver API version", e))?;
        let (nvrtc_version, libnvrtc, nvrtc_unavailable) = match nvrtc::ensure_loaded() {
            Ok(n) => (Some(n.version), n.library, None),
            Err(e) => (None, None, Some(e.to_string())),
        };
        let (major, minor) = device.compute_capability();
        Ok(Self {
            ordinal: device.ordinal(),
            name: ctx
                .name()
                .map_err(|e| CudaError::driver("read the device name", e))?,
            uuid: format_uuid(
                &ctx.uuid()
                    .map_err(|e| CudaError::driver("read the device UUID", e))?
                    .bytes,
            ),
            compute_capability: format!("{major}.{minor}"),
            sm_count: attr(
                A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                "read the SM count",
            )?,
            memory_total_bytes: ctx
                .total_mem()
                .map_err(|e| CudaError::driver("read the memory size", e))?
                as u64,
            l2_bytes: device.l2_bytes() as u64,
            sm_clock_max_mhz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "read the SM clock")? / 1000,
            memory_clock_mhz: mem_clock_khz / 1000,
            memory_bus_width_bits: bus,
            theoretical_peak_bw_gbps: theoretical_peak_gbps(mem_clock_khz, bus),
            driver_version: kernel_driver_version(),
            cuda_driver_api: format_api_version(api),
            libcuda: loaded_library("libcuda.so"),
            nvrtc_version,
            libnvrtc,
            nvrtc_unavailable,
        })
    }
}

/// `2 * clock * bus / 8` in GB/s (10^9 B/s): DDR transfers twice per clock.
pub fn theoretical_peak_gbps(memory_clock_khz: u32, bus_width_bits: u32) -> f64 {
    2.0 * f64::from(memory_clock_khz) * 1e3 * (f64::from(bus_width_bits) / 8.0) / 1e9
}

/// `13000` → `13.0`.
pub fn format_api_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The UUID as NVML prints it.
pub fn format_uuid(bytes: &[std::ffi::c_char; 16]) -> String {
    let h: Vec<String> = bytes.iter().map(|b| format!("{:02x}", *b as u8)).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

fn kernel_driver_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok();
    text.as_deref()
        .and_then(parse_proc_driver_version)
        .or_else(|| nvml_wrapper::Nvml::init().ok()?.sys_driver_version().ok())
}

/// The version in `NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ...`.
fn parse_proc_driver_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|w| {
            w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_bandwidth_matches_the_h200_data_sheet() {
        // H200: 3201 MHz, 6016-bit bus → 4814 GB/s (guides/rust-stack.md §3.4).
        assert_eq!(theoretical_peak_gbps(3_201_000, 6016).round(), 4814.0);
    }

    #[test]
    fn versions_and_uuids_are_formatted_like_the_driver_tools() {
        assert_eq!(format_api_version(13000), "13.0");
        assert_eq!(format_api_version(12080), "12.8");
        let mut b = [0 as std::ffi::c_char; 16];
        for (i, v) in b.iter_mut().enumerate() {
            *v = (i as u8 * 17) as std::ffi::c_char;
        }
        assert_eq!(format_uuid(&b), "GPU-00112233-4455-6677-8899-aabbccddeeff");
        let proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version: gcc 12";
        assert_eq!(
            parse_proc_driver_version(proc).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(parse_proc_driver_version("nothing"), None);
    }
}
