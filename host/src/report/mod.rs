//! Report writing: the only module that writes results to files and the terminal.
//! (being written)

mod atomic;

pub use atomic::{WriteError, to_sorted_json, write_atomic, write_json_atomic};
