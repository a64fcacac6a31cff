//! [`with_override`]: a per-thread setting that a benchmark example or a GPU self-check puts in
//! force around a case's setup (a launch plan to time or verify beside the default), and that a
//! plugin reads where it plans. Nothing in the host sets one, so a run through `apex-host`
//! always measures the plugin's defaults.
//!
//! A plugin declares the setting as a `thread_local!` `Cell` and wraps this function:
//!
//! ```
//! use std::cell::Cell;
//!
//! thread_local! {
//!     static RESIDENT: Cell<bool> = const { Cell::new(false) };
//! }
//!
//! /// Runs `f` with the resident plan (`true`) or the default.
//! pub fn with_resident<R>(resident: bool, f: impl FnOnce() -> R) -> R {
//!     apex_plugin_api::tuning::with_override(&RESIDENT, resident, f)
//! }
//!
//! assert!(with_resident(true, || RESIDENT.with(Cell::get)));
//! assert!(!RESIDENT.with(Cell::get));
//! ```

use std::cell::Cell;
use std::thread::LocalKey;

/// Runs `f` with `key` set to `value` on this thread, then restores the previous value, also
/// when `f` panics (a self-check that catches a case's panic goes on with the defaults).
pub fn with_override<T: Copy + 'static, R>(
    key: &'static LocalKey<Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: Copy + 'static> {
        key: &'static LocalKey<Cell<T>>,
        before: T,
    }
    impl<T: Copy + 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.key.with(|c| c.set(self.before));
        }
    }
    let before = key.with(|c| c.replace(value));
    let _restore = Restore { key, before };
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SETTING: Cell<u32> = const { Cell::new(1) };
    }

    #[test]
    fn the_value_holds_inside_and_is_restored_after_a_return_or_a_panic() {
        assert_eq!(with_override(&SETTING, 7, || SETTING.with(Cell::get)), 7);
        assert_eq!(SETTING.with(Cell::get), 1);
        let nested = with_override(&SETTING, 2, || {
            with_override(&SETTING, 3, || SETTING.with(Cell::get)) * 10 + SETTING.with(Cell::get)
        });
        assert_eq!(nested, 32);
        let caught = std::panic::catch_unwind(|| with_override(&SETTING, 9, || panic!("boom")));
        assert!(caught.is_err());
        assert_eq!(SETTING.with(Cell::get), 1);
    }
}
