//! A deserialized TensorRT engine and one query on it.
//!
//! [`TrtEngine`] owns the runtime, engine and execution context (through the shim) and describes
//! the I/O tensors. [`TrtQuery`] binds the case's inputs and outputs in device memory on the
//! host's stream and runs one query the way trtexec times one: event, H2D copies, event,
//! `enqueueV3` (its host time is the Enqueue Time), event, D2H copies, event, then a stream
//! synchronize; the three event intervals are H2D Latency, GPU Compute Time and D2H Latency.

use std::ffi::{CString, c_void};
use std::sync::Arc;
use std::time::Instant;

use apex_plugin_api::cuda::CudaSession;
use cudarc::driver::{CudaEvent, CudaSlice, sys::CUevent_flags};

use super::library::NvInfer;
use super::shim::Shim;
use crate::inputs::{HostData, HostTensor};
use crate::tensor::{DType, IoSpec, ResolvedInput};
use crate::trace::DevicePhases;

/// TensorRT's `DataType` values as ours (`NvInferRuntimeBase.h`, the same in TensorRT 10 and 11).
fn dtype_of(v: i32) -> Result<DType, String> {
    Ok(match v {
        0 => DType::F32,
        1 => DType::F16,
        2 => DType::I8,
        3 => DType::I32,
        4 => DType::Bool,
        5 => DType::U8,
        7 => DType::Bf16,
        8 => DType::I64,
        6 => return Err("FP8".into()),
        9 => return Err("INT4".into()),
        10 => return Err("FP4".into()),
        11 => return Err("E8M0".into()),
        other => return Err(format!("DataType({other})")),
    })
}

/// The runtime, the engine and its execution context.
pub struct TrtEngine {
    shim: &'static Shim,
    runtime: *mut c_void,
    engine: *mut c_void,
    context: *mut c_void,
    pub inputs: Vec<IoSpec>,
    pub outputs: Vec<IoSpec>,
}

// SAFETY: the handles are used from one thread at a time (the instance is `Send`, not `Sync`);
// TensorRT's objects may move between threads.
unsafe impl Send for TrtEngine {}

fn c(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

impl TrtEngine {
    /// Deserializes `bytes`; the error is TensorRT's own message (the seed's
    /// `engine_deserialize_failed`).
    pub fn deserialize(nv: &NvInfer, shim: &'static Shim, bytes: &[u8]) -> Result<Self, String> {
        // SAFETY: `create_runtime` is libnvinfer's `createInferRuntime_INTERNAL`.
        let runtime = unsafe { (shim.runtime_create)(nv.create_runtime) };
        if runtime.is_null() {
            return Err(shim.last_error());
        }
        // SAFETY: a live runtime and a byte buffer that outlives the call.
        let engine =
            unsafe { (shim.engine_deserialize)(runtime, bytes.as_ptr().cast(), bytes.len()) };
        if engine.is_null() {
            let e = shim.last_error();
            // SAFETY: the runtime is ours and no engine refers to it.
            unsafe { (shim.runtime_destroy)(runtime) };
            return Err(e);
        }
        // SAFETY: a live engine.
        let context = unsafe { (shim.context_create)(engine) };
        let mut me = Self {
            shim,
            runtime,
            engine,
            context,
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        if context.is_null() {
            return Err(shim.last_error());
        }
        // SAFETY: a live engine.
        let n = unsafe { (shim.engine_num_io)(engine) };
        for i in 0..n.max(0) {
            // SAFETY: `i` is in range; the name is owned by the engine.
            let name_ptr = unsafe { (shim.engine_io_name)(engine, i) };
            if name_ptr.is_null() {
                return Err(shim.last_error());
            }
            // SAFETY: a NUL-terminated string owned by the engine.
            let name = unsafe { std::ffi::CStr::from_ptr(name_ptr) }
                .to_string_lossy()
                .into_owned();
            let cname = c(&name);
            let mut dims = [0i64; 8];
            // SAFETY: `dims` has room for 8, TensorRT's maximum.
            let nb = unsafe { (shim.engine_io_dims)(engine, cname.as_ptr(), dims.as_mut_ptr(), 8) };
            // SAFETY: a live engine and a valid tensor name.
            let dtype = unsafe { (shim.engine_io_dtype)(engine, cname.as_ptr()) };
            // SAFETY: as above.
            let is_input = unsafe { (shim.engine_io_is_input)(engine, cname.as_ptr()) };
            if nb < 0 || dtype < 0 || is_input < 0 {
                return Err(shim.last_error());
            }
            let spec = IoSpec {
                name,
                dtype: dtype_of(dtype),
                dims: dims[..nb as usize].to_vec(),
            };
            if is_input == 1 {
                me.inputs.push(spec);
            } else {
                me.outputs.push(spec);
            }
        }
        Ok(me)
    }

    /// Sets every input's shape on the context and returns the outputs' resolved shapes; an
    /// output that stays unresolved is the seed's `unresolved_tensor_shape:<name>`.
    pub fn set_shapes(&mut self, inputs: &[ResolvedInput]) -> Result<Vec<ResolvedInput>, String> {
        for input in inputs {
            let dims: Vec<i64> = input.dims.iter().map(|&d| d as i64).collect();
            // SAFETY: a live context, a valid name and `dims.len()` dimensions.
            let rc = unsafe {
                (self.shim.context_set_input_shape)(
                    self.context,
                    c(&input.name).as_ptr(),
                    dims.as_ptr(),
                    dims.len() as i32,
                )
            };
            if rc != 0 {
                return Err(format!(
                    "setInputShape({}): {}",
                    input.name,
                    self.shim.last_error()
                ));
            }
        }
        let mut out = Vec::new();
        for o in &self.outputs {
            let mut dims = [0i64; 8];
            // SAFETY: a live context; `dims` has room for 8.
            let nb = unsafe {
                (self.shim.context_tensor_dims)(
                    self.context,
                    c(&o.name).as_ptr(),
                    dims.as_mut_ptr(),
                    8,
                )
            };
            if nb < 0 || dims[..nb as usize].iter().any(|&d| d < 0) {
                return Err(format!("unresolved_tensor_shape:{}", o.name));
            }
            let dtype = o
                .dtype
                .clone()
                .map_err(|d| format!("unsupported_dtype:{d} (output `{}`)", o.name))?;
            out.push(ResolvedInput {
                name: o.name.clone(),
                dtype,
                dims: dims[..nb as usize].iter().map(|&d| d as usize).collect(),
            });
        }
        Ok(out)
    }

    fn set_address(&mut self, name: &str, ptr: u64) -> Result<(), String> {
        // SAFETY: a live context; `ptr` is device memory that outlives every enqueue.
        let rc = unsafe {
            (self.shim.context_set_address)(self.context, c(name).as_ptr(), ptr as *mut c_void)
        };
        if rc != 0 {
            return Err(format!(
                "setTensorAddress({name}): {}",
                self.shim.last_error()
            ));
        }
        Ok(())
    }

    fn enqueue(&mut self, stream: *mut c_void) -> Result<(), String> {
        // SAFETY: a live context whose every tensor has an address; the host's stream.
        let rc = unsafe { (self.shim.context_enqueue)(self.context, stream) };
        if rc != 0 {
            return Err(format!("enqueueV3: {}", self.shim.last_error()));
        }
        Ok(())
    }
}

impl Drop for TrtEngine {
    fn drop(&mut self) {
        // SAFETY: each handle is ours, destroyed once, context before engine before runtime.
        unsafe {
            if !self.context.is_null() {
                (self.shim.context_destroy)(self.context);
            }
            (self.shim.engine_destroy)(self.engine);
            (self.shim.runtime_destroy)(self.runtime);
        }
    }
}

/// An engine with its tensors in device memory on the host's stream.
pub struct TrtQuery {
    pub engine: TrtEngine,
    cuda: CudaSession,
    inputs: Vec<(HostTensor, CudaSlice<u8>)>,
    outputs: Vec<(ResolvedInput, CudaSlice<u8>, Vec<u8>)>,
    events: [CudaEvent; 4],
}

fn cuda_err(e: cudarc::driver::DriverError) -> String {
    format!("{e:?}")
}

impl TrtQuery {
    /// Allocates every tensor on the device and sets its address on the context.
    pub fn new(
        mut engine: TrtEngine,
        cuda: CudaSession,
        inputs: Vec<HostTensor>,
        outputs: Vec<ResolvedInput>,
    ) -> Result<Self, String> {
        let stream = Arc::clone(&cuda.stream);
        let mut d_inputs = Vec::new();
        for t in inputs {
            let bytes = t.data.bytes();
            let d = stream.clone_htod(&bytes).map_err(cuda_err)?;
            {
                let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&d, &stream);
                engine.set_address(&t.name, ptr)?;
            }
            d_inputs.push((t, d));
        }
        let mut d_outputs = Vec::new();
        for o in outputs {
            let bytes = o.dims.iter().product::<usize>() * o.dtype.size_bytes();
            let d = stream.alloc_zeros::<u8>(bytes.max(1)).map_err(cuda_err)?;
            {
                let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&d, &stream);
                engine.set_address(&o.name, ptr)?;
            }
            d_outputs.push((o, d, vec![0u8; bytes]));
        }
        let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let ev = || cuda.ctx.new_event(timing).map_err(cuda_err);
        let events = [ev()?, ev()?, ev()?, ev()?];
        stream.synchronize().map_err(cuda_err)?;
        Ok(Self {
            engine,
            cuda,
            inputs: d_inputs,
            outputs: d_outputs,
            events,
        })
    }

    /// Replaces the inputs' host data (same shapes) for the next query.
    pub fn set_inputs(&mut self, tensors: Vec<HostTensor>) {
        for ((t, _), new) in self.inputs.iter_mut().zip(tensors) {
            *t = new;
        }
    }

    /// One query: H2D, enqueueV3, D2H, synchronized; the phases from the events.
    pub fn run(&mut self) -> Result<DevicePhases, String> {
        let stream = Arc::clone(&self.cuda.stream);
        let [e0, e1, e2, e3] = &self.events;
        e0.record(&stream).map_err(cuda_err)?;
        for (t, d) in &mut self.inputs {
            stream.memcpy_htod(&t.data.bytes(), d).map_err(cuda_err)?;
        }
        e1.record(&stream).map_err(cuda_err)?;
        let t0 = Instant::now();
        self.engine.enqueue(stream.cu_stream() as *mut c_void)?;
        let enqueue_ms = t0.elapsed().as_secs_f64() * 1e3;
        e2.record(&stream).map_err(cuda_err)?;
        for (_, d, host) in &mut self.outputs {
            stream
                .memcpy_dtoh(d, host.as_mut_slice())
                .map_err(cuda_err)?;
        }
        e3.record(&stream).map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(DevicePhases {
            enqueue_ms,
            h2d_ms: f64::from(e0.elapsed_ms(e1).map_err(cuda_err)?),
            gpu_compute_ms: f64::from(e1.elapsed_ms(e2).map_err(cuda_err)?),
            d2h_ms: f64::from(e2.elapsed_ms(e3).map_err(cuda_err)?),
        })
    }

    /// The last query's outputs, read back to the host.
    pub fn outputs(&self) -> Result<Vec<HostTensor>, String> {
        self.outputs
            .iter()
            .map(|(o, _, host)| {
                Ok(HostTensor {
                    name: o.name.clone(),
                    dims: o.dims.clone(),
                    data: HostData::from_bytes(o.dtype, host)
                        .ok_or_else(|| format!("output `{}`: bad byte length", o.name))?,
                })
            })
            .collect()
    }

    /// Fills the host copies of the outputs with a poison pattern (all bits set: NaN for floats).
    pub fn poison_outputs(&mut self) {
        for (_, _, host) in &mut self.outputs {
            host.fill(0xFF);
        }
    }
}
