//! [`FfKernel`] (`ff_model.infer`) and [`FfCase`], its set-up instance: the model's weights from
//! the setup seed, the inputs from the setup seed or `prepare_check`'s (rounded to the case's
//! storage), the engine that runs a call (the CPU fast path or the CUDA device state), the
//! outputs of the last checked call, and the figures of its selection.

use apex_plugin_api::{
    Accuracy, Backend, Figure, Instance, Kernel, KernelDescriptor, PluginError, Precision,
    SetupRequest, Tolerance, Work, compare_outputs,
};

use crate::{
    cpu::{CpuOutputs, CpuScratch, FastWeights, run_cpu},
    device::{DeviceState, Refine},
    inputs::FfInputs,
    problem::{self, FfProblem, Path},
    reference::{Outputs, reference},
    select::FrameSelection,
    storage::Storage,
    weights::FfWeights,
};

/// The kernel `ff_model.infer`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FfKernel;

impl Kernel for FfKernel {
    fn descriptor(&self) -> KernelDescriptor {
        problem::descriptor()
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        Ok(Box::new(FfCase::new(request)?))
    }
}

/// What runs a call.
enum Engine {
    Cpu(Box<CpuScratch>),
    Cuda(Box<DeviceState>),
}

/// One set-up case.
pub struct FfCase {
    problem: FfProblem,
    storage: Storage,
    weights: FfWeights,
    fast: FastWeights,
    inputs: FfInputs,
    heavy: Vec<f32>,
    detail: Vec<f32>,
    alpha: Vec<f32>,
    engine: Engine,
    selections: Vec<FrameSelection>,
    /// Why the last verify failed beyond its numbers (a device selection that differs).
    note: String,
}

impl FfCase {
    pub fn new(request: &SetupRequest) -> Result<Self, PluginError> {
        let storage = match (request.backend, request.precision) {
            (Backend::Cpu, Precision::Fp32) => Storage::F32,
            (Backend::Cpu, other) => {
                return Err(PluginError::invalid(format!(
                    "{} has no CPU {other} path (hint: the CPU runs fp32; fp16 and bf16 run on cuda)",
                    problem::KERNEL_ID
                )));
            }
            (Backend::Cuda, precision) => Storage::of(precision)?,
            (backend, _) => {
                return Err(PluginError::invalid(format!(
                    "{} has no {backend} path (hint: use --backends cpu,cuda)",
                    problem::KERNEL_ID
                )));
            }
        };
        let problem = FfProblem::plan(&request.params, request.backend)?;
        let weights = FfWeights::generate(problem.channels, request.seed);
        let inputs = FfInputs::generate_for(&problem, request.seed, storage);
        let fast = FastWeights::new(&weights);
        let engine = match request.backend {
            Backend::Cuda => {
                let handles = request.cuda.as_ref().into_option().ok_or_else(|| {
                    PluginError::invalid(
                        "a cuda case needs the host's CUDA handles (hint: run it with --backends cuda on a GPU host)",
                    )
                })?;
                Engine::Cuda(Box::new(DeviceState::new(
                    handles, &problem, storage, &weights, &fast, &inputs,
                )?))
            }
            _ => Engine::Cpu(Box::new(CpuScratch::new(&problem))),
        };
        Ok(Self {
            heavy: vec![f32::NAN; problem.map_len()],
            detail: vec![f32::NAN; problem.map_len()],
            alpha: vec![f32::NAN; problem.pixels()],
            selections: Vec::new(),
            note: String::new(),
            problem,
            storage,
            weights,
            fast,
            inputs,
            engine,
        })
    }

    pub fn problem(&self) -> &FfProblem {
        &self.problem
    }

    pub fn weights(&self) -> &FfWeights {
        &self.weights
    }

    pub fn inputs(&self) -> &FfInputs {
        &self.inputs
    }

    /// The outputs of the last call (CUDA: of the last `verify`), as f32: `heavy_features`,
    /// `detail_map`, `alpha`.
    pub fn outputs(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.heavy, &self.detail, &self.alpha)
    }

    /// The selections of the last call (CUDA: of the last `verify`), one per batch entry.
    pub fn selections(&self) -> &[FrameSelection] {
        &self.selections
    }

    /// The device's buffer sets in use (1 on the CPU).
    pub fn buffer_sets(&self) -> usize {
        match &self.engine {
            Engine::Cuda(d) => d.sets(),
            Engine::Cpu(_) => 1,
        }
    }

    /// CUDA: runs the refine block of each level `refine`'s way from the next call on (the
    /// default is [`Refine::Auto`]: wherever a level fits a cluster, its shape-compiled lean copy
    /// in fp16 and bf16, else the fused kernel of fewer waves); the GPU check verifies and times
    /// every path this way.
    pub fn set_refine(&mut self, refine: Refine) -> Result<(), PluginError> {
        match &mut self.engine {
            Engine::Cuda(device) => device.set_refine(refine),
            Engine::Cpu(_) => Err(PluginError::invalid(
                "the refine path (auto, fused, lean or split) is a choice of the CUDA fast path (hint: \
                 set it on a cuda case)",
            )),
        }
    }

    /// CUDA: what L0 and L1 run their refine block as ([`Refine::Fused`], [`Refine::FusedLean`]
    /// or [`Refine::Split`]; `None` on the CPU).
    pub fn level_refines(&self) -> Option<[Refine; 2]> {
        match &self.engine {
            Engine::Cuda(device) => Some(device.level_refines()),
            Engine::Cpu(_) => None,
        }
    }

    /// The f64 reference outputs for the current inputs.
    pub fn reference(&self) -> Result<Outputs, PluginError> {
        reference(&self.problem, &self.weights, &self.inputs)
    }

    fn output_f64(&self) -> Vec<f64> {
        self.heavy
            .iter()
            .chain(&self.detail)
            .chain(&self.alpha)
            .map(|&v| f64::from(v))
            .collect()
    }

    /// CUDA: copies set 0's outputs back and compares the device's selection (ids in Hilbert
    /// order) with the reference's; returns the first difference, if any. The reference's
    /// selections then stand for the figures.
    fn download(&mut self, want: &[FrameSelection]) -> Result<Option<String>, PluginError> {
        let Engine::Cuda(device) = &self.engine else {
            return Ok(None);
        };
        let out = device.download()?;
        let (k0, k1) = (self.problem.selected_l0(), self.problem.selected_l1());
        let mut diff = None;
        for (b, sel) in want.iter().enumerate() {
            let got = |ids: &[i32], k: usize| -> Vec<i64> {
                ids[b * k..(b + 1) * k]
                    .iter()
                    .map(|&i| i64::from(i))
                    .collect()
            };
            let expect = |ids: &[usize]| -> Vec<i64> { ids.iter().map(|&i| i as i64).collect() };
            let (l0, l1) = (got(&out.ids_l0, k0), got(&out.ids_l1, k1));
            if diff.is_none() && (l0 != expect(&sel.l0) || l1 != expect(&sel.l1)) {
                diff = Some(format!(
                    "frame {b}: the device selected L0 {l0:?} and L1 {l1:?}, the reference L0 {:?} \
                     and L1 {:?}",
                    sel.l0, sel.l1
                ));
            }
        }
        self.heavy = out.heavy;
        self.detail = out.detail;
        self.alpha = out.alpha;
        self.selections = want.to_vec();
        Ok(diff)
    }

    /// Only the fast path's two refine blocks of one call (`DeviceState::launch_refines`): for
    /// timing them apart from the frame, after a [`Instance::run`] of the fast path on CUDA.
    pub fn run_refines(&mut self) -> Result<(), PluginError> {
        match (&mut self.engine, self.problem.path) {
            (Engine::Cuda(device), Path::Fast) => device.launch_refines(&self.problem),
            _ => Err(PluginError::invalid(
                "run_refines: only the CUDA fast path runs its refine blocks apart",
            )),
        }
    }
}

impl Instance for FfCase {
    fn work(&self) -> Work {
        self.problem
            .work(self.weights.elements(), self.storage.bytes() as u64)
    }

    fn run(&mut self) -> Result<(), PluginError> {
        match &mut self.engine {
            Engine::Cuda(device) => match self.problem.path {
                Path::Fast => device.launch_fast(&self.problem),
                Path::Eager => device.launch_eager(&self.problem, &self.inputs),
            },
            Engine::Cpu(scratch) => {
                self.selections = run_cpu(
                    &self.problem,
                    &self.weights,
                    &self.fast,
                    &self.inputs,
                    CpuOutputs {
                        heavy: &mut self.heavy,
                        detail: &mut self.detail,
                        alpha: &mut self.alpha,
                    },
                    scratch,
                )?;
                Ok(())
            }
        }
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.inputs = FfInputs::generate_for(&self.problem, seed, self.storage);
        self.heavy.fill(f32::NAN);
        self.detail.fill(f32::NAN);
        self.alpha.fill(f32::NAN);
        self.selections.clear();
        if let Engine::Cuda(device) = &mut self.engine {
            device.upload(&self.inputs)?;
            device.poison()?;
        }
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        let want = self.reference()?;
        self.note.clear();
        let device_diff = self.download(&want.selections)?;
        if !self.selections.is_empty() && self.selections != want.selections {
            return Err(PluginError::other(
                "the fast path selected other tiles than the reference (a plugin bug)",
            ));
        }
        let accuracy = compare_outputs(&self.output_f64(), &want.concat(), tolerance);
        if let Some(diff) = device_diff {
            // Outputs that pass with another selection would be a bug in the check itself.
            if accuracy.within(tolerance) && accuracy.non_finite == 0 {
                return Err(PluginError::other(format!(
                    "{diff}, yet the outputs match the reference (a plugin bug)"
                )));
            }
            self.note = diff;
        }
        Ok(accuracy)
    }

    fn verify_note(&self) -> String {
        self.note.clone()
    }

    fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        match &mut self.engine {
            Engine::Cuda(device) => device.rotate(sets),
            Engine::Cpu(_) => Ok(1),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        if self.selections.is_empty() {
            return Vec::new();
        }
        let sum = |f: &dyn Fn(&FrameSelection) -> f64| self.selections.iter().map(f).sum::<f64>();
        vec![
            Figure::value("selected_l0_per_call", "tiles", sum(&|s| s.l0.len() as f64)),
            Figure::value("selected_l1_per_call", "tiles", sum(&|s| s.l1.len() as f64)),
            Figure::value("budget_b1_spent", "", sum(&|s| s.spent_b1)),
            Figure::value("budget_b2_spent", "", sum(&|s| s.spent_b2)),
        ]
    }
}

apex_plugin_api::register_kernel!(|| Box::new(FfKernel));

#[cfg(test)]
mod tests {
    use super::*;
    use abi_stable::std_types::ROption;
    use apex_plugin_api::{KernelRegistration, ParamValue};

    fn request(
        overrides: &[(&str, ParamValue)],
        backend: Backend,
        precision: Precision,
    ) -> SetupRequest {
        let params = problem::params(overrides);
        SetupRequest {
            params,
            backend,
            precision,
            seed: 5,
            cuda: ROption::RNone,
        }
    }

    /// The host's check cycle twice on fresh inputs (poisoned outputs, one call, verify against
    /// the f64 reference), then a poisoned output that was never written must fail.
    fn assert_checks(overrides: &[(&str, ParamValue)]) -> FfCase {
        let tol = problem::tolerance();
        let mut case = FfCase::new(&request(overrides, Backend::Cpu, Precision::Fp32)).unwrap();
        for seed in [31, 32] {
            case.prepare_check(seed).unwrap();
            case.run().unwrap();
            let acc = case.verify(&tol).unwrap();
            assert!(
                acc.within(&tol) && acc.non_finite == 0,
                "{overrides:?} seed {seed}: {acc:?}"
            );
        }
        case.prepare_check(33).unwrap();
        let acc = case.verify(&tol).unwrap();
        assert!(
            acc.non_finite > 0 && !acc.within(&tol),
            "poison not caught: {acc:?}"
        );
        case
    }

    fn int(name: &'static str, v: i64) -> (&'static str, ParamValue) {
        (name, ParamValue::Int(v))
    }

    #[test]
    fn one_kernel_is_registered_and_the_shared_crate_adds_none() {
        let ids: Vec<String> = apex_plugin_api::inventory::iter::<KernelRegistration>()
            .map(|r| (r.make)().descriptor().id.to_string())
            .collect();
        assert_eq!(ids, ["ff_model.infer"]);
    }

    #[test]
    fn the_default_profile_verifies_and_reports_the_spec_figures() {
        // The Apex-X profile's map and tiles (128x128, 16/8, b1 16, b2 8) at C = 16 to keep debug
        // builds quick; the C = 128 profile runs in the host suite and the export example.
        let mut case = assert_checks(&[int("channels", 16)]);
        case.prepare_check(40).unwrap();
        case.run().unwrap();
        let figures: Vec<(String, f64)> = case
            .figures()
            .into_iter()
            .map(|f| (f.name.to_string(), f.values[0]))
            .collect();
        assert_eq!(
            figures,
            [
                ("selected_l0_per_call".to_string(), 20.0),
                ("selected_l1_per_call".to_string(), 32.0),
                ("budget_b1_spent".to_string(), 16.000000000000004),
                ("budget_b2_spent".to_string(), 8.0),
            ]
        );
        assert!(case.figures().iter().all(|f| f.problem().is_none()));
    }

    #[test]
    fn tile_sizes_32_16_a_256_map_and_a_batch_verify() {
        assert_checks(&[
            int("channels", 8),
            int("tile_size_l0", 32),
            int("tile_size_l1", 16),
        ]);
        assert_checks(&[int("channels", 8), int("height", 256), int("width", 256)]);
        // Two frames, a non-square map, odd channels, a tile size off the SIMD widths.
        let case = assert_checks(&[
            int("batch", 2),
            int("channels", 5),
            int("height", 36),
            int("width", 60),
            int("tile_size_l0", 6),
            int("tile_size_l1", 3),
        ]);
        assert_eq!(
            case.selections().len(),
            0,
            "prepare_check clears the last call"
        );
    }

    #[test]
    fn a_frame_with_nothing_selected_is_the_gate_over_the_base() {
        let mut case = assert_checks(&[int("channels", 4), ("budget_b1", ParamValue::Float(0.0))]);
        case.prepare_check(7).unwrap();
        case.run().unwrap();
        let (heavy, detail, _) = case.outputs();
        assert_eq!(
            heavy,
            &case.inputs().dense[..],
            "no tile: heavy is the dense map"
        );
        assert!(detail.iter().all(|&d| d == 0.0));
    }

    #[test]
    fn other_backends_and_precisions_are_refused_with_a_hint() {
        for (b, p) in [
            (Backend::Cuda, Precision::Fp8),
            (Backend::Trt, Precision::Fp32),
            (Backend::Cpu, Precision::Bf16),
        ] {
            let e = FfCase::new(&request(&[], b, p)).err().expect("refused");
            assert!(e.message.contains("hint"), "{}", e.message);
        }
    }

    #[test]
    fn only_the_cuda_fast_path_runs_its_refines_apart() {
        let mut case = assert_checks(&[int("channels", 4)]);
        let e = case
            .run_refines()
            .expect_err("a CPU case has no refine launches");
        assert!(e.message.contains("CUDA fast path"), "{}", e.message);
    }
}
