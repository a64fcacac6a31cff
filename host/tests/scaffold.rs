//! `apex-host new NAME --cuda` on the real binary: in a scratch checkout (so the repository is
//! never modified) that uses this checkout's plugin-api and target folder, the new crate is
//! discovered, built and measured by `run --filter 'NAME.*'` with no edit; a second `new` with
//! the same name and a bad name are refused.

mod support;

use support::{read_json, stderr};

#[test]
fn a_scaffolded_plugin_is_discovered_built_and_measured_with_no_edit() {
    let ws = support::scratch_checkout();

    let apex = |args: &[&str]| support::apex_in(ws.path(), args);
    let out = apex(&["new", "scaffold_demo", "--cuda"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for file in [
        "Cargo.toml",
        "bench.yaml",
        "README.md",
        "src/lib.rs",
        "src/scale.rs",
    ] {
        assert!(
            ws.path().join("plugins/scaffold_demo").join(file).is_file(),
            "{file}"
        );
    }

    let reports = ws.path().join("reports");
    let out = apex(&[
        "run",
        "--quick",
        "--filter",
        "scaffold_demo.*",
        "--output-dir",
        reports.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = read_json(&reports.join("summary.json"));
    let cases = s["benchmarks"].as_object().unwrap();
    let cpu = &cases["scaffold_demo.scale/cpu/fp32/a=2.0,n=1048576"];
    assert_eq!(cpu["status"], "ok", "{cpu}");
    assert_eq!(cpu["accuracy"]["passed"], true);
    let cuda = &cases["scaffold_demo.scale/cuda/fp32/a=2.0,n=1048576"];
    // Measured where there is a GPU; skipped with the reason where there is none.
    assert!(
        cuda["status"] == "ok"
            || cuda["reason"]
                .as_str()
                .unwrap()
                .starts_with("cuda_unavailable"),
        "{cuda}"
    );

    let again = apex(&["new", "scaffold_demo"]);
    assert_eq!(again.status.code(), Some(64));
    assert!(stderr(&again).contains("already exists"));
    let bad = apex(&["new", "Scaffold-Demo"]);
    assert_eq!(bad.status.code(), Some(64));
    assert!(stderr(&bad).contains("is not a plugin name"));
}
