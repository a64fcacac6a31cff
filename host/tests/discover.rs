//! `apex-host discover` against the real plugins and the load-time fixtures (user story 3).

#![expect(
    clippy::print_stderr,
    reason = "a test that does not apply on this machine says so on stderr"
)]

mod support;

use support::{apex, stdout};

#[test]
fn verbose_discover_names_every_fixture_failure_on_one_line() {
    let out = apex(&["discover", "--verbose", "--fixtures"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", support::stderr(&out));
    let failed: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("FAILED"))
        .collect();
    let expect = [
        ("not_a_plugin", "not an apex plugin"),
        (
            "wrong_abi",
            "incompatible plugin API: built against apex-plugin-api 1.0.0",
        ),
        ("wrong_layout", "incompatible ABI layout"),
        (
            "panic_on_register",
            "failed while registering its kernels: plugin panicked",
        ),
        ("duplicate_a", "duplicate kernel id `fixtures.duplicate`"),
        ("duplicate_b", "duplicate kernel id `fixtures.duplicate`"),
    ];
    for (lib, reason) in expect {
        assert!(
            failed.iter().any(|l| l.contains(lib) && l.contains(reason)),
            "no one-line failure for {lib} ({reason}) in:\n{}",
            failed.join("\n")
        );
    }
    // Healthy plugins still load, and the twins' unique kernels survive the duplicate.
    for kernel in [
        "example.saxpy",
        "fixtures.known_duration",
        "tile_ops.tile_pack",
        "fixtures.unique_a",
        "fixtures.unique_b",
    ] {
        assert!(text.contains(kernel), "{kernel} missing from:\n{text}");
    }
    assert!(
        !text.contains("fixtures.duplicate "),
        "the duplicate id must not be listed as a kernel"
    );
}

#[test]
fn without_a_gpu_cuda_skip_conditions_evaluate_to_skipped_with_the_reason() {
    if std::path::Path::new("/dev/nvidia0").exists() {
        eprintln!("skipped: this machine has a GPU");
        return;
    }
    let out = apex(&["discover", "--verbose"]);
    let text = stdout(&out);
    assert!(
        text.contains("cuda_unavailable: libcuda.so.1 not found"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("skip[cuda/") && l.contains("-> skip")),
        "{text}"
    );
}

#[test]
fn json_discover_has_plugins_failures_facts_and_kernels() {
    let out = apex(&["discover", "--json", "--fixtures"]);
    assert!(out.status.success());
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("discover --json is JSON");
    for key in [
        "scanned_paths",
        "plugins",
        "failures",
        "facts",
        "kernels",
        "config_files",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    let pack = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == "tile_ops.tile_pack")
        .unwrap();
    assert_eq!(pack["axes"]["tile_size"], serde_json::json!([8, 16, 32]));
    assert!(
        pack["config"].as_array().is_some_and(|c| !c.is_empty()),
        "provenance is listed"
    );
}

/// Issue 11 item 2: a `tile_ops.*` sweep of `tile_size` and `kmax` gives FusionGate (which has no
/// tiles) no such parameter and no duplicate case, and `discover --verbose` says what it ignored.
#[test]
fn a_glob_sweep_gives_each_kernel_only_the_parameters_it_declares() {
    let out = apex(&["discover", "--json"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("discover --json is JSON");
    let kernel = |id: &str| {
        doc["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["id"] == id)
            .unwrap_or_else(|| panic!("{id} not discovered"))
            .clone()
    };
    let gate = kernel("tile_ops.fusion_gate");
    let axes = gate["axes"].as_object().unwrap();
    assert!(
        !axes.contains_key("tile_size") && !axes.contains_key("kmax"),
        "{axes:?}"
    );
    let ignored: Vec<&str> = gate["ignored_params"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        ignored
            .iter()
            .any(|l| l.starts_with("tile_size=[8,16,32] from ") && l.contains("bench.yaml:")),
        "{ignored:?}"
    );
    // Its cases are the distinct (backend, precision, map) combinations of the plugin's sweeps:
    // the fixed profile (cpu+cuda × fp16+fp32 at 128², 4) and the CUDA-only large profile
    // (fp16+fp32 at 256², 2), where each sweep of tiles or K used to add copies.
    assert_eq!(gate["cases"], 6, "{gate}");
    let pack = kernel("tile_ops.tile_pack");
    assert!(pack["ignored_params"].as_array().unwrap().is_empty());

    let text = stdout(&apex(&["discover", "--verbose"]));
    assert!(
        text.lines()
            .any(|l| l.contains("ignored tile_size=[8,16,32] from ")
                && l.contains("(not a parameter of this kernel)")),
        "{text}"
    );
}

/// Issue 11 item 3 on the real binary: the poisson plugin's bench.yaml writes the seed's
/// `grid_size: [64, 64, 64]`, which is one 3-D grid (a shape value), not a sweep of three sizes.
#[test]
fn the_seeds_grid_size_list_is_one_shape() {
    let out = apex(&["discover", "--json"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("discover --json is JSON");
    let mg = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == "poisson.mg")
        .expect("poisson.mg discovered");
    let grids = mg["axes"]["grid_size"]
        .as_array()
        .expect("a grid_size axis");
    assert!(
        grids.contains(&serde_json::json!([64, 64, 64])),
        "{grids:?}"
    );
    assert!(
        grids.iter().all(|g| g.is_array()),
        "every grid_size value is a shape: {grids:?}"
    );
}
