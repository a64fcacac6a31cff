//! What a user sees when things go wrong around the run itself: the host killed with SIGKILL in
//! the middle of a run, a broken config, a `--filter` that matches nothing, CUDA cases on a
//! machine without a GPU, and a reader that closes the pipe before the run's last line.

#![expect(
    clippy::print_stderr,
    reason = "a test that does not apply on this machine says so on stderr"
)]

mod support;

use std::time::{Duration, Instant};

use support::{apex, read_json, root, stderr};

#[test]
fn sigkill_mid_run_keeps_the_previous_report_and_the_finished_cases() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let first = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "example.saxpy",
        "--output-dir",
        out_dir,
    ]);
    assert!(first.status.success(), "{}", stderr(&first));
    let before = std::fs::read(dir.path().join("summary.json")).unwrap();

    // abort finishes (as a crashed case), then hang holds the run until the host is killed. Kernels
    // run in id order and one worker process per case, so abort is final before hang starts.
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("10-one-process.yaml"),
        "kernel: '*'\nprotocol: {processes: 1}\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_apex-host"))
        .args([
            "run",
            "--backends",
            "cpu",
            "--quick",
            "--fixtures",
            "--timeout",
            "60",
        ])
        .arg("--config-dir")
        .arg(config.path())
        .args([
            "--filter",
            "fixtures.hang",
            "--filter",
            "fixtures.abort",
            "--output-dir",
            out_dir,
        ])
        .arg("--root")
        .arg(root())
        .env("CI", "1")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial = dir.path().join(".partial");
    let deadline = Instant::now() + Duration::from_secs(60);
    let cases_file = loop {
        let found = std::fs::read_dir(&partial)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("cases.jsonl"))
            .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().count() >= 1));
        if let Some(p) = found {
            break p;
        }
        assert!(Instant::now() < deadline, "no case finished within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    assert_eq!(
        std::fs::read(dir.path().join("summary.json")).unwrap(),
        before,
        "previous summary.json intact"
    );
    read_json(&dir.path().join("summary.json"));
    let finished: Vec<serde_json::Value> = std::fs::read_to_string(&cases_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every finished line is a whole case"))
        .collect();
    assert_eq!(
        finished.len(),
        1,
        "only the case that finished: {finished:?}"
    );
    assert_eq!(finished[0]["key"]["kernel"], "fixtures.abort");
    assert_eq!(finished[0]["status"], "failed");
}

#[test]
fn a_closed_stdout_and_stderr_leave_the_reports_and_the_exit_code_as_they_were() {
    // `apex-host run … 2>&1 | head -1` closes the pipe before the final table: the run still
    // writes its files and exits with its own code (here 0), where `println!` panicked with 101.
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::command(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "example.saxpy",
        "--output-dir",
        dir.path().to_str().unwrap(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    let summary = read_json(&dir.path().join("summary.json"));
    assert_eq!(summary["status"], "ok");
    assert!(dir.path().join("summary.md").is_file());
}

#[test]
fn a_filter_that_matches_nothing_says_so_and_names_the_closest_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "tile_ops.tile_pak",
        "--output-dir",
        dir.path().to_str().unwrap(),
    ]);
    // Nothing ran: exit 4, and the reason names the flag, the glob and what it could match.
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--filter 'tile_ops.tile_pak': no case matches")
            && err.contains("did you mean `tile_ops.tile_pack`?"),
        "{err}"
    );
}

#[test]
fn a_skip_condition_that_cannot_be_evaluated_stops_the_run_with_exit_3() {
    // Issue 11, finding 1: every case used to be skipped (`skip_condition_error`) and the run
    // exited 0, so a CI gate over such a config measured nothing and passed.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("20-cuda.yaml"),
        "kernel: example.saxpy\nskip_conditions:\n  - reason: r\n    check: \"cuda.device_count < \\\"two\\\"\"\n",
    )
    .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--filter",
        "example.*",
        "--config-dir",
        dir.path().to_str().unwrap(),
        "--output-dir",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("20-cuda.yaml:4:"),
        "file and line named: {err}"
    );
    assert!(err.contains("cannot compare number with string"), "{err}");
    assert!(
        !out_dir.path().join("summary.json").exists(),
        "nothing ran, nothing was written"
    );
}

#[test]
fn a_config_error_stops_the_run_with_a_located_message_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("10-bad.yaml"),
        "kernel: example.saxpy\nproblem_size:\n  n: [1024, \"many\"]\n",
    )
    .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = apex(&[
        "run",
        "--backends",
        "cpu",
        "--config-dir",
        dir.path().to_str().unwrap(),
        "--output-dir",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("10-bad.yaml:3:"), "file and line named: {err}");
    assert!(err.contains("problem_size.n"), "key path named: {err}");
    assert!(!out_dir.path().join("summary.json").exists(), "nothing ran");
}

#[test]
fn without_a_gpu_every_cuda_case_is_skipped_with_its_reason_and_the_run_succeeds() {
    if std::path::Path::new("/dev/nvidia0").exists() {
        eprintln!("skipped: this machine has a GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = apex(&[
        "run",
        "--backends",
        "cuda",
        "--filter",
        "tile_ops.tile_pack",
        "--output-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = read_json(&dir.path().join("summary.json"));
    let cases = s["benchmarks"].as_object().unwrap();
    assert!(!cases.is_empty());
    for (id, c) in cases {
        assert_eq!(c["status"], "skipped", "{id}");
        assert_eq!(
            c["reason"], "cuda_unavailable: libcuda.so.1 not found",
            "{id}"
        );
        assert!(
            c.get("p50_ms").is_none() && c["timing"].is_null(),
            "{id}: nothing faked"
        );
    }
}
