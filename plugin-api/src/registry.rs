//! In-plugin kernel registration with `inventory`. Each plugin library links its own copy of this
//! registry, so plugins never see each other's kernels.

use crate::Kernel;

/// One registered kernel constructor. Use [`register_kernel!`](crate::register_kernel).
pub struct KernelRegistration {
    pub make: fn() -> Box<dyn Kernel>,
}

inventory::collect!(KernelRegistration);

/// Registers a kernel type (constructed with `Default`) or a constructor expression:
///
/// ```ignore
/// apex_plugin_api::register_kernel!(MyKernel);
/// apex_plugin_api::register_kernel!(|| Box::new(MyKernel::with_mode(Mode::Fast)));
/// ```
///
/// A kernel registered from a module that the cdylib never names is silently dropped by the
/// linker; keep every kernel module reachable (`mod my_kernel;` in the plugin's `lib.rs`).
#[macro_export]
macro_rules! register_kernel {
    ($kernel:ty) => {
        $crate::inventory::submit! {
            $crate::KernelRegistration {
                make: || ::std::boxed::Box::new(<$kernel as ::std::default::Default>::default()),
            }
        }
    };
    (|| $make:expr) => {
        $crate::inventory::submit! {
            $crate::KernelRegistration { make: || $make }
        }
    };
}
