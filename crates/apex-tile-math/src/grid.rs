//! [`TileGrid`]: the tile grid of one `H x W` map (`spec/apex-x-kernels.md` conventions): tile
//! ids are row-major, `id = ty * gw + tx`, origin `(ty * t, tx * t)`. Packing copies one tile of
//! a `[C, H, W]` map out (§1.2); override-unpacking writes one back (§1.3, model A with one
//! level: with unique ids every pixel has at most one writer, so the order does not matter).

/// The grid of `tile x tile` tiles over an `height x width` map (both multiples of `tile`; the
/// caller validates that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileGrid {
    pub height: usize,
    pub width: usize,
    pub tile: usize,
}

impl TileGrid {
    pub fn new(height: usize, width: usize, tile: usize) -> Self {
        debug_assert!(tile > 0 && height.is_multiple_of(tile) && width.is_multiple_of(tile));
        Self {
            height,
            width,
            tile,
        }
    }

    pub fn gh(&self) -> usize {
        self.height / self.tile
    }

    pub fn gw(&self) -> usize {
        self.width / self.tile
    }

    /// Tiles on the grid, `gh * gw`.
    pub fn tiles(&self) -> usize {
        self.gh() * self.gw()
    }

    /// Pixels per tile, `t * t`.
    pub fn tile_pixels(&self) -> usize {
        self.tile * self.tile
    }

    /// The top-left pixel `(y0, x0)` of tile `id`.
    pub fn origin(&self, id: usize) -> (usize, usize) {
        ((id / self.gw()) * self.tile, (id % self.gw()) * self.tile)
    }

    /// Copies tile `id` of `map` (`[C, H, W]`) into `out` (`[C, t, t]`).
    pub fn pack<T: Copy>(&self, map: &[T], id: usize, out: &mut [T]) {
        let (t, hw) = (self.tile, self.height * self.width);
        let (y0, x0) = self.origin(id);
        for (c, dst) in out.chunks_exact_mut(t * t).enumerate() {
            let plane = &map[c * hw..(c + 1) * hw];
            for (i, row) in dst.chunks_exact_mut(t).enumerate() {
                let at = (y0 + i) * self.width + x0;
                row.copy_from_slice(&plane[at..at + t]);
            }
        }
    }

    /// Writes `tile` (`[C, t, t]`) over tile `id` of `map` (`[C, H, W]`): override.
    pub fn unpack<T: Copy>(&self, tile: &[T], id: usize, map: &mut [T]) {
        let (t, hw) = (self.tile, self.height * self.width);
        let (y0, x0) = self.origin(id);
        for (c, src) in tile.chunks_exact(t * t).enumerate() {
            let plane = &mut map[c * hw..(c + 1) * hw];
            for (i, row) in src.chunks_exact(t).enumerate() {
                let at = (y0 + i) * self.width + x0;
                plane[at..at + t].copy_from_slice(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_then_unpack_round_trips_and_touches_only_the_tile() {
        let g = TileGrid::new(4, 6, 2);
        assert_eq!((g.gh(), g.gw(), g.tiles()), (2, 3, 6));
        assert_eq!(g.origin(4), (2, 2));
        let map: Vec<i32> = (0..2 * 24).collect();
        let mut tile = vec![0; 2 * 4];
        g.pack(&map, 4, &mut tile);
        // Channel 0 rows 2..4, columns 2..4; channel 1 the same + 24.
        assert_eq!(tile, [14, 15, 20, 21, 38, 39, 44, 45]);
        let mut out = vec![-1; 48];
        g.unpack(&tile, 4, &mut out);
        let written: Vec<usize> = (0..48).filter(|&i| out[i] != -1).collect();
        assert_eq!(written, [14, 15, 20, 21, 38, 39, 44, 45]);
        assert!(written.iter().all(|&i| out[i] == map[i]));
    }
}
