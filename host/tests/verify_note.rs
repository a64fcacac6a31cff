//! A kernel's own sentence on a failed check reaches the report: the Poisson solver stopped at
//! its iteration cap is `failed_accuracy` with "did not converge" first in its reason, not only
//! the tolerance numbers (plugin API 0.2, `Instance::verify_note`).

mod support;

use support::{apex, case, read_json, stderr};

#[test]
fn a_solver_stopped_at_its_cap_says_it_did_not_converge() {
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("10-capped.yaml"),
        "kernel: poisson.cg\nproblem_size:\n  grid_size: [16, 16, 16]\n  max_iterations: 3\n  tolerance: 1.0e-5\nbackends: [cpu]\nprecisions: [fp32]\nprotocol: {processes: 1}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "poisson.cg/cpu/*grid_size=16x16x16,max_iterations=3,*",
        "--config-dir",
        config.path().to_str().unwrap(),
        "--output-dir",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let summary = read_json(&out.path().join("summary.json"));
    let c = case(&summary, "poisson.cg/cpu/fp32/f64_solve=false,");
    assert_eq!(c["status"], "failed_accuracy");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("did not converge: 3 iterations"),
        "{reason}"
    );
    assert!(reason.contains("output outside tolerance"), "{reason}");
    assert!(
        c["accuracy"]["note"]
            .as_str()
            .unwrap()
            .starts_with("did not converge")
    );
}
