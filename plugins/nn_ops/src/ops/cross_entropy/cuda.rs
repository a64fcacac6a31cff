//! The CUDA side of `nn_ops.cross_entropy`: the plan a case's program uses (the forward's
//! streaming plan, or the forward + gradient plan [`tuning::grad_plan`] names, falling back to
//! the reread plan where the shared-memory one does not apply), its `#define`s and launch
//! configuration (`cuda/cross_entropy.cu` describes each plan), and the launch.

use apex_plugin_api::{PluginError, Precision};

use super::{CrossEntropy, tuning};
use crate::{
    device::DeviceState,
    op::{CudaProgram, DeviceFacts},
    program::{BULK, assemble, launch_1d},
    rows::RowPlan,
};

const SOURCE: &str = include_str!("../../cuda/cross_entropy.cu");

/// Vectors per chunk of the streaming CUDA loops.
/// (8 was measured for the forward+gradient loops, H100 2026-11-25, call 11: bf16 3-10 % slower,
/// fp32 1-4 % faster; not kept.)
const UNROLL: usize = 4;
/// Targets each counting block of the fused CUDA kernel counts (at most).
const TARGETS_PER_COUNTER: usize = 4096;
/// Bytes per bulk copy of the shared-memory plan: a block starts its statistics once the first
/// copy of its slice has landed, while the others are still in flight.
const SMEM_CHUNK_BYTES: usize = 16 * 1024;
/// Registers per thread the shared-memory plan's launch bounds leave at least: ptxas (sm_90,
/// NVRTC 13.0) fits every check source in 40 without spills, and spilled 8 to 12 bytes in 9 of
/// the 48 with 512-thread blocks at 32 (four such blocks per SM). So at most three 512-thread
/// blocks per SM, whatever the slice.
const SMEM_REGISTERS: usize = 40;
/// Shared memory a block of the shared-memory plan uses besides its slice, rounded up: the
/// kernel's static arrays (the reductions' 32 doubles, a few words, one 8-byte barrier per copy:
/// under 512 bytes) and the 1 KiB the driver reserves per block (sm_80 and later).
const SMEM_OVERHEAD_BYTES: usize = 2048;
/// 32-bit registers per SM (every architecture NVRTC targets here).
const REGISTERS_PER_SM: usize = 65_536;

/// A shared-memory forward + gradient plan ([`tuning::GradPlan::Smem`]) that fits the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SharedPlan {
    plan: RowPlan,
    /// Dynamic shared memory per block: the block's rows or row slice.
    bytes: usize,
    /// 16-byte vectors per bulk copy, and copies per block.
    chunk_vectors: usize,
    chunks: usize,
    /// Blocks per SM that the shared memory, the thread limit and [`SMEM_REGISTERS`] allow (the
    /// launch bounds).
    blocks_per_sm: usize,
}

/// The shared-memory plan with slices of at most `slice_bytes`, or `None` (the caller then
/// uses the reread plan) where it does not apply: below sm_90 (TMA bulk copies), rows that
/// are not whole 16-byte vectors, or a block's data beyond the device's shared memory per
/// block (a row longer than `MAX_SPLIT` slices).
fn shared_plan(
    op: &CrossEntropy,
    precision: Precision,
    facts: DeviceFacts,
    slice_bytes: usize,
) -> Result<Option<SharedPlan>, PluginError> {
    if facts.compute_capability < (9, 0) {
        return Ok(None);
    }
    let Some(plan) = RowPlan::shared_slices(op.rows, op.vocab, precision, slice_bytes)? else {
        return Ok(None);
    };
    let bytes = plan.block_bytes(precision.size_bytes());
    if bytes + SMEM_OVERHEAD_BYTES > facts.smem_per_block_optin {
        return Ok(None);
    }
    let chunk_vectors = SMEM_CHUNK_BYTES / 16;
    let blocks_per_sm = (facts.smem_per_sm / (bytes + SMEM_OVERHEAD_BYTES))
        .min(facts.threads_per_sm / plan.block)
        .min(REGISTERS_PER_SM / (SMEM_REGISTERS * plan.block))
        .max(1);
    Ok(Some(SharedPlan {
        plan,
        bytes,
        chunk_vectors,
        chunks: (bytes / 16).div_ceil(chunk_vectors),
        blocks_per_sm,
    }))
}

pub(super) fn program(
    op: &CrossEntropy,
    precision: Precision,
    facts: DeviceFacts,
) -> Result<CudaProgram, PluginError> {
    let grad_plan = op.grad.then(tuning::grad_plan);
    let shared = match grad_plan {
        Some(tuning::GradPlan::Smem { slice_kib }) => {
            shared_plan(op, precision, facts, slice_kib * 1024)?
        }
        _ => None,
    };
    let resident = grad_plan == Some(tuning::GradPlan::Resident);
    let plan = if let Some(shared) = &shared {
        shared.plan
    } else if resident {
        RowPlan::resident(op.rows, op.vocab, precision)?
    } else if op.grad {
        RowPlan::streaming_reread(op.rows, op.vocab, precision)?
    } else {
        RowPlan::streaming(op.rows, op.vocab, precision)?
    };
    let mut defines = match &shared {
        Some(shared) => plan.defines_at(shared.blocks_per_sm),
        None => plan.defines(),
    };
    defines.push(("GRAD", usize::from(op.grad)));
    defines.push(("RESIDENT", usize::from(resident)));
    defines.push(("SMEM", usize::from(shared.is_some())));
    if let Some(shared) = &shared {
        defines.push(("CHUNK_V", shared.chunk_vectors));
        defines.push(("CHUNKS", shared.chunks));
    }
    defines.push(("UNROLL", UNROLL));
    defines.push((
        "COUNTERS",
        op.rows.div_ceil(TARGETS_PER_COUNTER).min(plan.grid).max(1),
    ));
    let split_words = if plan.split > 1 {
        op.rows + op.rows * plan.split * 2
    } else {
        0
    };
    let mut config = launch_1d(plan.grid, plan.block);
    if let Some(shared) = &shared {
        config.shared_mem_bytes = shared.bytes as u32;
    }
    Ok(CudaProgram {
        name: "cross_entropy",
        source: assemble(precision, &defines, &[BULK, SOURCE].concat()),
        function: "cross_entropy",
        config,
        scratch_words: 8 + 2 * plan.grid + split_words,
        co_resident_blocks: plan.split,
        grid_stride: false,
    })
}

pub(super) fn launch(device: &DeviceState, set: usize) -> Result<(), PluginError> {
    let s = &device.sets[set];
    let targets = s
        .targets
        .as_ref()
        .ok_or_else(|| PluginError::other("cross_entropy has no targets on the device"))?;
    let mut b = device.launcher();
    b.ptr(&s.data[0]).ptr(targets);
    // Without `grad` the kernel never touches its gradient pointer; pass the logits.
    match s.outputs.first() {
        Some(g) => b.ptr(g),
        None => b.ptr(&s.data[0]),
    };
    b.ptr(&s.scalars).ptr(&device.scratch);
    // SAFETY: the arguments match `cross_entropy` in cuda/cross_entropy.cu; the grid and
    // scratch are the plan's.
    unsafe { device.launch(b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forward + gradient program of 4096 rows of `vocab` under `plan`.
    fn grad_program(
        plan: tuning::GradPlan,
        vocab: usize,
        precision: Precision,
        facts: DeviceFacts,
    ) -> CudaProgram {
        let op = CrossEntropy {
            rows: 4096,
            vocab,
            grad: true,
            ignore_ratio: 0.1,
        };
        tuning::with_grad_plan(plan, || program(&op, precision, facts)).unwrap()
    }

    #[test]
    fn the_shared_memory_plan_sizes_its_blocks_and_falls_back_to_the_reread_plan() {
        use tuning::GradPlan::{Reread, Smem};
        let h100 = DeviceFacts::H100;
        let defines = |p: &CudaProgram, names: &[&str]| -> Vec<String> {
            names
                .iter()
                .map(|n| {
                    let key = format!("#define {n} ");
                    p.source
                        .lines()
                        .find_map(|l| l.strip_prefix(key.as_str()).map(str::to_string))
                        .unwrap_or_default()
                })
                .collect()
        };
        let names = ["SMEM", "SPLIT", "CHUNKS", "MIN_BLOCKS"];
        // bf16 vocab 262,144 (512 KiB rows): 8 slices of 64 KiB in four bulk copies each, three
        // blocks per SM; 96 KiB: 6 slices of 85.3 KiB, two blocks per SM.
        let p = grad_program(Smem { slice_kib: 64 }, 262_144, Precision::Bf16, h100);
        assert_eq!(p.config.shared_mem_bytes, 64 * 1024);
        assert_eq!(defines(&p, &names), ["1u", "8u", "4u", "3u"]);
        assert_eq!(p.co_resident_blocks, 8);
        let p = grad_program(Smem { slice_kib: 96 }, 262_144, Precision::Bf16, h100);
        assert_eq!(p.config.shared_mem_bytes, 87_392);
        assert_eq!(defines(&p, &names), ["1u", "6u", "6u", "2u"]);
        // fp32 vocab 32,768 at 48 KiB: three slices of 43,696 bytes.
        let p = grad_program(Smem { slice_kib: 48 }, 32_768, Precision::Fp32, h100);
        assert_eq!(p.config.shared_mem_bytes, 43_696);
        assert_eq!(defines(&p, &names), ["1u", "3u", "3u", "3u"]);
        // The reread plan where the shared-memory plan does not apply: rows that are not whole
        // 16-byte vectors, a device below sm_90, a slice beyond the shared memory of a block.
        let ampere = DeviceFacts {
            compute_capability: (8, 0),
            ..h100
        };
        let small = DeviceFacts {
            smem_per_block_optin: 64 * 1024,
            ..h100
        };
        for (vocab, precision, facts, kib) in [
            (8193, Precision::Bf16, h100, 64),
            (7, Precision::Fp32, h100, 32),
            (262_144, Precision::Bf16, ampere, 64),
            (262_144, Precision::Bf16, small, 96),
        ] {
            let smem = grad_program(Smem { slice_kib: kib }, vocab, precision, facts);
            let reread = grad_program(Reread, vocab, precision, facts);
            assert_eq!(smem.config.shared_mem_bytes, 0, "{vocab} {precision}");
            assert_eq!(smem.source, reread.source, "{vocab} {precision}");
        }
        // Without the gradient the plan plays no part.
        let op = CrossEntropy {
            rows: 4096,
            vocab: 32_768,
            grad: false,
            ignore_ratio: 0.1,
        };
        let forward =
            |plan| tuning::with_grad_plan(plan, || program(&op, Precision::Bf16, h100)).unwrap();
        assert_eq!(
            forward(Smem { slice_kib: 64 }).source,
            forward(Reread).source
        );
    }
}
