//! `--anchor-results` on the real binary (issue 17, item 4): a small real CPU run with an anchor
//! file written here puts the matching rows beside the case, with the ratio, in summary.json,
//! summary.md and index.html, lists the row that matches nothing, keeps the error row; `report
//! --anchor-results` re-renders with other files; a malformed file stops the run with exit 3 and
//! its file:line before anything is written.

mod support;

use support::{apex, apex_bare, read_json};

const SAXPY: &str = "example.saxpy/cpu/fp32/";

fn run_with(out_dir: &std::path::Path, anchors: &[&std::path::Path]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--iters",
        "5",
        "--filter",
        "example.saxpy",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ];
    for a in anchors {
        args.push("--anchor-results");
        args.push(a.to_str().unwrap());
    }
    apex(&args)
}

#[test]
fn a_run_sets_the_anchors_beside_the_case_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("saxpy_numpy.jsonl");
    std::fs::write(
        &anchors,
        concat!(
            r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {"n": 1048576, "a": 2}, "precision": "fp32", "backend": "cpu", "us_per_call": 2500.0, "gbps": 5.0, "device": "test cpu"}"#,
            "\n",
            r#"{"kernel": "example.saxpy", "impl": "torch_cpu", "params": {"n": 1048576}, "precision": "fp32", "backend": "cpu", "us_per_call": null, "error": "ImportError: no torch"}"#,
            "\n\n",
            r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {"n": 1024}, "precision": "fp32", "backend": "cpu", "ms": 0.004}"#,
            "\n",
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = run_with(&out_dir, &[&anchors]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));

    let summary = read_json(&out_dir.join("summary.json"));
    let case = support::case(&summary, SAXPY);
    let p50_ms = case["p50_ms"].as_f64().unwrap();
    let matched = case["anchors"].as_array().unwrap();
    assert_eq!(matched.len(), 2, "{matched:?}");
    let numpy = &matched[0];
    assert_eq!(numpy["impl"], "numpy");
    assert_eq!(numpy["source"], format!("{}:1", anchors.display()));
    let ratio = numpy["ratio"].as_f64().unwrap();
    assert!(
        (ratio - 2.5 / p50_ms).abs() <= 1e-9 * ratio,
        "ratio {ratio} is 2.5 ms / our p50 {p50_ms} ms"
    );
    let torch = &matched[1];
    assert_eq!(torch["error"], "ImportError: no torch");
    assert!(torch.get("ratio").is_none() && torch.get("us_per_call").is_none());
    let top = &summary["anchors"];
    assert_eq!(top["matched_rows"], 2);
    assert_eq!(top["files"][0]["rows"], 3);
    assert_eq!(top["files"][0]["sha256"].as_str().unwrap().len(), 64);
    let unmatched = top["unmatched"].as_array().unwrap();
    assert_eq!(unmatched.len(), 1);
    assert_eq!(unmatched[0]["source"], format!("{}:4", anchors.display()));
    assert_eq!(unmatched[0]["us_per_call"], 4.0, "ms converted to µs");

    let kernel_file = read_json(&out_dir.join("kernels/example.saxpy.json"));
    assert!(
        kernel_file.to_string().contains("\"anchors\""),
        "{kernel_file}"
    );

    let md = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(md.contains("## Side by side with anchors"), "{md}");
    let row = md
        .lines()
        .find(|l| l.contains("| numpy |") && l.contains(SAXPY))
        .unwrap_or_else(|| panic!("no side-by-side row in:\n{md}"));
    assert!(row.contains("| 2.500 |") && row.contains("×"), "{row}");
    assert!(md.contains("error: ImportError: no torch"), "{md}");
    assert!(md.contains("1 anchor row(s) matched no case"), "{md}");

    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(
        html.contains("id=\"anchors\">Side by side with anchors"),
        "no section"
    );
    assert!(
        html.contains("<td>numpy</td><td class=\"n\">2.500</td>"),
        "no anchor row"
    );
    assert!(html.contains("aria-label=\"ratio "), "no ratio bar");

    // `report --anchor-results` renders other anchors; summary.json stays as the run wrote it.
    let other = dir.path().join("other.jsonl");
    std::fs::write(
        &other,
        r#"{"kernel": "example.saxpy", "impl": "rayon_reference", "params": {}, "precision": "fp32", "backend": "cpu", "us_per_call": 100.0}"#,
    )
    .unwrap();
    let before = std::fs::read(out_dir.join("summary.json")).unwrap();
    let out = apex_bare([
        "report",
        "--input-dir",
        out_dir.to_str().unwrap(),
        "--anchor-results",
        other.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let md = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(
        md.contains("| rayon_reference |") && !md.contains("| numpy |"),
        "{md}"
    );
    assert_eq!(std::fs::read(out_dir.join("summary.json")).unwrap(), before);

    // Without the flag, `report` shows the anchors summary.json holds.
    let out = apex_bare(["report", "--input-dir", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let md = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(md.contains("| numpy |"), "{md}");
}

#[test]
fn a_malformed_anchor_file_stops_the_run_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    std::fs::write(
        &good,
        r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {}, "precision": "fp32", "backend": "cpu", "us_per_call": 1.0}"#,
    )
    .unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        concat!(
            r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {}, "precision": "fp32", "backend": "cpu", "us_per_call": 1.0}"#,
            "\n",
            r#"{"kernel": "example.saxpy", "impl": "numpy", "params": {}, "precision": "fp64", "backend": "cpu", "us_per_call": 1.0}"#,
            "\n",
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = run_with(&out_dir, &[&good, &bad]);
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(
        err.contains(&format!("`{}:2`: `precision` is `fp64`", bad.display())),
        "{err}"
    );
    assert!(!out_dir.join("summary.json").exists(), "nothing ran");

    let not_json = dir.path().join("not_json.jsonl");
    std::fs::write(&not_json, "{\"kernel\": \"example.saxpy\",\n").unwrap();
    let out = run_with(&out_dir, &[&not_json]);
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains(&format!("`{}:1:", not_json.display())),
        "{}",
        support::stderr(&out)
    );
}
