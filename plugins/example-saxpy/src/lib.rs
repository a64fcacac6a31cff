//! The template plugin: one real kernel, `example.saxpy` (`y = a*x + y`), on the CPU.
//!
//! Copy this crate to `plugins/<your-family>/`, rename the package and the kernel id, and
//! `apex-host discover` lists it; nothing else in the repository changes.
//! `docs/plugin-authoring.md` walks through every line.

mod saxpy;

apex_plugin_api::export_plugin!();
