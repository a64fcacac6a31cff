//! The f64 reference: every building block of the three solvers written as plain serial loops,
//! and the solvers built from them. Verification, the tests of the fast CPU path and the GPU
//! self-check compare against this module; it is written for clarity, not speed.

use crate::{
    grid::{Dims, Hierarchy, Level},
    solve::{Method, Report, Settings, reached, relative},
};

/// Sum of the (up to six) neighbours of `(x, y, z)` inside the grid.
#[inline]
fn neighbours(d: &Dims, u: &[f64], x: usize, y: usize, z: usize) -> f64 {
    let i = d.idx(x, y, z);
    let mut s = 0.0;
    if x > 0 {
        s += u[i - 1];
    }
    if x + 1 < d.nx {
        s += u[i + 1];
    }
    if y > 0 {
        s += u[i - d.nx];
    }
    if y + 1 < d.ny {
        s += u[i + d.nx];
    }
    if z > 0 {
        s += u[i - d.plane()];
    }
    if z + 1 < d.nz {
        s += u[i + d.plane()];
    }
    s
}

/// `out = A u` on `level`.
pub fn apply(level: &Level, u: &[f64], out: &mut [f64]) {
    let d = level.dims;
    for z in 0..d.nz {
        for y in 0..d.ny {
            for x in 0..d.nx {
                let i = d.idx(x, y, z);
                out[i] = level.diag(x, y, z) * u[i] - neighbours(&d, u, x, y, z);
            }
        }
    }
}

/// `out = b - A x` on `level`.
pub fn residual(level: &Level, x: &[f64], b: &[f64], out: &mut [f64]) {
    apply(level, x, out);
    for (o, &bi) in out.iter_mut().zip(b) {
        *o = bi - *o;
    }
}

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `||b - A x||^2` on `level`.
pub fn residual_norm2(level: &Level, x: &[f64], b: &[f64]) -> f64 {
    let mut r = vec![0.0; x.len()];
    residual(level, x, b, &mut r);
    dot(&r, &r)
}

/// One red-black Gauss-Seidel half-sweep: every cell with `(x+y+z) % 2 == color` gets
/// `x = (b + neighbours) / d`. With `zero_init` the iterate is taken as zero first (cells of the
/// other color are set to 0), which is how every coarse level and the preconditioner start.
pub fn rbgs(level: &Level, x: &mut [f64], b: &[f64], color: usize, zero_init: bool) {
    let d = level.dims;
    if zero_init {
        x.fill(0.0);
    }
    for z in 0..d.nz {
        for y in 0..d.ny {
            for xi in 0..d.nx {
                if (xi + y + z) % 2 != color {
                    continue;
                }
                let i = d.idx(xi, y, z);
                x[i] = (b[i] + neighbours(&d, x, xi, y, z)) / level.diag(xi, y, z);
            }
        }
    }
}

/// The coarse right-hand side from the fine residual: each coarse cell gets 4 times the average
/// of its 8 children's `b - A x` (the unit stencil on a level of twice the spacing is `A / 4`).
pub fn restrict_residual(fine: &Level, x: &[f64], b: &[f64], coarse_b: &mut [f64]) {
    let f = fine.dims;
    let c = Dims::new(f.nx / 2, f.ny / 2, f.nz / 2);
    let mut r = vec![0.0; f.len()];
    residual(fine, x, b, &mut r);
    coarse_b.fill(0.0);
    for z in 0..f.nz {
        for y in 0..f.ny {
            for xi in 0..f.nx {
                coarse_b[c.idx(xi / 2, y / 2, z / 2)] += 0.5 * r[f.idx(xi, y, z)];
            }
        }
    }
}

/// Weights of the two coarse cells that fine index `i` interpolates from along one axis:
/// `(own coarse cell, its weight, the neighbour on i's side or None outside, its weight)`; a
/// neighbour outside the grid is the ghost `-ghost * own`, folded into the own weight.
#[inline]
pub fn prolong_weights(i: usize, n_coarse: usize, ghost: f64) -> (usize, f64, Option<usize>, f64) {
    let own = i / 2;
    let other = if i.is_multiple_of(2) {
        own.checked_sub(1)
    } else {
        Some(own + 1).filter(|&j| j < n_coarse)
    };
    match other {
        Some(j) => (own, 0.75, Some(j), 0.25),
        None => (own, 0.75 - 0.25 * ghost, None, 0.0),
    }
}

/// `x_fine += P x_coarse`: cell-centred trilinear interpolation with the coarse level's ghost.
pub fn prolong_add(fine: &Level, coarse: &Level, xc: &[f64], xf: &mut [f64]) {
    let f = fine.dims;
    let c = coarse.dims;
    for z in 0..f.nz {
        let wz = prolong_weights(z, c.nz, coarse.ghost);
        for y in 0..f.ny {
            let wy = prolong_weights(y, c.ny, coarse.ghost);
            for x in 0..f.nx {
                let wx = prolong_weights(x, c.nx, coarse.ghost);
                let mut v = 0.0;
                for (zc, wzc) in [(Some(wz.0), wz.1), (wz.2, wz.3)] {
                    let Some(zc) = zc else { continue };
                    for (yc, wyc) in [(Some(wy.0), wy.1), (wy.2, wy.3)] {
                        let Some(yc) = yc else { continue };
                        for (xc_, wxc) in [(Some(wx.0), wx.1), (wx.2, wx.3)] {
                            let Some(xc_) = xc_ else { continue };
                            v += wzc * wyc * wxc * xc[c.idx(xc_, yc, zc)];
                        }
                    }
                }
                xf[f.idx(x, y, z)] += v;
            }
        }
    }
}

/// The exact solve on the coarsest level: its operator's dense inverse (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct DenseInverse {
    pub n: usize,
    pub inv: Vec<f64>,
}

impl DenseInverse {
    /// Inverts the operator of `level` by Gauss-Jordan elimination (SPD, so no pivoting needed;
    /// `level` has at most [`crate::grid::COARSEST_MAX_POINTS`] points).
    pub fn new(level: &Level) -> Self {
        let n = level.dims.len();
        let mut a = vec![0.0; n * n];
        let mut e = vec![0.0; n];
        let mut col = vec![0.0; n];
        for j in 0..n {
            e.fill(0.0);
            e[j] = 1.0;
            apply(level, &e, &mut col);
            for i in 0..n {
                a[i * n + j] = col[i];
            }
        }
        let mut inv = vec![0.0; n * n];
        for i in 0..n {
            inv[i * n + i] = 1.0;
        }
        for p in 0..n {
            let piv = a[p * n + p];
            for j in 0..n {
                a[p * n + j] /= piv;
                inv[p * n + j] /= piv;
            }
            for i in 0..n {
                if i == p {
                    continue;
                }
                let f = a[i * n + p];
                if f == 0.0 {
                    continue;
                }
                for j in 0..n {
                    a[i * n + j] -= f * a[p * n + j];
                    inv[i * n + j] -= f * inv[p * n + j];
                }
            }
        }
        Self { n, inv }
    }

    /// `x = A^-1 b`.
    pub fn solve(&self, b: &[f64], x: &mut [f64]) {
        for (i, xi) in x.iter_mut().enumerate().take(self.n) {
            *xi = dot(&self.inv[i * self.n..(i + 1) * self.n], b);
        }
    }
}

/// One V(s, s) cycle on level `l` for `A_l xs[l] = bs[l]` (`zero_init`: start from `xs[l] = 0`).
/// Pre-smoothing sweeps red then black, post-smoothing black then red.
pub fn vcycle(
    h: &Hierarchy,
    coarse: &DenseInverse,
    xs: &mut [Vec<f64>],
    bs: &mut [Vec<f64>],
    l: usize,
    sweeps: usize,
    zero_init: bool,
) {
    let level = &h.levels[l];
    if l + 1 == h.levels.len() {
        coarse.solve(&bs[l], &mut xs[l]);
        return;
    }
    for s in 0..sweeps {
        rbgs(level, &mut xs[l], &bs[l], 0, zero_init && s == 0);
        rbgs(level, &mut xs[l], &bs[l], 1, false);
    }
    let (bf, bc) = bs.split_at_mut(l + 1);
    restrict_residual(level, &xs[l], &bf[l], &mut bc[0]);
    vcycle(h, coarse, xs, bs, l + 1, sweeps, true);
    let (xf, xc) = xs.split_at_mut(l + 1);
    prolong_add(level, &h.levels[l + 1], &xc[0], &mut xf[l]);
    for _ in 0..sweeps {
        rbgs(level, &mut xs[l], &bs[l], 1, false);
        rbgs(level, &mut xs[l], &bs[l], 0, false);
    }
}

/// Level vectors (x and b of every level) for a hierarchy.
pub fn level_vectors(h: &Hierarchy) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let v: Vec<Vec<f64>> = h.levels.iter().map(|l| vec![0.0; l.dims.len()]).collect();
    (v.clone(), v)
}

/// Solves `A x = b` on the finest level of `dims` with `method`, in f64.
pub fn solve(method: Method, dims: Dims, b: &[f64], s: &Settings) -> (Vec<f64>, Report) {
    let fine = Level::finest(dims);
    let n = dims.len();
    let mut x = vec![0.0; n];
    let res0 = dot(b, b);
    let stop = |k: usize, res: f64| -> Option<Report> {
        let converged = reached(res, res0, s.tolerance);
        (converged || k == s.max_iterations).then_some(Report {
            iterations: k,
            relres: relative(res, res0),
            converged,
        })
    };
    match method {
        Method::Cg => {
            let mut r = b.to_vec();
            let mut p = vec![0.0; n];
            let mut q = vec![0.0; n];
            let (mut rr, mut rr_prev) = (res0, 0.0);
            for k in 0.. {
                if let Some(rep) = stop(k, rr) {
                    return (x, rep);
                }
                let beta = if k == 0 { 0.0 } else { rr / rr_prev };
                for (pi, &ri) in p.iter_mut().zip(&r) {
                    *pi = ri + beta * *pi;
                }
                apply(&fine, &p, &mut q);
                let alpha = rr / dot(&p, &q);
                for i in 0..n {
                    x[i] += alpha * p[i];
                    r[i] -= alpha * q[i];
                }
                rr_prev = rr;
                rr = dot(&r, &r);
            }
            unreachable!("the loop returns at max_iterations")
        }
        Method::Mg => {
            let h = Hierarchy::build(dims).expect("a multigrid solve needs a coarsenable grid");
            let coarse = DenseInverse::new(h.coarsest());
            let (mut xs, mut bs) = level_vectors(&h);
            bs[0].copy_from_slice(b);
            let mut res = res0;
            for k in 0.. {
                if let Some(rep) = stop(k, res) {
                    return (xs.swap_remove(0), rep);
                }
                vcycle(&h, &coarse, &mut xs, &mut bs, 0, s.sweeps, false);
                res = residual_norm2(&fine, &xs[0], b);
            }
            unreachable!("the loop returns at max_iterations")
        }
        Method::MgPcg => {
            let h = Hierarchy::build(dims).expect("a multigrid solve needs a coarsenable grid");
            let coarse = DenseInverse::new(h.coarsest());
            let (mut zs, mut bs) = level_vectors(&h);
            let mut r = b.to_vec();
            let mut p = vec![0.0; n];
            let mut q = vec![0.0; n];
            let (mut rr, mut rz_prev) = (res0, 0.0);
            for k in 0.. {
                if let Some(rep) = stop(k, rr) {
                    return (x, rep);
                }
                bs[0].copy_from_slice(&r);
                vcycle(&h, &coarse, &mut zs, &mut bs, 0, s.sweeps, true);
                let rz = dot(&r, &zs[0]);
                let beta = if k == 0 { 0.0 } else { rz / rz_prev };
                for (pi, &zi) in p.iter_mut().zip(&zs[0]) {
                    *pi = zi + beta * *pi;
                }
                apply(&fine, &p, &mut q);
                let alpha = rz / dot(&p, &q);
                for i in 0..n {
                    x[i] += alpha * p[i];
                    r[i] -= alpha * q[i];
                }
                rz_prev = rz;
                rr = dot(&r, &r);
            }
            unreachable!("the loop returns at max_iterations")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Problem;

    fn settings(max: usize) -> Settings {
        Settings {
            max_iterations: max,
            tolerance: 1e-5,
            sweeps: 2,
        }
    }

    #[test]
    fn dense_inverse_inverts() {
        let l = Level::new(Dims::new(4, 3, 2), 2);
        let inv = DenseInverse::new(&l);
        let b: Vec<f64> = (0..24).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut x = vec![0.0; 24];
        inv.solve(&b, &mut x);
        let mut ax = vec![0.0; 24];
        apply(&l, &x, &mut ax);
        for (a, b) in ax.iter().zip(&b) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn prolongation_reproduces_constants_away_from_the_boundary() {
        let f = Level::new(Dims::new(8, 8, 8), 0);
        let c = Level::new(Dims::new(4, 4, 4), 1);
        let xc = vec![1.0; 64];
        let mut xf = vec![0.0; 512];
        prolong_add(&f, &c, &xc, &mut xf);
        assert!((xf[f.dims.idx(3, 4, 2)] - 1.0).abs() < 1e-15);
        // At a face the ghost (-1/3 of the cell) lowers the value: 0.75 - 0.25/3.
        assert!((xf[f.dims.idx(0, 4, 3)] - (0.75 - 0.25 / 3.0)).abs() < 1e-15);
    }

    #[test]
    fn all_three_methods_reach_the_manufactured_solution() {
        let dims = Dims::new(16, 16, 16);
        let p = Problem::generate(dims, 1);
        for (method, max) in [(Method::Cg, 200), (Method::Mg, 30), (Method::MgPcg, 30)] {
            let (x, rep) = solve(method, dims, &p.b, &settings(max));
            assert!(rep.converged, "{method:?} {rep:?}");
            let true_res =
                residual_norm2(&Level::finest(dims), &x, &p.b).sqrt() / dot(&p.b, &p.b).sqrt();
            assert!(true_res <= 1.01e-5, "{method:?} {true_res}");
            let err = x
                .iter()
                .zip(&p.u_star)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-3, "{method:?} {err}");
        }
    }

    #[test]
    fn multigrid_beats_cg_and_cg_stops_unconverged_at_its_cap() {
        let dims = Dims::new(32, 32, 32);
        let p = Problem::generate(dims, 2);
        let (_, mg) = solve(Method::Mg, dims, &p.b, &settings(50));
        let (_, pcg) = solve(Method::MgPcg, dims, &p.b, &settings(50));
        let (_, cg) = solve(Method::Cg, dims, &p.b, &settings(20));
        assert!(mg.converged && mg.iterations <= 8, "{mg:?}");
        assert!(pcg.converged && pcg.iterations <= 6, "{pcg:?}");
        assert!(
            !cg.converged && cg.iterations == 20 && cg.relres > 1e-5,
            "{cg:?}"
        );
    }
}
