//! [`OpKernel`] and [`OpCase`]: the generic glue that turns any [`TileOp`] into a plugin kernel
//! with CPU (fp32/fp16/bf16 via `half`) and CUDA (NVRTC) cases.

use std::marker::PhantomData;

use apex_plugin_api::{
    Accuracy, Backend, Instance, Kernel, KernelDescriptor, PluginError, Precision, SetupRequest,
    Tolerance, Work,
};
use half::{bf16, f16};

use crate::{
    Element,
    device::DeviceState,
    op::{CpuScratch, Inputs, TileOp},
};

/// The kernel object for op `O`.
pub struct OpKernel<O>(PhantomData<fn() -> O>);

impl<O> Default for OpKernel<O> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<O: TileOp> Kernel for OpKernel<O> {
    fn descriptor(&self) -> KernelDescriptor {
        O::descriptor()
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        match request.precision {
            Precision::Fp32 => Ok(Box::new(OpCase::<O, f32>::new(request)?)),
            Precision::Fp16 => Ok(Box::new(OpCase::<O, f16>::new(request)?)),
            Precision::Bf16 => Ok(Box::new(OpCase::<O, bf16>::new(request)?)),
            other => Err(PluginError::invalid(format!(
                "{} has no {other} path (hint: use fp32, fp16 or bf16)",
                O::descriptor().id
            ))),
        }
    }
}

/// One set-up case of op `O` in storage type `T`.
///
/// On the CPU, `inputs` holds every tensor and `outputs` the last call's results. On CUDA, the
/// uniform tensors and every output live on the device only, `inputs` keeps the index tensors
/// and host-drawn tensors, and verification runs on the device ([`crate::device_check`]) with its
/// reference checked on the last batch row ([`crate::row_check`]).
pub struct OpCase<O: TileOp, T: Element> {
    op: O,
    /// The seed of the current inputs (setup's, then the last `prepare_check`'s).
    seed: u64,
    inputs: Inputs<T>,
    outputs: Vec<Vec<T>>,
    scratch: CpuScratch,
    device: Option<DeviceState>,
}

impl<O: TileOp, T: Element> OpCase<O, T> {
    pub fn new(request: &SetupRequest) -> Result<Self, PluginError> {
        let op = O::plan(&request.params)?;
        let seed = request.seed;
        let lens = op.output_lens();
        let mut inputs = Inputs::empty();
        let device = match request.backend {
            Backend::Cpu => {
                op.generate_into(seed, &mut inputs);
                None
            }
            Backend::Cuda => {
                let handles = request.cuda.as_ref().into_option().ok_or_else(|| {
                    PluginError::invalid("a cuda case needs the host's CUDA handles (hint: run it with --backends cuda on a GPU host)")
                })?;
                op.generate_host(seed, &mut inputs);
                Some(DeviceState::new(
                    handles,
                    op.cuda_program(T::PRECISION),
                    &op.data_specs(),
                    &inputs,
                    &lens,
                    seed,
                )?)
            }
            Backend::Trt => {
                return Err(PluginError::invalid(format!(
                    "{} has no trt path (hint: use --backends cpu,cuda)",
                    O::descriptor().id
                )));
            }
        };
        // A CUDA case's outputs stay on the device (verified there).
        let outputs = match device {
            None => lens.iter().map(|&n| vec![T::POISON; n]).collect(),
            Some(_) => Vec::new(),
        };
        let mut scratch = op.cpu_scratch();
        let work = op.work(&inputs);
        scratch.parallel = crate::cpu_par::worth_threads(work.bytes_read + work.bytes_written);
        Ok(Self {
            op,
            seed,
            inputs,
            outputs,
            scratch,
            device,
        })
    }

    /// Fresh inputs for `seed` on the device while the outputs keep the last call's results: the
    /// self-check's stale-output control (a kernel that returned an earlier call's answer), which
    /// verification must fail. An error on the CPU.
    pub fn stage_without_running(&mut self, seed: u64) -> Result<(), PluginError> {
        let device = self.device.as_mut().ok_or_else(|| {
            PluginError::invalid("stage_without_running is a CUDA self-check control")
        })?;
        self.seed = seed;
        self.op.generate_host(seed, &mut self.inputs);
        device.fill_inputs(&self.op.data_specs(), &self.inputs, seed)?;
        device
            .stream()
            .synchronize()
            .map_err(apex_plugin_api::cuda::cuda_error)
    }

    /// Verification on the device: the op's reference kernels, every element compared there, and
    /// the reference itself checked against the CPU's on the last batch row.
    fn verify_on_device(
        op: &O,
        seed: u64,
        inputs: &Inputs<T>,
        device: &mut DeviceState,
        tolerance: &Tolerance,
    ) -> Result<Accuracy, PluginError> {
        let lens = op.output_lens();
        let stream = device.stream().clone();
        device.check.reference(&stream, lens.iter().sum())?;
        op.launch_reference(&inputs.ints, device)?;
        let accuracy = device
            .check
            .compare(&stream, &device.outputs, &lens, tolerance)?;
        crate::row_check::check_last_row(op, seed, inputs, device)?;
        Ok(accuracy)
    }
}

impl<O: TileOp, T: Element> Instance for OpCase<O, T> {
    fn work(&self) -> Work {
        self.op.work(&self.inputs)
    }

    fn run(&mut self) -> Result<(), PluginError> {
        match &mut self.device {
            Some(device) => self.op.launch(T::PRECISION, device),
            None => {
                self.op
                    .run_cpu(&self.inputs, &mut self.outputs, &mut self.scratch);
                Ok(())
            }
        }
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.seed = seed;
        match &mut self.device {
            Some(device) => {
                self.op.generate_host(seed, &mut self.inputs);
                device.fill(&self.op.data_specs(), &self.inputs, seed)
            }
            None => {
                self.op.generate_into(seed, &mut self.inputs);
                for out in &mut self.outputs {
                    out.fill(T::POISON);
                }
                Ok(())
            }
        }
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        match &mut self.device {
            Some(device) => {
                Self::verify_on_device(&self.op, self.seed, &self.inputs, device, tolerance)
            }
            None => {
                let reference = self.op.reference(&self.inputs);
                Ok(crate::compare::compare_chunked(
                    &self.outputs,
                    &reference,
                    tolerance,
                ))
            }
        }
    }
}
