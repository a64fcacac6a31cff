//! [`OpKernel`] and [`OpCase`]: the generic glue that turns any [`NnOp`] into a plugin kernel with
//! CPU (fp32/fp16/bf16 storage via `half`, f32 arithmetic) and CUDA (NVRTC) cases.

use std::marker::PhantomData;

use apex_plugin_api::{
    Accuracy, Backend, Instance, Kernel, KernelDescriptor, PluginError, Precision, SetupRequest,
    Tolerance, Work, cuda::CudaSession,
};
use half::{bf16, f16};

use crate::{
    Element,
    device::DeviceState,
    op::{Inputs, NnOp, Outputs},
};

/// The kernel object for op `O`.
pub struct OpKernel<O>(PhantomData<fn() -> O>);

impl<O> Default for OpKernel<O> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<O: NnOp> Kernel for OpKernel<O> {
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
pub struct OpCase<O: NnOp, T: Element> {
    op: O,
    inputs: Inputs<T>,
    outputs: Outputs<T>,
    /// Whether the CPU path may use every core (see [`crate::cpu_par`]).
    parallel: bool,
    device: Option<DeviceState>,
}

impl<O: NnOp, T: Element> OpCase<O, T> {
    pub fn new(request: &SetupRequest) -> Result<Self, PluginError> {
        let op = O::plan(&request.params)?;
        let inputs = op.generate::<T>(request.seed);
        let lens = op.output_lens();
        let device = match request.backend {
            Backend::Cpu => None,
            Backend::Cuda => {
                let handles = request.cuda.as_ref().into_option().ok_or_else(|| {
                    PluginError::invalid("a cuda case needs the host's CUDA handles (hint: run it with --backends cuda on a GPU host)")
                })?;
                let session = CudaSession::attach(handles)?;
                let facts = DeviceState::facts(&session)?;
                let program = op.cuda_program(T::PRECISION, facts)?;
                if program.co_resident_blocks > facts.sm_count {
                    return Err(PluginError::invalid(format!(
                        "this row length needs {} blocks of one row resident at once, more than the device's {} SMs (hint: a shorter row)",
                        program.co_resident_blocks, facts.sm_count
                    )));
                }
                Some(DeviceState::new(session, program, &inputs, &lens)?)
            }
            Backend::Trt => {
                return Err(PluginError::invalid(format!(
                    "{} has no trt path (hint: use --backends cpu,cuda)",
                    O::descriptor().id
                )));
            }
        };
        let work = op.work(T::PRECISION);
        Ok(Self {
            outputs: Outputs::poisoned(&lens),
            parallel: crate::cpu_par::worth_threads(work.bytes_read + work.bytes_written),
            op,
            inputs,
            device,
        })
    }

    /// The current inputs (tests compare against them).
    pub fn inputs(&self) -> &Inputs<T> {
        &self.inputs
    }

    /// Replaces the inputs (tests build edge cases by hand); CPU cases only.
    pub fn set_inputs(&mut self, inputs: Inputs<T>) {
        self.inputs = inputs;
        self.outputs.poison();
    }

    /// The outputs of the last call (for CUDA, as of the last `verify` or `fetch_outputs`).
    pub fn outputs(&self) -> &Outputs<T> {
        &self.outputs
    }

    /// Mutable outputs (tests corrupt them to prove that verification catches it).
    pub fn outputs_mut(&mut self) -> &mut Outputs<T> {
        &mut self.outputs
    }

    /// Copies set 0's device outputs into the host copy (no-op on the CPU).
    pub fn fetch_outputs(&mut self) -> Result<(), PluginError> {
        if let Some(device) = &self.device {
            let Outputs { tensors, scalars } = &mut self.outputs;
            device.download(tensors, scalars)?;
        }
        Ok(())
    }

    pub fn op(&self) -> &O {
        &self.op
    }
}

impl<O: NnOp, T: Element> Instance for OpCase<O, T> {
    fn work(&self) -> Work {
        self.op.work(T::PRECISION)
    }

    fn run(&mut self) -> Result<(), PluginError> {
        match &mut self.device {
            Some(device) => {
                let set = device.next_set();
                self.op.launch(device, set)
            }
            None => {
                self.op
                    .run_cpu(&self.inputs, &mut self.outputs, self.parallel);
                Ok(())
            }
        }
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.inputs = self.op.generate::<T>(seed);
        self.outputs.poison();
        if let Some(device) = &mut self.device {
            device.upload(&self.inputs)?;
            device.poison::<T>()?;
        }
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        self.fetch_outputs()?;
        Ok(self.op.verify(&self.inputs, &self.outputs, tolerance))
    }

    fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        match &mut self.device {
            Some(device) => device.rotate(sets),
            None => Ok(1),
        }
    }
}
