//! Shared helpers of the integration tests: the real `apex-host` binary, run against this
//! checkout's real plugins (fixtures included), in a private output folder.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of these helpers"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The workspace root (the checkout apex-host scans).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// `apex-host ARGS` with `--root` set to this checkout, CUDA forced visible-or-not as the machine is.
pub fn apex(args: &[&str]) -> Output {
    command(args).output().expect("apex-host runs")
}

/// The command [`apex`] runs, to spawn it instead (stdin, stdout and stderr are the caller's).
pub fn command(args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_apex-host"));
    cmd.args(args)
        .arg("--root")
        .arg(root())
        .env_remove("APEX_PLUGIN_PATH")
        .env("CI", "1");
    cmd
}

/// A suite folder that runs every CPU case in one worker process, so a case is final as soon as
/// its worker ends (the default, three processes interleaved in rounds, finishes cases late).
pub fn one_process_config() -> tempfile::TempDir {
    let config = tempfile::tempdir().expect("temporary folder");
    std::fs::write(
        config.path().join("10-one-process.yaml"),
        "kernel: '*'\nprotocol: {processes: 1}\n",
    )
    .expect("config written");
    config
}

/// Waits up to `limit` for `child` to exit; `None` if it is still running.
pub fn wait_for(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// The case of `summary` whose id starts with `prefix`.
pub fn case<'a>(summary: &'a serde_json::Value, prefix: &str) -> &'a serde_json::Value {
    let cases = summary["benchmarks"]
        .as_object()
        .expect("benchmarks is an object");
    let matching: Vec<_> = cases
        .iter()
        .filter(|(id, _)| id.starts_with(prefix))
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "exactly one case starts with {prefix}: {:?}",
        cases.keys().collect::<Vec<_>>()
    );
    matching[0].1
}

/// A scratch checkout (so a test never modifies the repository): the workspace manifest a
/// checkout has, reduced to what a plugin needs (this checkout's plugin-api, abi_stable, cudarc
/// as the workspace pins it), this checkout's Cargo.lock, and an empty `plugins/`. Point
/// `CARGO_TARGET_DIR` at `root()/target` to reuse the built dependencies.
pub fn scratch_checkout() -> tempfile::TempDir {
    let ws = tempfile::tempdir().expect("temporary folder");
    let main = root();
    let manifest = std::fs::read_to_string(main.join("Cargo.toml")).expect("workspace manifest");
    let cudarc = manifest
        .lines()
        .find(|l| l.starts_with("cudarc = "))
        .expect("the workspace pins cudarc");
    std::fs::write(
        ws.path().join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [\"plugins/*\"]\n\n[workspace.package]\nversion = \"0.1.0\"\nedition = \"2024\"\nrust-version = \"1.95\"\nlicense = \"Apache-2.0\"\npublish = false\n\n[workspace.dependencies]\napex-plugin-api = {{ path = \"{}\" }}\nabi_stable = \"0.11.3\"\n{cudarc}\n\n[workspace.lints.rust]\n",
            main.join("plugin-api").display()
        ),
    )
    .expect("scratch manifest written");
    std::fs::copy(main.join("Cargo.lock"), ws.path().join("Cargo.lock")).expect("lock copied");
    std::fs::create_dir(ws.path().join("plugins")).expect("plugins/ made");
    ws
}

/// `apex-host ARGS` without the `--root` that [`apex`] adds, for the subcommands that read report
/// folders only (`report`, `merge`, `baseline`).
pub fn apex_bare<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    std::process::Command::new(env!("CARGO_BIN_EXE_apex-host"))
        .args(args)
        .output()
        .expect("apex-host runs")
}

/// `apex-host ARGS --root CHECKOUT` for a [`scratch_checkout`], building its plugins into this
/// checkout's target folder (the dependencies are built there already).
pub fn apex_in(checkout: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_apex-host"))
        .args(args)
        .arg("--root")
        .arg(checkout)
        .env("CARGO_TARGET_DIR", root().join("target"))
        .env("CI", "1")
        .output()
        .expect("apex-host runs")
}

/// Validates `doc` against `docs/schemas/<schema>`.
pub fn validate_schema(schema: &str, doc: &serde_json::Value) -> Result<(), String> {
    let path = root().join("docs/schemas").join(schema);
    let mut schemas = boon::Schemas::new();
    let idx = boon::Compiler::new()
        .compile(&path.display().to_string(), &mut schemas)
        .map_err(|e| format!("schema does not compile: {e:#}"))?;
    schemas.validate(doc, idx).map_err(|e| format!("{e:#}"))
}
