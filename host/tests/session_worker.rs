//! The session worker (`apex-host __worker --session`) driven through [`WorkerSession`] exactly as
//! the schedule drives it, with CPU requests on the fixtures plugin: the schedule hands a session
//! only CUDA cases, which a machine without a GPU cannot run, and the worker serves every backend
//! the same way. Consecutive cases share one process; a case that did not pass (wrong result,
//! panic, crash, hang) ends the session, with the outcome a one-case worker would give.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use apex_host::interrupt::Interrupt;
use apex_host::measure::wire::{WIRE_VERSION, WorkerRequest};
use apex_host::measure::{WorkerOutcome, WorkerSession};
use apex_host::model::ProtocolSettings;

/// The fixtures library, built by discovery if it is stale.
fn fixtures_library() -> PathBuf {
    let out = support::apex(&["discover", "--fixtures", "--json"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("discover --json");
    let plugins = doc["plugins"].as_array().expect("plugins");
    let lib = plugins
        .iter()
        .find(|p| p["name"] == "apex-fixtures")
        .and_then(|p| p["library"].as_str())
        .expect("the fixtures plugin is discovered");
    PathBuf::from(lib)
}

fn request(library: &Path, kernel: &str, timeout_s: f64) -> WorkerRequest {
    let mut params = std::collections::BTreeMap::new();
    if kernel == "fixtures.known_duration" {
        params.insert("duration_us".to_string(), serde_json::json!(20.0));
    }
    WorkerRequest {
        wire_version: WIRE_VERSION,
        library: library.to_path_buf(),
        kernel: kernel.into(),
        params,
        backend: "cpu".into(),
        precision: "fp32".into(),
        seed: 7,
        settings: ProtocolSettings {
            timeout_s,
            ..ProtocolSettings::quick()
        },
        tolerance: [("atol".to_string(), 1e-6), ("rtol".to_string(), 1e-6)].into(),
        graph_capturable: false,
        device: 0,
        spawned_at_unix_s: 0.0,
    }
}

fn start<'a>(lib: &Path, folder: &Path, interrupt: &'a Interrupt) -> WorkerSession<'a> {
    let exe = Path::new(env!("CARGO_BIN_EXE_apex-host"));
    WorkerSession::start(exe, lib, folder, interrupt, &[])
        .unwrap_or_else(|o| panic!("the session starts: {o:?}"))
}

fn replied(outcome: WorkerOutcome) -> Box<apex_host::measure::wire::WorkerReply> {
    match outcome {
        WorkerOutcome::Replied(r) => r,
        other => panic!("expected a reply, got {other:?}"),
    }
}

#[test]
fn consecutive_cases_share_the_process_until_one_does_not_pass() {
    let lib = fixtures_library();
    let dir = tempfile::tempdir().unwrap();
    let interrupt = Interrupt::new();
    let mut session = start(&lib, &dir.path().join("session"), &interrupt);
    let ok = request(&lib, "fixtures.known_duration", 60.0);
    for n in 0..3u32 {
        let (outcome, reusable) = session.run(&ok, &dir.path().join(format!("case-{n}")));
        let reply = replied(outcome);
        assert!(reusable, "a case that passed keeps the session");
        assert_eq!(reply.error, None);
        assert!(reply.accuracy.as_ref().is_some_and(|a| a.passed));
        assert_eq!(reply.worker_case, n, "case {n} ran in the same process");
        assert!(!reply.modes.is_empty());
    }
    // A wrong result is a reply (failed accuracy) that ends the session.
    let wrong = request(&lib, "fixtures.wrong_result", 60.0);
    let (outcome, reusable) = session.run(&wrong, &dir.path().join("case-wrong"));
    let reply = replied(outcome);
    assert!(reply.accuracy.as_ref().is_some_and(|a| !a.passed));
    assert_eq!(reply.worker_case, 3);
    assert!(!reusable, "a failed accuracy check ends the session");
    drop(session);

    // A panic is the case's error, and ends the session too.
    let mut session = start(&lib, &dir.path().join("session-2"), &interrupt);
    let panic = request(&lib, "fixtures.panic", 60.0);
    let (outcome, reusable) = session.run(&panic, &dir.path().join("case-panic"));
    let reply = replied(outcome);
    assert!(
        reply.error.as_deref().is_some_and(|e| e.contains("panic")),
        "{:?}",
        reply.error
    );
    assert!(!reusable);
}

#[test]
fn a_crash_or_a_hang_in_a_session_is_that_case_s_outcome() {
    let lib = fixtures_library();
    let dir = tempfile::tempdir().unwrap();
    let interrupt = Interrupt::new();
    let mut session = start(&lib, &dir.path().join("session"), &interrupt);
    let ok = request(&lib, "fixtures.known_duration", 60.0);
    let (outcome, reusable) = session.run(&ok, &dir.path().join("case-ok"));
    assert!(reusable && matches!(outcome, WorkerOutcome::Replied(_)));
    let segv = request(&lib, "fixtures.segfault", 60.0);
    let (outcome, reusable) = session.run(&segv, &dir.path().join("case-segv"));
    match outcome {
        WorkerOutcome::Crashed(reason) => assert!(reason.contains("SIGSEGV"), "{reason}"),
        other => panic!("expected a crash, got {other:?}"),
    }
    assert!(!reusable);
    drop(session);

    let mut session = start(&lib, &dir.path().join("session-2"), &interrupt);
    let hang = request(&lib, "fixtures.hang", 1.5);
    let since = Instant::now();
    let (outcome, reusable) = session.run(&hang, &dir.path().join("case-hang"));
    assert_eq!(outcome, WorkerOutcome::TimedOut(1.5));
    assert!(!reusable);
    drop(session);
    assert!(
        since.elapsed() < Duration::from_secs(30),
        "the hung worker was killed, not waited for: {:?}",
        since.elapsed()
    );
}
