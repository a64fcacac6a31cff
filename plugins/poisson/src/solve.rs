//! What a solve is: the three methods, their settings and the report every implementation
//! (f64 reference, fast CPU path, CUDA) returns, with the iteration rules they all follow.
//!
//! All solves start from `x = 0`. Iteration `k` first tests the residual of iterate `k`
//! (`||r_k|| <= tolerance * ||b||`, with `r_0 = b`): if it holds the solve stops having taken `k`
//! iterations; otherwise, if `k == max_iterations`, it stops unconverged; otherwise it performs one
//! more iteration (a CG step, a V-cycle, or a V-cycle-preconditioned CG step). The residual is the
//! method's own: CG's recursively updated `r`, multigrid's `b - A x` recomputed after each cycle.

/// The solver of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Matrix-free conjugate gradients on the 7-point Laplacian.
    Cg,
    /// Geometric multigrid V-cycles (red-black Gauss-Seidel, averaging restriction, trilinear
    /// prolongation, dense coarsest solve) used as the solver.
    Mg,
    /// CG preconditioned by one V-cycle per iteration.
    MgPcg,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Cg, Method::Mg, Method::MgPcg];

    pub fn id(self) -> &'static str {
        match self {
            Self::Cg => "poisson.cg",
            Self::Mg => "poisson.mg",
            Self::MgPcg => "poisson.mgpcg",
        }
    }

    pub fn uses_multigrid(self) -> bool {
        !matches!(self, Self::Cg)
    }

    pub fn description(self) -> &'static str {
        match self {
            Self::Cg => {
                "3-D pressure Poisson solve (7-point Laplacian, Dirichlet) by matrix-free CG: one call = one solve from x=0 to the tolerance or max_iterations"
            }
            Self::Mg => {
                "3-D pressure Poisson solve by geometric multigrid V-cycles (red-black Gauss-Seidel, averaging restriction, trilinear prolongation, dense coarsest solve): one call = one solve"
            }
            Self::MgPcg => {
                "3-D pressure Poisson solve by CG preconditioned with one multigrid V-cycle per iteration: one call = one solve"
            }
        }
    }
}

/// How long a solve may run and when it stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub max_iterations: usize,
    /// Relative residual `||r|| / ||b||` to reach.
    pub tolerance: f64,
    /// Red-black Gauss-Seidel sweeps before and after the coarse correction (V(s, s)).
    pub sweeps: usize,
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Report {
    /// Iterations performed (CG steps, V-cycles or PCG steps).
    pub iterations: usize,
    /// The solver's own final relative residual.
    pub relres: f64,
    /// Whether it reached the tolerance within `max_iterations`.
    pub converged: bool,
}

/// The stopping test shared by every implementation: `res` and `res0` are squared norms.
pub fn reached(res: f64, res0: f64, tolerance: f64) -> bool {
    res <= tolerance * tolerance * res0
}

/// `sqrt(res / res0)`, 0 for a zero right-hand side.
pub fn relative(res: f64, res0: f64) -> f64 {
    if res0 > 0.0 { (res / res0).sqrt() } else { 0.0 }
}
