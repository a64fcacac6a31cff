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
pub struct OpCase<O: TileOp, T: Element> {
    op: O,
    inputs: Inputs<T>,
    outputs: Vec<Vec<T>>,
    scratch: CpuScratch,
    device: Option<DeviceState>,
}

impl<O: TileOp, T: Element> OpCase<O, T> {
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
                Some(DeviceState::new(
                    handles,
                    op.cuda_program(T::PRECISION),
                    &inputs,
                    &lens,
                )?)
            }
            Backend::Trt => {
                return Err(PluginError::invalid(format!(
                    "{} has no trt path (hint: use --backends cpu,cuda)",
                    O::descriptor().id
                )));
            }
        };
        let outputs = lens.iter().map(|&n| vec![T::POISON; n]).collect();
        let mut scratch = op.cpu_scratch();
        let work = op.work(&inputs);
        scratch.parallel = crate::cpu_par::worth_threads(work.bytes_read + work.bytes_written);
        Ok(Self {
            op,
            inputs,
            outputs,
            scratch,
            device,
        })
    }

    /// The current inputs (tests compare against them).
    pub fn inputs(&self) -> &Inputs<T> {
        &self.inputs
    }

    /// The outputs of the last call (for CUDA, as of the last `verify` or `fetch_outputs`).
    pub fn outputs(&self) -> &[Vec<T>] {
        &self.outputs
    }

    /// Copies device outputs back to the host copy (no-op on the CPU).
    pub fn fetch_outputs(&mut self) -> Result<(), PluginError> {
        if let Some(device) = &self.device {
            device.download(&mut self.outputs)?;
        }
        Ok(())
    }

    pub fn op(&self) -> &O {
        &self.op
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
        self.op.generate_into(seed, &mut self.inputs);
        for out in &mut self.outputs {
            out.fill(T::POISON);
        }
        if let Some(device) = &mut self.device {
            device.upload(&self.inputs)?;
            device.poison::<T>()?;
        }
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        self.fetch_outputs()?;
        let reference = self.op.reference(&self.inputs);
        Ok(crate::compare::compare_chunked(
            &self.outputs,
            &reference,
            tolerance,
        ))
    }
}
