//! The gate in front of cudarc: a missing libcuda or a missing symbol makes cudarc *panic*
//! (`guides/rust-stack.md` §3.2), so every entry point checks [`libcuda_present`] first and runs
//! inside [`guarded`], which turns a panic into [`CudaError::Panicked`]. Also reads which shared
//! library file a loaded library came from ([`loaded_library`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;

use super::CudaError;

/// Whether libcuda can be loaded. Cached: the answer does not change within a process, and the
/// probe dlopens every candidate name.
pub fn libcuda_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: the probe only dlopens and drops candidate libraries.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// Runs `f` if libcuda is present, catching any panic from inside cudarc.
pub fn guarded<T>(
    call: &'static str,
    f: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    if !libcuda_present() {
        return Err(CudaError::no_driver());
    }
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(CudaError::Panicked {
            call,
            message: panic_text(payload.as_ref()),
        })
    })
}

/// The message of a caught panic.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// The distinct files mapped into this process whose name starts with `stem` (for example
/// `libnvrtc.so`), joined with ` + ` when there are several, from `/proc/self/maps`.
pub fn loaded_library(stem: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    mapped_files(&maps, stem)
}

fn mapped_files(maps: &str, stem: &str) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
        let matches = Path::new(path)
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with(stem));
        if matches && !found.contains(&path) {
            found.push(path);
        }
    }
    (!found.is_empty()).then(|| found.join(" + "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_files_are_deduplicated_and_matched_by_file_name() {
        let maps = "\
7f00-7f01 r--p 00000000 08:01 1 /usr/lib/libnvrtc.so.13.0.88
7f01-7f02 r-xp 00001000 08:01 1 /usr/lib/libnvrtc.so.13.0.88
7f02-7f03 r--p 00000000 08:01 2 /usr/lib/libnvrtc-builtins.so.13.0
7f03-7f04 rw-p 00000000 00:00 0
7f04-7f05 r--p 00000000 08:01 3 /opt/libnvrtc.so.13/other.so";
        assert_eq!(
            mapped_files(maps, "libnvrtc.so").as_deref(),
            Some("/usr/lib/libnvrtc.so.13.0.88")
        );
        assert_eq!(
            mapped_files(maps, "libnvrtc").as_deref(),
            Some("/usr/lib/libnvrtc.so.13.0.88 + /usr/lib/libnvrtc-builtins.so.13.0")
        );
        assert_eq!(mapped_files(maps, "libcuda"), None);
    }

    #[test]
    fn a_panic_inside_guarded_becomes_an_error() {
        if !libcuda_present() {
            let r: Result<(), _> = guarded("probe", || Ok(()));
            assert!(matches!(r, Err(CudaError::Unavailable { .. })));
            return;
        }
        let r: Result<(), CudaError> = guarded("probe", || panic!("boom"));
        assert!(matches!(r, Err(CudaError::Panicked { ref message, .. }) if message == "boom"));
    }
}
