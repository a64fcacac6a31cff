//! The GPU self-check: every op × tile size 8/16/32 × fp32/fp16/bf16 (plus overlap, blend and
//! off-grid variants), each set up on the given CUDA handles and checked on two calls with fresh
//! inputs and poisoned outputs (the original's autotune bug only showed on the second call).

use apex_plugin_api::{
    Accuracy, Backend, CudaHandles, Kernel, ParamValue, PluginError, Precision, Tolerance,
};

use crate::{
    case::OpKernel,
    harness::{check, describe, params, request},
    ops::{FusedStage, FusionGate, TilePack, TileUnpack, tile_unpack},
};

/// One checked case.
#[derive(Debug, Clone)]
pub struct CheckLine {
    pub kernel: String,
    pub precision: Precision,
    pub params: String,
    /// The accuracy of each of the two calls, or the error that stopped the case.
    pub result: Result<[Accuracy; 2], PluginError>,
    pub tolerance: Tolerance,
}

impl CheckLine {
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(acc) if acc.iter().all(|a| a.within(&self.tolerance)))
    }
}

/// The variants checked per op, as parameter overrides (the shape is added per tile size).
fn variants(id: &str) -> Vec<Vec<(&'static str, ParamValue)>> {
    let s = |v: &str| ParamValue::Str(v.into());
    match id {
        "tile_ops.tile_unpack" => vec![
            vec![("ids", s("sorted"))],
            vec![("ids", s("overlap")), ("levels", ParamValue::Int(3))],
            vec![("ids", s("overlap")), ("offgrid", ParamValue::Bool(true))],
            vec![
                ("ids", s("overlap")),
                ("offgrid", ParamValue::Bool(true)),
                ("mode", s("blend")),
                ("alpha", ParamValue::Float(0.3)),
            ],
        ],
        "tile_ops.fusion_gate" => vec![vec![], vec![("bias", ParamValue::Float(-0.5))]],
        _ => vec![vec![("ids", s("sorted"))], vec![("ids", s("overlap"))]],
    }
}

/// Runs the self-check on `handles` with maps of `batch x channels x size x size`; `sync` waits
/// for the handles' stream.
pub fn run(
    handles: CudaHandles,
    batch: i64,
    channels: i64,
    size: i64,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Vec<CheckLine> {
    let kernels: [Box<dyn Kernel>; 4] = [
        Box::new(OpKernel::<TilePack>::default()),
        Box::new(OpKernel::<TileUnpack>::default()),
        Box::new(OpKernel::<FusionGate>::default()),
        Box::new(OpKernel::<FusedStage>::default()),
    ];
    let mut lines = Vec::new();
    for kernel in &kernels {
        let id = kernel.descriptor().id.to_string();
        for tile in [8i64, 16, 32] {
            let grid = (size / tile) * (size / tile);
            for variant in variants(&id) {
                let mut overrides = vec![
                    ("batch", ParamValue::Int(batch)),
                    ("channels", ParamValue::Int(channels)),
                    ("height", ParamValue::Int(size)),
                    ("width", ParamValue::Int(size)),
                    ("tile_size", ParamValue::Int(tile)),
                    ("kmax", ParamValue::Int(grid.min(32))),
                ];
                overrides.extend(variant.iter().cloned());
                for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
                    let tolerance = tolerance_for(kernel.as_ref(), &overrides, precision);
                    let p = params(kernel.as_ref(), &overrides);
                    let result = kernel
                        .setup(&request(p, Backend::Cuda, precision, 1, Some(handles)))
                        .and_then(|mut inst| {
                            let first = check(inst.as_mut(), 11, &tolerance, sync)?;
                            let second = check(inst.as_mut(), 12, &tolerance, sync)?;
                            Ok([first, second])
                        });
                    lines.push(CheckLine {
                        kernel: id.clone(),
                        precision,
                        params: describe(&overrides),
                        result,
                        tolerance,
                    });
                }
            }
        }
    }
    lines
}

/// A verification that must fail, and what it returned.
#[derive(Debug, Clone)]
pub struct Control {
    pub label: String,
    /// The figures verify returned (an error is a control that did not even run).
    pub result: Result<Accuracy, PluginError>,
    pub tolerance: Tolerance,
}

impl Control {
    /// Whether verification failed as it must.
    pub fn caught(&self) -> bool {
        matches!(&self.result, Ok(a) if !a.within(&self.tolerance))
    }
}

/// The negative controls of the device verification, per op in fp16 on `batch x 8 x 64 x 64`
/// maps: outputs never written (fresh inputs, poisoned outputs, no call) and stale outputs (a
/// call, then fresh inputs staged without another call). Both must fail verification.
pub fn controls(
    handles: CudaHandles,
    batch: i64,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Vec<Control> {
    let shape = [
        ("batch", ParamValue::Int(batch)),
        ("channels", ParamValue::Int(8)),
        ("height", ParamValue::Int(64)),
        ("width", ParamValue::Int(64)),
        ("tile_size", ParamValue::Int(16)),
        ("kmax", ParamValue::Int(8)),
    ];
    let mut out = Vec::new();
    out.extend(controls_of::<TilePack>(handles, &shape, sync));
    out.extend(controls_of::<TileUnpack>(handles, &shape, sync));
    out.extend(controls_of::<FusionGate>(handles, &shape[..4], sync));
    out.extend(controls_of::<FusedStage>(handles, &shape, sync));
    out
}

fn controls_of<O: crate::op::TileOp>(
    handles: CudaHandles,
    shape: &[(&'static str, ParamValue)],
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Vec<Control> {
    use apex_plugin_api::Instance;
    let kernel = OpKernel::<O>::default();
    let id = O::descriptor().id;
    let precision = Precision::Fp16;
    let tolerance = tolerance_for(&kernel, shape, precision);
    let setup = || {
        let p = params(&kernel, shape);
        crate::case::OpCase::<O, half::f16>::new(&request(
            p,
            Backend::Cuda,
            precision,
            1,
            Some(handles),
        ))
    };
    let unwritten = setup().and_then(|mut case| {
        case.prepare_check(11)?;
        sync()?;
        case.verify(&tolerance)
    });
    let stale = setup().and_then(|mut case| {
        case.prepare_check(11)?;
        case.run()?;
        sync()?;
        case.stage_without_running(12)?;
        case.verify(&tolerance)
    });
    vec![
        Control {
            label: format!("{id} {precision} outputs never written"),
            result: unwritten,
            tolerance,
        },
        Control {
            label: format!("{id} {precision} outputs of the previous inputs"),
            result: stale,
            tolerance,
        },
    ]
}

/// Exact for copies (pack, unpack override), the declared default otherwise.
pub fn tolerance_for(
    kernel: &dyn Kernel,
    overrides: &[(&str, ParamValue)],
    precision: Precision,
) -> Tolerance {
    let id = kernel.descriptor().id;
    let blend = overrides
        .iter()
        .any(|(k, v)| *k == "mode" && *v == ParamValue::Str("blend".into()));
    match id.as_str() {
        "tile_ops.tile_pack" => Tolerance::EXACT,
        "tile_ops.tile_unpack" => tile_unpack::tolerance(
            if blend {
                tile_unpack::UnpackMode::Blend { alpha: 0.5 }
            } else {
                tile_unpack::UnpackMode::Override
            },
            precision,
        ),
        _ => kernel.descriptor().tolerance_for(precision),
    }
}

/// Every CUDA program the ops can build at tile sizes 8/16/32 in every precision and variant,
/// for a compile check (needs NVRTC, not a GPU).
pub fn all_programs() -> Result<Vec<(String, crate::op::CudaProgram)>, PluginError> {
    use crate::op::TileOp;
    // The check kit: one source per storage type, shapes as kernel arguments.
    let mut out: Vec<_> = [Precision::Fp32, Precision::Fp16, Precision::Bf16]
        .into_iter()
        .map(|precision| {
            let program = crate::op::CudaProgram {
                name: crate::device_check::PROGRAM,
                source: crate::device_check::source(precision),
                functions: &[],
                scratch_i32: vec![],
            };
            (format!("check kit {precision}"), program)
        })
        .collect();
    for tile in [8i64, 16, 32] {
        let shape = [
            ("batch", ParamValue::Int(2)),
            ("channels", ParamValue::Int(8)),
            ("height", ParamValue::Int(64)),
            ("width", ParamValue::Int(64)),
            ("tile_size", ParamValue::Int(tile)),
            ("kmax", ParamValue::Int(4)),
        ];
        for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
            let mut add = |id: &str,
                           variant: &[(&'static str, ParamValue)],
                           program: crate::op::CudaProgram| {
                out.push((
                    format!("{id} t={tile} {precision} {}", describe(variant)),
                    program,
                ));
            };
            let k = |kernel: &dyn Kernel, v: &[(&'static str, ParamValue)]| {
                let mut o = shape.to_vec();
                o.extend(v.iter().cloned());
                params(kernel, &o)
            };
            for variant in variants("tile_ops.tile_pack") {
                let p = k(&OpKernel::<TilePack>::default(), &variant);
                add(
                    "tile_ops.tile_pack",
                    &variant,
                    TilePack::plan(&p)?.cuda_program(precision),
                );
            }
            for variant in variants("tile_ops.tile_unpack") {
                let p = k(&OpKernel::<TileUnpack>::default(), &variant);
                add(
                    "tile_ops.tile_unpack",
                    &variant,
                    TileUnpack::plan(&p)?.cuda_program(precision),
                );
            }
            for variant in variants("tile_ops.fusion_gate") {
                let p = k(&OpKernel::<FusionGate>::default(), &variant);
                add(
                    "tile_ops.fusion_gate",
                    &variant,
                    FusionGate::plan(&p)?.cuda_program(precision),
                );
            }
            for variant in variants("tile_ops.fused_stage") {
                let p = k(&OpKernel::<FusedStage>::default(), &variant);
                add(
                    "tile_ops.fused_stage",
                    &variant,
                    FusedStage::plan(&p)?.cuda_program(precision),
                );
            }
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
        if !nvrtc_for_test() {
            return;
        }
        let programs = all_programs().unwrap();
        assert!(programs.len() >= 3 * 3 * 10, "{}", programs.len());
        for (label, program) in programs {
            if let Err(e) = compile_ptx(program.name, &program.source, "sm_90") {
                panic!("{label}: {e}\n--- source ---\n{}", program.source);
            }
        }
    }

    #[test]
    fn cuda_cases_verify_on_two_fresh_calls_when_a_gpu_exists() {
        let Some(gpu) = apex_plugin_api::cuda::StandaloneGpu::for_test() else {
            return;
        };
        let handles = gpu.handles;
        let sync = || gpu.sync();
        let lines = run(handles, 2, 8, 64, &sync);
        let failed: Vec<_> = lines.iter().filter(|l| !l.passed()).collect();
        assert!(
            failed.is_empty(),
            "{} of {} cases failed: {failed:#?}",
            failed.len(),
            lines.len()
        );
        let missed: Vec<_> = controls(handles, 2, &sync)
            .into_iter()
            .filter(|c| !c.caught())
            .collect();
        assert!(
            missed.is_empty(),
            "verification passed wrong outputs: {missed:#?}"
        );
    }
}
