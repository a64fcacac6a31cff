//! The host side of a session worker: one `apex-host __worker --session` process that measures a
//! sequence of CUDA cases of one plugin library on one GPU, so that the process start, the plugin
//! load, the CUDA context and the timers' set-up (about 0.3 s a case on an H100) are paid once per
//! session instead of once per case.
//!
//! Isolation is kept where it matters: a case is handed over as a scratch folder on the worker's
//! standard input and answered by `reply.json` there plus one line on its standard output; the
//! case's timeout, a crash (with the stderr lines this case wrote) and an interrupt end as they do
//! for a one-case worker ([`super::isolation`]). A case that did not pass (an error, a failed
//! accuracy check, a crash, a timeout) ends the session, so a sticky CUDA error or a corrupted
//! context never reaches the next case: that one starts in a fresh process.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use wait_timeout::ChildExt;

use super::WorkerOutcome;
use super::isolation::{crash_reason, read_reply, worker_command};
use super::wire::{WorkerRequest, unix_now_s};
use crate::interrupt::{Interrupt, TrackedGroup, kill_group};

/// How long a session worker may take to exit after its input is closed.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// A running session worker.
pub struct WorkerSession<'a> {
    child: Child,
    group: libc::pid_t,
    stdin: Option<ChildStdin>,
    answers: Receiver<()>,
    stderr_path: PathBuf,
    library: PathBuf,
    interrupt: &'a Interrupt,
    _tracked: TrackedGroup<'a>,
}

impl<'a> WorkerSession<'a> {
    /// Starts a session worker for `library`; its stderr goes to `<folder>/stderr.txt`. `cpus`,
    /// when not empty, pins it. `Err` is the outcome to report for the case that wanted it.
    pub fn start(
        exe: &Path,
        library: &Path,
        folder: &Path,
        interrupt: &'a Interrupt,
        cpus: &[usize],
    ) -> Result<Self, WorkerOutcome> {
        let crashed =
            |what: String, e: std::io::Error| WorkerOutcome::Crashed(format!("{what}: {e}"));
        std::fs::create_dir_all(folder)
            .map_err(|e| crashed(format!("cannot create `{}`", folder.display()), e))?;
        let stderr_path = folder.join("stderr.txt");
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| crashed("cannot create the worker's stderr file".into(), e))?;
        let mut command = worker_command(exe, cpus);
        command
            .arg("--session")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = command
            .spawn()
            .map_err(|e| crashed(format!("cannot start worker `{}`", exe.display()), e))?;
        // The worker's pid is its process group's id (`process_group(0)`).
        let group = libc::pid_t::try_from(child.id()).unwrap_or(0);
        let tracked = interrupt.track(group);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let (tx, answers) = mpsc::channel();
        if let Some(stdout) = stdout {
            // Ends at the worker's end (end of file), which disconnects `answers`.
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    if line.is_err() || tx.send(()).is_err() {
                        return;
                    }
                }
            });
        }
        Ok(Self {
            child,
            group,
            stdin,
            answers,
            stderr_path,
            library: library.to_path_buf(),
            interrupt,
            _tracked: tracked,
        })
    }

    /// The plugin library this session serves.
    pub fn library(&self) -> &Path {
        &self.library
    }

    /// Measures one case whose request, reply and scratch live in `scratch`. Returns the outcome
    /// and whether the session can take another case (only after a case that passed).
    pub fn run(&mut self, request: &WorkerRequest, scratch: &Path) -> (WorkerOutcome, bool) {
        let reply_path = scratch.join("reply.json");
        let mut request = request.clone();
        request.spawned_at_unix_s = unix_now_s();
        let written = std::fs::create_dir_all(scratch)
            .map_err(|e| format!("cannot create `{}`: {e}", scratch.display()))
            .and_then(|()| {
                let _ = std::fs::remove_file(&reply_path);
                crate::report::write_json_atomic(&scratch.join("request.json"), &request)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            return (WorkerOutcome::Crashed(e), false);
        }
        let stderr_from = std::fs::metadata(&self.stderr_path).map_or(0, |m| m.len());
        let sent = self
            .stdin
            .as_mut()
            .map(|s| writeln!(s, "{}", scratch.display()).and_then(|()| s.flush()));
        if !matches!(sent, Some(Ok(()))) {
            return (self.ended(stderr_from), false);
        }
        let timeout = Duration::from_secs_f64(request.settings.timeout_s.max(0.001));
        match self.answers.recv_timeout(timeout) {
            Ok(()) => match read_reply(&reply_path) {
                Some(reply) => {
                    let passed =
                        reply.error.is_none() && reply.accuracy.as_ref().is_none_or(|a| a.passed);
                    (WorkerOutcome::Replied(Box::new(reply)), passed)
                }
                None => (
                    WorkerOutcome::Crashed(format!(
                        "the session worker answered without a readable `{}`",
                        reply_path.display()
                    )),
                    false,
                ),
            },
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                (WorkerOutcome::TimedOut(request.settings.timeout_s), false)
            }
            Err(RecvTimeoutError::Disconnected) => (self.ended(stderr_from), false),
        }
    }

    /// The outcome of a worker that ended during a case (its stderr from `stderr_from` on).
    fn ended(&mut self, stderr_from: u64) -> WorkerOutcome {
        let status = match self.child.wait_timeout(CLOSE_GRACE) {
            Ok(Some(status)) => status,
            _ => {
                self.kill();
                return WorkerOutcome::Crashed(
                    "the session worker closed its channel and did not exit".into(),
                );
            }
        };
        if !status.success() && self.interrupt.is_requested() {
            return WorkerOutcome::Interrupted;
        }
        WorkerOutcome::Crashed(crash_reason(status, &self.stderr_path, stderr_from))
    }

    fn kill(&mut self) {
        kill_group(self.group);
        let _ = self.child.wait();
    }
}

impl Drop for WorkerSession<'_> {
    /// Closes the worker's input (it exits at the end of input) and waits for it; one that does
    /// not exit in time is killed with its group.
    fn drop(&mut self) {
        self.stdin = None;
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        if !matches!(self.child.wait_timeout(CLOSE_GRACE), Ok(Some(_))) {
            self.kill();
        }
    }
}
