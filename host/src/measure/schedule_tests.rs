//! The device phase of [`run_plan`] against a stand-in worker executable (a shell script that
//! answers `__worker` with a prepared reply after a pause, and `__probe-device`), so the pool's
//! rules are checked with real processes on a machine without a GPU: one case per GPU at a
//! time, GPUs in parallel, a failing GPU taken out while the other finishes the queue, one
//! session worker per GPU while the cases pass and a new one after a failure.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::config::ResolvedCase;
use crate::measure::wire::{RawMode, WorkerReply};
use crate::model::{AccuracyBlock, KernelInfo, ParamMap, ProtocolSettings};
use apex_plugin_api::{Backend, Precision, Tolerance};

fn ok_reply() -> WorkerReply {
    WorkerReply {
        wire_version: WIRE_VERSION,
        modes: vec![RawMode {
            mode: "batch".into(),
            calls_per_sample: 10,
            graph: false,
            per_call_ms: vec![1.0, 1.1, 0.9],
            samples_per_process: vec![3],
            warmup_calls: 1,
            stopped_by: "fixed".into(),
            elapsed_s: 0.01,
            cache: None,
            buffer_sets: None,
            short_holds: None,
        }],
        accuracy: Some(AccuracyBlock {
            passed: true,
            elements: 1,
            rmse: 0.0,
            max_abs_error: 0.0,
            max_rel_error: 0.0,
            mismatch_ratio: 0.0,
            non_finite: 0,
            tolerance: Default::default(),
            note: None,
        }),
        ..WorkerReply::default()
    }
}

/// A stand-in `apex-host`: `__worker` logs `start <device> <ns>` and `end <device> <ns>` to
/// `log`, sleeps 0.15 s, and replies `ok.json`, or `fault.json` on the devices in `faulty`;
/// `__worker --session` does the same for each folder read from its input (logging `<pid>` to
/// `sessions` when it starts); `__probe-device` succeeds unless the device is in `lost`.
fn fake_exe(dir: &Path, faulty: &[u32], lost: &[u32]) -> PathBuf {
    let ok = dir.join("ok.json");
    std::fs::write(&ok, serde_json::to_string(&ok_reply()).unwrap()).unwrap();
    let fault = dir.join("fault.json");
    let reply = WorkerReply {
        error: Some("run failed: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access".into()),
        ..WorkerReply::default()
    };
    std::fs::write(&fault, serde_json::to_string(&reply).unwrap()).unwrap();
    let list = |v: &[u32]| v.iter().map(|d| format!(" {d} ")).collect::<String>();
    let script = format!(
        r#"#!/bin/sh
log="{log}"
if [ "$1" = "__probe-device" ]; then
  case "{lost}" in *" $3 "*) echo "CUDA_ERROR_NO_DEVICE: gone" >&2; exit 1;; esac
  exit 0
fi
serve() {{
  dev=$(grep -o '"device": *[0-9]*' "$1" | tr -dc 0-9)
  echo "start $dev $(date +%s%N)" >> "$log"
  sleep 0.15
  echo "end $dev $(date +%s%N)" >> "$log"
  case "{faulty}" in *" $dev "*) cp "{fault}" "$2";; *) cp "{ok}" "$2";; esac
}}
if [ "$2" = "--session" ]; then
  echo "$$" >> "{sessions}"
  while read folder; do
    serve "$folder/request.json" "$folder/reply.json"
    echo done
  done
  exit 0
fi
serve "$3" "$5"
"#,
        log = dir.join("log").display(),
        sessions = dir.join("sessions").display(),
        lost = list(lost),
        faulty = list(faulty),
        fault = fault.display(),
        ok = ok.display(),
    );
    let exe = dir.join("fake-apex-host");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

fn cuda_plan(cases: usize) -> Plan {
    let kernel = KernelInfo {
        id: "k.op".into(),
        description: String::new(),
        backends: vec![Backend::Cuda],
        precisions: vec![Precision::Fp32],
        params: Vec::new(),
        tolerances: Default::default(),
        graph_capturable: false,
        plugin: "k".into(),
        library: PathBuf::from("/nowhere.so"),
        crate_dir: None,
    };
    let cases = (0..cases)
        .map(|i| {
            let params: ParamMap = [("n".to_string(), serde_json::json!(i))].into();
            PlannedCase {
                key: CaseKey::new("k.op", "cuda", "fp32", &params),
                kernel: kernel.clone(),
                resolved: ResolvedCase {
                    params,
                    backend: Backend::Cuda,
                    precision: Precision::Fp32,
                    tolerance: Tolerance::EXACT,
                    protocol: ProtocolSettings {
                        timeout_s: 30.0,
                        ..ProtocolSettings::default()
                    },
                    skip: Vec::new(),
                    provenance: Vec::new(),
                },
                skip: None,
            }
        })
        .collect();
    Plan { cases }
}

fn slot(ordinal: u32) -> DeviceSlot {
    DeviceSlot {
        ordinal,
        assemble: AssembleContext {
            seed: 1,
            save_samples: false,
            bandwidth: None,
            l2_line_gbps: None,
        },
        cpus: Vec::new(),
    }
}

/// Runs `cases` CUDA cases on `devices` with the stand-in and session workers; returns what ran
/// and the log lines.
fn run(cases: usize, devices: &[u32], faulty: &[u32], lost: &[u32]) -> (Ran, Vec<String>) {
    let (ran, log, _) = run_with(cases, devices, faulty, lost, true);
    (ran, log)
}

/// [`run`] with or without session workers, also returning how many sessions started.
fn run_with(
    cases: usize,
    devices: &[u32],
    faulty: &[u32],
    lost: &[u32],
    session_workers: bool,
) -> (Ran, Vec<String>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_exe(dir.path(), faulty, lost);
    let interrupt = Interrupt::new();
    let ctx = ScheduleContext {
        exe: &exe,
        scratch: dir.path(),
        seed: 1,
        assemble: slot(0).assemble,
        devices: devices.iter().map(|&d| slot(d)).collect(),
        interrupt: &interrupt,
        session_workers,
    };
    let ran = run_plan(&cuda_plan(cases), &ctx, |_| Ok::<(), ()>(())).unwrap();
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
    let sessions = std::fs::read_to_string(dir.path().join("sessions")).unwrap_or_default();
    (
        ran,
        log.lines().map(String::from).collect(),
        sessions.lines().count(),
    )
}

/// Per device, the (start, end) intervals of its workers, from the log.
fn intervals(log: &[String]) -> std::collections::BTreeMap<String, Vec<(u128, u128)>> {
    let mut open = std::collections::BTreeMap::<String, u128>::new();
    let mut out = std::collections::BTreeMap::<String, Vec<(u128, u128)>>::new();
    for line in log {
        let f: Vec<&str> = line.split(' ').collect();
        let t: u128 = f[2].parse().unwrap();
        match f[0] {
            "start" => {
                assert!(
                    open.insert(f[1].to_string(), t).is_none(),
                    "two workers at once on GPU {}",
                    f[1]
                );
            }
            _ => {
                let s = open.remove(f[1]).unwrap();
                out.entry(f[1].to_string()).or_default().push((s, t));
            }
        }
    }
    out
}

#[test]
fn each_gpu_runs_one_case_at_a_time_and_the_gpus_run_together() {
    let (ran, log) = run(6, &[0, 1], &[], &[]);
    assert_eq!(ran.results.len(), 6);
    assert!(ran.results.iter().all(|r| r.status == CaseStatus::Ok));
    assert!(ran.devices_out.is_empty());
    let per_device = intervals(&log);
    assert_eq!(per_device.len(), 2, "both GPUs took cases: {log:?}");
    // Some case of GPU 0 overlaps some case of GPU 1 in time.
    let overlap = per_device["0"]
        .iter()
        .any(|a| per_device["1"].iter().any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(overlap, "the GPUs measured concurrently: {log:?}");
    // Every case says which GPU ran it, and the results are in plan order.
    let devices: Vec<Option<u32>> = ran.results.iter().map(|r| r.ran_on.device).collect();
    assert!(
        devices.iter().all(|d| matches!(d, Some(0 | 1))),
        "{devices:?}"
    );
    let ids: Vec<&str> = ran.results.iter().map(|r| r.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_by_key(|id| id.rsplit('=').next().unwrap().parse::<u32>().unwrap());
    assert_eq!(ids, sorted);
}

#[test]
fn a_faulting_gpu_leaves_the_pool_and_the_other_finishes_the_queue() {
    let (ran, _) = run(8, &[0, 1], &[1], &[]);
    assert_eq!(ran.results.len(), 8);
    let on = |d: u32| {
        ran.results
            .iter()
            .filter(move |r| r.ran_on.device == Some(d))
    };
    assert_eq!(
        on(1).count(),
        FAULTS,
        "GPU 1 ran cases until it was taken out"
    );
    assert!(on(1).all(|r| r.status == CaseStatus::Failed));
    assert!(
        on(0).all(|r| r.status == CaseStatus::Ok),
        "GPU 0's cases are ok"
    );
    assert_eq!(ran.devices_out.len(), 1);
    assert_eq!(ran.devices_out[0].0, 1);
    assert!(
        ran.devices_out[0].1.contains("in a row"),
        "{:?}",
        ran.devices_out
    );
}

const FAULTS: usize = super::super::devices::FAULTS_IN_A_ROW as usize;

#[test]
fn a_gpu_that_fails_its_probe_leaves_at_once_and_without_gpus_the_rest_fail_with_the_reason() {
    let (ran, _) = run(4, &[0], &[0], &[0]);
    assert_eq!(ran.results.len(), 4);
    assert_eq!(
        ran.results
            .iter()
            .filter(|r| r.ran_on.device == Some(0))
            .count(),
        1
    );
    let reason = ran.results[3].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("no GPU left in the pool") && reason.contains("CUDA_ERROR_NO_DEVICE"),
        "{reason}"
    );
    assert!(ran.results.iter().all(|r| r.status == CaseStatus::Failed));
}

#[test]
fn passing_cases_share_one_session_worker_per_gpu_and_a_failure_ends_it() {
    let (ran, log, sessions) = run_with(6, &[0, 1], &[], &[], true);
    assert!(ran.results.iter().all(|r| r.status == CaseStatus::Ok));
    assert_eq!(log.len(), 12, "every case ran: {log:?}");
    assert_eq!(sessions, 2, "one session worker per GPU");

    let (ran, _, sessions) = run_with(6, &[0, 1], &[], &[], false);
    assert!(ran.results.iter().all(|r| r.status == CaseStatus::Ok));
    assert_eq!(sessions, 0, "--worker-per-case starts no session");

    // Every case on GPU 1 fails: each failure ends its session, so each ran in a fresh one.
    let (ran, _, sessions) = run_with(8, &[0, 1], &[1], &[], true);
    assert_eq!(ran.results.len(), 8);
    assert_eq!(
        sessions,
        1 + FAULTS,
        "GPU 0's one session, and one per failed case on GPU 1"
    );
}
