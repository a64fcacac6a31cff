//! The bench.yaml loader on arbitrary file contents: `apex_host::config::load` (what `run` and
//! `discover` call), then the checks and the sweep expansion for a kernel the entries can match.
//! Nothing panics, and every error is located in the file (`file:line:col`; the whole file only
//! for the errors that concern all of it: unreadable, not UTF-8).

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use apex_host::config::{CliOverrides, load};
use apex_host::model::{KernelInfo, ParamInfo};
use apex_plugin_api::{Backend, Precision};
use libfuzzer_sys::fuzz_target;

/// The file each input is written to, and a suite folder that does not exist.
fn paths() -> &'static (PathBuf, PathBuf) {
    static PATHS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PATHS.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("apex-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        (dir.join("bench.yaml"), dir.join("no-suite-dir"))
    })
}

fn kernel() -> KernelInfo {
    let param = |name: &str, default: serde_json::Value| ParamInfo {
        name: name.into(),
        default,
        description: String::new(),
    };
    KernelInfo {
        id: "example.saxpy".into(),
        description: String::new(),
        backends: vec![Backend::Cpu, Backend::Cuda],
        precisions: vec![Precision::Fp32, Precision::Fp16],
        params: vec![
            param("n", serde_json::json!(1024)),
            param("alpha", serde_json::json!(2.0)),
            param("mode", serde_json::json!("blend")),
            param("shape", serde_json::json!([2, 3])),
        ],
        tolerances: Default::default(),
        graph_capturable: true,
        plugin: "example-saxpy".into(),
        library: PathBuf::from("libexample_saxpy.so"),
        crate_dir: None,
    }
}

fuzz_target!(|data: &[u8]| {
    let (file, suite_dir) = paths();
    std::fs::write(file, data).expect("scratch file written");
    match load(std::slice::from_ref(file), suite_dir) {
        Ok(config) => {
            let kernel = kernel();
            let _ = config
                .check(std::slice::from_ref(&kernel))
                .map_err(|e| e.to_string());
            for cli in [
                CliOverrides::default(),
                CliOverrides {
                    quick: true,
                    iters: Some(3),
                    backends: Some(vec![Backend::Cpu]),
                    ..CliOverrides::default()
                },
            ] {
                let _ = config.expand(&kernel, &cli).map_err(|e| e.to_string());
            }
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "an error result holds an error");
            for e in errors.iter() {
                assert_eq!(
                    e.loc.path(),
                    file.as_path(),
                    "every error names the file: {e}"
                );
                let whole_file = matches!(e.path.as_str(), "<file>" | "<directory>");
                assert!(
                    whole_file || (e.loc.line >= 1 && e.loc.column >= 1),
                    "every error in the text has a line and column: {e}"
                );
                let shown = e.to_string();
                assert!(shown.contains("(hint: "), "every error has a hint: {shown}");
            }
        }
    }
});
