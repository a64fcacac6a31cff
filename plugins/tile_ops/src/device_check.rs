//! [`CheckKit`]: how a CUDA case gets its inputs and verifies its outputs without a round trip
//! through the host (issue 10: the large profile's maps are 134 M elements, and drawing them on the
//! CPU, uploading them and computing the reference there took most of a case's wall time).
//!
//! - **Inputs** drawn on the device from the seeded stream ([`CheckKit::draw`]): the same values,
//!   bit for bit, as the host's [`crate::selection::uniform_into`].
//! - **Reference**: each op's f64 reference written by the plain reference kernels of
//!   `cuda/check.cu` (thread per element, from the definition, sharing no code with the kernels
//!   under test) into one f64 buffer, the outputs concatenated as [`crate::op::TileOp::reference`]
//!   lays them out.
//! - **Comparison** on the device ([`CheckKit::compare`]) into the figures
//!   `apex_plugin_api::compare_outputs` defines, every element counted.
//!
//! The device reference is itself checked on every verify against the f64 CPU reference of the last
//! batch row ([`crate::row_check`]), so the verifier of the CUDA path cannot drift from the
//! definition without failing the case.

use std::sync::Arc;

use apex_plugin_api::cuda::{CudaSession, cuda_error};
use apex_plugin_api::{Accuracy, PluginError, Precision, Tolerance};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::{TileShape, selection::Rng};

const SOURCE: &str = include_str!("cuda/check.cu");

/// The kit's kernels, in the order of [`FUNCTIONS`].
pub mod f {
    pub const DRAW_UNIFORM: usize = 0;
    pub const REF_WIDEN: usize = 1;
    pub const REF_PACK: usize = 2;
    pub const REF_FUSED_TILES: usize = 3;
    pub const REF_UNPACK_RANK: usize = 4;
    pub const REF_GATE_ALPHA: usize = 5;
    pub const REF_GATE_FUSE: usize = 6;
    pub const COMPARE: usize = 7;
}

const FUNCTIONS: [&str; 8] = [
    "draw_uniform",
    "ref_widen",
    "ref_pack",
    "ref_fused_tiles",
    "ref_unpack_rank",
    "ref_gate_alpha",
    "ref_gate_fuse",
    "compare",
];

/// The kit's program name.
pub const PROGRAM: &str = "tile_ops_check";

/// The kit's CUDA source for `precision` (the storage type is its only specialisation).
pub fn source(precision: Precision) -> String {
    crate::program::assemble(precision, &[("VEC", 1)], SOURCE)
}

/// Threads per block of every kit kernel.
const THREADS: u32 = 256;
/// The most blocks a grid-stride kit launch uses (16 per SM on a 132-SM H100 is plenty for
/// streaming), and so the partial results `compare` writes per output.
const MAX_BLOCKS: usize = 2048;

/// The compiled kit of one storage type and its device buffers.
pub struct CheckKit {
    pub functions: Vec<CudaFunction>,
    /// The f64 reference of every output, concatenated; allocated at the first verify (so a case's
    /// measured device memory does not include it) and kept for the next.
    reference: Option<CudaSlice<f64>>,
    part_f: CudaSlice<f64>,
    part_u: CudaSlice<u64>,
}

/// A grid-stride launch over `n` elements.
pub fn grid(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            n.div_ceil(THREADS as usize).clamp(1, MAX_BLOCKS) as u32,
            1,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl CheckKit {
    /// Compiles the kit for `precision` (one source per storage type: the disk cache serves every
    /// later case) on `session`.
    pub fn new(session: &CudaSession, precision: Precision) -> Result<Self, PluginError> {
        let module = session.compile(PROGRAM, &source(precision))?;
        let functions = FUNCTIONS
            .iter()
            .map(|name| session.function(&module, name))
            .collect::<Result<Vec<_>, _>>()?;
        let stream = &session.stream;
        let part_f = stream
            .alloc_zeros::<f64>(3 * MAX_BLOCKS)
            .map_err(cuda_error)?;
        let part_u = stream
            .alloc_zeros::<u64>(2 * MAX_BLOCKS)
            .map_err(cuda_error)?;
        Ok(Self {
            functions,
            reference: None,
            part_f,
            part_u,
        })
    }

    /// Draws `elements` values uniform in `[lo, hi)` from `rng`'s stream into `out` (raw
    /// storage of the kit's type).
    pub fn draw(
        &self,
        stream: &Arc<CudaStream>,
        out: &mut CudaSlice<u8>,
        elements: usize,
        rng: &Rng,
        lo: f64,
        hi: f64,
    ) -> Result<(), PluginError> {
        let (n, state, span) = (elements as u64, rng.state(), hi - lo);
        let mut b = stream.launch_builder(&self.functions[f::DRAW_UNIFORM]);
        b.arg(out).arg(&n).arg(&state).arg(&lo).arg(&span);
        // SAFETY: arguments match `draw_uniform`; `out` holds `elements` values of the kit's type.
        unsafe { b.launch(grid(elements)) }
            .map(drop)
            .map_err(cuda_error)
    }

    /// The reference buffer, holding at least `len` values.
    pub fn reference(
        &mut self,
        stream: &Arc<CudaStream>,
        len: usize,
    ) -> Result<&mut CudaSlice<f64>, PluginError> {
        if self.reference.as_ref().is_none_or(|r| r.len() < len) {
            self.reference = None;
            // SAFETY: every element of the first `len` is written by the op's reference launches
            // before `compare` or a download reads it.
            self.reference = Some(unsafe { stream.alloc::<f64>(len.max(1)) }.map_err(cuda_error)?);
        }
        Ok(self.reference.as_mut().expect("allocated above"))
    }

    /// The kit's kernels and the reference buffer (allocated by [`CheckKit::reference`]), for an
    /// op's reference launches.
    pub fn launch_parts(&mut self) -> Result<(&[CudaFunction], &mut CudaSlice<f64>), PluginError> {
        let reference = self.reference.as_mut().ok_or_else(unwritten)?;
        Ok((&self.functions, reference))
    }

    /// The reference as written by the last reference launches.
    pub fn written_reference(&self) -> Result<&CudaSlice<f64>, PluginError> {
        self.reference.as_ref().ok_or_else(unwritten)
    }

    /// Compares each output (raw storage of the kit's type, `lens[k]` elements) with its part of
    /// the reference, every element on the device, and merges the figures of all outputs.
    pub fn compare(
        &mut self,
        stream: &Arc<CudaStream>,
        outputs: &[CudaSlice<u8>],
        lens: &[usize],
        tol: &Tolerance,
    ) -> Result<Accuracy, PluginError> {
        let Self {
            functions,
            reference,
            part_f,
            part_u,
        } = self;
        let reference = reference.as_ref().ok_or_else(unwritten)?;
        let mut totals = Partials::default();
        let mut offset = 0;
        for (out, &len) in outputs.iter().zip(lens) {
            let cfg = grid(len);
            let blocks = cfg.grid_dim.0 as usize;
            let part = reference.slice(offset..offset + len);
            let n = len as u64;
            let mut b = stream.launch_builder(&functions[f::COMPARE]);
            b.arg(out)
                .arg(&part)
                .arg(&n)
                .arg(&tol.atol)
                .arg(&tol.rtol)
                .arg(&mut *part_f)
                .arg(&mut *part_u);
            // SAFETY: arguments match `compare`; the partial buffers hold MAX_BLOCKS blocks.
            unsafe { b.launch(cfg) }.map_err(cuda_error)?;
            let mut pf = vec![0.0f64; 3 * blocks];
            let mut pu = vec![0u64; 2 * blocks];
            stream
                .memcpy_dtoh(&part_f.slice(..3 * blocks), &mut pf)
                .map_err(cuda_error)?;
            stream
                .memcpy_dtoh(&part_u.slice(..2 * blocks), &mut pu)
                .map_err(cuda_error)?;
            stream.synchronize().map_err(cuda_error)?;
            totals.add(&pf, &pu, n);
            offset += len;
        }
        Ok(totals.accuracy())
    }
}

/// The error of a reference read before [`CheckKit::reference`] allocated it (a plugin bug).
fn unwritten() -> PluginError {
    PluginError::invalid("the device reference is read before it was allocated and written")
}

/// The merged figures of `compare`'s blocks.
#[derive(Debug, Default)]
struct Partials {
    elements: u64,
    sum_sq: f64,
    max_abs: f64,
    max_rel: f64,
    mismatches: u64,
    non_finite: u64,
}

impl Partials {
    /// Adds one output's blocks (`pf`: 3 per block, `pu`: 2 per block) of `elements` elements.
    fn add(&mut self, pf: &[f64], pu: &[u64], elements: u64) {
        self.elements += elements;
        for (f, u) in pf.chunks_exact(3).zip(pu.chunks_exact(2)) {
            self.sum_sq += f[0];
            self.max_abs = self.max_abs.max(f[1]);
            self.max_rel = self.max_rel.max(f[2]);
            self.mismatches += u[0];
            self.non_finite += u[1];
        }
    }

    fn accuracy(&self) -> Accuracy {
        let n = self.elements as f64;
        let (rmse, mismatch_ratio) = if self.elements == 0 {
            (0.0, 0.0)
        } else {
            ((self.sum_sq / n).sqrt(), self.mismatches as f64 / n)
        };
        Accuracy {
            elements: self.elements,
            rmse,
            max_abs_error: self.max_abs,
            max_rel_error: self.max_rel,
            mismatch_ratio,
            non_finite: self.non_finite,
        }
    }
}

/// [`slot_origins`] on the device.
pub fn upload_slot_origins(
    stream: &Arc<CudaStream>,
    s: &TileShape,
    ids: &[i32],
) -> Result<CudaSlice<i32>, PluginError> {
    stream.clone_htod(&slot_origins(s, ids)).map_err(cuda_error)
}

/// `(y0, x0)` of every slot's tile, `(-1, -1)` for an empty slot (`-1` or `>= G`): the table
/// `ref_pack` and `ref_fused_tiles` read, from the same definitions as the CPU reference.
pub fn slot_origins(s: &TileShape, ids: &[i32]) -> Vec<i32> {
    ids.iter()
        .flat_map(|&id| {
            if s.is_valid_id(id) {
                let (y0, x0) = s.origin(id as usize);
                [y0 as i32, x0 as i32]
            } else {
                [-1, -1]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_blocks_give_the_one_pass_figures() {
        let mut p = Partials::default();
        // Two outputs: 10 elements over two blocks, then 6 in one block.
        p.add(&[4.0, 1.0, 0.5, 5.0, 2.0, 0.25], &[1, 0, 2, 1], 10);
        p.add(&[7.0, 0.5, 3.0], &[0, 0], 6);
        let a = p.accuracy();
        assert_eq!(a.elements, 16);
        assert_eq!(a.rmse, (16.0f64 / 16.0).sqrt());
        assert_eq!(a.max_abs_error, 2.0);
        assert_eq!(a.max_rel_error, 3.0);
        assert_eq!(a.mismatch_ratio, 3.0 / 16.0);
        assert_eq!(a.non_finite, 1);
        assert_eq!(Partials::default().accuracy().rmse, 0.0);
    }

    #[test]
    fn empty_slots_have_no_origin() {
        let s = TileShape {
            batch: 1,
            channels: 1,
            height: 16,
            width: 32,
            tile: 8,
            kmax: 3,
        };
        assert_eq!(slot_origins(&s, &[5, -1, 8]), [8, 8, -1, -1, -1, -1]);
    }

    #[test]
    fn the_grid_covers_small_and_large_outputs() {
        assert_eq!(grid(0).grid_dim.0, 1);
        assert_eq!(grid(300).grid_dim.0, 2);
        assert_eq!(grid(1 << 30).grid_dim.0 as usize, MAX_BLOCKS);
    }
}
