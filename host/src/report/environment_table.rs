//! The environment table of a report: what `env.json` says about the machine (host, OS, CPU,
//! memory, GPU, driver, CUDA, NVRTC, the measured bandwidth lines, git, tool), read by dotted
//! paths with fallbacks for older files. summary.md prints it as its Environment section and
//! index.html as its environment panel.

use serde_json::Value;

use super::fmt::NA;
use super::table::Table;

/// A config or environment value on one line: scalars, and lists of scalars joined by commas.
pub(super) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => Some(
            items
                .iter()
                .filter_map(scalar)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => None,
    }
}

/// The first of `paths` (dot-separated; numbers index arrays) that holds a non-null scalar.
fn lookup(env: &Value, paths: &[&str]) -> Option<String> {
    paths.iter().find_map(|path| {
        let mut v = env;
        for part in path.split('.') {
            v = match part.parse::<usize>() {
                Ok(i) => v.get(i)?,
                Err(_) => v.get(part)?,
            };
        }
        if v.is_null() { None } else { scalar(v) }
    })
}

/// The rows of the environment table: host, OS, CPU, memory, GPU, driver, CUDA, copy line, git,
/// tool (shared by summary.md and index.html).
pub(crate) fn environment_rows(env: &Value) -> Vec<(String, String)> {
    let get = |paths: &[&str]| lookup(env, paths).unwrap_or_else(|| NA.into());
    let mut rows: Vec<(String, String)> = Vec::new();
    rows.push(("host".into(), get(&["host.hostname"])));
    let os = match (
        lookup(env, &["host.os_pretty", "host.os"]),
        lookup(env, &["host.kernel_release"]),
    ) {
        (Some(os), Some(k)) => format!("{os} (kernel {k})"),
        (Some(os), None) => os,
        (None, Some(k)) => format!("kernel {k}"),
        (None, None) => NA.into(),
    };
    rows.push(("OS".into(), os));
    let cpu = match lookup(env, &["host.logical_cpus"]) {
        Some(n) => format!(
            "{} ({n} logical CPUs, {})",
            get(&["host.cpu_model"]),
            get(&["host.arch"])
        ),
        None => get(&["host.cpu_model"]),
    };
    rows.push(("CPU".into(), cpu));
    rows.push((
        "memory".into(),
        lookup(env, &["host.memory_total_mb"]).map_or_else(|| NA.into(), |m| format!("{m} MB")),
    ));
    // The run merges its facts (`facts.cuda`), the calibrated device (`cuda_device`) and the
    // copy bandwidth over env.json; older or hand-made files may use a flat `cuda` object.
    let gpu = match lookup(
        env,
        &[
            "cuda_device.name",
            "facts.cuda.device_name",
            "cuda.device_name",
        ],
    ) {
        Some(name) => match lookup(
            env,
            &[
                "cuda_device.compute_capability",
                "facts.cuda.compute_capability",
                "cuda.compute_capability",
            ],
        ) {
            Some(cc) => format!("{name} (compute capability {cc})"),
            None => name,
        },
        None => match lookup(env, &["facts.cuda.reason", "cuda.reason"]) {
            Some(reason) => format!("none ({reason})"),
            None => NA.into(),
        },
    };
    rows.push(("GPU".into(), gpu));
    rows.push((
        "driver".into(),
        get(&["cuda_device.driver_version", "cuda.driver_version"]),
    ));
    rows.push((
        "CUDA".into(),
        get(&[
            "cuda_device.cuda_driver_api",
            "facts.cuda.driver_version",
            "cuda.cuda_version",
        ]),
    ));
    if let Some(nvrtc) = lookup(env, &["cuda_device.nvrtc_version"]) {
        rows.push(("NVRTC".into(), nvrtc));
    }
    if let Some(bw) = lookup(env, &["copy_bandwidth_gbps", "cuda.copy_bandwidth_gbps"]) {
        rows.push(("copy bandwidth".into(), format!("{bw} GB/s (measured)")));
    }
    if let (Some(add), Some(read)) = (
        lookup(env, &["add_line_gbps"]),
        lookup(env, &["read_line_gbps"]),
    ) {
        rows.push((
            "read-heavy lines".into(),
            format!(
                "add (2 reads : 1 write) {add} GB/s, read-only {read} GB/s (measured; `% copy BW` is against the line of each case's read:write mix)"
            ),
        ));
    }
    let git = match lookup(env, &["git.commit"]) {
        Some(c) => match env.pointer("/git/dirty").and_then(Value::as_bool) {
            Some(true) => format!("{c} (dirty)"),
            _ => c,
        },
        None => NA.into(),
    };
    rows.push(("git".into(), git));
    let tool = match lookup(env, &["tool.version"]) {
        Some(v) => match lookup(env, &["tool.build_profile"]) {
            Some(p) => format!("{v} ({p} build)"),
            None => v,
        },
        None => NA.into(),
    };
    rows.push(("apex-host".into(), tool));
    rows
}

/// The `## Environment` section of summary.md.
pub(super) fn environment(env: &Value, md: &mut String) {
    md.push_str("## Environment\n\n");
    let mut t = Table::new(&["", ""]);
    for (k, v) in environment_rows(env) {
        t.row(vec![k, v]);
    }
    md.push_str(&t.markdown());
    md.push('\n');
}
