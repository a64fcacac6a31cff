//! Ctrl-C during `apex-host run` (issue 11, finding 3): the run stops within 2 s, reports the
//! cases that finished with status `interrupted` and exit code 130, and leaves no worker (nor
//! anything a worker started) behind.

mod support;

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{command, one_process_config, read_json, wait_for};

/// One line of `/proc/<pid>/stat`.
#[derive(Debug, Clone)]
struct Proc {
    pid: i32,
    comm: String,
    state: char,
    ppid: i32,
    pgrp: i32,
}

fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // The process may be gone between the listing and the read.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.len() < 3 {
            continue;
        }
        out.push(Proc {
            pid,
            comm: stat[open + 1..close].to_string(),
            state: rest[0].chars().next().unwrap_or('?'),
            ppid: rest[1].parse().unwrap_or(0),
            pgrp: rest[2].parse().unwrap_or(0),
        });
    }
    out
}

/// Every live descendant of `root`.
fn descendants(all: &[Proc], root: i32) -> Vec<Proc> {
    let mut found: Vec<Proc> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in all.iter().filter(|p| p.ppid == parent && p.state != 'Z') {
            frontier.push(p.pid);
            found.push(p.clone());
        }
    }
    found
}

fn finished_lines(out_dir: &Path) -> usize {
    std::fs::read_dir(out_dir.join(".partial"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cases.jsonl")).ok())
        .map(|t| t.lines().count())
        .sum()
}

#[test]
fn ctrl_c_after_the_first_case_reports_it_exits_130_and_leaves_no_worker() {
    let dir = tempfile::tempdir().unwrap();
    let config = one_process_config();
    let stderr_path = dir.path().join("stderr.txt");
    let out_dir = dir.path().join("reports");
    // known_duration finishes first; spawn_and_hang then hangs in a worker that has started a
    // child process of its own (`sleep`), which only a kill of the worker's group ends.
    let mut host = command(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--fixtures",
        "--timeout",
        "120",
        "--config-dir",
        config.path().to_str().unwrap(),
        "--filter",
        "fixtures.known_duration",
        "--filter",
        "fixtures.spawn_and_hang",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ])
    // The host leads its own group, as a shell job does: the Ctrl-C below goes to that group.
    .process_group(0)
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(&stderr_path).unwrap())
    .spawn()
    .unwrap();
    let host_pid = i32::try_from(host.id()).unwrap();

    let deadline = Instant::now() + Duration::from_secs(120);
    let workers = loop {
        let running = descendants(&processes(), host_pid);
        if finished_lines(&out_dir) >= 1 && running.iter().any(|p| p.comm == "sleep") {
            break running;
        }
        if Instant::now() > deadline {
            let _ = host.kill();
            panic!(
                "no finished case and hanging worker within 120 s; stderr:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let groups: BTreeSet<i32> = workers.iter().map(|p| p.pgrp).collect();
    assert!(
        !groups.contains(&host_pid),
        "each worker leads its own process group: {workers:?}"
    );

    let sent = Instant::now();
    // SAFETY: kill(2) on the host's process group, which this test created.
    assert_eq!(unsafe { libc::kill(-host_pid, libc::SIGINT) }, 0);
    let status = wait_for(&mut host, Duration::from_secs(2));
    let took = sent.elapsed();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let Some(status) = status else {
        // SAFETY: as above; the host ignored the interrupt, end it and its workers.
        unsafe { libc::kill(-host_pid, libc::SIGKILL) };
        for g in &groups {
            // SAFETY: as above, for the worker groups found under the host.
            unsafe { libc::kill(-g, libc::SIGKILL) };
        }
        panic!("the run was still going 2 s after Ctrl-C; stderr:\n{stderr}");
    };
    assert_eq!(
        status.code(),
        Some(130),
        "exit code 130 (interrupted) after {took:?}; stderr:\n{stderr}"
    );

    let left: Vec<Proc> = processes()
        .into_iter()
        .filter(|p| groups.contains(&p.pgrp) && p.state != 'Z')
        .collect();
    assert!(
        left.is_empty(),
        "no worker or worker child outlives the run: {left:?}"
    );

    let s = read_json(&out_dir.join("summary.json"));
    assert_eq!(s["status"], "interrupted", "{stderr}");
    let ids: Vec<&String> = s["benchmarks"].as_object().unwrap().keys().collect();
    assert!(
        !ids.is_empty()
            && ids
                .iter()
                .all(|id| id.starts_with("fixtures.known_duration/")),
        "the finished cases, and only they, are reported: {ids:?}"
    );
    for (id, c) in s["benchmarks"].as_object().unwrap() {
        assert_eq!(c["status"], "ok", "{id}");
    }
    assert_eq!(s["counts"]["not_run"], 1, "{}", s["counts"]);
    assert_eq!(
        s["counts"]["total"].as_u64().unwrap(),
        ids.len() as u64 + 1,
        "total counts every planned case"
    );
    assert!(
        out_dir
            .join("kernels/fixtures.known_duration.json")
            .is_file()
    );
    assert!(
        !out_dir
            .join("kernels/fixtures.spawn_and_hang.json")
            .exists(),
        "no file for the case that did not finish"
    );
    assert!(
        !out_dir.join(".partial").exists(),
        "the partial folder is removed once the report is written"
    );
    assert!(
        stderr.contains("interrupted: writing the report of the"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_before_any_case_finished_keeps_the_previous_report() {
    let dir = tempfile::tempdir().unwrap();
    let config = one_process_config();
    let out_dir = dir.path();
    let before = "{\"previous\": true}\n";
    std::fs::write(out_dir.join("summary.json"), before).unwrap();
    let mut host = command(&[
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--fixtures",
        "--timeout",
        "120",
        "--config-dir",
        config.path().to_str().unwrap(),
        "--filter",
        "fixtures.hang",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let host_pid = i32::try_from(host.id()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !descendants(&processes(), host_pid)
        .iter()
        .any(|p| p.comm == "apex-host")
    {
        assert!(Instant::now() < deadline, "no worker started within 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on the host this test started (SIGTERM: the other interrupt signal).
    assert_eq!(unsafe { libc::kill(host_pid, libc::SIGTERM) }, 0);
    let status = wait_for(&mut host, Duration::from_secs(2));
    if status.is_none() {
        let _ = host.kill();
    }
    let out = host.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted before any case finished"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("summary.json")).unwrap(),
        before,
        "the previous report is untouched"
    );
    assert!(
        !out_dir.join(".partial").exists(),
        "nothing of this run is left"
    );
}
