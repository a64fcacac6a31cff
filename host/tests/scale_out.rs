//! `apex-host run --partition` and `apex-host merge` on the real binary and real plugins: the
//! shards of a CPU suite merged back give the same case set, ids and statuses as one unsharded
//! run, for N in {1, 2, 3, 7} (hash) and N = 3 (slice); shards of different plans or flags are
//! refused with one line; a missing shard makes the merged report `incomplete`; `auto` reads the
//! scheduler's variables.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{apex, command, read_json};

/// The suite: every CPU case of tile_ssm (quick, 2 samples) and four fixtures (ok, failed,
/// failed_accuracy), about 30 cases.
const SUITE: &[&str] = &[
    "run",
    "--backends",
    "cpu",
    "--fixtures",
    "--quick",
    "--iters",
    "2",
    "--warmup",
    "0",
    "--filter",
    "tile_ssm.*",
    "--filter",
    "example.saxpy",
    "--filter",
    "fixtures.panic",
    "--filter",
    "fixtures.wrong_result",
    "--filter",
    "fixtures.known_duration",
];

fn run_into(out: &Path, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = command(SUITE);
    cmd.args(extra)
        .arg("--output-dir")
        .arg(out)
        .env_remove("APEX_PARTITION");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("apex-host runs")
}

/// Case id → status of a report folder.
fn statuses(dir: &Path) -> BTreeMap<String, String> {
    let s = read_json(&dir.join("summary.json"));
    s["benchmarks"]
        .as_object()
        .expect("benchmarks")
        .iter()
        .map(|(id, c)| (id.clone(), c["status"].as_str().unwrap().to_string()))
        .collect()
}

/// `apex-host merge DIRS --output-dir OUT`.
fn merge(dirs: &[&Path], out: &Path) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["merge".as_ref()];
    args.extend(dirs.iter().map(|d| d.as_os_str()));
    args.extend(["--output-dir".as_ref(), out.as_os_str()]);
    support::apex_bare(args)
}

#[test]
fn merged_shards_are_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let out = run_into(&whole, &[], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let expected = statuses(&whole);
    assert!(
        expected.len() >= 25,
        "a suite worth sharding: {}",
        expected.len()
    );
    for status in ["ok", "failed", "failed_accuracy"] {
        assert!(
            expected.values().any(|s| s == status),
            "the suite has a {status} case"
        );
    }
    let whole_plan = read_json(&whole.join("summary.json"))["plan"].clone();

    for (strategy, total) in [
        ("hash", 1),
        ("hash", 2),
        ("hash", 3),
        ("hash", 7),
        ("slice", 3),
    ] {
        let shard_dirs: Vec<_> = (1..=total)
            .map(|m| tmp.path().join(format!("{strategy}-{total}-{m}")))
            .collect();
        let mut sizes = Vec::new();
        for (m, dir) in (1..=total).zip(&shard_dirs) {
            let spec = format!("{strategy}:{m}/{total}");
            let out = run_into(dir, &["--partition", &spec], &[]);
            assert!(
                matches!(out.status.code(), Some(0 | 1 | 4)),
                "{spec}: {}",
                support::stderr(&out)
            );
            let s = read_json(&dir.join("summary.json"));
            assert_eq!(
                s["plan"]["digest"], whole_plan["digest"],
                "{spec}: one plan"
            );
            assert_eq!(s["plan"]["partition"]["label"], spec.as_str());
            sizes.push(s["benchmarks"].as_object().unwrap().len());
        }
        assert_eq!(
            sizes.iter().sum::<usize>(),
            expected.len(),
            "{strategy} {total}: {sizes:?}"
        );

        let merged = tmp.path().join(format!("merged-{strategy}-{total}"));
        let dirs: Vec<&Path> = shard_dirs.iter().map(|d| d.as_path()).collect();
        let out = merge(&dirs, &merged);
        assert_eq!(
            out.status.code(),
            Some(1),
            "the merged report has the suite's failed cases: {}",
            support::stderr(&out)
        );
        assert_eq!(statuses(&merged), expected, "{strategy}:{total}");
        let s = read_json(&merged.join("summary.json"));
        assert_eq!(s["status"], "failed");
        assert_eq!(s["counts"]["total"], expected.len());
        assert_eq!(s["plan"]["merged_from"].as_array().unwrap().len(), total);
        assert!(s["plan"].get("partition").is_none());
        let some_case = s["benchmarks"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        assert!(
            some_case["ran_on"]["shard"]
                .as_str()
                .unwrap()
                .starts_with(strategy)
        );
        for file in [
            "env.json",
            "kernel_manifest.json",
            "summary.md",
            "replay_manifest.json",
        ] {
            assert!(merged.join(file).is_file(), "{file} written by merge");
        }
        let md = std::fs::read_to_string(merged.join("summary.md")).unwrap();
        assert!(
            md.contains(&format!("merged from {total} shard(s)")),
            "{md}"
        );
    }
}

#[test]
fn shards_of_different_plans_or_flags_are_refused_and_a_missing_shard_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let small = [
        "--filter",
        "fixtures.known_duration",
        "--filter",
        "example.saxpy",
    ];
    let run = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        let mut args: Vec<&str> = vec![
            "run",
            "--backends",
            "cpu",
            "--fixtures",
            "--quick",
            "--iters",
            "2",
            "--output-dir",
        ];
        let d = dir.to_str().unwrap().to_string();
        args.push(&d);
        args.extend(extra);
        let out = apex(&args);
        assert!(out.status.code().is_some(), "{}", support::stderr(&out));
        dir
    };
    let mut a1 = small.to_vec();
    a1.extend(["--partition", "slice:1/2"]);
    let one = run("one", &a1);
    let mut a2 = small.to_vec();
    a2.extend(["--partition", "slice:2/2"]);
    let two = run("two", &a2);
    let other = run(
        "other",
        &[
            "--filter",
            "fixtures.known_duration",
            "--partition",
            "slice:2/2",
        ],
    );
    let mut a3 = small.to_vec();
    a3.extend(["--partition", "slice:2/2", "--seed", "7"]);
    let reseeded = run("reseeded", &a3);

    let refused = |dirs: &[&Path], what: &str| {
        let out = merge(dirs, &tmp.path().join("merged"));
        assert_eq!(out.status.code(), Some(64), "{what}");
        let err = support::stderr(&out);
        assert!(err.contains(what), "{err}");
        err
    };
    for (dirs, what) in [
        ([one.as_path(), other.as_path()], "different plans"),
        (
            [one.as_path(), reseeded.as_path()],
            "different flags or suite files",
        ),
        ([one.as_path(), one.as_path()], "more than one shard"),
    ] {
        let err = refused(&dirs, what);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    refused(
        &[one.as_path(), &one.join("nowhere")],
        "nowhere/summary.json",
    );
    assert!(
        !tmp.path().join("merged").exists(),
        "a refused merge writes nothing"
    );

    let out = merge(&[one.as_path()], &tmp.path().join("partial"));
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let s = read_json(&tmp.path().join("partial/summary.json"));
    assert_eq!(s["status"], "incomplete");
    assert_eq!(s["counts"]["missing"], 1);
    let md = std::fs::read_to_string(tmp.path().join("partial/summary.md")).unwrap();
    assert!(md.contains("missing: 1 case(s)"), "{md}");

    let out = merge(&[one.as_path(), two.as_path()], &tmp.path().join("whole"));
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
}

#[test]
fn auto_takes_the_shard_from_the_scheduler_and_says_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("slurm");
    let out = run_into(
        &dir,
        &["--partition", "auto"],
        &[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 4)),
        "{}",
        support::stderr(&out)
    );
    let s = read_json(&dir.join("summary.json"));
    assert_eq!(s["plan"]["partition"]["label"], "hash:2/2");
    assert!(
        s["plan"]["partition"]["source"]
            .as_str()
            .unwrap()
            .contains("SLURM_ARRAY_TASK_ID=1")
    );

    let out = run_into(&tmp.path().join("none"), &["--partition", "auto"], &[]);
    assert_eq!(out.status.code(), Some(64));
    assert!(support::stderr(&out).contains("no scheduler variables"));
    let out = run_into(&tmp.path().join("bad"), &["--partition", "hash:3/2"], &[]);
    assert_eq!(out.status.code(), Some(64));
    assert!(support::stderr(&out).contains("--partition"));
}

#[test]
fn a_shard_is_gated_on_its_own_cases_and_the_merge_on_all() {
    let tmp = tempfile::tempdir().unwrap();
    let small = [
        "--filter",
        "fixtures.known_duration",
        "--filter",
        "example.saxpy",
        "--filter",
        "tile_ssm.forward",
    ];
    let run = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        let mut cmd = command(&[
            "run",
            "--backends",
            "cpu",
            "--fixtures",
            "--quick",
            "--iters",
            "3",
        ]);
        cmd.args(small)
            .args(extra)
            .arg("--output-dir")
            .arg(&dir)
            .env_remove("APEX_PARTITION");
        (dir, cmd.output().unwrap())
    };
    let (whole, out) = run("whole", &[]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    // A generous baseline from the whole run: the gate can only fail on missing metrics.
    let baseline = tmp.path().join("baseline.json");
    let summary = whole.join("summary.json");
    let emit = support::apex_bare([
        "baseline".as_ref(),
        "emit".as_ref(),
        "--ratio".as_ref(),
        "100".as_ref(),
        "--abs-ms".as_ref(),
        "1000".as_ref(),
        "--from".as_ref(),
        summary.as_os_str(),
        "--output".as_ref(),
        baseline.as_os_str(),
    ]);
    assert!(emit.status.success(), "{}", support::stderr(&emit));

    let b = baseline.to_str().unwrap();
    let (one, out) = run("one", &["--partition", "hash:1/2", "--compare", b]);
    assert!(out.status.success(), "shard 1: {}", support::stderr(&out));
    assert!(support::stderr(&out).contains("the gate checks this shard's"));
    let cmp = read_json(&one.join("compare_summary.json"));
    assert_eq!(cmp["counts"]["missing"], 0, "{cmp}");
    let (two, out) = run("two", &["--partition", "hash:2/2", "--compare", b]);
    assert!(out.status.success(), "shard 2: {}", support::stderr(&out));

    let merged = tmp.path().join("merged");
    let out = support::apex_bare([
        "merge".as_ref(),
        one.as_os_str(),
        two.as_os_str(),
        "--output-dir".as_ref(),
        merged.as_os_str(),
        "--compare".as_ref(),
        baseline.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let cmp = read_json(&merged.join("compare_summary.json"));
    let whole_cases = read_json(&whole.join("summary.json"))["benchmarks"]
        .as_object()
        .unwrap()
        .len();
    assert_eq!(cmp["counts"]["missing"], 0, "{cmp}");
    assert_eq!(
        cmp["counts"]["passed"].as_u64().unwrap() as usize,
        2 * whole_cases,
        "p50 and p95 of every case checked once: {cmp}"
    );
}
