//! [`probe`]: can a fresh process still use a GPU? The pool of a multi-GPU run asks after a case
//! on that GPU failed at the device level (`apex-host __probe-device`, `measure::devices`).

use super::guard::guarded;
use super::{CudaError, Device};

/// Bytes the probe allocates, fills and reads back.
const PROBE_BYTES: usize = 64 << 20;

/// Opens GPU `ordinal` in this process, fills 64 MiB on it, runs the built-in hold kernel for
/// 10 µs and synchronizes. `Ok` means the GPU takes work; the error names the failing step.
pub fn probe(ordinal: usize) -> Result<(), CudaError> {
    let device = Device::open(ordinal)?;
    guarded("probe the device", || {
        let stream = device.stream();
        // alloc_zeros allocates and fills (a memset on the stream).
        stream
            .alloc_zeros::<u8>(PROBE_BYTES)
            .map(drop)
            .map_err(|e| CudaError::driver("allocate and clear 64 MiB", e))
    })?;
    let builtins = device.builtins()?;
    builtins
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .hold(device.stream(), 10_000)?;
    device.synchronize()
}
