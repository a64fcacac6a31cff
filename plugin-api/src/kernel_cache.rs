//! A disk cache of compiled CUDA code, so that each worker process (one per case) does not pay
//! NVRTC again for a source it compiled for an earlier case: keyed by the NVRTC version, the
//! architecture, the options, the program name and the source, one file per entry under
//! `$APEX_KERNEL_CACHE` (default `$XDG_CACHE_HOME/apex-bench/kernels`, else
//! `~/.cache/apex-bench/kernels`). `APEX_KERNEL_CACHE=off` disables it. Entries are written
//! atomically (temporary file + rename), so concurrent workers never read half an entry; an
//! unreadable cache is never an error, only a miss.

use std::path::PathBuf;

/// The cache folder, or `None` when disabled or no home is known.
pub fn dir() -> Option<PathBuf> {
    match std::env::var_os("APEX_KERNEL_CACHE") {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("apex-bench").join("kernels")),
    }
}

/// A stable 64-bit FNV-1a digest of `parts` (each length-prefixed, so no two lists collide by
/// concatenation). Stable across processes and builds, unlike `std`'s hasher.
pub fn key(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for p in parts {
        eat(&(p.len() as u64).to_le_bytes());
        eat(p);
    }
    format!("{h:016x}")
}

/// The cached bytes of `key` with `extension`, if present.
pub fn get(key: &str, extension: &str) -> Option<Vec<u8>> {
    std::fs::read(dir()?.join(format!("{key}.{extension}"))).ok()
}

/// Stores `bytes` under `key` (best effort: a failure only means a later miss).
pub fn put(key: &str, extension: &str, bytes: &[u8]) {
    let Some(dir) = dir() else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok()
        && std::fs::rename(&tmp, dir.join(format!("{key}.{extension}"))).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_length_prefixed() {
        assert_eq!(key(&[b"ab", b"c"]), key(&[b"ab", b"c"]));
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_ne!(key(&[b"sm_90", b"x"]), key(&[b"sm_80", b"x"]));
        assert_eq!(key(&[]).len(), 16);
    }

    #[test]
    fn entries_round_trip_through_the_folder() {
        let tmp = std::env::temp_dir().join(format!("apex-kc-{}", std::process::id()));
        // SAFETY: this test is the only code in its process that reads the variable (the
        // other test does not touch the environment).
        unsafe { std::env::set_var("APEX_KERNEL_CACHE", &tmp) };
        let k = key(&[b"round trip"]);
        assert_eq!(get(&k, "ptx"), None);
        put(&k, "ptx", b".version 8.0");
        assert_eq!(get(&k, "ptx").as_deref(), Some(&b".version 8.0"[..]));
        unsafe { std::env::set_var("APEX_KERNEL_CACHE", "off") };
        assert_eq!(get(&k, "ptx"), None, "off disables reads");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
