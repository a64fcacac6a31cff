//! `nn_ops.layer_norm`: `y = (x - mean) / sqrt(var + eps) * weight + bias` over the last axis of
//! `x[batch, seq, dim]` (biased variance, as PyTorch's `layer_norm`), affine weight and bias of
//! `[dim]` in the storage type.

use apex_plugin_api::{
    Accuracy, KernelDescriptor, ParamSpec, Params, PluginError, Precision, Tolerance, Work,
    WorkUnit,
};

use crate::{
    Element,
    accuracy::compare_rows,
    cpu_par::for_each_chunk,
    device::DeviceState,
    fast_math::{simd_dispatch, sum_f32, sum_sq_dev_f32},
    op::{
        CudaProgram, DeviceFacts, Inputs, NnOp, OutputLens, Outputs, base_descriptor, rows_dim,
        with_bsd,
    },
    program::{BULK, assemble, launch_1d},
    rng::uniform,
    rows::{ResidentBudget, RowPlan},
};

const SOURCE: &str = include_str!("../cuda/layer_norm.cu");
const SOURCE_BULK: &str = include_str!("../cuda/layer_norm_bulk.cu");

/// A validated LayerNorm case.
#[derive(Debug, Clone, Copy)]
pub struct LayerNorm {
    pub rows: usize,
    pub dim: usize,
    pub eps: f64,
}

/// How the LayerNorm kernel deals its work items (`RPB` rows, or one row slice) to blocks when
/// a row fits one block. Per thread, for the GPU bench's and self-check's comparison
/// (`nn_ops_gpu_check`): a case set up inside [`tuning::with_schedule`] uses it; the plugin
/// itself never sets it.
pub mod tuning {
    use std::cell::Cell;

    use apex_plugin_api::Precision;

    /// A work schedule.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Schedule {
        /// As many blocks as the device holds at once, each looping over its work items: load,
        /// statistics, store, then the next item's load.
        Wave,
        /// [`Schedule::Wave`] with the next item's row slice loaded into a second set of
        /// registers before the current one's statistics, so each block keeps loads in flight
        /// through its reductions and stores.
        WavePrefetch,
        /// One block per work item; the hardware starts each block as an earlier one leaves.
        BlockPerItem,
        /// Chunks of whole rows moved by TMA bulk copies through a ring of shared-memory buffers
        /// and normalised there by a warp a row (`layer_norm_bulk.cu`; sm_90, rows of whole
        /// 16-byte vectors up to 1,024 elements: elsewhere the prefetching wave).
        Bulk,
    }

    /// Row bytes up to which [`Schedule::for_row`] prefetches (16-bit rows of exactly this many
    /// included); longer rows get a block per item.
    pub const PREFETCH_MAX_ROW_BYTES: usize = 4096;

    impl Schedule {
        pub const ALL: [Self; 4] = [
            Self::Wave,
            Self::WavePrefetch,
            Self::BlockPerItem,
            Self::Bulk,
        ];

        /// The schedule a case gets unless [`with_schedule`] says otherwise, by the bytes of
        /// one row (and, at 4 KiB, its element type). Measured on the H100 (2026-11-25, sixth
        /// session, call 1: 8,192 rows, dims 512 to 8,192, bf16 and fp32, every schedule
        /// DRAM-cold in one call): prefetching was fastest up to 4 KiB rows (bf16 1024: 13.08 us
        /// against 14.49 for the wave and 14.64 for a block per item), a block per item from 8
        /// KiB (bf16 8192: 93.19 against 101.16 and 97.86; fp32 2048: 47.63 against 51.55 and
        /// 50.23). Fourteenth session (2026-11-26):
        /// - rows of at least 2 KiB and under 4 KiB move by bulk copies where the tensor gives
        ///   every block a few chunks (apex-host, call 8: bf16 8192 x 1024 12.10 against 12.81
        ///   us, fp32 8192 x 512 12.49 against 12.67; call 7: the seed's fp32 4096 x 512, two
        ///   chunks a block, 7.33 against 6.66, and bf16's 1 KiB rows, 8.15 against 6.86, so they
        ///   stay prefetching: `BulkPlan::pays`);
        /// - fp32 rows of 4 KiB (1,024 elements) take a block per item: 24.40 us against 24.84
        ///   prefetching and 24.76 by bulk copies (call 7, `nn_ops_gpu_check --bench`), where
        ///   bf16 2048 (the same 256 vectors a row) prefetches: 24.55 against 24.82.
        pub fn for_row(row_bytes: usize, precision: Precision) -> Self {
            if (super::BULK_MIN_ROW_BYTES..PREFETCH_MAX_ROW_BYTES).contains(&row_bytes) {
                Self::Bulk
            } else if row_bytes == PREFETCH_MAX_ROW_BYTES && precision == Precision::Fp32 {
                Self::BlockPerItem
            } else if row_bytes <= PREFETCH_MAX_ROW_BYTES {
                Self::WavePrefetch
            } else {
                Self::BlockPerItem
            }
        }

        pub fn name(self) -> &'static str {
            match self {
                Self::Wave => "wave",
                Self::WavePrefetch => "wave+prefetch",
                Self::BlockPerItem => "block-per-item",
                Self::Bulk => "bulk",
            }
        }
    }

    thread_local! {
        static SCHEDULE: Cell<Option<Schedule>> = const { Cell::new(None) };
    }

    /// Runs `f` with `schedule` for the LayerNorm cases set up inside it on this thread.
    pub fn with_schedule<R>(schedule: Schedule, f: impl FnOnce() -> R) -> R {
        apex_plugin_api::tuning::with_override(&SCHEDULE, Some(schedule), f)
    }

    /// The schedule for rows of `row_bytes` in `precision`, and whether it was asked for: the
    /// override in force (`true`), else [`Schedule::for_row`] (`false`).
    pub(super) fn schedule(row_bytes: usize, precision: Precision) -> (Schedule, bool) {
        match SCHEDULE.with(Cell::get) {
            Some(s) => (s, true),
            None => (Schedule::for_row(row_bytes, precision), false),
        }
    }
}

/// Bytes of rows a chunk of [`tuning::Schedule::Bulk`] holds at most (at least one row).
const BULK_CHUNK_BYTES: usize = 16 * 1024;
/// Shared-memory buffers (chunks in flight) a block of [`tuning::Schedule::Bulk`] keeps.
const BULK_STAGES: usize = 4;
/// Most elements of a row a lane of [`tuning::Schedule::Bulk`] holds (1,024-element rows; 2,048
/// at 16 bits spilled at the 128 registers of two blocks a SM).
const BULK_MAX_LANE_ELEMS: usize = 32;
/// Threads a block of [`tuning::Schedule::Bulk`].
const BULK_BLOCK: usize = 256;
/// Blocks a SM of [`tuning::Schedule::Bulk`] (`MIN_BLOCKS` of its launch bounds: 128 registers
/// a thread).
const BULK_BLOCKS_PER_SM: usize = 2;
/// Chunks a resident block must get at least for [`tuning::Schedule::Bulk`]: its ring fills
/// and drains once per call, which fewer chunks do not pay for (see `tuning::Schedule::for_row`).
const BULK_MIN_CHUNKS_PER_BLOCK: usize = 3;
/// Shortest row that [`tuning::Schedule::for_row`] moves by bulk copies.
const BULK_MIN_ROW_BYTES: usize = 2048;

/// The chunks of [`tuning::Schedule::Bulk`]: `rows_per_chunk` consecutive rows each (the last
/// chunk may hold fewer), [`BULK_STAGES`] of them in a block's shared memory at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BulkPlan {
    rows_per_chunk: usize,
    chunks: usize,
    /// 16-byte vectors a row, and a lane's share of them (`ceil(vectors / 32)`).
    row_vectors: usize,
    lane_vectors: usize,
    chunk_bytes: usize,
}

impl BulkPlan {
    /// The plan for `rows` x `dim` on `facts`' device where the kernel can run it: sm_90's bulk
    /// copies, rows of whole 16-byte vectors and at most [`BULK_MAX_LANE_ELEMS`] elements a lane;
    /// `None` otherwise. Whether it pays is [`BulkPlan::pays`].
    fn new(rows: usize, dim: usize, precision: Precision, facts: DeviceFacts) -> Option<Self> {
        let es = precision.size_bytes();
        let vec = 16 / es;
        if facts.compute_capability.0 < 9 || !dim.is_multiple_of(vec) {
            return None;
        }
        let row_vectors = dim / vec;
        let lane_vectors = row_vectors.div_ceil(32);
        if lane_vectors * vec > BULK_MAX_LANE_ELEMS {
            return None;
        }
        let rows_per_chunk = (BULK_CHUNK_BYTES / (dim * es)).clamp(1, rows);
        let plan = Self {
            rows_per_chunk,
            chunks: rows.div_ceil(rows_per_chunk),
            row_vectors,
            lane_vectors,
            chunk_bytes: rows_per_chunk * dim * es,
        };
        (plan.smem_bytes() + 1024 <= facts.smem_per_block_optin).then_some(plan)
    }

    /// At least [`BULK_MIN_CHUNKS_PER_BLOCK`] chunks for each block the device holds: the
    /// default schedule takes bulk copies only then (a case that names the schedule runs it
    /// wherever [`BulkPlan::new`] allows, as the self-check does on short tensors).
    fn pays(self, facts: DeviceFacts) -> bool {
        self.chunks >= BULK_MIN_CHUNKS_PER_BLOCK * BULK_BLOCKS_PER_SM * facts.sm_count
    }

    /// Dynamic shared memory, bytes.
    fn smem_bytes(self) -> usize {
        BULK_STAGES * self.chunk_bytes
    }

    fn defines(self, rows: usize, dim: usize, precision: Precision) -> Vec<(&'static str, usize)> {
        vec![
            ("ROWS", rows),
            ("COLS", dim),
            ("VEC", 16 / precision.size_bytes()),
            ("CV", self.row_vectors),
            ("KV", self.lane_vectors),
            ("RC", self.rows_per_chunk),
            ("CHUNKS", self.chunks),
            ("STAGES", BULK_STAGES),
            ("BLOCK", BULK_BLOCK),
            ("MIN_BLOCKS", BULK_BLOCKS_PER_SM),
            // common.cuh's grid helpers (unused here) name it.
            ("GRID", self.chunks),
        ]
    }
}

/// Rows per CPU task: about 16 K elements.
fn rows_per_task(dim: usize) -> usize {
    (16_384 / dim).max(1)
}

impl NnOp for LayerNorm {
    fn descriptor() -> KernelDescriptor {
        with_bsd(base_descriptor(
            "nn_ops.layer_norm",
            "LayerNorm over the last axis of x[batch, seq, dim] with affine weight and bias (biased variance, fp32 statistics)",
        ))
        .param(ParamSpec::float("eps", 1e-5, "added to the variance"))
    }

    fn plan(params: &Params) -> Result<Self, PluginError> {
        let (rows, dim) = rows_dim(params)?;
        let eps = params.float("eps")?;
        if !(eps.is_finite() && eps > 0.0) {
            return Err(PluginError::invalid(format!(
                "eps = {eps} must be a positive finite number (hint: 1e-5)"
            )));
        }
        Ok(Self { rows, dim, eps })
    }

    fn work(&self, precision: Precision) -> Work {
        let es = precision.size_bytes() as u64;
        let n = (self.rows * self.dim) as u64;
        Work {
            bytes_read: (n + 2 * self.dim as u64) * es,
            bytes_written: n * es,
            // sum, squared deviation (sub + fma), normalise (sub, mul, fma).
            flops: 6.0 * n as f64,
            items: n as f64,
            unit: WorkUnit::Elements,
        }
    }

    fn output_lens(&self) -> OutputLens {
        OutputLens {
            tensors: vec![self.rows * self.dim],
            scalars: 0,
        }
    }

    fn generate<T: Element>(&self, seed: u64) -> Inputs<T> {
        Inputs {
            data: vec![
                // Off-centre rows, so that the mean matters.
                uniform(self.rows * self.dim, -1.5, 2.5, seed, 1),
                uniform(self.dim, 0.5, 1.5, seed, 2),
                uniform(self.dim, -0.5, 0.5, seed, 3),
            ],
            targets: vec![],
        }
    }

    fn run_cpu<T: Element>(&self, inputs: &Inputs<T>, outputs: &mut Outputs<T>, parallel: bool) {
        let [x, w, b] = &inputs.data[..] else {
            unreachable!("three inputs")
        };
        let dim = self.dim;
        let (mut wf, mut bf) = (vec![0.0f32; dim], vec![0.0f32; dim]);
        T::load(w, &mut wf);
        T::load(b, &mut bf);
        let eps = self.eps as f32;
        let per = rows_per_task(dim);
        // fp32 reads x and writes y directly. 16-bit types convert a block of rows at a time
        // into two buffers that stay in L1 between the load, the passes over each row and the
        // store (a task-sized buffer did not: bf16 at dim 512 ran 1.46x slower through L2).
        let block = crate::cpu_par::rows_per_block(dim) * dim;
        for_each_chunk(&mut outputs.tensors[0], per * dim, parallel, |task, out| {
            let x = &x[task * per * dim..task * per * dim + out.len()];
            if let (Some(src), Some(dst)) = (T::as_f32(x), T::as_f32_mut(out)) {
                normalize_rows(src, dst, dim, &wf, &bf, eps);
                return;
            }
            let len = block.min(out.len());
            let (mut a, mut b) = (vec![0.0f32; len], vec![0.0f32; len]);
            for (y, xs) in out.chunks_mut(block).zip(x.chunks(block)) {
                let n = y.len();
                T::load(xs, &mut a);
                normalize_rows(&a[..n], &mut b[..n], dim, &wf, &bf, eps);
                T::store(&b[..n], y);
            }
        });
    }

    fn verify<T: Element>(
        &self,
        inputs: &Inputs<T>,
        outputs: &Outputs<T>,
        tolerance: &Tolerance,
    ) -> Accuracy {
        let [x, w, b] = &inputs.data[..] else {
            unreachable!("three inputs")
        };
        let dim = self.dim;
        let y = &outputs.tensors[0];
        compare_rows(self.rows, dim, tolerance, |r, out, reference| {
            let row = &x[r * dim..(r + 1) * dim];
            let mean = row.iter().map(|v| v.to_f64()).sum::<f64>() / dim as f64;
            let var = row.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / dim as f64;
            let rstd = 1.0 / (var + self.eps).sqrt();
            for (i, v) in row.iter().enumerate() {
                reference.push((v.to_f64() - mean) * rstd * w[i].to_f64() + b[i].to_f64());
                out.push(y[r * dim + i].to_f64());
            }
        })
    }

    fn cuda_program(
        &self,
        precision: Precision,
        facts: DeviceFacts,
    ) -> Result<CudaProgram, PluginError> {
        let (mut schedule, asked) = tuning::schedule(self.dim * precision.size_bytes(), precision);
        if schedule == tuning::Schedule::Bulk {
            let bulk = BulkPlan::new(self.rows, self.dim, precision, facts)
                .filter(|b| asked || b.pays(facts));
            if let Some(bulk) = bulk {
                let mut config = launch_1d(bulk.chunks, BULK_BLOCK);
                config.shared_mem_bytes = bulk.smem_bytes() as u32;
                return Ok(CudaProgram {
                    name: "layer_norm_bulk",
                    source: assemble(
                        precision,
                        &bulk.defines(self.rows, self.dim, precision),
                        &[BULK, SOURCE_BULK].concat(),
                    ),
                    function: "layer_norm_bulk",
                    config,
                    scratch_words: 8,
                    co_resident_blocks: 1,
                    grid_stride: true,
                });
            }
            schedule = tuning::Schedule::WavePrefetch;
        }
        let mut plan = RowPlan::resident(self.rows, self.dim, precision)?;
        // Split rows have one work item per block and wait for their siblings: no schedule. A
        // prefetching block holds two slices, so it plans within that budget.
        let prefetch = plan.split == 1 && schedule == tuning::Schedule::WavePrefetch;
        if prefetch {
            plan = RowPlan::resident_within(
                self.rows,
                self.dim,
                precision,
                ResidentBudget::TWO_SLICES,
            )?;
            // Both budgets hold the same vectors per block, so the row still fits one.
            debug_assert_eq!(plan.split, 1, "{plan:?}");
        }
        let scratch_words = 8 + if plan.split > 1 {
            self.rows + self.rows * plan.split * 2
        } else {
            0
        };
        let mut defines = plan.defines();
        defines.push(("PREFETCH", usize::from(prefetch)));
        Ok(CudaProgram {
            name: "layer_norm",
            source: assemble(precision, &defines, SOURCE),
            function: "layer_norm",
            config: launch_1d(plan.grid, plan.block),
            scratch_words,
            co_resident_blocks: plan.split,
            grid_stride: plan.split == 1 && schedule != tuning::Schedule::BlockPerItem,
        })
    }

    fn launch(&self, device: &DeviceState, set: usize) -> Result<(), PluginError> {
        let s = &device.sets[set];
        let eps = self.eps as f32;
        let mut b = device.launcher();
        b.ptr(&s.data[0]).ptr(&s.data[1]).ptr(&s.data[2]);
        b.ptr(&s.outputs[0]).ptr(&device.scratch).float(eps);
        // SAFETY: the arguments match `layer_norm` in cuda/layer_norm.cu; the grid is the plan's.
        unsafe { device.launch(b) }
    }
}

simd_dispatch!(
    /// Every `dim`-long row of `src` normalized into `dst`: `(row - mean) / sqrt(var + eps) * w
    /// + b`, the mean and variance in f32 over eight lanes. One call per task of rows, so short
    /// rows (dim 8) do not pay the dispatch per row.
    fn normalize_rows(src: &[f32], dst: &mut [f32], dim: usize, w: &[f32], b: &[f32], eps: f32) => normalize_rows_portable
);

#[inline(always)]
fn normalize_rows_portable(
    src: &[f32],
    dst: &mut [f32],
    dim: usize,
    w: &[f32],
    b: &[f32],
    eps: f32,
) {
    for (x, y) in src.chunks_exact(dim).zip(dst.chunks_exact_mut(dim)) {
        normalize_row(x, y, w, b, eps);
    }
}

/// One row: the mean, then the sum of squared deviations from it (two passes over the row, no
/// cancellation), then the store.
#[inline(always)]
fn normalize_row(x: &[f32], y: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let dim = x.len() as f32;
    let mean = sum_f32(x) / dim;
    let var = sum_sq_dev_f32(x, mean) / dim;
    let rstd = 1.0 / (var + eps).sqrt();
    for (((o, &v), &wv), &bv) in y.iter_mut().zip(x).zip(w).zip(b) {
        *o = ((v - mean) * rstd).mul_add(wv, bv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        case::{OpCase, OpKernel},
        harness::{assert_cpu_checks, bsd, params, request},
    };
    use apex_plugin_api::{Backend, Instance, ParamValue};

    #[test]
    fn matches_the_reference_for_every_precision_and_row_length() {
        let kernel = OpKernel::<LayerNorm>::default();
        for (b, s, d) in [
            (2, 3, 1),
            (1, 5, 7),
            (2, 4, 64),
            (1, 3, 8193),
            (1, 1, 262_144),
        ] {
            assert_cpu_checks(&kernel, &bsd(b, s, d), Tolerance::default_for);
        }
    }

    #[test]
    fn a_wrong_output_is_caught() {
        let kernel = OpKernel::<LayerNorm>::default();
        let p = params(&kernel, &bsd(2, 4, 32));
        let mut case =
            OpCase::<LayerNorm, f32>::new(&request(p, Backend::Cpu, Precision::Fp32, 1, None))
                .unwrap();
        let tol = Tolerance::default_for(Precision::Fp32);
        case.run().unwrap();
        assert!(case.verify(&tol).unwrap().within(&tol));
        // One element off by 1e-3: beyond fp32's tolerance.
        case.outputs_mut().tensors[0][17] += 1e-3;
        assert!(!case.verify(&tol).unwrap().within(&tol));
    }

    #[test]
    fn the_schedule_follows_the_row_bytes_and_at_4_kib_the_element_type() {
        use Precision::{Bf16, Fp32};
        use tuning::Schedule;
        assert_eq!(Schedule::for_row(16, Bf16), Schedule::WavePrefetch);
        assert_eq!(Schedule::for_row(1024, Fp32), Schedule::WavePrefetch);
        assert_eq!(Schedule::for_row(2048, Bf16), Schedule::Bulk);
        assert_eq!(Schedule::for_row(4080, Fp32), Schedule::Bulk);
        assert_eq!(Schedule::for_row(4096, Bf16), Schedule::WavePrefetch);
        assert_eq!(Schedule::for_row(4096, Fp32), Schedule::BlockPerItem);
        assert_eq!(Schedule::for_row(4100, Bf16), Schedule::BlockPerItem);
        let ln = LayerNorm {
            rows: 8192,
            dim: 1024,
            eps: 1e-5,
        };
        let facts = DeviceFacts::H100;
        let program = |op: LayerNorm, p| op.cuda_program(p, facts).unwrap();
        // bf16 8192 x 1024 (2 KiB rows, 1,024 chunks of 8 rows): bulk copies, 64 KiB of ring.
        let bulk = program(ln, Precision::Bf16);
        assert_eq!(bulk.function, "layer_norm_bulk");
        assert!(bulk.source.contains("#define RC 8u") && bulk.grid_stride);
        assert_eq!(bulk.config.shared_mem_bytes, 4 * 16 * 1024);
        // 1 KiB rows: the prefetching wave.
        let p = program(LayerNorm { dim: 512, ..ln }, Precision::Bf16);
        assert!(p.source.contains("#define PREFETCH 1") && p.grid_stride);
        // fp32 4096 x 512 (2 KiB rows, 512 chunks: under three a block of 264): prefetching.
        let p = program(
            LayerNorm {
                rows: 4096,
                dim: 512,
                ..ln
            },
            Precision::Fp32,
        );
        assert_eq!(p.function, "layer_norm");
        assert!(p.source.contains("#define PREFETCH 1"));
        // Named, the schedule runs wherever the kernel can: the same short tensor by bulk copies.
        let p = tuning::with_schedule(Schedule::Bulk, || {
            program(
                LayerNorm {
                    rows: 4096,
                    dim: 512,
                    ..ln
                },
                Precision::Fp32,
            )
        });
        assert_eq!(p.function, "layer_norm_bulk");
        // Before sm_90 no bulk copies: prefetching.
        let old = DeviceFacts {
            compute_capability: (8, 0),
            ..facts
        };
        let p = ln.cuda_program(Precision::Bf16, old).unwrap();
        assert!(p.source.contains("#define PREFETCH 1"));
        // fp32 1024 (4 KiB): a block per item; bf16 2048 (4 KiB, too wide a lane for bulk
        // copies): prefetching.
        let p = program(ln, Precision::Fp32);
        assert!(p.source.contains("#define PREFETCH 0") && !p.grid_stride);
        let p = program(LayerNorm { dim: 2048, ..ln }, Precision::Bf16);
        assert!(p.source.contains("#define PREFETCH 1") && p.grid_stride);
        // fp32 4096 (16 KiB): a block per item.
        let p = program(LayerNorm { dim: 4096, ..ln }, Precision::Fp32);
        assert!(p.source.contains("#define PREFETCH 0") && !p.grid_stride);
        // An override wins.
        let p = tuning::with_schedule(Schedule::Wave, || program(ln, Precision::Bf16));
        assert!(p.source.contains("#define PREFETCH 0") && p.grid_stride);
    }

    #[test]
    fn a_constant_row_gives_the_bias() {
        let op = LayerNorm {
            rows: 1,
            dim: 4,
            eps: 1e-5,
        };
        let inputs = Inputs {
            data: vec![vec![3.0f32; 4], vec![2.0; 4], vec![0.0, 1.0, -1.0, 0.5]],
            targets: vec![],
        };
        let mut out = Outputs::poisoned(&op.output_lens());
        op.run_cpu(&inputs, &mut out, false);
        assert_eq!(out.tensors[0], vec![0.0, 1.0, -1.0, 0.5]);
        assert!(
            LayerNorm::plan(&params(
                &OpKernel::<LayerNorm>::default(),
                &[("eps", ParamValue::Float(0.0))]
            ))
            .is_err()
        );
    }
}
