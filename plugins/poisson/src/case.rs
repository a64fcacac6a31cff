//! The three kernels (`poisson.cg`, `poisson.mg`, `poisson.mgpcg`), their parameters and cost
//! model, and [`PoissonCase`]: one set-up case on the CPU or on CUDA.

use apex_plugin_api::{
    Accuracy, Backend, Figure, Instance, Kernel, KernelDescriptor, ParamSpec, Params, PluginError,
    Precision, SetupRequest, Tolerance, Work, WorkUnit, register_kernel,
};
use half::f16;

use crate::{
    cpu::CpuSolver,
    device::DeviceSolver,
    grid::{Dims, Hierarchy},
    problem::Problem,
    real::{Storage, from_f64_vec, to_f64_vec},
    solve::{Method, Report, Settings},
    verdict::{Verdict, judge},
};

/// One kernel per method.
pub struct PoissonKernel(pub Method);

register_kernel!(|| Box::new(PoissonKernel(Method::Cg)));
register_kernel!(|| Box::new(PoissonKernel(Method::Mg)));
register_kernel!(|| Box::new(PoissonKernel(Method::MgPcg)));

/// The largest dimension accepted (`cg_direction`'s grid has `ny / 8` blocks in y).
pub const MAX_DIM: usize = 65_536;

/// Default tolerances: the error of `x` against `u*` (per point `atol`, `rmse`). A solve to a
/// relative residual of 1e-5 is within about 1e-3 of `u*` up to 256^3 (the error of a residual
/// grows with the condition number); fp16 storage alone costs about 1e-3 per value.
pub fn default_tolerance(precision: Precision) -> Tolerance {
    match precision {
        Precision::Fp16 => Tolerance {
            atol: 5e-2,
            rtol: 0.0,
            rmse: 2e-2,
            max_mismatch_ratio: 0.0,
        },
        _ => Tolerance {
            atol: 1e-2,
            rtol: 0.0,
            rmse: 2e-3,
            max_mismatch_ratio: 0.0,
        },
    }
}

impl Kernel for PoissonKernel {
    fn descriptor(&self) -> KernelDescriptor {
        let mut d = KernelDescriptor::new(self.0.id(), self.0.description())
            .backends(&[Backend::Cpu, Backend::Cuda])
            .precisions(&[Precision::Fp32, Precision::Fp16])
            .param(ParamSpec::shape(
                "grid_size",
                &[64, 64, 64],
                "grid points [nx, ny, nz] (x fastest); unit spacing, zero Dirichlet values one spacing outside",
            ))
            .param(ParamSpec::int(
                "max_iterations",
                50,
                "iterations at most (CG steps, V-cycles, PCG steps); stopping there short of the tolerance fails verification",
            ))
            .param(ParamSpec::float(
                "tolerance",
                1e-5,
                "relative residual ||b - A x|| / ||b|| to reach",
            ));
        if self.0.uses_multigrid() {
            d = d.param(ParamSpec::int(
                "smoothing_sweeps",
                2,
                "red-black Gauss-Seidel sweeps before and after the coarse correction: V(s, s)",
            ));
        }
        d.param(ParamSpec::bool(
            "f64_solve",
            false,
            "store and compute in f64 (with precision fp32; the precision label stays fp32)",
        ))
        .tolerance(Precision::Fp32, default_tolerance(Precision::Fp32))
        .tolerance(Precision::Fp16, default_tolerance(Precision::Fp16))
        .graph_capturable(true)
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        let config = Config::parse(self.0, &request.params)?;
        match (request.precision, config.f64_solve) {
            (Precision::Fp32, false) => Ok(Box::new(PoissonCase::<f32>::new(config, request)?)),
            (Precision::Fp32, true) => Ok(Box::new(PoissonCase::<f64>::new(config, request)?)),
            (Precision::Fp16, false) => Ok(Box::new(PoissonCase::<f16>::new(config, request)?)),
            (Precision::Fp16, true) => Err(PluginError::invalid(
                "f64_solve needs precision fp32 (hint: --precision fp32)",
            )),
            (other, _) => Err(PluginError::invalid(format!(
                "{} has no {other} path (hint: use fp32, fp16, or fp32 with f64_solve: true)",
                self.0.id()
            ))),
        }
    }
}

/// A case's validated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub method: Method,
    pub dims: Dims,
    pub settings: Settings,
    pub f64_solve: bool,
}

impl Config {
    pub fn parse(method: Method, p: &Params) -> Result<Self, PluginError> {
        let dims = Dims::from_shape(&p.shape("grid_size")?)?;
        if dims.nx.max(dims.ny).max(dims.nz) > MAX_DIM {
            return Err(PluginError::invalid(format!(
                "grid_size {dims} has a dimension above {MAX_DIM}"
            )));
        }
        let max_iterations = p.usize("max_iterations")?;
        if !(1..=100_000).contains(&max_iterations) {
            return Err(PluginError::invalid(format!(
                "max_iterations must be in 1..=100000, got {max_iterations}"
            )));
        }
        let tolerance = p.float("tolerance")?;
        if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
            return Err(PluginError::invalid(format!(
                "tolerance must be in (0, 1), got {tolerance}"
            )));
        }
        let sweeps = if method.uses_multigrid() {
            let s = p.usize("smoothing_sweeps")?;
            if !(1..=8).contains(&s) {
                return Err(PluginError::invalid(format!(
                    "smoothing_sweeps must be in 1..=8, got {s}"
                )));
            }
            Hierarchy::build(dims)?;
            s
        } else {
            0
        };
        Ok(Self {
            method,
            dims,
            settings: Settings {
                max_iterations,
                tolerance,
                sweeps,
            },
            f64_solve: p.bool("f64_solve")?,
        })
    }
}

enum Engine<T: Storage> {
    Cpu(Box<CpuSolver<T>>),
    Cuda(Box<DeviceSolver<T>>),
}

/// One set-up case in storage type `T`.
pub struct PoissonCase<T: Storage> {
    pub config: Config,
    pub problem: Problem,
    engine: Engine<T>,
    /// The report of the untimed solve at setup (the iteration count of the cost model).
    pub setup_report: Report,
    /// The CPU path's report of its last solve.
    last: Option<Report>,
    /// The last verification (`Instance::verify_note`, `Instance::figures`).
    last_verdict: Option<Verdict>,
}

impl<T: Storage> PoissonCase<T> {
    pub fn new(config: Config, request: &SetupRequest) -> Result<Self, PluginError> {
        let problem = Problem::generate(config.dims, request.seed);
        let engine = match request.backend {
            Backend::Cpu => Engine::Cpu(Box::new(CpuSolver::new(
                config.method,
                config.dims,
                config.settings,
                from_f64_vec(&problem.b),
            ))),
            Backend::Cuda => {
                let handles = request.cuda.as_ref().into_option().ok_or_else(|| {
                    PluginError::invalid(
                        "a cuda case needs the host's CUDA handles (hint: run it with --backends cuda on a GPU host)",
                    )
                })?;
                Engine::Cuda(Box::new(DeviceSolver::new(
                    handles,
                    config.method,
                    config.dims,
                    config.settings,
                    &problem.b,
                )?))
            }
            Backend::Trt => {
                return Err(PluginError::invalid(format!(
                    "{} has no trt path (hint: use --backends cpu,cuda)",
                    config.method.id()
                )));
            }
        };
        let mut case = Self {
            config,
            problem,
            engine,
            setup_report: Report {
                iterations: 0,
                relres: f64::NAN,
                converged: false,
            },
            last: None,
            last_verdict: None,
        };
        // One untimed solve: its iteration count is the cost model's (the same seed gives the
        // same problem, so every timed call repeats it); on CUDA it also proves the kernels run.
        case.run()?;
        if let Engine::Cuda(d) = &case.engine {
            d.stream()
                .synchronize()
                .map_err(apex_plugin_api::cuda::cuda_error)?;
        }
        case.setup_report = case.solution()?.1;
        Ok(case)
    }

    /// How a CUDA case launches its solve (`None` on the CPU).
    pub fn solve_path(&self) -> Option<crate::device::SolvePath> {
        match &self.engine {
            Engine::Cuda(d) => Some(d.solve_path),
            Engine::Cpu(_) => None,
        }
    }

    /// The solution of the last call (in f64) and its report (CUDA: the caller synchronized).
    pub fn solution(&mut self) -> Result<(Vec<f64>, Report), PluginError> {
        match &self.engine {
            Engine::Cpu(s) => {
                let report = self.last.ok_or_else(|| {
                    PluginError::other("verify before any run: no solve to verify")
                })?;
                Ok((to_f64_vec(&s.x), report))
            }
            Engine::Cuda(d) => d.result(d.last_set()),
        }
    }

    /// The CPU path's solution vector (tests corrupt it to prove verification catches it).
    pub fn cpu_x_mut(&mut self) -> Option<&mut [T]> {
        match &mut self.engine {
            Engine::Cpu(s) => Some(&mut s.x),
            Engine::Cuda(_) => None,
        }
    }

    /// Verification of the last call, with the failure sentence when it fails.
    pub fn verdict(&mut self, tolerance: &Tolerance) -> Result<Verdict, PluginError> {
        let (x, report) = self.solution()?;
        Ok(judge(
            &self.problem,
            &x,
            report,
            &self.config.settings,
            tolerance,
        ))
    }

    /// Verdicts of every buffer set after rotation (each set's last solve; CUDA only).
    pub fn verdict_of_sets(&mut self, tolerance: &Tolerance) -> Result<Vec<Verdict>, PluginError> {
        match &self.engine {
            Engine::Cpu(_) => Ok(vec![self.verdict(tolerance)?]),
            Engine::Cuda(d) => (0..d.sets.len())
                .map(|i| {
                    let (x, report) = d.result(i)?;
                    Ok(judge(
                        &self.problem,
                        &x,
                        report,
                        &self.config.settings,
                        tolerance,
                    ))
                })
                .collect(),
        }
    }
}

/// Words (values of the storage type) read and written per point, by the cost model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Words {
    pub read: f64,
    pub written: f64,
    pub flops: f64,
}

impl std::ops::Add for Words {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            read: self.read + o.read,
            written: self.written + o.written,
            flops: self.flops + o.flops,
        }
    }
}

impl std::ops::Mul<f64> for Words {
    type Output = Self;
    fn mul(self, s: f64) -> Self {
        Self {
            read: self.read * s,
            written: self.written * s,
            flops: self.flops * s,
        }
    }
}

/// The cost model, per finest-level point: each pass counts every vector it streams once
/// (neighbours come from caches), as the guide's "10 words per CG iteration" does. It is the
/// textbook algorithm's traffic, not the kernels': the CUDA launch path defers x's step into the
/// next direction pass and moves 9 words (README.md, "CUDA design").
pub mod cost {
    use super::Words;
    use crate::grid::Hierarchy;

    /// CG's fused direction pass (read r, p_old; write p, q) and update (read x, r, p, q;
    /// write x, r).
    pub const CG_STEP: Words = Words {
        read: 6.0,
        written: 4.0,
        flops: 19.0,
    };
    /// x = 0, r = b (and b.b).
    pub const INIT: Words = Words {
        read: 1.0,
        written: 2.0,
        flops: 2.0,
    };
    /// Multigrid's residual norm after a cycle (read x, b).
    pub const RESIDUAL: Words = Words {
        read: 2.0,
        written: 0.0,
        flops: 10.0,
    };

    /// One V(s, s) cycle, per finest point: on each non-coarsest level of `n_l` points,
    /// `4s` half-sweeps (read x and half of b, write half of x), the restriction (read x, b;
    /// write an eighth) and the prolongation (read and write x, read an eighth); the coarsest
    /// solve reads its dense inverse.
    pub fn vcycle(h: &Hierarchy, sweeps: usize) -> Words {
        let n0 = h.levels[0].dims.len() as f64;
        let mut w = Words::default();
        for l in &h.levels[..h.levels.len() - 1] {
            let f = l.dims.len() as f64 / n0;
            let half_sweeps = 4.0 * sweeps as f64;
            w = w + Words {
                read: half_sweeps * 1.5 + 2.0 + 1.125,
                written: half_sweeps * 0.5 + 0.125 + 1.0,
                flops: half_sweeps * 4.5 + 9.0 + 20.0,
            } * f;
        }
        let c = h.coarsest().dims.len() as f64;
        w + Words {
            read: (c * c + c) / n0,
            written: c / n0,
            flops: 2.0 * c * c / n0,
        }
    }
}

impl<T: Storage> Instance for PoissonCase<T> {
    fn work(&self) -> Work {
        let c = &self.config;
        let n = c.dims.len() as f64;
        let it = self.setup_report.iterations as f64;
        let words = match c.method {
            Method::Cg => cost::INIT + cost::CG_STEP * it,
            Method::Mg | Method::MgPcg => {
                let h = Hierarchy::build(c.dims).expect("validated at setup");
                let v = cost::vcycle(&h, c.settings.sweeps);
                if c.method == Method::Mg {
                    cost::INIT + (v + cost::RESIDUAL) * it
                } else {
                    cost::INIT + (v + cost::CG_STEP) * it
                }
            }
        };
        let e = std::mem::size_of::<T>() as f64;
        Work {
            bytes_read: (words.read * n * e) as u64,
            bytes_written: (words.written * n * e) as u64,
            flops: words.flops * n,
            // Point-iterations: elements_per_s / points = iterations per second.
            items: n * it.max(1.0),
            unit: WorkUnit::Elements,
        }
    }

    fn run(&mut self) -> Result<(), PluginError> {
        match &mut self.engine {
            Engine::Cpu(s) => {
                self.last = Some(s.solve());
                Ok(())
            }
            Engine::Cuda(d) => d.run(),
        }
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.problem = Problem::generate(self.config.dims, seed);
        match &mut self.engine {
            Engine::Cpu(s) => {
                s.b = from_f64_vec(&self.problem.b);
                s.x.fill(T::POISON);
                self.last = None;
                Ok(())
            }
            Engine::Cuda(d) => {
                d.upload(&self.problem.b)?;
                d.poison()
            }
        }
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        let verdict = self.verdict(tolerance)?;
        let accuracy = verdict.accuracy;
        self.last_verdict = Some(verdict);
        Ok(accuracy)
    }

    fn verify_note(&self) -> String {
        self.last_verdict
            .as_ref()
            .and_then(|v| v.failure.clone())
            .unwrap_or_default()
    }

    /// The checked solve's iteration count and residuals, so a report says how the solver got
    /// there, not only how long it took. A residual that is not finite (a diverged solve, whose
    /// verdict already fails the case) is left out rather than reported as a number.
    fn figures(&self) -> Vec<Figure> {
        let Some(v) = &self.last_verdict else {
            return Vec::new();
        };
        [
            ("iterations", "iterations", v.report.iterations as f64),
            ("relative_residual", "", v.report.relres),
            ("true_relative_residual", "", v.true_relres),
        ]
        .into_iter()
        .filter(|(_, _, value)| value.is_finite())
        .map(|(name, unit, value)| Figure::value(name, unit, value))
        .collect()
    }

    fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        match &mut self.engine {
            Engine::Cpu(_) => Ok(1),
            Engine::Cuda(d) => d.rotate(sets),
        }
    }
}

#[cfg(test)]
mod tests;
