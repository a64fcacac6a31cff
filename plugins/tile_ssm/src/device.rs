//! [`DeviceState`]: one CUDA case's function, its buffer sets and the launch. Uploads, poisoning,
//! downloads and the DRAM-cold rotation ([`DeviceState::rotate`]) happen here, outside `run`.

use apex_plugin_api::{
    CudaHandles, PluginError,
    cuda::{CudaSession, cuda_error},
};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::{
    Element,
    inputs::ScanInputs,
    problem::{Direction, GateShape, InitState, ScanProblem},
    program::{self, CudaTuning},
};

/// Every buffer one call reads or writes, except the bidirectional scratch (see [`DeviceState`]).
pub struct BufferSet {
    tokens: CudaSlice<u8>,
    params: CudaSlice<f32>,
    /// At least one element, so an absent initial state is still a valid pointer.
    init: CudaSlice<u8>,
    /// At least one element, as `init`.
    gate: CudaSlice<f32>,
    y: CudaSlice<u8>,
    state: CudaSlice<u8>,
}

impl BufferSet {
    fn bytes(&self) -> usize {
        self.tokens.len()
            + 4 * self.params.len()
            + self.init.len()
            + 4 * self.gate.len()
            + self.y.len()
            + self.state.len()
    }
}

/// The device side of a case. `sets[0]` is the set that uploads, poisoning, downloads and the
/// first `run` after `prepare_check` use; `run` walks the sets round-robin. The bidirectional
/// scratch (`[B, nsup, C]` f32 backward carries, used when K exceeds one super-chunk) is shared by
/// every set: a call writes it before it reads it and calls are ordered on one stream.
pub struct DeviceState {
    session: CudaSession,
    function: CudaFunction,
    tuning: CudaTuning,
    sets: Vec<BufferSet>,
    cursor: usize,
    scratch: CudaSlice<f32>,
}

/// Raw bytes of a slice of plain floating-point values.
fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: f32, f16 and bf16 are plain-old-data with no padding; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `v`, or one zero element when `v` is empty (a valid pointer the kernel never reads).
fn at_least_one<T: Element>(v: &[T]) -> Vec<T> {
    if v.is_empty() {
        vec![T::ZERO]
    } else {
        v.to_vec()
    }
}

impl DeviceState {
    /// Attaches to the host's stream, loads the (cached) program and uploads `inputs` as set 0,
    /// with poisoned outputs.
    pub fn new<T: Element>(
        handles: &CudaHandles,
        problem: &ScanProblem,
        tuning: CudaTuning,
        inputs: &ScanInputs<T>,
    ) -> Result<Self, PluginError> {
        // Two channels per lane need an even C: the kernel's vector accesses assume it.
        let tuning = tuning.fit(problem.channels);
        let session = CudaSession::attach(handles)?;
        let source = program::source(T::PRECISION, tuning)?;
        let ptx = program::ptx(&source, session.arch())?;
        let module = session.ctx.load_module(ptx).map_err(cuda_error)?;
        let entry = program::entry(problem.direction, problem.steps, tuning);
        let function = session.function(&module, entry)?;
        let stream = session.stream.clone();
        let es = std::mem::size_of::<T>();
        let up = |bytes: &[u8]| stream.clone_htod(bytes).map_err(cuda_error);
        let set = BufferSet {
            tokens: up(as_bytes(&inputs.tokens))?,
            params: stream.clone_htod(&inputs.params).map_err(cuda_error)?,
            init: up(as_bytes(&at_least_one(&inputs.init)))?,
            gate: stream
                .clone_htod(&at_least_one(&inputs.gate))
                .map_err(cuda_error)?,
            y: stream
                .alloc_zeros::<u8>(problem.tokens() * es)
                .map_err(cuda_error)?,
            state: stream
                .alloc_zeros::<u8>(problem.state_len() * es)
                .map_err(cuda_error)?,
        };
        let scratch_len = if problem.direction == Direction::Bidirectional {
            problem.batch * problem.steps.div_ceil(tuning.super_chunk()) * problem.channels
        } else {
            0
        };
        let scratch = stream
            .alloc_zeros::<f32>(scratch_len.max(1))
            .map_err(cuda_error)?;
        let mut state = Self {
            session,
            function,
            tuning,
            sets: vec![set],
            cursor: 0,
            scratch,
        };
        state.poison::<T>()?;
        Ok(state)
    }

    /// Buffer sets in use.
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// Copies fresh inputs over set 0 and makes the next `run` use it.
    pub fn upload<T: Element>(&mut self, inputs: &ScanInputs<T>) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let set = &mut self.sets[0];
        stream
            .memcpy_htod(as_bytes(&inputs.tokens), &mut set.tokens)
            .map_err(cuda_error)?;
        stream
            .memcpy_htod(inputs.params.as_slice(), &mut set.params)
            .map_err(cuda_error)?;
        if !inputs.init.is_empty() {
            stream
                .memcpy_htod(as_bytes(&inputs.init), &mut set.init)
                .map_err(cuda_error)?;
        }
        if !inputs.gate.is_empty() {
            stream
                .memcpy_htod(inputs.gate.as_slice(), &mut set.gate)
                .map_err(cuda_error)?;
        }
        self.cursor = 0;
        stream.synchronize().map_err(cuda_error)
    }

    /// Fills set 0's outputs with NaN bits, so an element the kernel leaves unwritten fails verify.
    pub fn poison<T: Element>(&mut self) -> Result<(), PluginError> {
        self.poison_sets::<T>(1)
    }

    /// Poisons the outputs of every set and makes the next `run` use set 0 (the GPU check then
    /// runs each set once and verifies each).
    pub fn poison_all<T: Element>(&mut self) -> Result<(), PluginError> {
        self.cursor = 0;
        self.poison_sets::<T>(self.sets.len())
    }

    fn poison_sets<T: Element>(&mut self, n: usize) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        for set in self.sets.iter_mut().take(n) {
            for out in [&mut set.y, &mut set.state] {
                let poison = vec![T::POISON; out.len() / std::mem::size_of::<T>()];
                stream
                    .memcpy_htod(as_bytes(&poison), out)
                    .map_err(cuda_error)?;
            }
        }
        stream.synchronize().map_err(cuda_error)
    }

    /// Waits for everything enqueued on the host's stream.
    pub fn synchronize(&self) -> Result<(), PluginError> {
        self.session.stream.synchronize().map_err(cuda_error)
    }

    /// Copies set 0's outputs back (the host synchronized after the last `run`).
    pub fn download<T: Element>(&self, y: &mut [T], state: &mut [T]) -> Result<(), PluginError> {
        self.download_set(0, y, state)
    }

    /// Copies the outputs of buffer set `index` back.
    pub fn download_set<T: Element>(
        &self,
        index: usize,
        y: &mut [T],
        state: &mut [T],
    ) -> Result<(), PluginError> {
        let stream = &self.session.stream;
        let set = self.sets.get(index).ok_or_else(|| {
            PluginError::invalid(format!(
                "buffer set {index} does not exist ({} in use)",
                self.sets.len()
            ))
        })?;
        for (src, dst) in [(&set.y, y), (&set.state, state)] {
            let bytes = stream.clone_dtoh(src).map_err(cuda_error)?;
            stream.synchronize().map_err(cuda_error)?;
            if bytes.len() != std::mem::size_of_val(dst) {
                return Err(PluginError::other(format!(
                    "device output holds {} bytes, the host copy {} (a plugin bug)",
                    bytes.len(),
                    std::mem::size_of_val(dst)
                )));
            }
            // SAFETY: the byte lengths match and every bit pattern is a valid float.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    dst.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                );
            }
        }
        Ok(())
    }

    /// Keeps `sets` buffer sets (fewer when device memory is short: the copies may take at most
    /// half of the free memory), each a device-to-device copy of set 0, and restarts the
    /// round-robin at set 0. Returns the sets in use.
    pub fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        let want = (sets as usize).max(1);
        self.sets.truncate(want);
        let per_set = self.sets[0].bytes().max(1);
        let (free, _) = self.session.ctx.mem_get_info().map_err(cuda_error)?;
        let target = want.min(self.sets.len() + free / 2 / per_set);
        let stream = self.session.stream.clone();
        while self.sets.len() < target {
            let s0 = &self.sets[0];
            let copy = BufferSet {
                tokens: stream.clone_dtod(&s0.tokens).map_err(cuda_error)?,
                params: stream.clone_dtod(&s0.params).map_err(cuda_error)?,
                init: stream.clone_dtod(&s0.init).map_err(cuda_error)?,
                gate: stream.clone_dtod(&s0.gate).map_err(cuda_error)?,
                y: stream.clone_dtod(&s0.y).map_err(cuda_error)?,
                state: stream.clone_dtod(&s0.state).map_err(cuda_error)?,
            };
            self.sets.push(copy);
        }
        stream.synchronize().map_err(cuda_error)?;
        self.cursor = 0;
        Ok(self.sets.len() as u32)
    }

    /// Grid `(ceil(C / (32 * channels_per_lane)), B)`, block `(32, chunks)`.
    fn launch_config(problem: &ScanProblem, tuning: CudaTuning) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (
                problem.channels.div_ceil(tuning.block_channels()) as u32,
                problem.batch as u32,
                1,
            ),
            block_dim: (32, tuning.chunks as u32, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Enqueues one call on the host's stream with the next buffer set: one launch, nothing else.
    pub fn launch(&mut self, problem: &ScanProblem) -> Result<(), PluginError> {
        let cfg = Self::launch_config(problem, self.tuning);
        let i = self.cursor;
        self.cursor = (i + 1) % self.sets.len();
        let set = &mut self.sets[i];
        let (k, c) = (problem.steps as i32, problem.channels as i32);
        let clamp = problem.clamp_value;
        let has_init = i32::from(problem.init != InitState::None);
        let (init_bstride, init_dstride) = match problem.init {
            InitState::None | InitState::Bc => (c, 0),
            InitState::B2c => (2 * c, c),
        };
        let merge = problem.merge.code();
        let gate_bstride = match problem.gate {
            GateShape::Channel => 0,
            GateShape::BatchChannel => c,
        };
        let stream = &self.session.stream;
        let mut b = stream.launch_builder(&self.function);
        b.arg(&set.tokens)
            .arg(&set.params)
            .arg(&set.init)
            .arg(&has_init);
        if problem.direction == Direction::Bidirectional {
            b.arg(&init_bstride)
                .arg(&init_dstride)
                .arg(&set.gate)
                .arg(&merge)
                .arg(&gate_bstride)
                .arg(&mut set.y)
                .arg(&mut set.state)
                .arg(&mut self.scratch);
        } else {
            b.arg(&mut set.y).arg(&mut set.state);
        }
        b.arg(&k).arg(&c).arg(&clamp);
        // SAFETY: the arguments match the entry point's signature in cuda/tile_ssm.cu; every
        // buffer holds what the kernel indexes for this problem (tokens and y B*K*C elements,
        // params 4*C, init and gate as their strides say, state B*C or B*2*C, scratch
        // B*ceil(K/super)*C), and the grid covers every channel block and batch entry.
        unsafe { b.launch(cfg) }.map(drop).map_err(cuda_error)
    }
}
