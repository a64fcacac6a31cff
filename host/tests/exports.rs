//! `--format` on the real binary: `run` writes results.csv, junit.xml, bmf.json and
//! github-action-benchmark.json beside summary.json (and lists them in the replay manifest), with
//! every case's status where the format has one; `report --format` writes the same files again
//! from summary.json alone. (The gate's failures in junit.xml: `gate_cli.rs`.)

mod support;

use support::{apex, apex_bare as bare, read_json};

/// Validates `file` against `docs/schemas/junit.xsd` with xmllint (Debian's libxml2-utils, which
/// `.ci/run` installs and then requires through `APEX_REQUIRE_XMLLINT`).
fn validate_junit(file: &std::path::Path) {
    let xsd = support::root().join("docs/schemas/junit.xsd");
    let out = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&xsd)
        .arg(file)
        .output();
    match out {
        Ok(out) => assert!(
            out.status.success(),
            "junit.xml does not validate against {}: {}",
            xsd.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => assert!(
            std::env::var_os("APEX_REQUIRE_XMLLINT").is_none(),
            "xmllint is required here (APEX_REQUIRE_XMLLINT) but cannot run: {e}; install libxml2-utils"
        ),
    }
}

#[test]
fn run_and_report_write_every_export() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--fixtures",
        "--quick",
        "--iters",
        "3",
        "--filter",
        "example.saxpy",
        "--filter",
        "fixtures.panic",
        "--filter",
        "fixtures.wrong_result",
        "--filter",
        "fixtures.known_duration",
        "--format",
        "csv,junit",
        "--format",
        "bmf",
        "--format",
        "github-action-benchmark",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let summary = read_json(&out_dir.join("summary.json"));
    let cases = summary["benchmarks"].as_object().unwrap();
    let ok: Vec<&String> = cases
        .iter()
        .filter(|(_, c)| c["status"] == "ok")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ok.len(), 2);

    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), cases.len() + 1);
    assert!(csv.contains(",failed_accuracy,") && csv.contains(",failed,"));

    let junit = std::fs::read_to_string(out_dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains(&format!("tests=\"{}\" failures=\"2\"", cases.len())),
        "{junit}"
    );
    assert!(junit.contains("type=\"failed_accuracy\"") && junit.contains("type=\"failed\""));
    validate_junit(&out_dir.join("junit.xml"));

    let bmf = read_json(&out_dir.join("bmf.json"));
    let names: Vec<&String> = bmf.as_object().unwrap().keys().collect();
    assert_eq!(names, ok, "one BMF benchmark per ok case");
    let saxpy = ok
        .iter()
        .find(|id| id.starts_with("example.saxpy"))
        .unwrap();
    let p50_ns = cases[saxpy.as_str()]["p50_ms"].as_f64().unwrap() * 1e6;
    let latency = bmf[saxpy.as_str()]["latency"]["value"].as_f64().unwrap();
    assert!((latency - p50_ns).abs() <= 1e-9 * p50_ns);
    assert!(bmf[saxpy.as_str()]["throughput"]["value"].as_f64().unwrap() > 0.0);

    let gab = read_json(&out_dir.join("github-action-benchmark.json"));
    assert_eq!(gab.as_array().unwrap().len(), ok.len());

    let manifest = std::fs::read_to_string(out_dir.join("replay_manifest.json")).unwrap();
    assert!(manifest.contains("bmf.json") && manifest.contains("github-action-benchmark.json"));

    // `report --format` renders them again from summary.json alone.
    for f in ["results.csv", "junit.xml", "bmf.json"] {
        std::fs::remove_file(out_dir.join(f)).unwrap();
    }
    let out = bare([
        "report",
        "--input-dir",
        out_dir.to_str().unwrap(),
        "--format",
        "csv,junit,bmf",
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert_eq!(
        std::fs::read_to_string(out_dir.join("results.csv")).unwrap(),
        csv
    );
    assert!(out_dir.join("junit.xml").is_file() && out_dir.join("bmf.json").is_file());

    let out = bare([
        "report",
        "--input-dir",
        out_dir.to_str().unwrap(),
        "--format",
        "xml",
    ]);
    assert_eq!(out.status.code(), Some(64));
    assert!(
        support::stderr(&out).contains("expected one of: csv, junit, bmf, github-action-benchmark")
    );
}
