//! [`ScanKernel`] (one per direction) and [`ScanCase`], its set-up instance on the CPU or CUDA.

use apex_plugin_api::{
    Accuracy, Backend, Instance, Kernel, KernelDescriptor, PluginError, Precision, SetupRequest,
    Tolerance, Work, compare_outputs,
};
use half::{bf16, f16};

use crate::{
    Element,
    cpu::{CpuScratch, run_cpu},
    device::DeviceState,
    inputs::ScanInputs,
    problem::{self, Direction, ScanProblem},
    program::CudaTuning,
    reference::reference,
};

/// The kernel `tile_ssm.<direction>`.
#[derive(Debug, Clone, Copy)]
pub struct ScanKernel {
    direction: Direction,
    /// A fixed block shape, or `None` for [`CudaTuning::for_shape`]'s choice per case.
    tuning: Option<CudaTuning>,
}

impl ScanKernel {
    pub fn new(direction: Direction) -> Self {
        Self {
            direction,
            tuning: None,
        }
    }

    /// The same kernel with a fixed CUDA block shape for every shape (the GPU check's `--bench`
    /// compares them; the self-check runs each production shape on every case).
    pub fn with_tuning(direction: Direction, tuning: CudaTuning) -> Self {
        Self {
            direction,
            tuning: Some(tuning),
        }
    }

    /// The block shape a CUDA case of `problem` runs with.
    pub fn tuning_for(&self, problem: &ScanProblem) -> CudaTuning {
        self.tuning
            .unwrap_or_else(|| CudaTuning::for_shape(problem.batch, problem.channels))
    }
}

impl Kernel for ScanKernel {
    fn descriptor(&self) -> KernelDescriptor {
        problem::descriptor(self.direction)
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        match request.precision {
            Precision::Fp32 => Ok(Box::new(ScanCase::<f32>::new(self, request)?)),
            Precision::Fp16 => Ok(Box::new(ScanCase::<f16>::new(self, request)?)),
            Precision::Bf16 => Ok(Box::new(ScanCase::<bf16>::new(self, request)?)),
            other => Err(PluginError::invalid(format!(
                "{} has no {other} path (hint: use fp32, fp16 or bf16)",
                self.direction.kernel_id()
            ))),
        }
    }
}

/// One set-up case with tokens stored as `T`.
pub struct ScanCase<T: Element> {
    problem: ScanProblem,
    inputs: ScanInputs<T>,
    y: Vec<T>,
    state: Vec<T>,
    cpu: Option<CpuScratch>,
    device: Option<DeviceState>,
}

impl<T: Element> ScanCase<T> {
    pub fn new(kernel: &ScanKernel, request: &SetupRequest) -> Result<Self, PluginError> {
        let problem = ScanProblem::plan(kernel.direction, &request.params)?;
        let inputs = ScanInputs::generate(&problem, request.seed);
        let (cpu, device) = match request.backend {
            Backend::Cpu => (Some(CpuScratch::new(&problem)), None),
            Backend::Cuda => {
                let handles = request.cuda.as_ref().into_option().ok_or_else(|| {
                    PluginError::invalid("a cuda case needs the host's CUDA handles (hint: run it with --backends cuda on a GPU host)")
                })?;
                let device =
                    DeviceState::new(handles, &problem, kernel.tuning_for(&problem), &inputs)?;
                (None, Some(device))
            }
            Backend::Trt => {
                return Err(PluginError::invalid(format!(
                    "{} has no trt path (hint: use --backends cpu,cuda)",
                    kernel.direction.kernel_id()
                )));
            }
        };
        Ok(Self {
            y: vec![T::POISON; problem.tokens()],
            state: vec![T::POISON; problem.state_len()],
            problem,
            inputs,
            cpu,
            device,
        })
    }

    pub fn problem(&self) -> &ScanProblem {
        &self.problem
    }

    /// The device's buffer sets in use (1 on the CPU).
    pub fn buffer_sets(&self) -> usize {
        self.device.as_ref().map_or(1, DeviceState::sets)
    }

    /// The largest |value| of the reference outputs for the current inputs (the "output scale"
    /// that relative accuracy figures divide by).
    pub fn output_scale(&self) -> f64 {
        reference(&self.problem, &self.inputs)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()))
    }

    /// CUDA only, after [`Instance::rotate`]: poisons the outputs of every buffer set, runs one
    /// call per set (set 0 first), and verifies each set's outputs against the reference of the
    /// current inputs (which every copy holds). Proves that each copy is complete and that `run`
    /// walks the sets.
    pub fn check_rotated(&mut self, tolerance: &Tolerance) -> Result<Vec<Accuracy>, PluginError> {
        let device = self.device.as_mut().ok_or_else(|| {
            PluginError::invalid("check_rotated needs a CUDA case (hint: CPU cases keep one set)")
        })?;
        device.poison_all::<T>()?;
        for _ in 0..device.sets() {
            device.launch(&self.problem)?;
        }
        device.synchronize()?;
        let reference = reference(&self.problem, &self.inputs);
        (0..device.sets())
            .map(|i| {
                device.download_set(i, &mut self.y, &mut self.state)?;
                let output: Vec<f64> = self
                    .y
                    .iter()
                    .chain(&self.state)
                    .map(|v| v.to_f64())
                    .collect();
                Ok(compare_outputs(&output, &reference, tolerance))
            })
            .collect()
    }
}

impl<T: Element> Instance for ScanCase<T> {
    fn work(&self) -> Work {
        self.problem.work(std::mem::size_of::<T>())
    }

    fn run(&mut self) -> Result<(), PluginError> {
        match (&mut self.device, &mut self.cpu) {
            (Some(device), _) => device.launch(&self.problem),
            (None, Some(scratch)) => {
                run_cpu(
                    &self.problem,
                    &self.inputs,
                    &mut self.y,
                    &mut self.state,
                    scratch,
                );
                Ok(())
            }
            (None, None) => Err(PluginError::other(
                "the case has neither a CPU nor a CUDA path (a plugin bug)",
            )),
        }
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.inputs = ScanInputs::generate(&self.problem, seed);
        self.y.fill(T::POISON);
        self.state.fill(T::POISON);
        if let Some(device) = &mut self.device {
            device.upload(&self.inputs)?;
            device.poison::<T>()?;
        }
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        if let Some(device) = &self.device {
            device.download(&mut self.y, &mut self.state)?;
        }
        let reference = reference(&self.problem, &self.inputs);
        let output: Vec<f64> = self
            .y
            .iter()
            .chain(&self.state)
            .map(|v| v.to_f64())
            .collect();
        Ok(compare_outputs(&output, &reference, tolerance))
    }

    fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        match &mut self.device {
            Some(device) => device.rotate(sets),
            None => Ok(1),
        }
    }
}

apex_plugin_api::register_kernel!(|| Box::new(ScanKernel::new(Direction::Forward)));
apex_plugin_api::register_kernel!(|| Box::new(ScanKernel::new(Direction::Backward)));
apex_plugin_api::register_kernel!(|| Box::new(ScanKernel::new(Direction::Bidirectional)));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{assert_cpu_checks, params, request};
    use apex_plugin_api::{KernelRegistration, ParamValue};

    #[test]
    fn three_kernels_are_registered_with_graph_capture() {
        let mut ids: Vec<String> = apex_plugin_api::inventory::iter::<KernelRegistration>()
            .map(|r| (r.make)().descriptor())
            .inspect(|d| assert!(d.graph_capturable, "{}", d.id))
            .map(|d| d.id.to_string())
            .collect();
        ids.sort();
        assert_eq!(
            ids,
            [
                "tile_ssm.backward",
                "tile_ssm.bidirectional",
                "tile_ssm.forward"
            ]
        );
    }

    #[test]
    fn cpu_cases_verify_on_fresh_inputs_and_catch_poison() {
        let s = |v: &str| ParamValue::Str(v.into());
        let shape = [
            ("batch", ParamValue::Int(2)),
            ("steps", ParamValue::Int(33)),
            ("channels", ParamValue::Int(40)),
        ];
        for d in Direction::ALL {
            let kernel = ScanKernel::new(d);
            assert_cpu_checks(&kernel, &shape);
            let mut edge = shape.to_vec();
            edge.extend([
                ("init_state", s("bc")),
                ("nonfinite", ParamValue::Bool(true)),
                ("clamp_value", ParamValue::Float(1.5)),
            ]);
            assert_cpu_checks(&kernel, &edge);
        }
        let kernel = ScanKernel::new(Direction::Bidirectional);
        for (merge, gate, init) in [
            ("sum", "channel", "none"),
            ("gated", "channel", "b2c"),
            ("gated", "batch_channel", "bc"),
        ] {
            let mut o = shape.to_vec();
            o.extend([
                ("merge", s(merge)),
                ("gate", s(gate)),
                ("init_state", s(init)),
            ]);
            assert_cpu_checks(&kernel, &o);
        }
    }

    #[test]
    fn cuda_and_trt_cases_without_their_backend_are_refused() {
        let kernel = ScanKernel::new(Direction::Forward);
        for backend in [Backend::Cuda, Backend::Trt] {
            let p = params(&kernel, &[]);
            let e = kernel
                .setup(&request(p, backend, Precision::Fp16, 1, None))
                .err()
                .expect("refused");
            assert!(e.message.contains("hint"), "{}", e.message);
        }
        let p = params(&kernel, &[]);
        assert!(
            kernel
                .setup(&request(p, Backend::Cpu, Precision::Fp8, 1, None))
                .is_err()
        );
    }

    #[test]
    fn cpu_instances_keep_one_buffer_set() {
        let kernel = ScanKernel::new(Direction::Forward);
        let p = params(&kernel, &[]);
        let mut inst = kernel
            .setup(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
            .unwrap();
        assert_eq!(inst.rotate(8).unwrap(), 1);
    }
}
