//! [`SpinWorkload`]: the calibration workload, one `%globaltimer` spin kernel per call on the
//! measurement stream (see `crate::cuda::BUILTIN_SOURCE` for both kernels).

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream};

use crate::cuda::{Builtins, CudaError, Device};
use crate::measure::{MeasureError, Workload};

/// Which spin kernel a call launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpinKind {
    /// Holds the stream exactly `ns` per call once a chain is running (the truth for timing).
    Paced,
    /// Spins `ns` from its own start; the launch gap comes on top.
    Isolated,
}

impl SpinKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paced => "paced",
            Self::Isolated => "isolated",
        }
    }
}

/// Calls of one spin kernel of `ns` nanoseconds.
pub struct SpinWorkload {
    builtins: Arc<Mutex<Builtins>>,
    stream: Arc<CudaStream>,
    kind: SpinKind,
    ns: u64,
    state: CudaSlice<u64>,
}

impl SpinWorkload {
    pub fn new(device: &Device, kind: SpinKind, ns: u64) -> Result<Self, CudaError> {
        let stream = device.stream().clone();
        Ok(Self {
            builtins: device.builtins()?,
            state: stream
                .alloc_zeros::<u64>(2)
                .map_err(|e| CudaError::driver("allocate the spin kernel's state", e))?,
            stream,
            kind,
            ns,
        })
    }

    /// Zeroes the paced kernel's chain (enqueued, so it lands before the next sample's start
    /// event): the first call of the sample then starts a new chain at its own start.
    pub fn reset(&mut self) -> Result<(), CudaError> {
        self.stream
            .memset_zeros(&mut self.state)
            .map_err(|e| CudaError::driver("reset the spin kernel's state", e))
    }

    /// How many calls ran since the last reset (synchronizes the stream).
    pub fn calls_seen(&self) -> Result<u64, CudaError> {
        let host = self
            .stream
            .clone_dtoh(&self.state)
            .map_err(|e| CudaError::driver("read the spin kernel's state", e))?;
        Ok(host[1])
    }
}

impl Workload for SpinWorkload {
    fn call(&mut self) -> Result<(), MeasureError> {
        let b = self
            .builtins
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match self.kind {
            SpinKind::Paced => b.paced(&self.stream, self.ns, &mut self.state)?,
            SpinKind::Isolated => b.spin(&self.stream, self.ns, &mut self.state)?,
        }
        Ok(())
    }
}
