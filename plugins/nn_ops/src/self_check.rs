//! The GPU self-check: every op × variant × fp32/fp16/bf16 at row lengths 1, 7, 8 (the seed's
//! smallest), 512, 8,193 and 262,144 (and all-ignored cross-entropy targets), each set up on the
//! given CUDA handles and checked three times with fresh inputs and poisoned outputs: two calls
//! with different seeds, then one more after `rotate(4)` and a round of calls over every set
//! (which also proves that each kernel leaves its grid counters at zero).

use apex_plugin_api::{
    Accuracy, Backend, CudaHandles, Kernel, ParamValue, PluginError, Precision, Tolerance,
};

use crate::ops::{
    cross_entropy::tuning::{GradPlan, with_grad_plan},
    layer_norm::tuning::{Schedule, with_schedule},
    mse_loss::tuning::{Launch as MseLaunch, with_launch},
};
use crate::{
    case::OpKernel,
    harness::{check, describe, params, request},
    op::{CudaProgram, DeviceFacts, NnOp},
    ops::{CrossEntropy, Gelu, LayerNorm, MseLoss, Swish},
};

/// One checked case.
#[derive(Debug, Clone)]
pub struct CheckLine {
    pub kernel: String,
    pub precision: Precision,
    pub params: String,
    /// The accuracy of each of the three calls, or the error that stopped the case.
    pub result: Result<[Accuracy; 3], PluginError>,
    pub tolerance: Tolerance,
}

impl CheckLine {
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(acc) if acc.iter().all(|a| a.within(&self.tolerance)))
    }
}

type Overrides = Vec<(&'static str, ParamValue)>;

fn bsd(b: i64, s: i64, d: i64) -> Overrides {
    crate::harness::bsd(b, s, d)
}

fn with(mut o: Overrides, extra: &[(&'static str, ParamValue)]) -> Overrides {
    o.extend(extra.iter().cloned());
    o
}

/// The shapes `[batch, seq, dim]` every `[batch, seq, dim]` op is checked at.
fn bsd_shapes() -> Vec<Overrides> {
    vec![
        bsd(2, 3, 1),
        bsd(1, 5, 7),
        bsd(16, 256, 8),
        bsd(3, 70, 512),
        bsd(1, 9, 8193),
        bsd(1, 3, 262_144),
    ]
}

/// Every (kernel, overrides) pair the check covers.
pub fn cases() -> Vec<(Box<dyn Kernel>, Overrides)> {
    let s = |v: &str| ParamValue::Str(v.into());
    let mut out: Vec<(Box<dyn Kernel>, Overrides)> = Vec::new();
    for shape in bsd_shapes() {
        out.push((Box::new(OpKernel::<LayerNorm>::default()), shape.clone()));
        // A 8192-wide row (LLM hidden size) in addition.
        for form in ["none", "tanh"] {
            out.push((
                Box::new(OpKernel::<Gelu>::default()),
                with(shape.clone(), &[("approximate", s(form))]),
            ));
        }
        out.push((Box::new(OpKernel::<Swish>::default()), shape.clone()));
        for reduction in ["mean", "sum"] {
            out.push((
                Box::new(OpKernel::<MseLoss>::default()),
                with(shape.clone(), &[("reduction", s(reduction))]),
            ));
        }
    }
    out.push((Box::new(OpKernel::<LayerNorm>::default()), bsd(2, 16, 8192)));
    // 1,024-element rows, 37 of them: the bulk schedule's chunks of 8 (16-bit) or 4 (fp32) rows
    // end on a short one.
    out.push((Box::new(OpKernel::<LayerNorm>::default()), bsd(1, 37, 1024)));
    // 2,048-element rows, 21 of them (4 KiB at 16 bits: every schedule's largest prefetching
    // rows).
    out.push((Box::new(OpKernel::<LayerNorm>::default()), bsd(1, 21, 2048)));
    let ce = |rows: i64, vocab: i64, grad: bool, ignore: f64| -> Overrides {
        vec![
            ("rows", ParamValue::Int(rows)),
            ("vocab", ParamValue::Int(vocab)),
            ("grad", ParamValue::Bool(grad)),
            ("ignore_ratio", ParamValue::Float(ignore)),
        ]
    };
    for grad in [false, true] {
        for (rows, vocab) in [
            (3, 1),
            (5, 7),
            (300, 8),
            (257, 512),
            (16, 8193),
            (64, 32_768),
            (4, 131_072),
            (5, 262_144),
        ] {
            out.push((
                Box::new(OpKernel::<CrossEntropy>::default()),
                ce(rows, vocab, grad, 0.1),
            ));
        }
        // Every target ignored: NaN loss (as PyTorch), zero gradient.
        for (rows, vocab) in [(5, 7), (300, 8), (3, 262_144)] {
            out.push((
                Box::new(OpKernel::<CrossEntropy>::default()),
                ce(rows, vocab, grad, 1.0),
            ));
        }
    }
    out
}

/// A launch plan a case is set up under: the plugin's default or one of the alternatives its
/// `tuning` modules offer for comparison (both checked here, both timed by the example's bench).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Default,
    /// A cross-entropy forward + gradient plan.
    Grad(GradPlan),
    /// A LayerNorm work schedule.
    LayerNorm(Schedule),
    /// An MSE launch shape.
    Mse(MseLaunch),
}

impl Variant {
    /// Runs `f` (a case's setup) under this plan.
    pub fn apply<R>(self, f: impl FnOnce() -> R) -> R {
        match self {
            Self::Default => f(),
            Self::Grad(plan) => with_grad_plan(plan, f),
            Self::LayerNorm(schedule) => with_schedule(schedule, f),
            Self::Mse(launch) => with_launch(launch, f),
        }
    }

    /// Appended to a case's parameters in the check's lines (empty for the default).
    pub fn suffix(self) -> String {
        match self {
            Self::Default => String::new(),
            Self::Grad(plan) => format!(" plan={plan}"),
            Self::LayerNorm(schedule) => format!(" schedule={}", schedule.name()),
            Self::Mse(launch) => format!(" launch={}", launch.name()),
        }
    }
}

/// Every case with the plans it runs under: cross-entropy with the gradient under its default
/// plan and every other [`GradPlan`] (the shared-memory plan at each slice budget; a case whose
/// rows the shared-memory plan does not take runs the reread plan under that name); LayerNorm
/// under each of its schedules; MSE with the mean reduction under its default launch and each
/// other launch shape the bench compares (`mse_loss::tuning::Launch::OTHERS`); the rest once.
fn with_variants(
    cases: Vec<(Box<dyn Kernel>, Overrides)>,
) -> Vec<(Box<dyn Kernel>, Overrides, Variant)> {
    let mut out = Vec::new();
    for (kernel, overrides) in cases {
        let grad = overrides
            .iter()
            .any(|(k, v)| *k == "grad" && *v == ParamValue::Bool(true));
        if grad {
            for plan in GradPlan::ALL
                .into_iter()
                .filter(|&p| p != GradPlan::DEFAULT)
            {
                out.push((
                    Box::new(OpKernel::<CrossEntropy>::default()) as Box<dyn Kernel>,
                    overrides.clone(),
                    Variant::Grad(plan),
                ));
            }
        }
        if kernel.descriptor().id.as_str() == "nn_ops.layer_norm" {
            // Every schedule by name (the default picks one of them by row length).
            for schedule in Schedule::ALL {
                out.push((
                    Box::new(OpKernel::<LayerNorm>::default()) as Box<dyn Kernel>,
                    overrides.clone(),
                    Variant::LayerNorm(schedule),
                ));
            }
            continue;
        }
        let mean_mse = kernel.descriptor().id.as_str() == "nn_ops.mse_loss"
            && !overrides
                .iter()
                .any(|(k, v)| *k == "reduction" && *v == ParamValue::Str("sum".into()));
        if mean_mse {
            for launch in MseLaunch::OTHERS {
                out.push((
                    Box::new(OpKernel::<MseLoss>::default()) as Box<dyn Kernel>,
                    overrides.clone(),
                    Variant::Mse(launch),
                ));
            }
        }
        out.push((kernel, overrides, Variant::Default));
    }
    out
}

/// Runs the self-check on `handles`; `sync` waits for the handles' stream. With `only`, just
/// the cases whose "kernel params" text contains it.
pub fn run(
    handles: CudaHandles,
    sync: &dyn Fn() -> Result<(), PluginError>,
    only: Option<&str>,
) -> Vec<CheckLine> {
    let mut lines = Vec::new();
    for (kernel, overrides, variant) in with_variants(cases()) {
        let id = kernel.descriptor().id.to_string();
        let text = format!("{id} {}{}", describe(&overrides), variant.suffix());
        if only.is_some_and(|t| !text.contains(t)) {
            continue;
        }
        for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
            let tolerance = kernel.descriptor().tolerance_for(precision);
            let p = params(kernel.as_ref(), &overrides);
            let result = variant
                .apply(|| kernel.setup(&request(p, Backend::Cuda, precision, 1, Some(handles))))
                .and_then(|mut inst| {
                    let first = check(inst.as_mut(), 11, &tolerance, sync)?;
                    let second = check(inst.as_mut(), 12, &tolerance, sync)?;
                    let sets = inst.rotate(4)?;
                    for _ in 0..sets {
                        inst.run()?;
                    }
                    sync()?;
                    let third = check(inst.as_mut(), 13, &tolerance, sync)?;
                    Ok([first, second, third])
                });
            lines.push(CheckLine {
                kernel: id.clone(),
                precision,
                params: format!("{}{}", describe(&overrides), variant.suffix()),
                result,
                tolerance,
            });
        }
    }
    lines
}

/// Every CUDA program the check's cases build, for a compile check (needs NVRTC, not a GPU).
pub fn all_programs() -> Result<Vec<(String, CudaProgram)>, PluginError> {
    fn program<O: NnOp>(
        kernel: &dyn Kernel,
        overrides: &Overrides,
        precision: Precision,
    ) -> Result<CudaProgram, PluginError> {
        O::plan(&params(kernel, overrides))?.cuda_program(precision, DeviceFacts::H100)
    }
    let mut out = Vec::new();
    for (kernel, overrides, variant) in with_variants(cases()) {
        let id = kernel.descriptor().id.to_string();
        for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
            let k = kernel.as_ref();
            let p = variant.apply(|| match id.as_str() {
                "nn_ops.layer_norm" => program::<LayerNorm>(k, &overrides, precision),
                "nn_ops.gelu" => program::<Gelu>(k, &overrides, precision),
                "nn_ops.swish" => program::<Swish>(k, &overrides, precision),
                "nn_ops.mse_loss" => program::<MseLoss>(k, &overrides, precision),
                _ => program::<CrossEntropy>(k, &overrides, precision),
            })?;
            out.push((
                format!(
                    "{id} {precision} {}{}",
                    describe(&overrides),
                    variant.suffix()
                ),
                p,
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::cuda::{compile_ptx, nvrtc_for_test};

    #[test]
    fn every_cuda_source_compiles_with_nvrtc_for_sm_90() {
        let programs = all_programs().unwrap();
        assert!(programs.len() >= 3 * 40, "{}", programs.len());
        // Every launch fits CUDA's limits whatever NVRTC says.
        for (label, p) in &programs {
            let (g, b) = (p.config.grid_dim, p.config.block_dim);
            assert!(g.0 >= 1 && g.1 == 1 && g.2 == 1, "{label}: grid {g:?}");
            assert!(
                b.0 >= 32 && b.0 <= 1024 && b.0 % 32 == 0,
                "{label}: block {b:?}"
            );
            assert!(
                p.co_resident_blocks <= DeviceFacts::H100.sm_count,
                "{label}"
            );
        }
        if !nvrtc_for_test() {
            return;
        }
        // Distinct sources only: many cases share one (the shape is in the #defines).
        let mut seen = std::collections::HashSet::new();
        for (label, program) in programs {
            if !seen.insert(program.source.clone()) {
                continue;
            }
            if let Err(e) = compile_ptx(program.name, &program.source, "sm_90") {
                panic!("{label}: {e}\n--- source ---\n{}", program.source);
            }
            // ptxas (run by NVRTC for a real architecture) must fit the registers without
            // spilling: a spill in a streaming kernel costs local-memory traffic on every call.
            let log = ptxas_log(&program.source);
            assert!(
                log.contains("registers"),
                "{label}: no ptxas report:\n{log}"
            );
            assert!(
                !log.contains("bytes spill")
                    || log.contains(" 0 bytes spill stores, 0 bytes spill loads"),
                "{label}: spills\n{log}"
            );
        }
    }

    /// ptxas's report of `source` for sm_90.
    fn ptxas_log(source: &str) -> String {
        apex_plugin_api::cuda::ptxas_report("nn_ops", source, "sm_90")
            .unwrap_or_else(|e| panic!("{}", e.message))
    }

    #[test]
    fn cuda_cases_verify_three_times_when_a_gpu_exists() {
        let Some(gpu) = apex_plugin_api::cuda::StandaloneGpu::for_test() else {
            return;
        };
        let handles = gpu.handles;
        let sync = || gpu.sync();
        let lines = run(handles, &sync, None);
        let failed: Vec<_> = lines.iter().filter(|l| !l.passed()).collect();
        assert!(
            failed.is_empty(),
            "{} of {} cases failed: {failed:#?}",
            failed.len(),
            lines.len()
        );
    }
}
