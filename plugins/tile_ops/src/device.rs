//! [`DeviceState`]: one CUDA case's module, functions and device buffers, attached to the host's
//! stream, with the [`CheckKit`] that draws its inputs and verifies its outputs. Uploads, draws,
//! and poisoning happen here, outside `run`.

use std::sync::Arc;

use apex_plugin_api::{CudaHandles, PluginError};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};

use apex_plugin_api::cuda::{CudaSession, cuda_error};

use crate::{
    Element,
    device_check::CheckKit,
    op::{CudaProgram, DataSpec, Draw, Inputs},
    selection::Rng,
};

/// Threads per block for every launch: 8 warps, enough memory parallelism per SM for streaming.
pub const BLOCK: u32 = 256;

pub struct DeviceState {
    pub session: CudaSession,
    pub functions: Vec<CudaFunction>,
    pub data: Vec<CudaSlice<u8>>,
    pub ints: Vec<CudaSlice<i32>>,
    pub outputs: Vec<CudaSlice<u8>>,
    pub scratch: Vec<CudaSlice<i32>>,
    pub check: CheckKit,
}

/// Raw bytes of a slice of plain floating-point values.
pub fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: f32, f16 and bf16 are plain-old-data with no padding; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Vectors each thread of a row-band kernel (`tile_unpack_override`, `fused_stage`) loads before
/// it stores any (`UNROLL` in the kernels). apex-host on an H200, batch mode, µs per call, 2
/// against 1/4/8 in one device call: unpack large profile t=8 fp16 146.7 against 158.1/147.3/148.7,
/// fixed profile 3.05 against 2.99/3.08/3.47; fused stage fixed profile 2.59 against
/// 2.74/2.72/3.09, large t=8 fp16 131.3 against 133.8/131.5/131.7, large t=16 fp32 268.1 against
/// 259.7/266.6/267.1 (one vector per thread wins only where every tile is selected).
pub const ROW_VECTORS_PER_THREAD: usize = 2;

/// Channels per block of a row-band kernel whose band holds `band_vectors` vectors per channel:
/// [`ROW_VECTORS_PER_THREAD`] vectors per thread, at least one channel, at most `channels`.
pub fn channels_per_block(band_vectors: usize, channels: usize) -> usize {
    (ROW_VECTORS_PER_THREAD * BLOCK as usize / band_vectors.max(1)).clamp(1, channels)
}

/// One block per row band (`bands`: batch x bands per map) in x and per channel group in y.
pub fn band_grid(bands: usize, channels: usize, channels_per_block: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            bands.max(1) as u32,
            channels.div_ceil(channels_per_block) as u32,
            1,
        ),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A 1-D launch covering `n` threads, one per output vector.
pub fn grid_1d(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(BLOCK as usize).max(1) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl DeviceState {
    /// Attaches to the host's stream, compiles `program` and the check kit for the device,
    /// allocates every buffer and fills the inputs of `seed`: `host`'s index tensors and
    /// [`Draw::Host`] tensors uploaded, the uniform ones drawn on the device.
    pub fn new<T: Element>(
        handles: &CudaHandles,
        program: CudaProgram,
        specs: &[DataSpec],
        host: &Inputs<T>,
        output_lens: &[usize],
        seed: u64,
    ) -> Result<Self, PluginError> {
        let session = CudaSession::attach(handles)?;
        let module = session.compile(program.name, &program.source)?;
        let functions = program
            .functions
            .iter()
            .map(|f| session.function(&module, f))
            .collect::<Result<Vec<_>, _>>()?;
        let check = CheckKit::new(&session, T::PRECISION)?;
        let stream = session.stream.clone();
        let data = specs
            .iter()
            // SAFETY: every byte is written by `fill` (an upload or a draw) before a launch reads it.
            .map(|s| unsafe { stream.alloc::<u8>((s.len * std::mem::size_of::<T>()).max(1)) })
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let ints = host
            .ints
            .iter()
            .map(|d| stream.clone_htod(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let outputs = output_lens
            .iter()
            .map(|&n| stream.alloc_zeros::<u8>(n * std::mem::size_of::<T>()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let scratch = program
            .scratch_i32
            .iter()
            .map(|&n| stream.alloc_zeros::<i32>(n.max(1)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let mut state = Self {
            session,
            functions,
            data,
            ints,
            outputs,
            scratch,
            check,
        };
        state.fill(specs, host, seed)?;
        Ok(state)
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.session.stream
    }

    /// Fresh inputs for `seed` (same sizes): `host`'s index tensors and [`Draw::Host`] data
    /// tensors copied over the device ones, the [`Draw::Uniform`] ones drawn on the device; then
    /// every output poisoned. Returns after the stream has drained.
    pub fn fill<T: Element>(
        &mut self,
        specs: &[DataSpec],
        host: &Inputs<T>,
        seed: u64,
    ) -> Result<(), PluginError> {
        self.fill_inputs(specs, host, seed)?;
        self.poison::<T>()
    }

    /// [`DeviceState::fill`] without poisoning the outputs: they keep the last call's results.
    pub fn fill_inputs<T: Element>(
        &mut self,
        specs: &[DataSpec],
        host: &Inputs<T>,
        seed: u64,
    ) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        for ((dst, spec), src) in self.data.iter_mut().zip(specs).zip(&host.data) {
            match spec.draw {
                Draw::Host => stream.memcpy_htod(as_bytes(src), dst).map_err(cuda_error)?,
                Draw::Uniform { stream: s, lo, hi } => {
                    self.check
                        .draw(&stream, dst, spec.len, &Rng::new(seed, s), lo, hi)?;
                }
            }
        }
        for (dst, src) in self.ints.iter_mut().zip(&host.ints) {
            stream
                .memcpy_htod(src.as_slice(), dst)
                .map_err(cuda_error)?;
        }
        Ok(())
    }

    /// Fills every output with NaN bits, so an element a kernel leaves unwritten fails verify: a
    /// 16- or 32-bit memset of [`Element::POISON`]'s bits on the stream (no host buffer the size
    /// of the outputs, no copy).
    pub fn poison<T: Element>(&mut self) -> Result<(), PluginError> {
        use cudarc::driver::{DevicePtrMut, sys};
        let stream = self.session.stream.clone();
        let poison = [T::POISON];
        let bits = as_bytes(&poison);
        for out in &mut self.outputs {
            let n = out.len() / bits.len();
            let (ptr, _record) = out.device_ptr_mut(&stream);
            // SAFETY: `ptr` is a live allocation of `n` elements of `bits.len()` bytes each.
            let set = unsafe {
                match bits {
                    [a, b] => sys::cuMemsetD16Async(
                        ptr,
                        u16::from_ne_bytes([*a, *b]),
                        n,
                        stream.cu_stream(),
                    ),
                    [a, b, c, d] => sys::cuMemsetD32Async(
                        ptr,
                        u32::from_ne_bytes([*a, *b, *c, *d]),
                        n,
                        stream.cu_stream(),
                    ),
                    _ => unreachable!("tile_ops elements are 2 or 4 bytes"),
                }
            };
            set.result().map_err(cuda_error)?;
        }
        stream.synchronize().map_err(cuda_error)
    }
}
