//! How a CUDA row kernel (LayerNorm, cross-entropy) maps rows onto threads, chosen from the row
//! length at setup so that a row of 8 and a row of 262,144 are both fast, in one launch:
//!
//! ```text
//! short rows      TPR < 32 threads per row, several rows per warp (shuffle reductions in the group)
//! medium rows     a warp, or several warps of one block, per row (shuffles + shared memory)
//! long rows       SPLIT blocks per row (split-row): each holds its slice in registers, publishes
//!                 its partial statistics, and waits for its siblings (see `cuda/common.cuh`)
//! ```
//!
//! Every thread moves vectors of `VEC` elements (16 bytes where the row length allows it) and
//! holds `NV` of them; `resident` plans keep the whole slice in registers (one DRAM read, one
//! write), `streaming` plans loop over the row (cross-entropy forward keeps nothing), and
//! `shared_slices` plans size each block's slice for a copy in shared memory.

use apex_plugin_api::{PluginError, Precision};

/// Largest block (threads).
pub const MAX_BLOCK: usize = 1024;
/// Most threads per row slice of a resident plan: a 512-thread block holding its slice in up to
/// 64 registers per thread leaves room for two blocks per SM, so one block's loads overlap the
/// other's reductions and stores (`MIN_BLOCKS` in the kernels' launch bounds). Launch bounds for
/// more resident threads (1536 or 2048 per SM: 42 or 32 registers) were measured and lose
/// (H100, 2026-11-25, `benches/results/nn_ops_gpu_check_h100_2026-11-25_call9.log`): bf16
/// LayerNorm 8192 x 1024 14.4 µs at 1024 threads, 22.8 at 1536, 38.4 at 2048 (spills); only fp32
/// LayerNorm gained, 1-3 %.
pub const RESIDENT_MAX_TPR: usize = 512;
/// Smallest block: short rows pack several rows into one block of this size.
pub const MIN_BLOCK: usize = 256;
/// Vectors per thread a plan aims for: enough 16-byte loads in flight per thread. LayerNorm at 2
/// and 1 (more threads per row) was measured against 4 (H100, 2026-11-25,
/// `benches/results/nn_ops_gpu_check_h100_2026-11-25_call10.log`): within 3 % either way
/// (bf16 8192 x 1024: 14.39 µs at 4, 14.26 at 2, 15.06 at 1; x 8192: 100.9, 104.5, 104.7).
pub const NV_TARGET: usize = 4;
/// 32-bit registers per thread that a resident plan may spend on its row slice. ptxas (sm_90,
/// 64-register cap) fits the fused cross-entropy kernel without spills at 16 raw words (four
/// 16-byte vectors) and spills 64 bytes at 32; 24 keeps every plan here spill-free.
pub const RESIDENT_WORDS: usize = 24;
/// Most blocks per row of a split-row plan. Siblings wait for each other, so they must all be
/// resident at once: setup checks this against the device's SM count (one block per SM always
/// fits, `__launch_bounds__` caps the registers).
pub const MAX_SPLIT: usize = 32;
/// Most bytes of a row one block of a [`RowPlan::streaming_reread`] plan walks. H100 (50 MiB L2,
/// about 2 such blocks of 512 threads per SM): 264 x 64 KiB = 17 MiB in flight. Whole rows of
/// 256 KiB and more (bf16 vocab 131,072) missed L2 on the second read: 1.97 TB/s against 2.40 at
/// vocab 32,768 (`nn_ops_gpu_check --bench`, 2026-11-25).
pub const REREAD_SLICE_BYTES: usize = 64 * 1024;
/// Largest grid (`gridDim.x`).
pub const MAX_GRID: usize = i32::MAX as usize;

/// Elements per vector access: 16 bytes where `granularity` (a row length) allows it, else the
/// largest power of two that divides it.
pub fn vec_elems(precision: Precision, granularity: usize) -> usize {
    let max = 16 / precision.size_bytes();
    let pow2 = 1usize << granularity.max(1).trailing_zeros();
    max.min(pow2)
}

/// What a resident plan may spend per thread on the row data it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidentBudget {
    /// Vectors per thread the plan aims for.
    pub nv_target: usize,
    /// Most threads per row slice.
    pub max_tpr: usize,
    /// 32-bit registers per thread for one slice.
    pub words: usize,
}

impl ResidentBudget {
    /// One slice held at a time (every resident kernel's default).
    pub const ONE_SLICE: Self = Self {
        nv_target: NV_TARGET,
        max_tpr: RESIDENT_MAX_TPR,
        words: RESIDENT_WORDS,
    };
    /// Two slices held at once (the current and the next work item's): half the vectors and
    /// registers per slice, and blocks up to [`MAX_BLOCK`] threads, so a row that one slice's
    /// plan holds in one block still fits one block.
    pub const TWO_SLICES: Self = Self {
        nv_target: NV_TARGET / 2,
        max_tpr: MAX_BLOCK,
        words: RESIDENT_WORDS / 2,
    };
}

/// A row kernel's thread layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPlan {
    pub rows: usize,
    pub cols: usize,
    /// Elements per vector.
    pub vec: usize,
    /// Threads per row slice (a power of two).
    pub tpr: usize,
    /// Vectors per thread (resident: held in registers; streaming: loop trip count).
    pub nv: usize,
    /// Blocks per row (1 unless the row is longer than one block can hold).
    pub split: usize,
    /// Threads per block.
    pub block: usize,
    /// Rows per block (`block / tpr`; 1 when `split > 1`).
    pub rows_per_block: usize,
    /// Blocks in the grid: `ceil(rows / rows_per_block) * split`.
    pub grid: usize,
}

impl RowPlan {
    /// Vectors per row.
    pub fn row_vectors(&self) -> usize {
        self.cols / self.vec
    }

    /// Vectors per slice (the last slice may be shorter).
    pub fn slice_vectors(&self) -> usize {
        self.row_vectors().div_ceil(self.split)
    }

    /// A plan that keeps every element of a row slice in registers.
    pub fn resident(rows: usize, cols: usize, precision: Precision) -> Result<Self, PluginError> {
        Self::resident_within(rows, cols, precision, ResidentBudget::ONE_SLICE)
    }

    /// [`RowPlan::resident`] within `budget` (a kernel that holds two slices at once asks for
    /// [`ResidentBudget::TWO_SLICES`]).
    pub fn resident_within(
        rows: usize,
        cols: usize,
        precision: Precision,
        budget: ResidentBudget,
    ) -> Result<Self, PluginError> {
        let vec = vec_elems(precision, cols);
        let words_per_vec = (vec * precision.size_bytes()).div_ceil(4);
        let nv_max = budget.words / words_per_vec;
        let cv = cols / vec;
        let per_block = budget.max_tpr * nv_max;
        // Enough blocks for the budget's vectors per thread, within MAX_SPLIT.
        let split = if cv <= per_block {
            1
        } else {
            cv.div_ceil(budget.max_tpr * budget.nv_target)
                .next_power_of_two()
                .min(MAX_SPLIT)
        };
        if cv.div_ceil(split) > per_block {
            return Err(PluginError::invalid(format!(
                "a row of {cols} elements needs more than {MAX_SPLIT} blocks of {} threads \
                 (hint: rows up to {} elements are supported at {precision})",
                budget.max_tpr,
                MAX_SPLIT * per_block * vec
            )));
        }
        Self::with_slices(
            rows,
            cols,
            vec,
            split,
            budget.max_tpr,
            nv_max,
            budget.nv_target,
        )
    }

    /// A plan that loops over each row (nothing held): any length, one block or less per row.
    pub fn streaming(rows: usize, cols: usize, precision: Precision) -> Result<Self, PluginError> {
        let vec = vec_elems(precision, cols);
        Self::with_slices(rows, cols, vec, 1, 512, usize::MAX, NV_TARGET)
    }

    /// A streaming plan whose blocks walk at most [`REREAD_SLICE_BYTES`] of a row each (rows
    /// longer than that are split over up to [`MAX_SPLIT`] blocks), for kernels that read their
    /// slice twice: with every resident block's slice that small, the second read finds the
    /// slice still in L2.
    pub fn streaming_reread(
        rows: usize,
        cols: usize,
        precision: Precision,
    ) -> Result<Self, PluginError> {
        let vec = vec_elems(precision, cols);
        let bytes = cols * precision.size_bytes();
        let split = bytes
            .div_ceil(REREAD_SLICE_BYTES)
            .next_power_of_two()
            .min(MAX_SPLIT);
        Self::with_slices(rows, cols, vec, split, 512, usize::MAX, NV_TARGET)
    }

    /// A streaming plan for kernels that hold their block's row data in shared memory: rows
    /// longer than `slice_bytes` are split over `ceil(bytes / slice_bytes)` blocks (at most
    /// [`MAX_SPLIT`]; past that the slices grow). The split is not rounded to a power of two as
    /// in [`RowPlan::streaming_reread`], so each budget gives its own slices (bf16 vocab 262,144:
    /// 48 KiB gives 11 slices of 46.5 KiB, where a power of two would give 16 of 32 KiB).
    /// `None` when a row is not a whole number of 16-byte vectors: the bulk copies that fill
    /// shared memory move 16-byte units between 16-byte-aligned addresses.
    pub fn shared_slices(
        rows: usize,
        cols: usize,
        precision: Precision,
        slice_bytes: usize,
    ) -> Result<Option<Self>, PluginError> {
        let vec = vec_elems(precision, cols);
        if vec * precision.size_bytes() != 16 {
            return Ok(None);
        }
        let bytes = cols * precision.size_bytes();
        let split = bytes.div_ceil(slice_bytes.max(1)).min(MAX_SPLIT);
        Self::with_slices(rows, cols, vec, split, 512, usize::MAX, NV_TARGET).map(Some)
    }

    fn with_slices(
        rows: usize,
        cols: usize,
        vec: usize,
        split: usize,
        max_tpr: usize,
        nv_max: usize,
        nv_target: usize,
    ) -> Result<Self, PluginError> {
        if rows == 0 || cols == 0 {
            return Err(PluginError::invalid(format!(
                "rows = {rows} and cols = {cols} must both be at least 1"
            )));
        }
        let slice = (cols / vec).div_ceil(split);
        let tpr = slice.div_ceil(nv_target).next_power_of_two().min(max_tpr);
        let nv = slice.div_ceil(tpr);
        debug_assert!(nv <= nv_max, "nv {nv} > {nv_max}");
        let block = tpr.max(MIN_BLOCK);
        let rows_per_block = block / tpr;
        debug_assert!(split == 1 || rows_per_block == 1);
        let grid = rows
            .div_ceil(rows_per_block)
            .checked_mul(split)
            .filter(|&g| g <= MAX_GRID)
            .ok_or_else(|| {
                PluginError::invalid(format!(
                    "{rows} rows of {cols} need more than {MAX_GRID} blocks (hint: fewer rows)"
                ))
            })?;
        Ok(Self {
            rows,
            cols,
            vec,
            tpr,
            nv,
            split,
            block,
            rows_per_block,
            grid,
        })
    }

    /// Bytes of row data one block covers: its rows (`rows_per_block` whole rows when
    /// `split == 1`, consecutive in memory) or its row slice, at `elem_bytes` per element.
    pub fn block_bytes(&self, elem_bytes: usize) -> usize {
        self.rows_per_block * self.slice_vectors() * self.vec * elem_bytes
    }

    /// The `#define`s every row kernel reads, with launch bounds for the register budget of
    /// two 512-thread blocks per SM (`MIN_BLOCKS`, see [`RESIDENT_MAX_TPR`]).
    pub fn defines(&self) -> Vec<(&'static str, usize)> {
        self.defines_at(MAX_BLOCK / self.block)
    }

    /// [`RowPlan::defines`] for a kernel that expects `blocks_per_sm` blocks per SM (a limit set
    /// by something other than registers, such as shared memory): ptxas then keeps every thread
    /// within `65536 / (blocks_per_sm * block)` registers.
    pub fn defines_at(&self, blocks_per_sm: usize) -> Vec<(&'static str, usize)> {
        vec![
            ("ROWS", self.rows),
            ("COLS", self.cols),
            ("VEC", self.vec),
            ("CV", self.row_vectors()),
            ("SLICE_V", self.slice_vectors()),
            ("TPR", self.tpr),
            ("NV", self.nv),
            ("SPLIT", self.split),
            ("BLOCK", self.block),
            ("RPB", self.rows_per_block),
            ("GRID", self.grid),
            ("MIN_BLOCKS", blocks_per_sm.max(1)),
        ]
    }
}

/// A flat (elementwise or whole-tensor reduction) launch over `n` elements: `vec`-element
/// vectors, `unroll` vectors per thread per step, and the tail (`n % vec` elements) done by the
/// first threads of block 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatPlan {
    pub n: usize,
    pub vec: usize,
    pub unroll: usize,
    pub block: usize,
    pub grid: usize,
}

impl FlatPlan {
    /// One step per thread, as many blocks as that takes (elementwise ops).
    pub fn covering(n: usize, precision: Precision, unroll: usize) -> Result<Self, PluginError> {
        Self::new(n, precision, unroll, MAX_GRID)
    }

    /// A grid of at most `max_grid` blocks that loops (reductions with one partial per block).
    pub fn new(
        n: usize,
        precision: Precision,
        unroll: usize,
        max_grid: usize,
    ) -> Result<Self, PluginError> {
        if n == 0 {
            return Err(PluginError::invalid(
                "the tensor is empty (hint: every dimension must be at least 1)",
            ));
        }
        let vec = 16 / precision.size_bytes();
        let block = MIN_BLOCK;
        let needed = (n / vec).div_ceil(block * unroll).max(1);
        if needed > MAX_GRID && max_grid == MAX_GRID {
            return Err(PluginError::invalid(format!(
                "{n} elements need more than {MAX_GRID} blocks (hint: a smaller shape)"
            )));
        }
        Ok(Self {
            n,
            vec,
            unroll,
            block,
            grid: needed.min(max_grid).max(1),
        })
    }

    pub fn defines(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("N", self.n),
            ("VEC", self.vec),
            ("NVEC", self.n / self.vec),
            ("TAIL", self.n % self.vec),
            ("UNROLL", self.unroll),
            ("BLOCK", self.block),
            ("GRID", self.grid),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Precision::{Bf16, Fp16, Fp32};

    #[test]
    fn vectors_are_16_bytes_unless_the_row_forbids_it() {
        assert_eq!(vec_elems(Bf16, 512), 8);
        assert_eq!(vec_elems(Fp32, 512), 4);
        assert_eq!(vec_elems(Fp16, 4), 4);
        assert_eq!(vec_elems(Fp32, 7), 1);
        assert_eq!(vec_elems(Bf16, 8193), 1);
        assert_eq!(vec_elems(Fp32, 6), 2);
    }

    /// Every element of every row is owned by exactly one (block, thread, vector) and the
    /// register budget, block size and grid limits hold, for every length the checks use.
    #[test]
    fn plans_cover_every_element_within_the_limits() {
        let lens = [
            1usize, 2, 7, 8, 16, 100, 512, 1000, 1024, 4096, 8192, 8193, 32_768, 65_536, 131_072,
            262_144, 262_147, 500_000, 2_000_000,
        ];
        for precision in [Fp32, Fp16, Bf16] {
            for &cols in &lens {
                for budget in [
                    Some(ResidentBudget::ONE_SLICE),
                    Some(ResidentBudget::TWO_SLICES),
                    None,
                ] {
                    let plan = if let Some(budget) = budget {
                        match RowPlan::resident_within(3, cols, precision, budget) {
                            Ok(p) => p,
                            Err(e) => {
                                // Only rows beyond MAX_SPLIT blocks of registers are refused.
                                assert!(cols > 262_147, "{cols} {precision}: {e}");
                                continue;
                            }
                        }
                    } else {
                        RowPlan::streaming(3, cols, precision).unwrap()
                    };
                    let p = plan;
                    assert!(p.tpr.is_power_of_two() && p.tpr <= MAX_BLOCK, "{p:?}");
                    assert!(p.block <= MAX_BLOCK && p.block % p.tpr == 0, "{p:?}");
                    assert_eq!(p.rows_per_block, p.block / p.tpr);
                    assert!(p.split == 1 || p.rows_per_block == 1, "{p:?}");
                    assert!(p.split <= MAX_SPLIT);
                    assert_eq!(cols % p.vec, 0);
                    // Slices of tpr * nv vectors cover the row.
                    assert!(p.split * p.tpr * p.nv >= p.row_vectors(), "{p:?}");
                    assert!(p.slice_vectors() <= p.tpr * p.nv, "{p:?}");
                    if let Some(budget) = budget {
                        let words = (p.vec * precision.size_bytes()).div_ceil(4);
                        assert!(p.nv * words <= budget.words, "{p:?}");
                    }
                    assert_eq!(p.grid, 3usize.div_ceil(p.rows_per_block) * p.split);
                }
            }
        }
    }

    #[test]
    fn the_documented_layouts() {
        // Seed shapes: dim 8 bf16 is one thread per row; dim 512 bf16 sixteen threads per row.
        let p = RowPlan::resident(4096, 8, Bf16).unwrap();
        assert_eq!((p.tpr, p.nv, p.rows_per_block, p.grid), (1, 1, 256, 16));
        let p = RowPlan::resident(4096, 512, Bf16).unwrap();
        assert_eq!((p.tpr, p.nv, p.split), (16, 4, 1));
        // Hidden 8192 fp32: 512 threads with four float4 each.
        let p = RowPlan::resident(8192, 8192, Fp32).unwrap();
        assert_eq!((p.tpr, p.nv, p.split, p.block), (512, 4, 1, 512));
        // Vocab 262,144 bf16: sixteen blocks of 512 threads per row, four vectors each.
        let p = RowPlan::resident(4096, 262_144, Bf16).unwrap();
        assert_eq!((p.tpr, p.nv, p.split, p.grid), (512, 4, 16, 4096 * 16));
        // Vocab 32,768: two blocks per row in bf16, four in fp32, four vectors per thread.
        let p = RowPlan::resident(4096, 32_768, Bf16).unwrap();
        assert_eq!((p.tpr, p.nv, p.split), (512, 4, 2));
        let p = RowPlan::resident(4096, 32_768, Fp32).unwrap();
        assert_eq!((p.tpr, p.nv, p.split), (512, 4, 4));
        let p = RowPlan::streaming(4096, 262_144, Bf16).unwrap();
        assert_eq!((p.tpr, p.nv, p.split), (512, 64, 1));
    }

    #[test]
    fn reread_plans_keep_each_block_within_its_slice_budget() {
        for (cols, precision, split) in [
            (32_768, Bf16, 1),
            (32_768, Fp32, 2),
            (131_072, Bf16, 4),
            (262_144, Bf16, 8),
            (262_144, Fp32, 16),
            (8, Fp32, 1),
        ] {
            let p = RowPlan::streaming_reread(4096, cols, precision).unwrap();
            assert_eq!(p.split, split, "{cols} {precision}");
            let slice_bytes = p.slice_vectors() * p.vec * precision.size_bytes();
            assert!(slice_bytes <= REREAD_SLICE_BYTES, "{cols} {precision}");
            assert!(p.slice_vectors() * p.split >= p.row_vectors());
        }
    }

    #[test]
    fn shared_slice_plans_split_by_their_budget_and_take_whole_16_byte_vectors_only() {
        const KIB: usize = 1024;
        for (cols, precision, budget, split) in [
            (32_768, Bf16, 64, 1),
            (32_768, Bf16, 48, 2),
            (32_768, Fp32, 96, 2),
            (32_768, Fp32, 48, 3),
            (131_072, Bf16, 96, 3),
            (262_144, Bf16, 48, 11),
            (262_144, Bf16, 64, 8),
            (262_144, Bf16, 96, 6),
            (262_144, Fp32, 32, 32),
            (262_144, Fp32, 96, 11),
        ] {
            let p = RowPlan::shared_slices(4096, cols, precision, budget * KIB)
                .unwrap()
                .unwrap();
            assert_eq!(p.split, split, "{cols} {precision} {budget} KiB");
            assert!(
                p.block_bytes(precision.size_bytes()) <= budget * KIB,
                "{p:?}"
            );
        }
        // Rows of whole 16-byte vectors, at any length: every element covered once, and a block
        // holds at most its budget (whole short rows: at most 1,024 vectors of 256 threads),
        // unless MAX_SPLIT slices cannot hold the row.
        for precision in [Fp32, Fp16, Bf16] {
            for cols in [
                8, 16, 512, 1024, 4096, 32_768, 65_536, 131_072, 262_144, 2_000_000,
            ] {
                for budget in [32 * KIB, 64 * KIB] {
                    let Some(p) = RowPlan::shared_slices(3, cols, precision, budget).unwrap()
                    else {
                        assert_ne!((cols * precision.size_bytes()) % 16, 0);
                        continue;
                    };
                    assert_eq!(p.vec * precision.size_bytes(), 16, "{p:?}");
                    assert!(p.split * p.tpr * p.nv >= p.row_vectors(), "{p:?}");
                    assert!(p.slice_vectors() <= p.tpr * p.nv, "{p:?}");
                    // No empty last slice.
                    assert!((p.split - 1) * p.slice_vectors() < p.row_vectors(), "{p:?}");
                    assert!(
                        p.block_bytes(precision.size_bytes()) <= budget.max(16 * KIB)
                            || p.split == MAX_SPLIT,
                        "{p:?}"
                    );
                }
            }
        }
        for (cols, precision) in [(1, Fp32), (7, Bf16), (6, Fp32), (8193, Fp16), (4, Bf16)] {
            assert_eq!(
                RowPlan::shared_slices(3, cols, precision, 64 * KIB).unwrap(),
                None,
                "{cols} {precision}"
            );
        }
    }

    #[test]
    fn flat_plans_bound_the_grid() {
        let f = FlatPlan::covering(16 * 256 * 512, Bf16, 4).unwrap();
        assert_eq!((f.vec, f.grid), (8, 256));
        let f = FlatPlan::new(7, Fp32, 4, 528).unwrap();
        assert_eq!((f.vec, f.grid, f.n / f.vec, f.n % f.vec), (4, 1, 1, 3));
        assert_eq!(FlatPlan::new(1 << 30, Fp32, 4, 528).unwrap().grid, 528);
        assert!(FlatPlan::covering(0, Fp32, 4).is_err());
    }
}
