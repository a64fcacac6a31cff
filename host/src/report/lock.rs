//! [`OutputLock`]: one writer per output directory at a time. Every command that writes a report
//! folder (`run`, `report`, `compare`) holds an exclusive advisory lock (flock(2), through
//! `std::fs::File::lock`, as cargo locks its target directory) on `<dir>/.apex-host.lock` from
//! before its first write to after its last, so two runs into one folder follow each other and the
//! folder never mixes their files (issue 11, finding 4).
//!
//! ```text
//! acquire(dir) ─► open/create <dir>/.apex-host.lock (never truncated before it is held)
//!                 try_lock ─ held ─► write {pid, command, since_utc} into it ─► OutputLock
//!                    └─ busy ─► on_wait(Busy: who holds it) ─► try again every 100 ms
//!                               (Wait::No: LockError::Busy at once; stop(): LockError::Interrupted)
//! ```
//!
//! The kernel releases the lock when its holder exits, however it exits (SIGKILL included), so a
//! lock is never stale; the file itself stays (removing it would race with a waiter that opened
//! it). Worker processes do not inherit it: Rust opens files close-on-exec.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file inside an output directory.
pub const LOCK_FILE: &str = ".apex-host.lock";

/// How often a waiting command tries the lock again.
const RETRY: Duration = Duration::from_millis(100);

/// Who holds a lock, as the holder wrote it into the lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockHolder {
    pub pid: u32,
    /// The subcommand: `run`, `report` or `compare`.
    pub command: String,
    /// RFC 3339 UTC.
    pub since_utc: String,
}

/// A lock that another process holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Busy {
    /// The lock file.
    pub path: PathBuf,
    /// `None` when the holder has not written itself into the file yet (or the file is not ours).
    pub holder: Option<LockHolder>,
}

impl std::fmt::Display for Busy {
    /// `the run (pid 4242, since 2026-…) that holds `reports/.apex-host.lock``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.holder {
            Some(h) => {
                let what = match h.command.as_str() {
                    "run" => "the run".to_string(),
                    other => format!("the `apex-host {other}`"),
                };
                write!(
                    f,
                    "{what} (pid {}, since {}) that holds `{}`",
                    h.pid,
                    h.since_utc,
                    self.path.display()
                )
            }
            None => write!(
                f,
                "the apex-host process that holds `{}`",
                self.path.display()
            ),
        }
    }
}

/// Whether to wait for a busy lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Wait until the holder releases it (the default).
    Yes,
    /// Fail at once with [`LockError::Busy`] (`--no-wait`).
    No,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("failed to lock the output directory `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "failed to lock the output directory: it is in use by {0}\n(hint: leave out `--no-wait` \
         to wait for it, or choose another `--output-dir`)"
    )]
    Busy(Busy),
    #[error("interrupted while waiting for {0}; nothing was written")]
    Interrupted(Busy),
}

/// The held lock of one output directory; dropping it releases the lock.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
}

impl OutputLock {
    /// Locks `dir` (created if missing) for `command`. While another process holds it:
    /// `on_wait` is told who (again whenever the holder changes) and the lock is retried every
    /// 100 ms, until `stop()` is true ([`LockError::Interrupted`]); with [`Wait::No`] the result
    /// is [`LockError::Busy`] at once.
    pub fn acquire(
        dir: &Path,
        command: &str,
        wait: Wait,
        mut on_wait: impl FnMut(&Busy),
        stop: impl Fn() -> bool,
    ) -> Result<OutputLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut announced: Option<Busy> = None;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            let busy = Busy {
                path: path.clone(),
                holder: read_holder(&mut file),
            };
            if wait == Wait::No {
                return Err(LockError::Busy(busy));
            }
            if stop() {
                return Err(LockError::Interrupted(busy));
            }
            // Announced once, and again when another process takes the lock first (a holder
            // that has not written itself yet is not news).
            let news = match &announced {
                None => true,
                Some(prev) => busy.holder.is_some() && prev.holder != busy.holder,
            };
            if news {
                on_wait(&busy);
                announced = Some(busy);
            }
            std::thread::sleep(RETRY);
        }
        let holder = LockHolder {
            pid: std::process::id(),
            command: command.to_string(),
            since_utc: super::env::timestamp_utc(),
        };
        write_holder(&mut file, &holder).map_err(io)?;
        Ok(OutputLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the order explicit.
        let _ = self.file.unlock();
    }
}

fn read_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_holder(file: &mut File, holder: &LockHolder) -> std::io::Result<()> {
    let text = serde_json::to_string(holder).map_err(std::io::Error::other)?;
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn acquire(dir: &Path, wait: Wait) -> Result<OutputLock, LockError> {
        OutputLock::acquire(dir, "run", wait, |_| {}, || false)
    }

    #[test]
    fn the_holder_is_written_and_a_second_lock_without_waiting_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("reports");
        let held = acquire(&out, Wait::No).unwrap();
        assert_eq!(held.path(), out.join(LOCK_FILE));
        let err = acquire(&out, Wait::No).unwrap_err();
        let LockError::Busy(busy) = &err else {
            panic!("busy expected: {err}")
        };
        let holder = busy.holder.as_ref().expect("the holder wrote itself");
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.command, "run");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("the run (pid {}", std::process::id())),
            "{msg}"
        );
        assert!(
            msg.contains(".apex-host.lock") && msg.contains("--no-wait"),
            "{msg}"
        );
        drop(held);
        acquire(&out, Wait::No).expect("free again once dropped");
    }

    #[test]
    fn a_waiter_is_told_who_holds_it_and_gets_it_when_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path(), Wait::No).unwrap();
        let told = RefCell::new(Vec::new());
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let second = OutputLock::acquire(
            dir.path(),
            "compare",
            Wait::Yes,
            |b| told.borrow_mut().push(b.to_string()),
            || false,
        )
        .unwrap();
        release.join().unwrap();
        let told = told.into_inner();
        assert_eq!(told.len(), 1, "announced once: {told:?}");
        assert!(told[0].starts_with("the run (pid "), "{told:?}");
        let text = std::fs::read_to_string(second.path()).unwrap();
        let holder: LockHolder = serde_json::from_str(&text).unwrap();
        assert_eq!(holder.command, "compare", "the new holder rewrote the file");
    }

    #[test]
    fn a_stop_request_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let _held = acquire(dir.path(), Wait::No).unwrap();
        let err = OutputLock::acquire(dir.path(), "run", Wait::Yes, |_| {}, || true).unwrap_err();
        assert!(matches!(err, LockError::Interrupted(_)), "{err}");
    }

    #[test]
    fn an_unreadable_holder_still_names_the_file() {
        let busy = Busy {
            path: PathBuf::from("reports/.apex-host.lock"),
            holder: None,
        };
        assert_eq!(
            busy.to_string(),
            "the apex-host process that holds `reports/.apex-host.lock`"
        );
    }
}
