//! The plugin's root module: the one symbol the host loads, with the version handshake.

use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RResult, RStr, RVec},
};

use crate::{PluginError, ffi::FfiKernelBox};

/// The explicit ABI version. The host refuses a plugin whose `abi_version` differs, before it
/// touches anything else. Bump it (and this crate's minor version) on any change that is not an
/// append after a `last_prefix_field` marker.
pub const ABI_VERSION: u32 = 4;

/// What a plugin library exports. A prefix type: fields may be appended after `kernels`.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginRoot_Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginRoot {
    pub abi_version: u32,
    /// The plugin crate's name and version (from its Cargo.toml).
    pub plugin_name: RStr<'static>,
    pub plugin_version: RStr<'static>,
    #[sabi(last_prefix_field)]
    pub kernels: extern "C" fn() -> RResult<RVec<FfiKernelBox>, PluginError>,
}

impl RootModule for PluginRoot_Ref {
    declare_root_module_statics! {PluginRoot_Ref}
    const BASE_NAME: &'static str = "apex_plugin";
    const NAME: &'static str = "apex_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
