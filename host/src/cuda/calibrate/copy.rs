//! [`copy_bandwidth`]: the device's measured copy bandwidth, the 100 % of `% of peak`.
//!
//! Measured exactly as `anchors/torch_anchor.py` measures its `copy` row, so the two agree: one
//! device-to-device copy of 2^28 fp32 elements (1 GiB) per call (`b.copy_(a)` in PyTorch is a
//! `cudaMemcpyAsync` for contiguous same-type tensors), and the bytes counted as read plus
//! written, `2 * bytes` per copy, in decimal GB/s (10^9 B/s). The same buffers are also copied by
//! the host's own 16-byte copy kernel (`apex_copy16`) in each of its variants (cache hints, blocks
//! per SM), timed the same way. The line is the fastest path's best of N event-timed copies (a
//! kernel that moves its bytes once should not beat the best copy we know); each path's figure
//! and the line's median are kept.

use serde::{Deserialize, Serialize};

use super::median;
use crate::cuda::events::EventPair;
use crate::cuda::guard::guarded;
use crate::cuda::{CopyVariant, CudaError, Device};
use crate::measure::MeasureError;

/// Bytes of each buffer: 2^28 fp32 elements, as `torch_anchor.py`.
pub const COPY_BUFFER_BYTES: usize = (1 << 28) * 4;

/// Timed copies (after 3 untimed ones).
pub const COPY_REPETITIONS: usize = 20;

/// The copy bandwidth measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyBandwidth {
    /// Size of the source (and of the destination) buffer.
    pub buffer_bytes: u64,
    /// Bytes counted per copy: read + written.
    pub counted_bytes: u64,
    pub repetitions: usize,
    /// The headline: the faster path's best of `repetitions`.
    pub best_gbps: f64,
    /// The median of that path's repetitions.
    pub median_gbps: f64,
    /// `cuMemcpyDtoDAsync`'s best (what PyTorch's `copy_` runs).
    #[serde(default)]
    pub memcpy_best_gbps: f64,
    /// The built-in 16-byte copy kernel's best over its variants (absent without NVRTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_best_gbps: Option<f64>,
    /// The variant that gave `kernel_best_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_variant: Option<String>,
    /// The add line: the best of the built-in kernel reading two buffers and writing a third
    /// (STREAM's `add`, 2 reads : 1 write), `3 * buffer_bytes` counted per pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_line_gbps: Option<f64>,
    /// The read line: the best of the built-in kernel reading one buffer and writing nothing,
    /// `buffer_bytes` counted per pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_line_gbps: Option<f64>,
    /// `best_gbps` over the data sheet's peak, in percent.
    pub of_theoretical_pct: f64,
}

/// GB/s for `counted_bytes` moved in `seconds`.
pub fn gbps(counted_bytes: u64, seconds: f64) -> f64 {
    counted_bytes as f64 / seconds / 1e9
}

/// The buffer size to use with `free` bytes of device memory: [`COPY_BUFFER_BYTES`], or less on
/// small devices (two buffers in at most half the free memory), in whole MiB.
pub fn buffer_bytes_for(free: usize) -> usize {
    let cap = (free / 4) >> 20 << 20;
    COPY_BUFFER_BYTES.min(cap)
}

/// The device's bandwidth lines (copy, add, read): see [`CopyBandwidth`].
pub fn bandwidth_lines(device: &Device) -> Result<CopyBandwidth, CudaError> {
    copy_bandwidth(device, COPY_REPETITIONS, 0.0)
}

/// Measures the copy bandwidth with `repetitions` timed copies; `theoretical_gbps` (0 if
/// unknown) fills `of_theoretical_pct`.
pub fn copy_bandwidth(
    device: &Device,
    repetitions: usize,
    theoretical_gbps: f64,
) -> Result<CopyBandwidth, CudaError> {
    guarded("measure the copy bandwidth", || {
        let stream = device.stream();
        let (free, _) = device
            .context()
            .mem_get_info()
            .map_err(|e| CudaError::driver("read free device memory", e))?;
        let bytes = buffer_bytes_for(free);
        if bytes == 0 {
            return Err(CudaError::Unsupported(format!(
                "too little free device memory ({free} bytes) to measure the copy bandwidth"
            )));
        }
        let src = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| CudaError::driver("allocate the copy source", e))?;
        let mut dst = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| CudaError::driver("allocate the copy destination", e))?;
        let events = EventPair::new(device.context())?;
        let counted = 2 * bytes as u64;
        let rates_of = |counted: u64, copy: &mut dyn FnMut() -> Result<(), MeasureError>| {
            for _ in 0..3 {
                copy().map_err(measure_to_cuda)?;
            }
            let mut rates = Vec::with_capacity(repetitions);
            for _ in 0..repetitions.max(1) {
                let s = events.time(stream, &mut *copy).map_err(measure_to_cuda)?;
                rates.push(gbps(counted, s));
            }
            Ok::<_, CudaError>(rates)
        };
        let rates = |copy: &mut dyn FnMut() -> Result<(), MeasureError>| rates_of(counted, copy);
        let mut memcpy = rates(&mut || {
            stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(|e| CudaError::driver("copy device to device", e).into())
        })?;
        let best_of = |r: &[f64]| r.iter().copied().fold(0.0, f64::max);
        let mut kernel: Option<(CopyVariant, Vec<f64>)> = None;
        if let Ok(builtins) = device.builtins() {
            for variant in CopyVariant::ALL {
                let r = rates(&mut || {
                    let b = builtins.lock().unwrap_or_else(|p| p.into_inner());
                    b.copy16(stream, (&src, &mut dst), bytes, 1, variant)
                        .map_err(MeasureError::from)
                })?;
                if kernel
                    .as_ref()
                    .is_none_or(|(_, k)| best_of(&r) > best_of(k))
                {
                    kernel = Some((variant, r));
                }
            }
        }
        let (add_line_gbps, read_line_gbps) = match device.builtins() {
            Ok(builtins) => {
                let mut out = stream
                    .alloc_zeros::<u8>(bytes)
                    .map_err(|e| CudaError::driver("allocate the add line's output", e))?;
                let mut add = 0.0f64;
                let mut read = 0.0f64;
                for variant in CopyVariant::ALL {
                    let r = rates_of(3 * bytes as u64, &mut || {
                        let b = builtins.lock().unwrap_or_else(|p| p.into_inner());
                        b.add16(stream, (&src, &dst, &mut out), bytes, variant)
                            .map_err(MeasureError::from)
                    })?;
                    add = add.max(best_of(&r));
                    let r = rates_of(bytes as u64, &mut || {
                        let b = builtins.lock().unwrap_or_else(|p| p.into_inner());
                        b.read16(stream, (&src, &mut out), bytes, variant)
                            .map_err(MeasureError::from)
                    })?;
                    read = read.max(best_of(&r));
                }
                (Some(add), Some(read))
            }
            Err(_) => (None, None),
        };
        let memcpy_best = best_of(&memcpy);
        let kernel_best = kernel.as_ref().map(|(_, r)| best_of(r));
        let kernel_variant = kernel.as_ref().map(|(v, _)| v.to_string());
        let (best, line) = match (kernel_best, kernel.as_mut()) {
            (Some(k), Some((_, rates))) if k > memcpy_best => (k, rates),
            _ => (memcpy_best, &mut memcpy),
        };
        let repetitions = line.len();
        let median_gbps = median(line);
        Ok(CopyBandwidth {
            buffer_bytes: bytes as u64,
            counted_bytes: counted,
            repetitions,
            best_gbps: best,
            median_gbps,
            memcpy_best_gbps: memcpy_best,
            kernel_best_gbps: kernel_best,
            kernel_variant,
            add_line_gbps,
            read_line_gbps,
            of_theoretical_pct: if theoretical_gbps > 0.0 {
                100.0 * best / theoretical_gbps
            } else {
                0.0
            },
        })
    })
}

/// Copies per timed sample of the L2 line.
const L2_LINE_COPIES: usize = 50;

/// The L2-resident copy line in GB/s (best of `repetitions` samples): a buffer an eighth of the
/// L2 copied [`L2_LINE_COPIES`] times over, so source and destination stay in L2. With the
/// built-in kernels this is one launch of the 16-byte copy kernel looping over the buffer (a
/// `cuMemcpy` from L2 runs no faster than from DRAM, 2970 against 3004 GB/s on an H100, so it is
/// no L2 line); without NVRTC, back-to-back `cuMemcpy` calls. An `l2_hot` batch figure is put
/// against this line instead of the DRAM copy line.
pub fn l2_line_gbps(device: &Device, repetitions: usize) -> Result<f64, CudaError> {
    guarded("measure the L2 copy line", || {
        let stream = device.stream();
        let bytes = (device.l2_bytes() / 8).max(1 << 20);
        let src = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| CudaError::driver("allocate the L2 copy source", e))?;
        let mut dst = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| CudaError::driver("allocate the L2 copy destination", e))?;
        let events = EventPair::new(device.context())?;
        let builtins = device.builtins().ok();
        let mut copies = || -> Result<(), MeasureError> {
            if let Some(b) = &builtins {
                let b = b.lock().unwrap_or_else(|p| p.into_inner());
                let reps = L2_LINE_COPIES as u32;
                return Ok(b.copy16(stream, (&src, &mut dst), bytes, reps, CopyVariant::L2)?);
            }
            for _ in 0..L2_LINE_COPIES {
                stream
                    .memcpy_dtod(&src, &mut dst)
                    .map_err(|e| MeasureError::from(CudaError::driver("copy within L2", e)))?;
            }
            Ok(())
        };
        copies().map_err(measure_to_cuda)?;
        let counted = (2 * bytes * L2_LINE_COPIES) as u64;
        let mut best = 0.0f64;
        for _ in 0..repetitions.max(1) {
            let s = events.time(stream, &mut copies).map_err(measure_to_cuda)?;
            best = best.max(gbps(counted, s));
        }
        Ok(best)
    })
}

fn measure_to_cuda(e: MeasureError) -> CudaError {
    match e {
        MeasureError::Cuda(m) | MeasureError::Plugin(m) => CudaError::Driver {
            call: "time a device-to-device copy",
            message: m,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_counted_like_torch_anchor() {
        // torch_anchor_h100: copy of 2^28 fp32 in 0.715456 ms → 3001.56 GB/s.
        let counted = 2 * COPY_BUFFER_BYTES as u64;
        assert_eq!(counted, 2 * (1u64 << 28) * 4);
        assert!((gbps(counted, 0.715_456_008_911_132_8e-3) - 3_001.559_314_972_138_5).abs() < 1e-6);
    }

    #[test]
    fn small_devices_get_smaller_buffers() {
        assert_eq!(buffer_bytes_for(80 << 30), COPY_BUFFER_BYTES);
        assert_eq!(buffer_bytes_for(1 << 30), 256 << 20);
        assert_eq!(buffer_bytes_for((1 << 20) * 4 + 3), 1 << 20);
        assert_eq!(buffer_bytes_for(100), 0);
    }
}
