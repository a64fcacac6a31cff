//! Probes TensorRT by trying to open `libnvinfer.so.10`, then `libnvinfer.so`; nothing is called
//! in the library, and it is closed again.

use super::record::TrtFacts;

pub const LIB_ABSENT: &str = "trt_unavailable: libnvinfer.so not found";
const CANDIDATES: [&str; 2] = ["libnvinfer.so.10", "libnvinfer.so"];

pub fn probe() -> TrtFacts {
    for name in CANDIDATES {
        // SAFETY: opening a library runs its initializers; libnvinfer's are the vendor's own and
        // this is the only way to learn whether TensorRT is installed.
        if unsafe { libloading::Library::new(name) }.is_ok() {
            return TrtFacts {
                available: true,
                reason: None,
                library: Some(name.into()),
            };
        }
    }
    TrtFacts {
        available: false,
        reason: Some(LIB_ABSENT.into()),
        library: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_never_panics() {
        let t = probe();
        assert_eq!(t.available, t.library.is_some());
        assert_eq!(t.available, t.reason.is_none());
    }
}
