//! The host side of worker isolation: re-executes this binary as `apex-host __worker` for one case,
//! enforces the case's timeout, and turns every way a worker can end into an outcome with a
//! reason (a signal name, `timeout after N s`, the error text, the last line of stderr).
//!
//! Each worker leads its own process group, tracked by the run's [`Interrupt`] while it runs: a
//! Ctrl-C at the terminal reaches the host only, and the host kills the whole group (the worker
//! and anything it started), on a timeout as on an interrupt.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use super::wire::{WorkerReply, WorkerRequest, unix_now_s};
use crate::interrupt::{Interrupt, kill_group};

/// How a worker ended.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerOutcome {
    /// The worker wrote a reply (which may itself carry an error).
    Replied(Box<WorkerReply>),
    /// The worker died or exited without a reply; the reason names the signal or exit code.
    Crashed(String),
    /// The worker ran past its timeout and was killed.
    TimedOut(f64),
    /// The run was interrupted (Ctrl-C) and the worker was killed before it replied.
    Interrupted,
}

/// The hidden subcommand the worker runs under.
pub const WORKER_SUBCOMMAND: &str = "__worker";

/// Runs one case in a fresh worker process. `scratch` is this case's private folder; a request of
/// `interrupt` kills the worker's process group. `cpus`, when not empty, pins the worker (and
/// every thread it starts) to those logical CPUs.
pub fn run_in_worker(
    exe: &Path,
    request: &WorkerRequest,
    scratch: &Path,
    interrupt: &Interrupt,
    cpus: &[usize],
) -> WorkerOutcome {
    let request_path = scratch.join("request.json");
    let reply_path = scratch.join("reply.json");
    let stderr_path = scratch.join("stderr.txt");
    let mut request = request.clone();
    let io_err = |what: &str, e: std::io::Error| WorkerOutcome::Crashed(format!("{what}: {e}"));
    if let Err(e) = std::fs::create_dir_all(scratch) {
        return io_err(&format!("cannot create `{}`", scratch.display()), e);
    }
    request.spawned_at_unix_s = unix_now_s();
    if let Err(e) = crate::report::write_json_atomic(&request_path, &request) {
        return WorkerOutcome::Crashed(e.to_string());
    }
    let stderr = match std::fs::File::create(&stderr_path) {
        Ok(f) => f,
        Err(e) => return io_err("cannot create the worker's stderr file", e),
    };
    let mut command = worker_command(exe, cpus);
    command
        .arg("--request")
        .arg(&request_path)
        .arg("--reply")
        .arg(&reply_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    let spawned = command.spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return io_err(&format!("cannot start worker `{}`", exe.display()), e),
    };
    // The worker's pid is its process group's id (`process_group(0)`).
    let group = libc::pid_t::try_from(child.id()).unwrap_or(0);
    let tracked = interrupt.track(group);
    let timeout = Duration::from_secs_f64(request.settings.timeout_s.max(0.001));
    let waited = child.wait_timeout(timeout);
    let status = match waited {
        Ok(Some(status)) => status,
        Ok(None) => {
            kill_group(group);
            let _ = child.wait();
            return WorkerOutcome::TimedOut(request.settings.timeout_s);
        }
        Err(e) => {
            kill_group(group);
            let _ = child.wait();
            return io_err("cannot wait for the worker", e);
        }
    };
    drop(tracked);
    // A worker that replied before the interrupt keeps its result; one that was killed by it
    // did not finish.
    if !status.success() && interrupt.is_requested() {
        return WorkerOutcome::Interrupted;
    }
    match read_reply(&reply_path) {
        Some(reply) if status.success() => WorkerOutcome::Replied(Box::new(reply)),
        _ => WorkerOutcome::Crashed(crash_reason(status, &stderr_path, 0)),
    }
}

/// `apex-host __worker` as its own process group leader, pinned to `cpus` when not empty (the
/// caller adds the mode's arguments and the standard streams).
pub(super) fn worker_command(exe: &Path, cpus: &[usize]) -> Command {
    let mut command = Command::new(exe);
    command.arg(WORKER_SUBCOMMAND).process_group(0);
    if let Some(set) = cpu_set(cpus) {
        // SAFETY: the closure runs in the child between fork and exec and makes one system call
        // (async-signal-safe) on a set built before the fork.
        unsafe {
            command.pre_exec(move || {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    command
}

/// The affinity mask of `cpus`, or `None` for an empty list (no pinning).
fn cpu_set(cpus: &[usize]) -> Option<libc::cpu_set_t> {
    if cpus.is_empty() {
        return None;
    }
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET only sets bits below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        Some(set)
    }
}

pub(super) fn read_reply(path: &Path) -> Option<WorkerReply> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// `killed by SIGSEGV (signal 11)` or `exited with code 3`, plus the last line of stderr written
/// after byte `from` (a session worker's earlier cases wrote the part before).
pub(super) fn crash_reason(status: ExitStatus, stderr_path: &Path, from: u64) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut reason = match (status.signal(), status.code()) {
        (Some(sig), _) => format!("killed by {} (signal {sig})", signal_name(sig)),
        (None, Some(code)) => format!("worker exited with code {code} without a result"),
        (None, None) => "worker ended without a result".to_string(),
    };
    let stderr = std::fs::read(stderr_path).unwrap_or_default();
    let start = usize::try_from(from)
        .unwrap_or(usize::MAX)
        .min(stderr.len());
    let stderr = String::from_utf8_lossy(&stderr[start..]);
    if let Some(last) = stderr.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
        let last: String = last.chars().take(300).collect();
        reason.push_str(&format!("; last stderr line: {last}"));
    }
    reason
}

/// The conventional name of a signal number.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGPIPE => "SIGPIPE",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_have_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGABRT), "SIGABRT");
        assert_eq!(signal_name(77), "signal 77");
    }

    #[test]
    fn a_missing_executable_is_a_crash_with_the_path() {
        let d = tempfile::tempdir().unwrap();
        let req = WorkerRequest {
            wire_version: super::super::wire::WIRE_VERSION,
            library: "/nope.so".into(),
            kernel: "x".into(),
            params: Default::default(),
            backend: "cpu".into(),
            precision: "fp32".into(),
            seed: 1,
            settings: Default::default(),
            tolerance: Default::default(),
            graph_capturable: false,
            device: 0,
            spawned_at_unix_s: 0.0,
        };
        let interrupt = Interrupt::new();
        match run_in_worker(
            Path::new("/definitely/not/here"),
            &req,
            d.path(),
            &interrupt,
            &[],
        ) {
            WorkerOutcome::Crashed(r) => assert!(r.contains("/definitely/not/here"), "{r}"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
