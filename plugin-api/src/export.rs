//! [`export_plugin!`](crate::export_plugin): the one line that makes a cdylib an apex plugin.

/// Exports this library's root module. Put it once in the plugin's `lib.rs`, next to the
/// `mod` lines of its kernels:
///
/// ```ignore
/// mod scale;                          // each module calls register_kernel!
/// apex_plugin_api::export_plugin!();
/// ```
///
/// The plugin's name and version are its Cargo package name and version.
#[macro_export]
macro_rules! export_plugin {
    () => {
        #[::abi_stable::export_root_module]
        pub fn apex_plugin_root() -> $crate::PluginRoot_Ref {
            use ::abi_stable::prefix_type::PrefixTypeTrait;
            $crate::PluginRoot {
                abi_version: $crate::ABI_VERSION,
                plugin_name: ::abi_stable::std_types::RStr::from_str(env!("CARGO_PKG_NAME")),
                plugin_version: ::abi_stable::std_types::RStr::from_str(env!("CARGO_PKG_VERSION")),
                kernels: $crate::ffi::collect_registered_kernels,
            }
            .leak_into_prefix()
        }
    };
}
