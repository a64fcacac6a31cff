//! `tile_ops.tile_unpack`: scatters `P[B,K,C,t,t]` back over a copy of `base[B,C,H,W]`
//! (model B of `spec/apex-x-kernels.md` §1.3), in `override` or `blend` mode, with priority levels.
//!
//! **Key rule** (one rule, every backend): `key = ((level - min_level) << order_bits) + k` with
//! `order_bits = max(1, bit_length(K - 1))`; tiles apply in ascending key order, so on an overlap
//! the **highest key wins** (a higher level wins; within a level the later slot wins). Blend
//! computes `out = (1 - alpha) * out + alpha * P` per tile in that order. Subtracting `min_level`
//! does not change the order, so implementations compare `(level, k)`; setup rejects level counts
//! whose keys would not fit in an `i32`.
//!
//! **Slots:** an id `< 0` or `>= G` is an empty slot and is skipped. A slot's origin is its grid
//! origin, shifted by `t/2` in y and x on odd slots when `offgrid` is set; the part of a window
//! beyond the map is dropped. Origins that are negative or not multiples of the cell (`t`, or
//! `t/2` with `offgrid`) are skipped too (the generator never makes them).
//!
//! `unpack`: the op (plan, declared work, inputs, CPU path, f64 reference, CUDA launches);
//! `layout`: how the one-launch override kernel lays a cell row over its threads.

mod layout;
mod unpack;

#[cfg(test)]
mod tests;

pub use layout::OverrideLayout;
pub use unpack::{TileUnpack, UnpackMode, order_bits, tolerance};
