//! [`OverrideLayout`]: the thread layout of `tile_unpack_override` (store runs, channels per
//! block, launch grid), derived from the shape and precision only.

use apex_plugin_api::Precision;
use cudarc::driver::LaunchConfig;

use crate::{
    TileShape,
    device::{band_grid, channels_per_block},
    program::vec_elems,
};

/// How `tile_unpack_override` lays one cell row's vectors over its threads.
///
/// The knobs, as apex-host measured them on an H200 (B=8, C=256, 256x256, K=256, batch mode, µs
/// per call, one device call per comparison): 256-byte runs against 64/128/512 (t=8 fp16 149.0
/// against 151.4/151.3/148.6, t=16 fp16 139.0 against 141.5/141.7/145.0, t=16 fp32 273.6
/// against 284.0/282.7/276.6); forcing six or eight blocks per SM changed nothing (147.1/147.6
/// against 147.3) and evict-first accesses were slower (t=8 fp16 155.8). Vectors per thread: see
/// [`ROW_VECTORS_PER_THREAD`](crate::device::ROW_VECTORS_PER_THREAD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverrideLayout {
    /// Cells whose row vectors sit side by side in one warp: stores in runs of [`Self::RUN_BYTES`]
    /// (t = 8 in fp16: 16 cells of 16-byte rows), a power of two dividing the cells per row.
    pub run_cells: usize,
    /// Channels per block: [`ROW_VECTORS_PER_THREAD`](crate::device::ROW_VECTORS_PER_THREAD) vectors per thread, all loaded before any
    /// is stored; the per-block winner search (`kmax` small loads) is hidden by other blocks.
    pub channels_per_block: usize,
    /// The cell edge (`t`, or `t/2` off grid): one block per cell row.
    pub cell: usize,
}

impl OverrideLayout {
    /// The store run the cell groups aim for, in bytes.
    pub const RUN_BYTES: usize = 256;

    pub(super) fn new(shape: &TileShape, cell: usize, precision: Precision) -> Self {
        let row_bytes = cell * precision.size_bytes();
        let cells_per_row = shape.width / cell;
        let fit = (Self::RUN_BYTES / row_bytes).max(1);
        let mut run_cells = 1 << fit.ilog2();
        while !cells_per_row.is_multiple_of(run_cells) {
            run_cells /= 2;
        }
        // Vectors of one channel's cell row: `cell` rows of the map's width.
        let row_vecs = cell * shape.width / vec_elems(precision, cell);
        Self {
            run_cells,
            channels_per_block: channels_per_block(row_vecs, shape.channels),
            cell,
        }
    }

    /// One block per (batch, cell row) in x and per channel group in y.
    pub(super) fn launch_config(&self, shape: &TileShape) -> LaunchConfig {
        band_grid(
            shape.batch * (shape.height / self.cell),
            shape.channels,
            self.channels_per_block,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_layout_runs_fit_the_row_and_cover_every_channel() {
        let shape = |width, tile, channels| TileShape {
            batch: 8,
            channels,
            height: 256,
            width,
            tile,
            kmax: 256,
        };
        // t = 8 fp16: 16-byte cell rows, 16 of them per 256-byte run; 256 vectors per channel row.
        let l = OverrideLayout::new(&shape(256, 8, 256), 8, Precision::Fp16);
        assert_eq!((l.run_cells, l.channels_per_block), (16, 2));
        // t = 16 fp32: 64-byte rows, 4 per run; 1024 vectors per channel row: one channel.
        let l = OverrideLayout::new(&shape(256, 16, 256), 16, Precision::Fp32);
        assert_eq!((l.run_cells, l.channels_per_block), (4, 1));
        // Three cells per row: the run shrinks to a divisor; one channel caps the group.
        let l = OverrideLayout::new(&shape(24, 8, 1), 8, Precision::Fp16);
        assert_eq!((l.run_cells, l.channels_per_block), (1, 1));
        let cfg = l.launch_config(&shape(24, 8, 1));
        assert_eq!(cfg.grid_dim, (8 * 256 / 8, 1, 1));
    }
}
