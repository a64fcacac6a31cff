//! A kernel's own words reach the report: the Poisson solver stopped at its iteration cap is
//! `failed_accuracy` with "did not converge" first in its reason, not only the tolerance numbers
//! (`Instance::verify_note`), and every solve's iterations and residuals are in the case's
//! `figures` and in summary.md (`Instance::figures`).

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
    // The figures say the same in numbers, and the Markdown shows them.
    assert_eq!(c["figures"]["iterations"]["value"], 3.0);
    assert_eq!(c["figures"]["iterations"]["unit"], "iterations");
    let residual = c["figures"]["relative_residual"]["value"].as_f64().unwrap();
    assert!(residual > 1e-5, "{residual}");
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(md.contains("## Kernel figures"), "{md}");
    assert!(md.contains("| iterations | 3 | iterations |"), "{md}");
}

#[test]
fn a_converged_solve_reports_its_iterations_and_residuals() {
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("10-converged.yaml"),
        "kernel: poisson.cg\nproblem_size:\n  grid_size: [16, 16, 16]\n  max_iterations: 500\n  tolerance: 1.0e-5\nbackends: [cpu]\nprecisions: [fp32]\nprotocol: {processes: 1}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "poisson.cg/cpu/*grid_size=16x16x16,max_iterations=500,*",
        "--config-dir",
        config.path().to_str().unwrap(),
        "--output-dir",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let summary = read_json(&out.path().join("summary.json"));
    let c = case(&summary, "poisson.cg/cpu/fp32/f64_solve=false,");
    assert_eq!(c["status"], "ok");
    let figures = &c["figures"];
    let iterations = figures["iterations"]["value"].as_f64().unwrap();
    assert!(iterations > 3.0 && iterations < 500.0, "{figures}");
    for name in ["relative_residual", "true_relative_residual"] {
        let r = figures[name]["value"].as_f64().unwrap();
        assert!(r > 0.0 && r <= 1e-4, "{name}: {r}");
    }
}
