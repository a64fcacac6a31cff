//! The engine kernel on ONNX Runtime's CPU provider, through the plain-Rust traits (the host's
//! end-to-end tests are in host/tests/engines.rs). These need ONNX Runtime: `.ci/run` installs
//! it and sets `APEX_REQUIRE_ORT=1`, so there a missing runtime fails the test instead of
//! skipping it; elsewhere a missing runtime is printed and the test returns.

use abi_stable::std_types::ROption;
use apex_plugin_api::{Backend, Instance, Kernel, ParamValue, Params, Precision, SetupRequest};
use apex_plugin_trt_engine::engine::EngineKernel;
use apex_plugin_trt_engine::ort_runtime;

#[expect(
    clippy::print_stderr,
    reason = "a test skipped for a missing runtime must say so, not pass silently"
)]
fn ort_here() -> bool {
    match ort_runtime::load() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("APEX_REQUIRE_ORT").is_none(),
                "APEX_REQUIRE_ORT is set but ONNX Runtime did not load: {e}"
            );
            eprintln!("skipped: {e}");
            false
        }
    }
}

fn request(engine: &str, shapes: &str, reference: &str) -> SetupRequest {
    let mut params = Params::default();
    for (k, v) in [
        ("engine", engine),
        ("input_shapes", shapes),
        ("shape_case", "default"),
        ("batch_dim", ""),
        ("runtime", "auto"),
        ("reference", reference),
    ] {
        params.push(k, ParamValue::Str(v.into()));
    }
    SetupRequest {
        params,
        backend: Backend::Cpu,
        precision: Precision::Fp32,
        seed: 5,
        cuda: ROption::RNone,
    }
}

fn checked(case: &mut Box<dyn Instance>) -> apex_plugin_api::Accuracy {
    let tol = EngineKernel.descriptor().tolerance_for(Precision::Fp32);
    case.prepare_check(77).unwrap();
    case.run().unwrap();
    case.verify(&tol).unwrap()
}

#[test]
fn the_mlp_matches_its_f64_reference_and_reports_trtexecs_fields() {
    if !ort_here() {
        return;
    }
    let req = request("@models/mlp.onnx", "", "mlp");
    assert_eq!(EngineKernel.unavailable(&req), None);
    let mut case = EngineKernel.setup(&req).unwrap();
    for _ in 0..30 {
        case.run().unwrap();
    }
    let acc = checked(&mut case);
    let tol = EngineKernel.descriptor().tolerance_for(Precision::Fp32);
    assert!(acc.within(&tol), "{acc:?}");
    assert_eq!(acc.elements, 4 * 16);
    let names: Vec<String> = case.figures().iter().map(|f| f.name.to_string()).collect();
    for want in [
        "latency_ms",
        "throughput_qps",
        "total_host_walltime_s",
        "queries",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let notes = case.notes().join("\n");
    assert!(notes.contains("CPUExecutionProvider"), "{notes}");
    assert!(
        notes.contains("absent: Enqueue Time, H2D Latency"),
        "{notes}"
    );
}

#[test]
fn a_model_made_wrong_fails_the_accuracy_check() {
    if !ort_here() {
        return;
    }
    let mut case = EngineKernel
        .setup(&request("@models/fixtures/mlp_wrong.onnx", "", "mlp"))
        .unwrap();
    let acc = checked(&mut case);
    let tol = EngineKernel.descriptor().tolerance_for(Precision::Fp32);
    assert!(!acc.within(&tol), "{acc:?}");
    assert!(
        case.verify_note().contains("f64 reference `mlp`"),
        "{}",
        case.verify_note()
    );
}

#[test]
fn without_a_reference_the_unoptimized_session_verifies() {
    if !ort_here() {
        return;
    }
    let mut case = EngineKernel
        .setup(&request("@models/mlp_dynamic.onnx", "x=8x32", ""))
        .unwrap();
    let acc = checked(&mut case);
    assert_eq!(acc.elements, 8 * 16);
    assert!(acc.within(&EngineKernel.descriptor().tolerance_for(Precision::Fp32)));
    assert!(
        case.notes()
            .join("\n")
            .contains("every graph optimization disabled")
    );
}

#[test]
fn skip_reasons_follow_the_seeds_order() {
    if !ort_here() {
        return;
    }
    let reason = |r: &SetupRequest| EngineKernel.unavailable(r).unwrap_or_default();
    assert!(reason(&request("", "", "")).starts_with("missing_trt_engine_path"));
    assert!(
        reason(&request("/nonexistent/x.onnx", "", ""))
            .starts_with("engine_not_found:/nonexistent/x.onnx")
    );
    assert!(
        reason(&request("@models/mlp_dynamic.onnx", "", ""))
            .starts_with("unresolved_tensor_shape:x")
    );
    assert!(
        reason(&request("@models/fixtures/string_input.onnx", "", ""))
            .starts_with("unsupported_dtype:String")
    );
    let mut fp16 = request("@models/mlp.onnx", "", "mlp");
    fp16.precision = Precision::Fp16;
    assert!(
        reason(&fp16).starts_with("precision_mismatch"),
        "{}",
        reason(&fp16)
    );
    // A corrupt model is no skip: setup fails with the runtime's message.
    let corrupt = request("@models/fixtures/corrupt.onnx", "", "");
    assert_eq!(EngineKernel.unavailable(&corrupt), None);
    let err = EngineKernel.setup(&corrupt).err().unwrap();
    assert!(
        err.message.contains("Protobuf parsing failed"),
        "{}",
        err.message
    );
}
