//! Compiles the TensorRT shim (`shim/trt_shim.cpp`) only where TensorRT's headers are found, and
//! sets `cfg(apex_trt_shim)` then. The shim never links libnvinfer: it gets TensorRT's runtime
//! from `createInferRuntime_INTERNAL`, which the plugin resolves with dlopen at run time. Without
//! the headers the plugin builds anyway, and TensorRT cases are skipped with the reason.
//!
//! Header search order (recorded in `APEX_TRT_HEADER_SEARCH` for the skip reason):
//! `$TENSORRT_ROOT/include`, `/usr/include/x86_64-linux-gnu`, `/usr/include/aarch64-linux-gnu`,
//! `/usr/include`, `/usr/local/tensorrt/include`. CUDA's headers (`cuda_runtime_api.h`, which
//! NvInfer.h includes) come from `$CUDA_HOME/include` or `/usr/local/cuda/include`.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(apex_trt_shim)");
    println!("cargo::rerun-if-changed=shim/trt_shim.cpp");
    println!("cargo::rerun-if-env-changed=TENSORRT_ROOT");
    println!("cargo::rerun-if-env-changed=CUDA_HOME");
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("TENSORRT_ROOT").filter(|v| !v.is_empty()) {
        dirs.push(Path::new(&root).join("include"));
    }
    for d in [
        "/usr/include/x86_64-linux-gnu",
        "/usr/include/aarch64-linux-gnu",
        "/usr/include",
        "/usr/local/tensorrt/include",
    ] {
        dirs.push(PathBuf::from(d));
    }
    let search: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    println!(
        "cargo::rustc-env=APEX_TRT_HEADER_SEARCH={}",
        search.join(", ")
    );
    let Some(include) = dirs.iter().find(|d| d.join("NvInfer.h").is_file()) else {
        return;
    };
    let cuda_home = std::env::var_os("CUDA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .file("shim/trt_shim.cpp")
        .include(include)
        .include(cuda_home.join("include"))
        .warnings(false)
        // TensorRT's own headers use their deprecated plugin enums inline.
        .flag_if_supported("-Wno-deprecated-declarations");
    build.compile("apex_trt_shim");
    println!("cargo::rustc-cfg=apex_trt_shim");
}
