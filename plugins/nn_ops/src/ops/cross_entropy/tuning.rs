//! The forward + gradient kernel's plans, for the GPU bench's comparison (`nn_ops_gpu_check
//! --bench`) and the self-check: a case set up on this thread inside [`with_grad_plan`]
//! uses the plan it names, any other case [`GradPlan::DEFAULT`]. Never set by the plugin
//! itself.

use std::cell::Cell;
use std::fmt;

/// How a block of the forward + gradient kernel gets its row slice to the gradient, after
/// the statistics and the wait for its siblings (see `cuda/cross_entropy.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradPlan {
    /// Walks its slice (at most [`crate::rows::REREAD_SLICE_BYTES`]) twice: the second
    /// read comes from L2.
    Reread,
    /// Holds its slice in registers.
    Resident,
    /// Loads its slice once into shared memory with TMA bulk copies (sm_90) and works from
    /// there: rows longer than `slice_kib` KiB are split over blocks. Falls back to
    /// [`GradPlan::Reread`] where it does not apply (below sm_90, rows that are not whole
    /// 16-byte vectors, a slice beyond the device's shared memory per block).
    Smem { slice_kib: usize },
}

impl GradPlan {
    /// The plan a case gets unless [`with_grad_plan`] says otherwise: 64 KiB shared-memory
    /// slices, the fastest plan at every bench shape (H200, 2026-11-26, session 10 call 5,
    /// bf16 µs at vocab 32k / 131k / 262k: 176.3 / 738.4 / 1,546.2 against reread's 183.6 /
    /// 886.4 / 1,910.2; fp32 331.9 / 1,410.4 / 3,238.2 against 372.6 / 1,636.6 / 3,819.5).
    pub const DEFAULT: Self = Self::Smem { slice_kib: 64 };
    /// Every plan the self-check verifies and the bench times: the shared-memory plan at
    /// four slice budgets (on the H100, 96 KiB slices leave room for two 512-thread blocks
    /// per SM, 64 KiB for three; 48 and 32 KiB would fit four, but the plan's register
    /// budget (`SMEM_REGISTERS`) allows three).
    pub const ALL: [Self; 6] = [
        Self::Reread,
        Self::Resident,
        Self::Smem { slice_kib: 32 },
        Self::Smem { slice_kib: 48 },
        Self::Smem { slice_kib: 64 },
        Self::Smem { slice_kib: 96 },
    ];
}

impl fmt::Display for GradPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reread => f.write_str("reread"),
            Self::Resident => f.write_str("resident"),
            Self::Smem { slice_kib } => write!(f, "smem-{slice_kib}KiB"),
        }
    }
}

thread_local! {
    static GRAD_PLAN: Cell<Option<GradPlan>> = const { Cell::new(None) };
}

/// Runs `f` with `plan` for the forward + gradient cases set up inside it on this thread.
pub fn with_grad_plan<R>(plan: GradPlan, f: impl FnOnce() -> R) -> R {
    apex_plugin_api::tuning::with_override(&GRAD_PLAN, Some(plan), f)
}

/// The override in force, else [`GradPlan::DEFAULT`].
pub(super) fn grad_plan() -> GradPlan {
    GRAD_PLAN.with(Cell::get).unwrap_or(GradPlan::DEFAULT)
}
