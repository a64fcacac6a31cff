//! `apex-host calibrate`: proves the CUDA timers against kernels of known duration and measures
//! the device's copy bandwidth, the 100 % of every `% of peak` figure.
//!
//! ```text
//! run ─┬─ timer resolution probe (%globaltimer)
//!      ├─ for T in 1, 10, 100, 1000 µs:
//!      │    cold  × paced spin      → error vs T
//!      │    batch × paced spin      → error vs T   (graph replay)
//!      │    batch × isolated spin   → T + launch gap (what an ordinary 1-block kernel costs)
//!      └─ copy_bandwidth (cuMemcpyDtoD, bytes counted as torch_anchor.py does)
//! ```

mod copy;
mod report;
mod run;
mod spin;

pub use copy::{CopyBandwidth, bandwidth_lines, copy_bandwidth, l2_line_gbps};
pub use report::{CalibrationReport, CalibrationRow, error_pct, median, target_pct};
pub use run::{CalibrateOptions, run};
pub use spin::{SpinKind, SpinWorkload};
