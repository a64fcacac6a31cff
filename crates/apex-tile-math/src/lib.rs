//! `apex-tile-math`: the Apex-X tile math that more than one plugin computes
//! (`spec/apex-x-kernels.md` §1.1–1.5). It is a plain library: it registers no kernel and
//! depends on no plugin, so a plugin that links it (or two plugins that both do) never carries a
//! second copy of another plugin's kernel ids.
//!
//! ```text
//! real.rs       Real: the few float operations the generic formulas need (f32, f64)
//! rng.rs        Rng: the seeded SplitMix64 stream every plugin's inputs are drawn from
//! hilbert.rs    Hilbert distance and the Hilbert order of tile ids (§1.1.1)
//! selection.rs  the greedy budgeted selection and its two-stage (L0 → L1) form (§1.1.2)
//! grid.rs       TileGrid: tile origins, pack one tile, override-unpack one tile (§1.2, §1.3 A)
//! gate.rs       FusionGate: softplus, proxy sanitising, alpha (§1.4)
//! scan.rs       TileSSM: token cleaning, the model's constrained parameters, the bidirectional
//!               gated scan of one sequence (§1.5)
//! ```

pub mod gate;
pub mod grid;
pub mod hilbert;
mod real;
pub mod rng;
pub mod scan;
pub mod selection;

pub use real::Real;
