//! Interrupts: what Ctrl-C (SIGINT) and SIGTERM do to a run. The main type is [`Interrupt`]: the
//! run's stop flag plus the process groups of the children it is waiting for.
//!
//! ```text
//! 1st SIGINT/SIGTERM ─► signal thread ─► Interrupt::request(): flag set, every tracked group SIGKILLed
//!                                          └─► the host's wait returns at once; the schedule starts
//!                                              nothing new; `run` writes the finished cases
//!                                              (status `interrupted`, exit 130)
//! 2nd SIGINT/SIGTERM ─► signal thread ─► tracked groups SIGKILLed, `_exit(130)` at once
//! ```
//!
//! Each worker leads its own process group (`measure::isolation`), so a Ctrl-C typed at the
//! terminal reaches the host only and the host decides what dies: killing the group also ends
//! anything the worker started. `PR_SET_PDEATHSIG` still ends a worker whose host is killed
//! outright (SIGKILL, or the second signal).
//!
//! The handlers are installed only by commands that run workers (`run`), and they replace an
//! inherited `SIG_IGN`: a run started in the background from a script is stopped by `kill -INT`
//! too (issue 11, finding 3).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::cli::exit_codes::ApexExitCode;

/// A stop flag and the process groups to kill when it is set.
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: AtomicBool,
    groups: Mutex<BTreeSet<libc::pid_t>>,
}

static GLOBAL: Interrupt = Interrupt::new();

impl Interrupt {
    /// A flag that is not set and tracks nothing (tests use their own; the process has
    /// [`Interrupt::global`]).
    pub const fn new() -> Self {
        Self {
            requested: AtomicBool::new(false),
            groups: Mutex::new(BTreeSet::new()),
        }
    }

    /// The process's interrupt, the one the signal handlers of [`install`] set.
    pub fn global() -> &'static Interrupt {
        &GLOBAL
    }

    /// Whether a stop was requested.
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Sets the flag and kills every tracked process group. Returns whether this was the first
    /// request.
    pub fn request(&self) -> bool {
        let first = !self.requested.swap(true, Ordering::SeqCst);
        for &group in self.lock().iter() {
            kill_group(group);
        }
        first
    }

    /// Tracks process group `group` until the returned guard is dropped: a request kills it. A
    /// group tracked after the request is killed at once, so a worker started in the instant the
    /// signal arrived cannot outlive the stop (the flag is set before the groups are read, and
    /// the group is inserted before the flag is read, both under the same lock).
    pub fn track(&self, group: libc::pid_t) -> TrackedGroup<'_> {
        self.lock().insert(group);
        if self.is_requested() {
            kill_group(group);
        }
        TrackedGroup {
            interrupt: self,
            group,
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeSet<libc::pid_t>> {
        // The set stays consistent whatever panicked while holding it: insert and remove only.
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A process group tracked by an [`Interrupt`]; dropping it stops the tracking. Drop it right
/// after the group's leader was reaped, so a recycled process id is never killed.
#[derive(Debug)]
pub struct TrackedGroup<'a> {
    interrupt: &'a Interrupt,
    group: libc::pid_t,
}

impl Drop for TrackedGroup<'_> {
    fn drop(&mut self) {
        self.interrupt.lock().remove(&self.group);
    }
}

/// Sends SIGKILL to every process of group `group` (a group that is already gone is fine).
pub fn kill_group(group: libc::pid_t) {
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; it touches no memory.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
}

/// Installs the SIGINT and SIGTERM handlers of this process (once; later calls return the same
/// interrupt) and returns [`Interrupt::global`]. A thread waits for the signals: the first one
/// calls [`Interrupt::request`], the second one kills the tracked groups and exits the process
/// at once with [`ApexExitCode::INTERRUPTED`].
pub fn install() -> std::io::Result<&'static Interrupt> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM])
            .map_err(|e| e.to_string())?;
        std::thread::Builder::new()
            .name("apex-interrupt".into())
            .spawn(move || {
                for _ in signals.forever() {
                    if !GLOBAL.request() {
                        // `_exit`: no destructor, no buffered output and no lock stands in the
                        // way; the finished cases are already durable in `.partial/`.
                        signal_hook::low_level::exit(ApexExitCode::INTERRUPTED);
                    }
                }
            })
            .map(drop)
            .map_err(|e| e.to_string())
    });
    match installed {
        Ok(()) => Ok(&GLOBAL),
        Err(e) => Err(std::io::Error::other(format!(
            "failed to install the SIGINT/SIGTERM handlers: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn sleeper() -> std::process::Child {
        Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep starts")
    }

    fn pid(child: &std::process::Child) -> libc::pid_t {
        libc::pid_t::try_from(child.id()).expect("pid fits")
    }

    #[test]
    fn a_request_kills_the_tracked_groups_and_only_the_first_counts() {
        use std::os::unix::process::ExitStatusExt;
        let interrupt = Interrupt::new();
        let mut child = sleeper();
        let guard = interrupt.track(pid(&child));
        assert!(!interrupt.is_requested());
        assert!(interrupt.request(), "the first request");
        let status = child.wait().unwrap();
        drop(guard);
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(!interrupt.request(), "a second request is not the first");
        assert!(interrupt.lock().is_empty(), "the guard untracked the group");
    }

    #[test]
    fn a_group_tracked_after_the_request_dies_at_once() {
        use std::os::unix::process::ExitStatusExt;
        let interrupt = Interrupt::new();
        interrupt.request();
        let mut child = sleeper();
        let _guard = interrupt.track(pid(&child));
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn an_untracked_group_is_left_alone() {
        let interrupt = Interrupt::new();
        let mut child = sleeper();
        drop(interrupt.track(pid(&child)));
        interrupt.request();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(child.try_wait().unwrap().is_none(), "still running");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
