//! [`collect`]: the host side of `env.json` — machine, OS, CPU, memory, git state of the
//! checkout, tool version and the time of the run. The caller merges what only it knows (GPU,
//! driver, CUDA, clocks, plugin versions) through `extra`.
//!
//! Shape (`docs/schemas/env.schema.json`):
//!
//! ```text
//! { schema_version, timestamp_utc,
//!   host: { hostname, os, os_pretty, kernel_release, arch, cpu_model, logical_cpus, memory_total_mb },
//!   git:  { commit, dirty },                       // null when not in a git checkout
//!   tool: { name, version, build_profile, rustc? },
//!   ...extra }                                     // merged last, objects merged key by key
//! ```
//!
//! A value that cannot be read on this machine is `null`, never guessed.

use serde_json::{Map, Value, json};
use std::path::Path;
use std::process::Command;

/// The `schema_version` of `env.json`.
pub const ENV_SCHEMA_VERSION: u32 = 1;

/// The environment of this run, with `extra` merged over it (objects key by key, anything else
/// replaced). `extra` that is not an object is ignored; pass `Value::Null` for nothing.
pub fn collect(extra: Value) -> Value {
    let mut env = json!({
        "schema_version": ENV_SCHEMA_VERSION,
        "timestamp_utc": timestamp_utc(),
        "host": host(),
        "git": git(Path::new(".")),
        "tool": tool(),
    });
    merge(&mut env, extra);
    env
}

/// Now, as RFC 3339 UTC with `+00:00` (the form the Apex-X reports write).
pub fn timestamp_utc() -> String {
    jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%dT%H:%M:%S%.6f%:z")
        .to_string()
}

/// Deep merge: objects merge key by key, every other value in `over` replaces the old one.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot @ Value::Object(_)) if v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        // `null`, or a non-object merged over an object, has no keys to contribute.
        (_, Value::Null) | (Value::Object(_), _) => {}
        (b, o) => *b = o,
    }
}

fn host() -> Value {
    let uname = uname();
    json!({
        "hostname": hostname(),
        "os": uname.as_ref().map(|u| u.sysname.clone()).unwrap_or_else(|| std::env::consts::OS.into()),
        "os_pretty": os_pretty(),
        "kernel_release": uname.as_ref().map(|u| u.release.clone()),
        "arch": std::env::consts::ARCH,
        "cpu_model": cpu_model(),
        "logical_cpus": logical_cpus(),
        "memory_total_mb": memory_total_mb(),
    })
}

fn tool() -> Value {
    let mut t = Map::new();
    t.insert("name".into(), "apex-host".into());
    t.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    // A debug host builds and loads the plugins' debug builds (cli/discovery_opts.rs: the
    // host's profile), so this is the profile of the in-tree kernels' figures too: the gate's
    // outputs and `run` say so (a debug build's timings are not comparable with release ones).
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    t.insert("build_profile".into(), profile.into());
    // Set by a build step when there is one; without it the key is omitted, not guessed.
    if let Some(rustc) = option_env!("APEX_RUSTC_VERSION") {
        t.insert("rustc".into(), rustc.into());
    }
    Value::Object(t)
}

fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for `buf.len()` bytes; gethostname writes at most that many.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        if !name.is_empty() {
            return Some(name);
        }
    }
    read_trimmed("/proc/sys/kernel/hostname")
}

struct Uname {
    sysname: String,
    release: String,
}

fn uname() -> Option<Uname> {
    // SAFETY: `utsname` is plain old data; all-zero is a valid value that uname overwrites.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |chars: &[libc::c_char]| {
        let bytes: Vec<u8> = chars
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(Uname {
        sysname: field(&u.sysname),
        release: field(&u.release),
    })
}

fn os_pretty() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    parse_os_release(&text)
}

fn parse_os_release(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

fn cpu_model() -> Option<String> {
    parse_cpu_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
}

/// `model name` on x86; ARM kernels name the part elsewhere (`Model`, `Hardware`, `CPU part`).
fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware", "cpu model", "CPU part"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

fn logical_cpus() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        return Some(n as u64);
    }
    std::thread::available_parallelism()
        .ok()
        .map(|n| n.get() as u64)
}

fn memory_total_mb() -> Option<f64> {
    parse_mem_total_mb(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

fn parse_mem_total_mb(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kib / 1024.0 * 10.0).round() / 10.0)
}

/// The checked-out commit and whether tracked files differ from it; `null`s outside a checkout
/// or without git.
fn git(dir: &Path) -> Value {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = run(&["rev-parse", "HEAD"]);
    let dirty = commit
        .as_ref()
        .and_then(|_| run(&["status", "--porcelain", "--untracked-files=no"]))
        .map(|s| !s.is_empty());
    json!({ "commit": commit, "dirty": dirty })
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_this_machine() {
        let env = collect(json!({"cuda": {"available": false, "reason": "no libcuda"}}));
        assert_eq!(env["schema_version"], ENV_SCHEMA_VERSION);
        assert_eq!(env["tool"]["name"], "apex-host");
        assert_eq!(env["tool"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(env["host"]["arch"], std::env::consts::ARCH);
        assert!(env["host"]["logical_cpus"].as_u64().unwrap() >= 1);
        assert!(env["timestamp_utc"].as_str().unwrap().ends_with("+00:00"));
        assert_eq!(env["cuda"]["reason"], "no libcuda");
        // Inside a checkout (the usual case) the commit is HEAD's; from a source tarball, null.
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        match head {
            Some(head) => {
                assert_eq!(env["git"]["commit"], head.as_str());
                assert!(env["git"]["dirty"].is_boolean());
            }
            None => assert!(env["git"]["commit"].is_null() && env["git"]["dirty"].is_null()),
        }
    }

    #[test]
    fn git_outside_a_checkout_is_null() {
        let dir = tempfile::tempdir().unwrap();
        let g = git(dir.path());
        assert!(g["commit"].is_null() && g["dirty"].is_null());
    }

    #[test]
    fn merge_is_deep() {
        let mut base = json!({"host": {"hostname": "a", "arch": "x86_64"}, "n": 1});
        merge(
            &mut base,
            json!({"host": {"hostname": "b"}, "n": [2], "cuda": {"x": 1}}),
        );
        assert_eq!(
            base,
            json!({"host": {"hostname": "b", "arch": "x86_64"}, "n": [2], "cuda": {"x": 1}})
        );
        merge(&mut base, Value::Null);
        merge(&mut base, json!(3));
        assert_eq!(base["n"], json!([2]));
    }

    #[test]
    fn parses_proc_files() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            parse_cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(
            parse_cpu_model("processor : 0\nCPU part : 0xd0c\n").as_deref(),
            Some("0xd0c")
        );
        assert_eq!(parse_cpu_model("processor : 0\n"), None);
        assert_eq!(
            parse_mem_total_mb("MemTotal:       16384000 kB\nMemFree: 1 kB\n"),
            Some(16000.0)
        );
        assert_eq!(
            parse_os_release("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
                .as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }
}
