//! The GPUs of a run (`--devices`): one [`DeviceSlot`] per GPU, each with its own measured copy
//! line and its own share of the host's cores, and the [`DeviceHealth`] that takes a failing GPU
//! out of the pool.
//!
//! A GPU leaves the pool when, after a case on it ended in a device-level failure (a crash, a
//! timeout or a CUDA error), either a fresh process cannot use it (the probe:
//! `apex-host __probe-device`, a context, an allocation and a synchronize) or it is the
//! [`FAULTS_IN_A_ROW`]-th such failure on that GPU in a row. The case that was running is the only
//! one it costs: the cases still queued go to the GPUs that remain.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use wait_timeout::ChildExt;

use super::{AssembleContext, WorkerOutcome};

/// Device-level failures in a row after which a GPU leaves the pool even though it still passes
/// the probe (a GPU that keeps faulting).
pub const FAULTS_IN_A_ROW: u32 = 2;

/// The hidden subcommand of the probe.
pub const PROBE_SUBCOMMAND: &str = "__probe-device";

/// How long the probe may take before the GPU counts as unusable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// One GPU of the run.
#[derive(Debug, Clone)]
pub struct DeviceSlot {
    pub ordinal: u32,
    /// The assembly context of cases measured on this GPU (its own copy and L2 lines).
    pub assemble: AssembleContext,
    /// The logical CPUs this GPU's workers are pinned to (empty: not pinned). With several
    /// GPUs the host's cores are split between them, so one GPU's verification threads never
    /// delay another GPU's launches.
    pub cpus: Vec<usize>,
}

/// Splits `cpus` into `parts` contiguous, disjoint shares, as even as possible (every share
/// empty when there are fewer CPUs than parts: the workers are then not pinned).
pub fn split_cpus(cpus: &[usize], parts: usize) -> Vec<Vec<usize>> {
    if parts == 0 || cpus.len() < parts {
        return vec![Vec::new(); parts];
    }
    let (base, extra) = (cpus.len() / parts, cpus.len() % parts);
    let mut shares = Vec::with_capacity(parts);
    let mut at = 0;
    for i in 0..parts {
        let n = base + usize::from(i < extra);
        shares.push(cpus[at..at + n].to_vec());
        at += n;
    }
    shares
}

/// The logical CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set that sched_getaffinity fills for this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Why `outcome` may mean the GPU itself is at fault, or `None` when the case ended normally or
/// failed in a way that says nothing about the GPU (the plugin's own error, a wrong result).
pub fn device_level_failure(outcome: &WorkerOutcome) -> Option<String> {
    match outcome {
        WorkerOutcome::Crashed(reason) => Some(reason.clone()),
        WorkerOutcome::TimedOut(s) => Some(format!("timeout after {s} s")),
        WorkerOutcome::Replied(r) => r
            .error
            .as_ref()
            .filter(|e| e.contains("CUDA_ERROR_"))
            .cloned(),
        WorkerOutcome::Interrupted => None,
    }
}

/// The pool's record of each GPU: failures in a row, and the GPUs taken out with the reason.
#[derive(Debug, Default)]
pub struct DeviceHealth {
    in_a_row: BTreeMap<u32, u32>,
    out: BTreeMap<u32, String>,
}

impl DeviceHealth {
    /// The GPUs taken out, with the reason, in ordinal order.
    pub fn taken_out(&self) -> &BTreeMap<u32, String> {
        &self.out
    }

    /// Records how a case on `ordinal` ended. `failure` is [`device_level_failure`] of it and
    /// `probe` the probe's verdict (run only after such a failure). Returns the reason when this
    /// takes the GPU out of the pool.
    pub fn record(
        &mut self,
        ordinal: u32,
        failure: Option<&str>,
        probe: Option<Result<(), String>>,
    ) -> Option<String> {
        let Some(failure) = failure else {
            self.in_a_row.remove(&ordinal);
            return None;
        };
        let count = self.in_a_row.entry(ordinal).or_default();
        *count += 1;
        let reason = match probe {
            Some(Err(probe)) => {
                format!("GPU {ordinal} failed the probe after `{failure}`: {probe}")
            }
            _ if *count >= FAULTS_IN_A_ROW => {
                format!("GPU {ordinal} failed {count} cases in a row (the last: `{failure}`)")
            }
            _ => return None,
        };
        self.out.insert(ordinal, reason.clone());
        Some(reason)
    }
}

/// Whether a fresh process can use GPU `ordinal`: runs `exe __probe-device --device N`.
pub fn probe(exe: &Path, ordinal: u32) -> Result<(), String> {
    let mut child = std::process::Command::new(exe)
        .args([PROBE_SUBCOMMAND, "--device", &ordinal.to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the probe: {e}"))?;
    let status = match child.wait_timeout(PROBE_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the probe did not finish in {} s",
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    Err(stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("the probe failed without a message")
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_are_split_into_disjoint_even_shares() {
        let cpus: Vec<usize> = (0..10).collect();
        let shares = split_cpus(&cpus, 3);
        assert_eq!(shares, [vec![0, 1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]]);
        assert_eq!(split_cpus(&cpus, 1), std::slice::from_ref(&cpus));
        assert_eq!(split_cpus(&[0], 2), [Vec::<usize>::new(), Vec::new()]);
        assert!(!allowed_cpus().is_empty(), "this process runs somewhere");
    }

    #[test]
    fn only_device_level_failures_count() {
        use crate::measure::wire::WorkerReply;
        let replied = |error: Option<&str>| {
            WorkerOutcome::Replied(Box::new(WorkerReply {
                error: error.map(String::from),
                ..WorkerReply::default()
            }))
        };
        assert!(device_level_failure(&replied(None)).is_none());
        assert!(device_level_failure(&replied(Some("setup: invalid parameter"))).is_none());
        assert!(
            device_level_failure(&replied(Some("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal")))
                .is_some()
        );
        assert!(device_level_failure(&WorkerOutcome::Crashed("SIGSEGV".into())).is_some());
        assert!(device_level_failure(&WorkerOutcome::TimedOut(3.0)).is_some());
        assert!(device_level_failure(&WorkerOutcome::Interrupted).is_none());
    }

    #[test]
    fn a_gpu_leaves_after_a_failed_probe_or_repeated_faults() {
        let mut h = DeviceHealth::default();
        // One fault with a healthy probe: the GPU stays; a success resets the count.
        assert_eq!(h.record(1, Some("CUDA_ERROR_X"), Some(Ok(()))), None);
        assert_eq!(h.record(1, None, None), None);
        assert_eq!(h.record(1, Some("CUDA_ERROR_X"), Some(Ok(()))), None);
        assert!(!h.taken_out().contains_key(&1));
        // The second in a row takes it out.
        let why = h.record(1, Some("CUDA_ERROR_X"), Some(Ok(()))).unwrap();
        assert!(why.contains("2 cases in a row"), "{why}");
        assert!(h.taken_out().contains_key(&1) && !h.taken_out().contains_key(&0));
        // A failed probe takes a GPU out at once.
        let why = h
            .record(
                0,
                Some("killed by SIGSEGV"),
                Some(Err("CUDA_ERROR_NO_DEVICE".into())),
            )
            .unwrap();
        assert!(why.contains("failed the probe") && why.contains("CUDA_ERROR_NO_DEVICE"));
        assert_eq!(h.taken_out().len(), 2);
    }
}
