//! The GPU self-check: every kernel × variant (merge, gate shape, initial state, NaN/±inf tokens
//! with a low clamp) × K ∈ {1, 17, 256, 4096, 65536} × fp32/fp16/bf16, on the given CUDA handles.
//! Each case is checked on two calls with fresh inputs and poisoned outputs (the original's
//! autotune bug only showed on the second call), then after `rotate(4)` once per buffer set and
//! once more through `prepare_check`. On CUDA the plan runs once per production block shape
//! (`program::production_tunings`), whichever the shape rule would pick. Two extra groups: B = 64 with C = 33, and a change of K
//! within the process (two instances with different K run back to back, both verified, with no
//! NVRTC compile for the second).

use apex_plugin_api::{
    Accuracy, Backend, CudaHandles, Instance, ParamValue, PluginError, Precision, Tolerance,
};
use half::{bf16, f16};

use crate::{
    Element,
    case::{ScanCase, ScanKernel},
    harness::{check, describe, params, request},
    problem::{Direction, tolerance},
    program::{self, CudaTuning},
};

/// The sequence lengths every variant is checked at: one step, a partial chunk, exactly one
/// super-chunk, 16 super-chunks, and 256 super-chunks (far beyond what a block holds).
pub const STEPS: [i64; 5] = [1, 17, 256, 4096, 65_536];

/// One checked case.
#[derive(Debug, Clone)]
pub struct CheckLine {
    pub kernel: String,
    pub precision: Precision,
    pub params: String,
    /// The accuracy of each checked call, or the error that stopped the case.
    pub result: Result<Vec<Accuracy>, PluginError>,
    pub tolerance: Tolerance,
    /// The largest |reference output| of the last inputs (0 when the case failed early).
    pub scale: f64,
}

impl CheckLine {
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(acc) if !acc.is_empty() && acc.iter().all(|a| a.within(&self.tolerance)))
    }

    /// The worst max-abs error over the checked calls.
    pub fn max_abs_error(&self) -> f64 {
        self.result.as_ref().map_or(f64::INFINITY, |acc| {
            acc.iter().fold(0.0f64, |m, a| m.max(a.max_abs_error))
        })
    }
}

type Overrides = Vec<(&'static str, ParamValue)>;

/// The variants of `direction`, as parameter overrides (shape added per K).
pub fn variants(direction: Direction) -> Vec<Overrides> {
    let s = |v: &str| ParamValue::Str(v.into());
    let edge = || {
        vec![
            ("init_state", s("bc")),
            ("nonfinite", ParamValue::Bool(true)),
            ("clamp_value", ParamValue::Float(1.5)),
        ]
    };
    match direction {
        Direction::Forward | Direction::Backward => vec![vec![], edge()],
        Direction::Bidirectional => vec![
            vec![("merge", s("sum"))],
            {
                let mut v = edge();
                v.push(("merge", s("avg")));
                v
            },
            vec![
                ("merge", s("gated")),
                ("gate", s("channel")),
                ("init_state", s("b2c")),
            ],
            {
                let mut v = edge();
                v.extend([("merge", s("gated")), ("gate", s("batch_channel"))]);
                v
            },
        ],
    }
}

/// B and C for sequence length `k`: C not a multiple of 32 everywhere, smaller at 65,536.
fn shape(k: i64) -> Overrides {
    let (b, c) = if k > 4096 { (2, 40) } else { (3, 72) };
    vec![
        ("batch", ParamValue::Int(b)),
        ("steps", ParamValue::Int(k)),
        ("channels", ParamValue::Int(c)),
    ]
}

/// A case on CUDA (`handles`) or, without handles, on the CPU.
fn setup<T: Element>(
    kernel: &ScanKernel,
    overrides: &[(&str, ParamValue)],
    handles: Option<CudaHandles>,
) -> Result<ScanCase<T>, PluginError> {
    let p = params(kernel, overrides);
    let backend = if handles.is_some() {
        Backend::Cuda
    } else {
        Backend::Cpu
    };
    ScanCase::<T>::new(kernel, &request(p, backend, T::PRECISION, 1, handles))
}

/// The full cycle of one case: two fresh calls, rotate(4) with each set checked, one more call
/// (on the CPU, which keeps one set: the three fresh calls).
fn full_cycle<T: Element>(
    kernel: &ScanKernel,
    overrides: &[(&str, ParamValue)],
    handles: Option<CudaHandles>,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> (Result<Vec<Accuracy>, PluginError>, f64) {
    let tol = tolerance(T::PRECISION);
    let mut scale = 0.0;
    let result = setup::<T>(kernel, overrides, handles).and_then(|mut case| {
        let mut acc = vec![
            check(&mut case, 11, &tol, sync)?,
            check(&mut case, 12, &tol, sync)?,
        ];
        if handles.is_some() {
            let sets = case.rotate(4)?;
            if sets != 4 {
                return Err(PluginError::other(format!(
                    "rotate(4) gave {sets} sets on a device with room for 4"
                )));
            }
            acc.extend(case.check_rotated(&tol)?);
        }
        acc.push(check(&mut case, 13, &tol, sync)?);
        scale = case.output_scale();
        Ok(acc)
    });
    (result, scale)
}

fn line(
    kernel: &ScanKernel,
    precision: Precision,
    overrides: &[(&str, ParamValue)],
    result: (Result<Vec<Accuracy>, PluginError>, f64),
) -> CheckLine {
    use apex_plugin_api::Kernel;
    CheckLine {
        kernel: kernel.descriptor().id.to_string(),
        precision,
        params: describe(overrides),
        result: result.0,
        tolerance: tolerance(precision),
        scale: result.1,
    }
}

/// Runs the self-check on `handles` (`sync` waits for their stream), or without handles the same
/// plan on the CPU backend (no rotation there; it proves the plan and the reference off the GPU).
pub fn run(
    handles: Option<CudaHandles>,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Vec<CheckLine> {
    // On CUDA every production block shape runs the whole plan (the shape rule picks one by B·C,
    // and the plan's shapes are small); the CPU has one path.
    let tunings: Vec<Option<CudaTuning>> = if handles.is_some() {
        program::production_tunings()
            .into_iter()
            .map(Some)
            .collect()
    } else {
        vec![None]
    };
    let mut lines = Vec::new();
    for direction in Direction::ALL {
        let kernel = ScanKernel::new(direction);
        for tuning in &tunings {
            let tuned = tuning.map_or(kernel, |t| ScanKernel::with_tuning(direction, t));
            for variant in variants(direction) {
                for k in STEPS {
                    let mut o = shape(k);
                    o.extend(variant.iter().cloned());
                    for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
                        let r = match precision {
                            Precision::Fp32 => full_cycle::<f32>(&tuned, &o, handles, sync),
                            Precision::Fp16 => full_cycle::<f16>(&tuned, &o, handles, sync),
                            _ => full_cycle::<bf16>(&tuned, &o, handles, sync),
                        };
                        let mut l = line(&tuned, precision, &o, r);
                        if let Some(t) = tuning {
                            l.params = format!("{} tuning={}", l.params, t.label());
                        }
                        lines.push(l);
                    }
                }
            }
        }
        // The largest batch the edge-case list names, with an odd channel count.
        let o: Overrides = vec![
            ("batch", ParamValue::Int(64)),
            ("steps", ParamValue::Int(17)),
            ("channels", ParamValue::Int(33)),
        ];
        for precision in [Precision::Fp32, Precision::Fp16] {
            let r = match precision {
                Precision::Fp32 => full_cycle::<f32>(&kernel, &o, handles, sync),
                _ => full_cycle::<f16>(&kernel, &o, handles, sync),
            };
            lines.push(line(&kernel, precision, &o, r));
        }
        lines.push(change_of_k(&kernel, handles, sync));
    }
    lines
}

/// Two instances of one kernel with K = 256 and K = 4,099 in this process: both run back to back,
/// then both are verified, and setting up the second (same dtype) compiled nothing.
fn change_of_k(
    kernel: &ScanKernel,
    handles: Option<CudaHandles>,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> CheckLine {
    let tol = tolerance(Precision::Fp16);
    let o = |k: i64| -> Overrides {
        vec![
            ("batch", ParamValue::Int(2)),
            ("steps", ParamValue::Int(k)),
            ("channels", ParamValue::Int(96)),
        ]
    };
    let result = (|| {
        let mut first = setup::<f16>(kernel, &o(256), handles)?;
        let compiles = program::compiles();
        let mut second = setup::<f16>(kernel, &o(4099), handles)?;
        if handles.is_some() && program::compiles() != compiles {
            return Err(PluginError::other(
                "setting up a second K compiled the program again",
            ));
        }
        first.prepare_check(31)?;
        second.prepare_check(32)?;
        first.run()?;
        second.run()?;
        sync()?;
        Ok(vec![first.verify(&tol)?, second.verify(&tol)?])
    })();
    let mut l = line(kernel, Precision::Fp16, &o(256), (result, 0.0));
    l.params = "change of K: steps=256 then steps=4099 in one process, batch=2 channels=96".into();
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_variants_that_plan() {
        use crate::problem::ScanProblem;
        for d in Direction::ALL {
            let kernel = ScanKernel::new(d);
            for v in variants(d) {
                for k in STEPS {
                    let mut o = shape(k);
                    o.extend(v.iter().cloned());
                    ScanProblem::plan(d, &params(&kernel, &o)).unwrap();
                }
            }
        }
        assert_eq!(variants(Direction::Bidirectional).len(), 4);
    }

    #[test]
    fn cuda_cases_verify_when_a_gpu_exists() {
        let Some(gpu) = apex_plugin_api::cuda::StandaloneGpu::for_test() else {
            return;
        };
        let handles = gpu.handles;
        let sync = || gpu.sync();
        let lines = run(Some(handles), &sync);
        let failed: Vec<_> = lines.iter().filter(|l| !l.passed()).collect();
        assert!(
            failed.is_empty(),
            "{} of {} cases failed: {failed:#?}",
            failed.len(),
            lines.len()
        );
    }
}
