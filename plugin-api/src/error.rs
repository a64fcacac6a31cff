//! The error value every plugin call returns instead of panicking across the boundary.

use abi_stable::{StableAbi, std_types::RString};
use std::fmt;

/// What kind of failure a plugin reports; the host maps it to a case status and reason.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The parameters, backend or precision are not supported by this kernel.
    InvalidInput,
    /// A CUDA call failed; the message starts with the CUDA error name (e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`).
    Cuda,
    /// The plugin panicked; the message is the panic payload.
    Panicked,
    /// Anything else.
    Other,
}

/// An error that crossed the plugin boundary: a kind and a human-readable message.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    pub kind: ErrorKind,
    pub message: RString,
}

impl PluginError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: RString::from(message.into()),
        }
    }

    /// The parameters, backend or precision are not usable by this kernel.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// A CUDA failure; put the CUDA error name first in `message`.
    pub fn cuda(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Cuda, message)
    }

    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other, message)
    }

    /// Converts a caught panic payload into an error value.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let text = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-string payload".to_string()
        };
        Self::new(ErrorKind::Panicked, format!("plugin panicked: {text}"))
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PluginError {}
