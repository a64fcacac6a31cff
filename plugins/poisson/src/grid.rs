//! The grid and the multigrid hierarchy: dimensions (x fastest), the 7-point operator's diagonal
//! per level, and how the hierarchy is coarsened.
//!
//! The operator on level `l` is the unit 7-point stencil `A u = d*u - sum(neighbours)` over the
//! cells of the level. The finest level is the problem: unknowns at unit spacing with zero
//! Dirichlet values one spacing outside the grid (`d = 6`). Coarse levels are cell-centred (a
//! coarse cell is 2x2x2 fine cells, spacing `H = 2^l`); their Dirichlet boundary sits where the
//! finest level's does, so the zero ghost value outside a face is the linear extrapolation
//! `-(H-1)/(H+1)` times the cell next to it, which adds [`Level::ghost`] to `d` once per boundary
//! face. With a zero ghost on every level instead, a V-cycle stalls (its coarse problems put the
//! boundary in the wrong place); with this one it contracts by the same factor at every size.

use apex_plugin_api::PluginError;

/// Grid dimensions: `nx` points along x (the fastest index), `ny`, `nz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

/// The largest grid a case accepts (index arithmetic on the device is 64-bit, but host memory for
/// the f64 reference and the manufactured solution grows with it): 2^31 points.
pub const MAX_POINTS: usize = 1 << 31;

impl Dims {
    pub fn new(nx: usize, ny: usize, nz: usize) -> Self {
        Self { nx, ny, nz }
    }

    /// From the `grid_size` parameter `[nx, ny, nz]`.
    pub fn from_shape(shape: &[usize]) -> Result<Self, PluginError> {
        let [nx, ny, nz] = shape else {
            return Err(PluginError::invalid(format!(
                "grid_size must have 3 dimensions [nx, ny, nz], got {shape:?}"
            )));
        };
        let d = Self::new(*nx, *ny, *nz);
        if d.nx == 0 || d.ny == 0 || d.nz == 0 {
            return Err(PluginError::invalid(format!(
                "grid_size must have every dimension >= 1, got {shape:?}"
            )));
        }
        if d.nx
            .checked_mul(d.ny)
            .and_then(|v| v.checked_mul(d.nz))
            .is_none_or(|n| n > MAX_POINTS)
        {
            return Err(PluginError::invalid(format!(
                "grid_size {shape:?} has more than 2^31 points"
            )));
        }
        Ok(d)
    }

    pub fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn idx(&self, x: usize, y: usize, z: usize) -> usize {
        (z * self.ny + y) * self.nx + x
    }

    /// Points in one z-plane.
    pub fn plane(&self) -> usize {
        self.nx * self.ny
    }

    fn all_even(&self) -> bool {
        self.nx.is_multiple_of(2) && self.ny.is_multiple_of(2) && self.nz.is_multiple_of(2)
    }

    fn halved(&self) -> Self {
        Self::new(self.nx / 2, self.ny / 2, self.nz / 2)
    }
}

impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.nx, self.ny, self.nz)
    }
}

/// One level of the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    pub dims: Dims,
    /// Added to the diagonal once per boundary face of a cell: `(H-1)/(H+1)`, `H = 2^level`.
    pub ghost: f64,
}

impl Level {
    pub fn new(dims: Dims, index: usize) -> Self {
        let h = (1u64 << index) as f64;
        Self {
            dims,
            ghost: (h - 1.0) / (h + 1.0),
        }
    }

    /// The finest level of `dims` (zero ghost: `d = 6` everywhere).
    pub fn finest(dims: Dims) -> Self {
        Self::new(dims, 0)
    }

    /// The diagonal of the operator at `(x, y, z)`.
    #[inline]
    pub fn diag(&self, x: usize, y: usize, z: usize) -> f64 {
        let d = &self.dims;
        let faces = usize::from(x == 0)
            + usize::from(x + 1 == d.nx)
            + usize::from(y == 0)
            + usize::from(y + 1 == d.ny)
            + usize::from(z == 0)
            + usize::from(z + 1 == d.nz);
        6.0 + self.ghost * faces as f64
    }
}

/// Coarsening stops once a level has at most this many points (its exact solve is a dense
/// inverse, cheap at this size).
pub const COARSEN_DOWN_TO: usize = 64;
/// The largest coarsest level accepted (halving also stops at an odd dimension).
pub const COARSEST_MAX_POINTS: usize = 512;

/// The levels of a geometric multigrid, finest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy {
    pub levels: Vec<Level>,
}

impl Hierarchy {
    /// Halves every dimension while all are even and the level has more than
    /// [`COARSEN_DOWN_TO`] points; the coarsest level must have at most [`COARSEST_MAX_POINTS`].
    pub fn build(dims: Dims) -> Result<Self, PluginError> {
        let mut levels = vec![Level::finest(dims)];
        let mut d = dims;
        while d.len() > COARSEN_DOWN_TO && d.all_even() {
            d = d.halved();
            levels.push(Level::new(d, levels.len()));
        }
        if d.len() > COARSEST_MAX_POINTS {
            return Err(PluginError::invalid(format!(
                "grid_size {dims} cannot be coarsened by halving to at most {COARSEST_MAX_POINTS} points \
                 (it stops at {d}, an odd dimension); multigrid needs dimensions like 32, 48, 64, 96, 128, 256 \
                 (hint: use poisson.cg for this grid)"
            )));
        }
        Ok(Self { levels })
    }

    pub fn finest(&self) -> &Level {
        &self.levels[0]
    }

    pub fn coarsest(&self) -> &Level {
        &self.levels[self.levels.len() - 1]
    }

    /// Points over all levels (memory of the level vectors).
    pub fn total_points(&self) -> usize {
        self.levels.iter().map(|l| l.dims.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hierarchy_of_cubic_and_box_grids() {
        let h = Hierarchy::build(Dims::new(64, 64, 64)).unwrap();
        let sizes: Vec<usize> = h.levels.iter().map(|l| l.dims.nx).collect();
        assert_eq!(sizes, vec![64, 32, 16, 8, 4]);
        assert_eq!(h.levels[0].ghost, 0.0);
        assert!((h.levels[1].ghost - 1.0 / 3.0).abs() < 1e-15);
        let b = Hierarchy::build(Dims::new(128, 64, 32)).unwrap();
        assert_eq!(b.coarsest().dims, Dims::new(8, 4, 2));
        let odd = Hierarchy::build(Dims::new(96, 96, 96)).unwrap();
        assert_eq!(odd.coarsest().dims, Dims::new(3, 3, 3));
        let tiny = Hierarchy::build(Dims::new(4, 4, 4)).unwrap();
        assert_eq!(tiny.levels.len(), 1);
        let bad = Hierarchy::build(Dims::new(100, 100, 100)).unwrap_err();
        assert!(bad.message.contains("25x25x25"), "{}", bad.message);
    }

    #[test]
    fn diagonal_counts_boundary_faces() {
        let l = Level::new(Dims::new(4, 4, 1), 1);
        assert!((l.diag(1, 1, 0) - (6.0 + 2.0 / 3.0)).abs() < 1e-15);
        assert!((l.diag(0, 0, 0) - (6.0 + 4.0 / 3.0)).abs() < 1e-15);
        assert_eq!(Level::finest(Dims::new(4, 4, 4)).diag(0, 0, 0), 6.0);
    }

    #[test]
    fn bad_shapes_are_rejected() {
        assert!(Dims::from_shape(&[64, 64]).is_err());
        assert!(Dims::from_shape(&[64, 0, 64]).is_err());
        assert_eq!(Dims::from_shape(&[8, 4, 2]).unwrap(), Dims::new(8, 4, 2));
    }
}
