//! Two commands writing one output directory (issue 11, finding 4): while a run holds it, a second
//! run waits and then runs (or, with `--no-wait`, refuses with exit code 75 and says who holds it),
//! `report` and `compare` into it do the same, and the final files are the last run's alone.
//!
//! The holding run measures `fixtures.known_duration`, then hangs in `fixtures.spawn_and_hang` until the
//! test interrupts it, so it holds the lock as long as the test needs, whatever the machine's load.

mod support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::{command, one_process_config, read_json, root, stderr, wait_for};

/// A run that holds `out_dir` until [`stop_holder`]: one case, then `fixtures.spawn_and_hang`
/// (kernels run in id order).
fn start_holder(out_dir: &Path, config: &Path) -> Child {
    command(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--fixtures",
        "--timeout",
        "120",
        "--config-dir",
        config.to_str().unwrap(),
        "--filter",
        "fixtures.known_duration",
        "--filter",
        "fixtures.spawn_and_hang",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap()
}

/// Waits until `pid` has written itself into the lock file of `out_dir`.
fn wait_until_held_by(out_dir: &Path, pid: u32, holder: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(out_dir.join(".apex-host.lock")).unwrap_or_default();
        if serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v["pid"].as_u64() == Some(u64::from(pid)))
        {
            return;
        }
        if Instant::now() > deadline || holder.try_wait().unwrap().is_some() {
            let _ = holder.kill();
            panic!("the first run did not take the lock: {text:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `apex-host ARGS` for the commands that take no discovery flags (`report`, `compare`).
fn bare(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_apex-host"))
        .args(args)
        .output()
        .unwrap()
}

/// Once the holder's first case is final, interrupts it: it writes that case (status
/// `interrupted`) and exits 130, releasing the lock.
fn stop_holder(holder: &mut Child, out_dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_dir(out_dir.join(".partial"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| std::fs::read_to_string(e.path().join("cases.jsonl")).is_ok_and(|t| !t.is_empty()))
    {
        assert!(Instant::now() < deadline, "the holder finished no case");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(holder.id()).unwrap();
    // SAFETY: kill(2) on the process this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = wait_for(holder, Duration::from_secs(5));
    if status.is_none() {
        let _ = holder.kill();
    }
    assert_eq!(status.and_then(|s| s.code()), Some(130), "the holder stops");
}

/// A quick run of `example.saxpy` (not the holder's kernels).
fn quick_run_args<'a>(out_dir: &'a str, config: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--config-dir",
        config,
        "--filter",
        "example.saxpy",
        "--output-dir",
        out_dir,
    ]
}

#[test]
fn a_second_run_refuses_with_no_wait_or_waits_and_the_files_are_the_last_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let config = one_process_config();
    let out_dir = dir.path().join("reports");
    let (out, cfg) = (out_dir.to_str().unwrap(), config.path().to_str().unwrap());
    // A previous run's summary, so `report` and `compare` have a CURRENT to read.
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::copy(
        root().join("host/tests/fixtures/attest/reports/summary.json"),
        out_dir.join("summary.json"),
    )
    .unwrap();

    let mut first = start_holder(&out_dir, config.path());
    let first_pid = first.id();
    wait_until_held_by(&out_dir, first_pid, &mut first);

    // --no-wait: refused at once, naming the holder; nothing of this run is written.
    let mut args = quick_run_args(out, cfg);
    args.push("--no-wait");
    let refused = support::apex(&args);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(75), "{err}");
    assert!(
        err.contains(&format!("the run (pid {first_pid}")) && err.contains(".apex-host.lock"),
        "{err}"
    );
    let partials: Vec<String> = std::fs::read_dir(out_dir.join(".partial"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        partials
            .iter()
            .all(|p| p.ends_with(&format!("-{first_pid}"))),
        "only the holder's partial folder: {partials:?}"
    );

    // `report` and `compare` into the folder refuse the same way.
    let report = bare(&["report", "--input-dir", out, "--no-wait"]);
    assert_eq!(report.status.code(), Some(75), "{}", stderr(&report));
    let summary = out_dir.join("summary.json");
    let baseline = root().join("host/tests/fixtures/attest/baseline.json");
    let compare = bare(&[
        "compare",
        summary.to_str().unwrap(),
        baseline.to_str().unwrap(),
        "--no-wait",
    ]);
    assert_eq!(compare.status.code(), Some(75), "{}", stderr(&compare));
    assert!(!out_dir.join("summary.md").exists(), "report wrote nothing");
    assert!(
        !out_dir.join("compare_summary.json").exists(),
        "compare wrote nothing"
    );

    // Without --no-wait: waits (and says for whom), then runs once the first run is done.
    let stderr_path = dir.path().join("second-stderr.txt");
    let mut second = command(&quick_run_args(out, cfg))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(&stderr_path)
        .unwrap_or_default()
        .contains("waiting for the run")
    {
        assert!(Instant::now() < deadline, "the second run never waited");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        second.try_wait().unwrap().is_none(),
        "the second run waits while the first holds the folder"
    );
    stop_holder(&mut first, &out_dir);
    let first_summary = read_json(&out_dir.join("summary.json"));
    let status = second.wait().unwrap();
    let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!("waiting for the run (pid {first_pid}")),
        "the waiting run says whom it waits for: {err}"
    );

    // The folder holds the second run's report alone: its cases, its kernel files, one
    // timestamp across the files written from its summary; the first run's report, written
    // before it, is gone whole.
    assert_eq!(first_summary["status"], "interrupted", "{first_summary}");
    let s = read_json(&out_dir.join("summary.json"));
    assert_eq!(s["status"], "ok");
    let ids: Vec<&String> = s["benchmarks"].as_object().unwrap().keys().collect();
    assert!(
        !ids.is_empty() && ids.iter().all(|id| id.starts_with("example.saxpy/")),
        "{ids:?}"
    );
    let kernel_files: Vec<String> = std::fs::read_dir(out_dir.join("kernels"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kernel_files, ["example.saxpy.json"]);
    let k = read_json(&out_dir.join("kernels/example.saxpy.json"));
    assert_eq!(k["timestamp_utc"], s["timestamp_utc"]);
    assert!(!out_dir.join(".partial").exists());
}

#[test]
fn ctrl_c_while_waiting_for_the_lock_exits_130_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = one_process_config();
    let out_dir = dir.path().join("reports");
    let (out, cfg) = (out_dir.to_str().unwrap(), config.path().to_str().unwrap());
    let mut first = start_holder(&out_dir, config.path());
    let first_pid = first.id();
    wait_until_held_by(&out_dir, first_pid, &mut first);

    let stderr_path = dir.path().join("stderr.txt");
    let mut second = command(&quick_run_args(out, cfg))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&stderr_path)
        .unwrap_or_default()
        .contains("waiting for the run")
    {
        assert!(Instant::now() < deadline, "the second run never waited");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second_pid = i32::try_from(second.id()).unwrap();
    // SAFETY: kill(2) on the process this test started.
    assert_eq!(unsafe { libc::kill(second_pid, libc::SIGINT) }, 0);
    let status = wait_for(&mut second, Duration::from_secs(2));
    if status.is_none() {
        let _ = second.kill();
    }
    let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{err}");
    assert!(err.contains("interrupted while waiting"), "{err}");
    let partials: Vec<_> = std::fs::read_dir(out_dir.join(".partial"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(&format!("-{second_pid}")))
        .collect();
    assert!(partials.is_empty(), "the waiting run wrote nothing");
    stop_holder(&mut first, &out_dir);
}
