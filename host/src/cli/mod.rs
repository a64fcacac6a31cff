//! The command line: clap definitions and the orchestration of each subcommand. Each subcommand's
//! file parses its flags into the stages' own types and calls the stages; it holds no logic of
//! its own beyond that. Exit codes are in [`exit_codes`].

mod anchor_opts;
mod app;
mod attest;
mod baseline;
mod calibrate;
mod compare;
mod devices;
mod discover;
mod discovery_opts;
mod engine_opts;
pub mod exit_codes;
mod failure;
mod gate;
mod lock;
mod merge;
mod new;
mod probe;
mod replay;
mod report;
mod run;
mod shard;
mod worker;

pub use app::main;
