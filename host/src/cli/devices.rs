//! The GPUs of `apex-host run`: which ones (`--device N` or `--devices all|N,N`), what each is
//! (its facts and measured copy and L2 lines, from `apex-host calibrate --bandwidth-only` run
//! once per GPU, concurrently, in a subprocess so the host never holds a CUDA context), the
//! schedule's [`DeviceSlot`]s (with each GPU's share of the cores), and their `env.json` entries.

use std::path::Path;

use serde_json::{Value, json};

use super::exit_codes::ApexExitCode;
use super::failure::Failure;
use crate::facts::Facts;
use crate::interrupt::Interrupt;
use crate::measure::{AssembleContext, DeviceSlot, allowed_cpus, split_cpus};
use crate::plan::Plan;
use crate::report::BandwidthLines;

/// `--devices`: every visible GPU, or the listed ordinals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelection {
    All,
    List(Vec<u32>),
}

impl DeviceSelection {
    /// The selection as `summary.json`'s `config.devices` records it.
    pub fn to_json(&self) -> Value {
        match self {
            DeviceSelection::All => json!("all"),
            DeviceSelection::List(l) => json!(l),
        }
    }
}

/// Parses a `--devices` value.
pub fn parse_devices(s: &str) -> Result<DeviceSelection, String> {
    if s == "all" {
        return Ok(DeviceSelection::All);
    }
    let mut list = Vec::new();
    for part in s.split(',') {
        let n: u32 = part.trim().parse().map_err(|_| {
            format!("`{part}` is not a device ordinal (expected `all` or a list such as `0,1`)")
        })?;
        if list.contains(&n) {
            return Err(format!("device {n} is listed twice"));
        }
        list.push(n);
    }
    Ok(DeviceSelection::List(list))
}

/// The GPUs the run uses: `devices` (every visible one for `all`), else `device`.
pub fn ordinals(
    device: u32,
    devices: Option<&DeviceSelection>,
    facts: &Facts,
) -> Result<Vec<u32>, Failure> {
    let visible = facts.cuda.device_count;
    match devices {
        None => Ok(vec![device]),
        Some(DeviceSelection::All) => Ok((0..visible.max(1)).collect()),
        Some(DeviceSelection::List(list)) => {
            if let Some(bad) = list.iter().find(|&&d| facts.cuda.available && d >= visible) {
                return Err((
                    ApexExitCode::USAGE,
                    format!(
                        "--devices: GPU {bad} does not exist; this machine shows {visible} (ordinals 0..{}); check CUDA_VISIBLE_DEVICES",
                        visible.saturating_sub(1)
                    ),
                ));
            }
            Ok(list.clone())
        }
    }
}

/// What the run knows about one GPU: its facts for env.json and its measured lines for `% of
/// peak` (`None` when calibration failed: the figures then carry no percentage).
pub struct DeviceContext {
    pub ordinal: u32,
    pub info: Value,
    pub copy_bandwidth_gbps: Option<f64>,
    pub add_line_gbps: Option<f64>,
    pub read_line_gbps: Option<f64>,
    pub l2_line_gbps: Option<f64>,
}

impl DeviceContext {
    fn unmeasured(ordinal: u32) -> Self {
        Self {
            ordinal,
            info: Value::Null,
            copy_bandwidth_gbps: None,
            add_line_gbps: None,
            read_line_gbps: None,
            l2_line_gbps: None,
        }
    }
}

/// Calibrates every GPU of `ordinals` concurrently, when the plan has device cases to run
/// (otherwise none: a CPU-only run starts no CUDA subprocess).
pub fn calibrate(
    exe: &Path,
    plan: &Plan,
    ordinals: &[u32],
    scratch: &Path,
    interrupt: &Interrupt,
) -> Vec<DeviceContext> {
    let wants_cuda = plan
        .cases
        .iter()
        .any(|c| c.skip.is_none() && c.key.backend != "cpu");
    if !wants_cuda {
        return Vec::new();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = ordinals
            .iter()
            .map(|&ordinal| scope.spawn(move || calibrate_one(exe, ordinal, scratch, interrupt)))
            .collect();
        handles
            .into_iter()
            .zip(ordinals)
            .map(|(h, &ordinal)| h.join().unwrap_or(DeviceContext::unmeasured(ordinal)))
            .collect()
    })
}

fn calibrate_one(exe: &Path, ordinal: u32, scratch: &Path, interrupt: &Interrupt) -> DeviceContext {
    let out = scratch.join(format!("device-{ordinal}.json"));
    let status = spawn_tracked(
        std::process::Command::new(exe)
            .args([
                "calibrate",
                "--bandwidth-only",
                "--json",
                "--device",
                &ordinal.to_string(),
                "--output",
            ])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
        interrupt,
    );
    let doc = std::fs::read_to_string(&out)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    match (doc, status) {
        (Some(doc), Ok(s)) if s.success() => DeviceContext {
            ordinal,
            copy_bandwidth_gbps: doc.get("copy_bandwidth_gbps").and_then(Value::as_f64),
            add_line_gbps: doc.get("add_line_gbps").and_then(Value::as_f64),
            read_line_gbps: doc.get("read_line_gbps").and_then(Value::as_f64),
            l2_line_gbps: doc.get("l2_line_gbps").and_then(Value::as_f64),
            info: doc.get("device").cloned().unwrap_or(Value::Null),
        },
        _ => DeviceContext::unmeasured(ordinal),
    }
}

/// Runs `cmd` to its end in its own process group, which a Ctrl-C kills (as it kills workers).
fn spawn_tracked(
    cmd: &mut std::process::Command,
    interrupt: &Interrupt,
) -> std::io::Result<std::process::ExitStatus> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd.process_group(0).spawn()?;
    let _tracked = interrupt.track(libc::pid_t::try_from(child.id()).unwrap_or(0));
    child.wait()
}

/// The schedule's GPUs: each with its own lines over `base`, and, when there are several, its
/// own contiguous share of this process's cores (one GPU alone is not pinned).
pub fn slots(contexts: &[DeviceContext], base: AssembleContext) -> Vec<DeviceSlot> {
    let mut shares = if contexts.len() > 1 {
        split_cpus(&allowed_cpus(), contexts.len())
    } else {
        Vec::new()
    }
    .into_iter();
    contexts
        .iter()
        .map(|d| DeviceSlot {
            ordinal: d.ordinal,
            assemble: AssembleContext {
                bandwidth: d.copy_bandwidth_gbps.map(|copy| BandwidthLines {
                    copy,
                    add: d.add_line_gbps,
                    read: d.read_line_gbps,
                }),
                l2_line_gbps: d.l2_line_gbps,
                ..base
            },
            cpus: shares.next().unwrap_or_default(),
        })
        .collect()
}

/// `env.json`'s `cuda_devices`: every GPU with its facts, lines, cores and, when it left the
/// pool, why (`devices_out`).
pub fn env_entries(
    contexts: &[DeviceContext],
    slots: &[DeviceSlot],
    devices_out: &[(u32, String)],
) -> Value {
    contexts
        .iter()
        .zip(slots)
        .map(|(d, slot)| {
            json!({
                "ordinal": d.ordinal,
                "device": d.info,
                "copy_bandwidth_gbps": d.copy_bandwidth_gbps,
                "add_line_gbps": d.add_line_gbps,
                "read_line_gbps": d.read_line_gbps,
                "l2_line_gbps": d.l2_line_gbps,
                "cpus": slot.cpus,
                "taken_out": devices_out.iter().find(|(o, _)| *o == d.ordinal).map(|(_, r)| r),
            })
        })
        .collect()
}
