//! [`DeviceState`]: one CUDA case's kernel, its buffer sets and its scratch, attached to the
//! host's stream. Uploads, poisoning, downloads and DRAM-cold buffer rotation happen here,
//! outside `run`.
//!
//! Buffer sets: set 0 holds the inputs and outputs the case verifies; [`DeviceState::rotate`]
//! adds copies (same inputs), and each `run` uses the next set round-robin, so a batch of calls
//! streams from DRAM. The scratch (counters and per-block partials) is shared by all sets: calls
//! on one stream never overlap, and every kernel leaves its counters at zero when it ends.

use std::sync::Arc;

use apex_plugin_api::PluginError;
use apex_plugin_api::cuda::{CudaSession, cuda_error};
use apex_plugin_api::launch::LaunchEx;
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, sys};

use crate::{
    Element,
    op::{CudaProgram, DeviceFacts, Inputs, OutputLens, SCALAR_POISON},
};

/// Every buffer one call reads or writes.
pub struct BufferSet {
    pub data: Vec<CudaSlice<u8>>,
    pub targets: Option<CudaSlice<i64>>,
    pub outputs: Vec<CudaSlice<u8>>,
    pub scalars: CudaSlice<f32>,
}

impl BufferSet {
    fn bytes(&self) -> usize {
        self.data.iter().map(CudaSlice::len).sum::<usize>()
            + self.targets.as_ref().map_or(0, |t| t.len() * 8)
            + self.outputs.iter().map(CudaSlice::len).sum::<usize>()
            + self.scalars.len() * 4
    }
}

pub struct DeviceState {
    pub session: CudaSession,
    pub function: CudaFunction,
    pub config: LaunchConfig,
    pub sets: Vec<BufferSet>,
    pub scratch: CudaSlice<u32>,
    /// The set the next `run` uses.
    pub cursor: usize,
    /// Whether calls launch programmatic-dependent (`crate::launch`), fixed at setup.
    pub dependent: bool,
}

/// Raw bytes of a slice of plain floating-point values.
pub fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: f32, f16 and bf16 are plain-old-data with no padding; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Free device memory that rotation leaves untouched (other allocations, the host's flush
/// buffer, the driver).
const ROTATE_RESERVE_BYTES: usize = 1 << 30;

impl DeviceState {
    /// The device facts a program may depend on.
    pub fn facts(session: &CudaSession) -> Result<DeviceFacts, PluginError> {
        use sys::CUdevice_attribute as A;
        let get = |attribute| -> Result<usize, PluginError> {
            let v = session.ctx.attribute(attribute).map_err(cuda_error)?;
            Ok(usize::try_from(v).unwrap_or(0))
        };
        Ok(DeviceFacts {
            sm_count: get(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1),
            compute_capability: (
                session.handles.compute_capability_major,
                session.handles.compute_capability_minor,
            ),
            smem_per_sm: get(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            smem_per_block_optin: get(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            threads_per_sm: get(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?.max(1),
        })
    }

    /// Compiles `program`, uploads `inputs` and allocates poisoned outputs and zeroed scratch.
    pub fn new<T: Element>(
        session: CudaSession,
        program: CudaProgram,
        inputs: &Inputs<T>,
        lens: &OutputLens,
    ) -> Result<Self, PluginError> {
        let module = session.compile(program.name, &program.source)?;
        let function = session.function(&module, program.function)?;
        let mut config = program.config;
        // Dynamic shared memory is opted into at its size: beyond 48 KiB per block with the
        // static arrays the launch fails without it.
        if config.shared_mem_bytes > 0 {
            function
                .set_attribute(
                    CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    i32::try_from(config.shared_mem_bytes).unwrap_or(i32::MAX),
                )
                .map_err(cuda_error)?;
        }
        if program.grid_stride {
            let per_sm = function
                .occupancy_max_active_blocks_per_multiprocessor(
                    config.block_dim.0,
                    config.shared_mem_bytes as usize,
                    None,
                )
                .map_err(cuda_error)?;
            let resident = Self::facts(&session)?.sm_count as u32 * per_sm.max(1);
            config.grid_dim.0 = config.grid_dim.0.min(resident).max(1);
        }
        let session_major = session.handles.compute_capability_major;
        let stream = session.stream.clone();
        let data = inputs
            .data
            .iter()
            .map(|d| stream.clone_htod(as_bytes(d)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let targets = if inputs.targets.is_empty() {
            None
        } else {
            Some(stream.clone_htod(&inputs.targets).map_err(cuda_error)?)
        };
        let outputs = lens
            .tensors
            .iter()
            .map(|&n| stream.alloc_zeros::<u8>(n * std::mem::size_of::<T>()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(cuda_error)?;
        let scalars = stream
            .alloc_zeros::<f32>(lens.scalars.max(1))
            .map_err(cuda_error)?;
        let scratch = stream
            .alloc_zeros::<u32>(program.scratch_words.max(1))
            .map_err(cuda_error)?;
        let mut state = Self {
            session,
            function,
            config,
            sets: vec![BufferSet {
                data,
                targets,
                outputs,
                scalars,
            }],
            scratch,
            cursor: 0,
            // The attribute and griddepcontrol exist from sm_90 on; older GPUs launch plainly.
            dependent: crate::launch::dependent_launch()
                && session_major >= crate::launch::MIN_MAJOR,
        };
        state.poison::<T>()?;
        Ok(state)
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.session.stream
    }

    /// A launch of the case's kernel on the host's stream, programmatic-dependent unless the
    /// case was set up under `launch::with_dependent_launch(false)`: push the arguments, then
    /// [`DeviceState::launch`] it.
    pub fn launcher(&self) -> LaunchEx<'_> {
        let mut launch = LaunchEx::new(self.stream(), &self.function);
        if self.dependent {
            launch.dependent();
        }
        launch
    }

    /// Enqueues `launch` (from [`DeviceState::launcher`]) with the case's grid.
    ///
    /// # Safety
    /// The arguments pushed on `launch` match the kernel's parameters in order and type, and
    /// every buffer holds what the kernel indexes for the case's plan.
    pub unsafe fn launch(&self, mut launch: LaunchEx<'_>) -> Result<(), PluginError> {
        // SAFETY: the caller vouches for the arguments; every nn_ops kernel runs
        // `dependent_launch_start` before its first memory access.
        unsafe { launch.launch(self.config) }.map_err(cuda_error)
    }

    /// The set for this `run`, advancing the cursor.
    pub fn next_set(&mut self) -> usize {
        let set = self.cursor;
        self.cursor = (self.cursor + 1) % self.sets.len();
        set
    }

    /// Copies fresh inputs over set 0's, re-zeroes the scratch and points the cursor at set 0.
    pub fn upload<T: Element>(&mut self, inputs: &Inputs<T>) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let set = &mut self.sets[0];
        for (dst, src) in set.data.iter_mut().zip(&inputs.data) {
            stream.memcpy_htod(as_bytes(src), dst).map_err(cuda_error)?;
        }
        if let Some(dst) = &mut set.targets {
            stream
                .memcpy_htod(inputs.targets.as_slice(), dst)
                .map_err(cuda_error)?;
        }
        stream.memset_zeros(&mut self.scratch).map_err(cuda_error)?;
        self.cursor = 0;
        stream.synchronize().map_err(cuda_error)
    }

    /// Fills set 0's outputs with NaN bits and its scalars with `+inf`.
    pub fn poison<T: Element>(&mut self) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let set = &mut self.sets[0];
        for out in &mut set.outputs {
            let poison = vec![T::POISON; out.len() / std::mem::size_of::<T>()];
            stream
                .memcpy_htod(as_bytes(&poison), out)
                .map_err(cuda_error)?;
        }
        let poison = vec![SCALAR_POISON; set.scalars.len()];
        stream
            .memcpy_htod(poison.as_slice(), &mut set.scalars)
            .map_err(cuda_error)?;
        stream.synchronize().map_err(cuda_error)
    }

    /// Copies set 0's outputs back (the host synchronized after the last `run`).
    pub fn download<T: Element>(
        &self,
        tensors: &mut [Vec<T>],
        scalars: &mut [f32],
    ) -> Result<(), PluginError> {
        let stream = &self.session.stream;
        let set = &self.sets[0];
        for (src, dst) in set.outputs.iter().zip(tensors.iter_mut()) {
            let bytes = stream.clone_dtoh(src).map_err(cuda_error)?;
            stream.synchronize().map_err(cuda_error)?;
            if bytes.len() != std::mem::size_of_val(dst.as_slice()) {
                return Err(PluginError::other(format!(
                    "output of {} bytes, expected {}",
                    bytes.len(),
                    std::mem::size_of_val(dst.as_slice())
                )));
            }
            // SAFETY: the byte length matches and every bit pattern is a valid float.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    dst.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                );
            }
        }
        let s = stream.clone_dtoh(&set.scalars).map_err(cuda_error)?;
        stream.synchronize().map_err(cuda_error)?;
        let n = scalars.len();
        scalars.copy_from_slice(&s[..n]);
        Ok(())
    }

    /// Uses `sets` buffer sets from now on (fewer when free memory, less a reserve, runs out):
    /// new sets are device-to-device copies of set 0 (inputs and outputs alike). Returns the
    /// number in use. The cursor goes back to set 0.
    pub fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        let want = (sets as usize).max(1);
        self.sets.truncate(want);
        let stream = self.session.stream.clone();
        let per_set = self.sets[0].bytes().max(1);
        let (free, _) = self.session.ctx.mem_get_info().map_err(cuda_error)?;
        let room = free.saturating_sub(ROTATE_RESERVE_BYTES) / per_set;
        let target = want.min(self.sets.len() + room);
        while self.sets.len() < target {
            let base = &self.sets[0];
            let copy = BufferSet {
                data: base
                    .data
                    .iter()
                    .map(|d| stream.clone_dtod(d))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(cuda_error)?,
                targets: base
                    .targets
                    .as_ref()
                    .map(|t| stream.clone_dtod(t))
                    .transpose()
                    .map_err(cuda_error)?,
                outputs: base
                    .outputs
                    .iter()
                    .map(|d| stream.clone_dtod(d))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(cuda_error)?,
                scalars: stream.clone_dtod(&base.scalars).map_err(cuda_error)?,
            };
            self.sets.push(copy);
        }
        self.cursor = 0;
        stream.synchronize().map_err(cuda_error)?;
        Ok(self.sets.len() as u32)
    }
}
