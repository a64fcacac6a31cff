//! How the nn ops launch their one kernel a call: with programmatic dependent launch
//! (plugin-api's `LaunchEx::dependent`, through `DeviceState::launcher`), so a call's blocks are
//! scheduled while the stream's previous kernel drains instead of after it has finished. Every kernel starts with `dependent_launch_start`
//! (`cuda/common.cuh`): it waits for the previous kernel's writes before touching memory, then
//! lets the next call's blocks in. On an H100 a chain of float4 copies gained 0.25-0.33 µs a call
//! (`benches/probes/pdl_chain.cu`): a tenth of a 2 M-element op, nothing at 100 MB.
//!
//! [`with_dependent_launch`] turns it off around a case's setup, so the GPU self-check and bench
//! verify and time both launches (nothing in the host sets it).

use std::cell::Cell;

/// The first compute capability with programmatic dependent launch (sm_90); older devices launch
/// plainly.
pub const MIN_MAJOR: u32 = 9;

thread_local! {
    static DEPENDENT: Cell<bool> = const { Cell::new(true) };
}

/// Runs `f` with the cases it sets up launching dependently (`true`, the default) or plainly.
pub fn with_dependent_launch<R>(dependent: bool, f: impl FnOnce() -> R) -> R {
    apex_plugin_api::tuning::with_override(&DEPENDENT, dependent, f)
}

/// Whether a case set up now launches dependently.
pub fn dependent_launch() -> bool {
    DEPENDENT.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependent_launch_is_the_default_and_the_override_turns_it_off() {
        assert!(dependent_launch());
        assert!(!with_dependent_launch(false, dependent_launch));
        assert!(dependent_launch());
    }
}
