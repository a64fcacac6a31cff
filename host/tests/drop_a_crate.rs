//! User story 1: a crate made from the documented template, dropped into `plugins/`, appears in
//! `discover` and in the plan of `run` with no other change. The checkout is a scratch workspace
//! (so the repository is never modified) that uses this checkout's plugin-api and target folder.

mod support;

use std::path::Path;

use support::{read_json, root, stderr, stdout};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_template_copy_is_discovered_built_and_planned() {
    let ws = support::scratch_checkout();
    let main = root();
    // The documented steps: copy the template, rename the package and the kernel id.
    let crate_dir = ws.path().join("plugins/my_family");
    copy_dir(&main.join("plugins/example-saxpy"), &crate_dir);
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        manifest.replace("apex-plugin-example-saxpy", "apex-plugin-my-family"),
    )
    .unwrap();
    let src = std::fs::read_to_string(crate_dir.join("src/saxpy.rs")).unwrap();
    std::fs::write(
        crate_dir.join("src/saxpy.rs"),
        src.replace("\"example.saxpy\"", "\"my_family.my_op\""),
    )
    .unwrap();
    let bench = std::fs::read_to_string(crate_dir.join("bench.yaml")).unwrap();
    std::fs::write(
        crate_dir.join("bench.yaml"),
        bench.replace("example.saxpy", "my_family.my_op"),
    )
    .unwrap();

    let apex = |args: &[&str]| support::apex_in(ws.path(), args);
    let out = apex(&["discover", "--verbose"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("my_family.my_op"),
        "the new kernel is discovered:\n{text}"
    );
    assert!(
        text.contains("built: apex-plugin-my-family"),
        "and was built by discovery:\n{text}"
    );

    let reports = ws.path().join("reports");
    let out = apex(&["run", "--quick", "--output-dir", reports.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = read_json(&reports.join("summary.json"));
    let ids: Vec<&String> = s["benchmarks"].as_object().unwrap().keys().collect();
    assert!(
        ids.iter()
            .any(|id| id.starts_with("my_family.my_op/cpu/fp32/")),
        "{ids:?}"
    );
}
