//! The fast CPU path: the same three solvers as [`crate::reference`], on vectors stored in `T`
//! (f32, f16 or f64) with arithmetic in `T::Acc`, threaded with rayon over z-planes. Dot
//! products are summed in f64. CG fuses the direction update into the stencil pass
//! (`p = r + beta*p_old` is recomputed for the neighbours), as the CUDA kernels do.

use rayon::prelude::*;

use crate::{
    grid::{Dims, Hierarchy, Level},
    real::{Real, Storage},
    reference::{DenseInverse, prolong_weights},
    solve::{Method, Report, Settings, reached, relative},
};

/// Plane-parallel loops hand each task at least this many points (coarse levels stay serial).
const MIN_POINTS_PER_TASK: usize = 16 * 1024;

fn min_planes(d: &Dims) -> usize {
    (MIN_POINTS_PER_TASK / d.plane().max(1)).max(1)
}

/// `center*d - sum(neighbours)` where `f(j)` is the value at index `j` (the in-grid neighbours).
#[inline(always)]
fn stencil<A: Real>(d: &Dims, f: impl Fn(usize) -> A, x: usize, y: usize, z: usize, i: usize) -> A {
    let mut s = A::ZERO;
    if x > 0 {
        s = s + f(i - 1);
    }
    if x + 1 < d.nx {
        s = s + f(i + 1);
    }
    if y > 0 {
        s = s + f(i - d.nx);
    }
    if y + 1 < d.ny {
        s = s + f(i + d.nx);
    }
    if z > 0 {
        s = s + f(i - d.plane());
    }
    if z + 1 < d.nz {
        s = s + f(i + d.plane());
    }
    s
}

/// CG's fused pass: `p_new = src + beta*p_old` (`beta = None` on the first iteration: `p = src`),
/// `q = A p_new` on the finest level; returns `p_new . q`.
pub fn direction_and_apply<T: Storage>(
    d: Dims,
    src: &[T],
    p_old: &[T],
    p_new: &mut [T],
    q: &mut [T],
    beta: Option<T::Acc>,
) -> f64 {
    let plane = d.plane();
    let pv = |j: usize| -> T::Acc {
        match beta {
            Some(b) => src[j].load() + b * p_old[j].load(),
            None => src[j].load(),
        }
    };
    p_new
        .par_chunks_mut(plane)
        .zip(q.par_chunks_mut(plane))
        .enumerate()
        .with_min_len(min_planes(&d))
        .map(|(z, (pn, qz))| {
            let mut acc = 0.0f64;
            let six = T::Acc::of(6.0);
            for y in 0..d.ny {
                for x in 0..d.nx {
                    let i = d.idx(x, y, z);
                    let pc = pv(i);
                    let qv = six * pc - stencil(&d, pv, x, y, z, i);
                    let o = y * d.nx + x;
                    pn[o] = T::store(pc);
                    qz[o] = T::store(qv);
                    acc += (pc * qv).f64();
                }
            }
            acc
        })
        .sum()
}

/// `x += alpha*p`, `r -= alpha*q`; returns the new `r . r`.
pub fn update<T: Storage>(x: &mut [T], r: &mut [T], p: &[T], q: &[T], alpha: T::Acc) -> f64 {
    const CHUNK: usize = 16 * 1024;
    x.par_chunks_mut(CHUNK)
        .zip(r.par_chunks_mut(CHUNK))
        .zip(p.par_chunks(CHUNK).zip(q.par_chunks(CHUNK)))
        .map(|((xc, rc), (pc, qc))| {
            let mut acc = 0.0f64;
            for i in 0..xc.len() {
                xc[i] = T::store(xc[i].load() + alpha * pc[i].load());
                let rv = rc[i].load() - alpha * qc[i].load();
                rc[i] = T::store(rv);
                acc += (rv * rv).f64();
            }
            acc
        })
        .sum()
}

pub fn dot<T: Storage>(a: &[T], b: &[T]) -> f64 {
    a.par_chunks(16 * 1024)
        .zip(b.par_chunks(16 * 1024))
        .map(|(a, b)| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x.load() * y.load()).f64())
                .sum::<f64>()
        })
        .sum()
}

/// `||b - A x||^2` on `level`.
pub fn residual_norm2<T: Storage>(level: &Level, x: &[T], b: &[T]) -> f64 {
    let d = level.dims;
    (0..d.nz)
        .into_par_iter()
        .with_min_len(min_planes(&d))
        .map(|z| {
            let mut acc = 0.0f64;
            for y in 0..d.ny {
                for xi in 0..d.nx {
                    let i = d.idx(xi, y, z);
                    let r = residual_at(level, x, b, xi, y, z, i);
                    acc += (r * r).f64();
                }
            }
            acc
        })
        .sum()
}

#[inline(always)]
fn residual_at<T: Storage>(
    level: &Level,
    x: &[T],
    b: &[T],
    xi: usize,
    y: usize,
    z: usize,
    i: usize,
) -> T::Acc {
    let d = &level.dims;
    let diag = T::Acc::of(level.diag(xi, y, z));
    b[i].load() - (diag * x[i].load() - stencil(d, |j| x[j].load(), xi, y, z, i))
}

/// A raw pointer shared by the tasks of one red-black half-sweep.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: see `rbgs`: tasks write disjoint cells and read only cells nobody writes in the pass.
unsafe impl<T: Send> Send for Shared<T> {}
unsafe impl<T: Send> Sync for Shared<T> {}

/// One red-black Gauss-Seidel half-sweep (see [`crate::reference::rbgs`]).
pub fn rbgs<T: Storage>(level: &Level, x: &mut [T], b: &[T], color: usize, zero_init: bool) {
    let d = level.dims;
    assert_eq!(x.len(), d.len());
    let ptr = Shared(x.as_mut_ptr());
    (0..d.nz)
        .into_par_iter()
        .with_min_len(min_planes(&d))
        .for_each(move |z| {
            let ptr = ptr;
            for y in 0..d.ny {
                let start = (color + y + z) % 2;
                if zero_init {
                    for xi in 0..d.nx {
                        let i = d.idx(xi, y, z);
                        let v = if xi % 2 == start {
                            b[i].load() / T::Acc::of(level.diag(xi, y, z))
                        } else {
                            T::Acc::ZERO
                        };
                        // SAFETY: every cell of plane z is written by this task only.
                        unsafe { *ptr.0.add(i) = T::store(v) };
                    }
                    continue;
                }
                for xi in (start..d.nx).step_by(2) {
                    let i = d.idx(xi, y, z);
                    // SAFETY: cells of `color` are written only by the task of their plane; the
                    // neighbours read here all have the other color, which no task writes in
                    // this half-sweep. Indices are in bounds (x.len() == d.len()).
                    let s = stencil(&d, |j| unsafe { *ptr.0.add(j) }.load(), xi, y, z, i);
                    let v = (b[i].load() + s) / T::Acc::of(level.diag(xi, y, z));
                    unsafe { *ptr.0.add(i) = T::store(v) };
                }
            }
        });
}

/// The coarse right-hand side: `0.5 * sum` of the 8 children's residuals.
pub fn restrict_residual<T: Storage>(fine: &Level, x: &[T], b: &[T], coarse_b: &mut [T]) {
    let f = fine.dims;
    let c = Dims::new(f.nx / 2, f.ny / 2, f.nz / 2);
    coarse_b
        .par_chunks_mut(c.plane())
        .enumerate()
        .with_min_len(min_planes(&c))
        .for_each(|(zc, out)| {
            for yc in 0..c.ny {
                for xc in 0..c.nx {
                    let mut s = T::Acc::ZERO;
                    for dz in 0..2 {
                        for dy in 0..2 {
                            for dx in 0..2 {
                                let (xi, y, z) = (2 * xc + dx, 2 * yc + dy, 2 * zc + dz);
                                s = s + residual_at(fine, x, b, xi, y, z, f.idx(xi, y, z));
                            }
                        }
                    }
                    out[yc * c.nx + xc] = T::store(T::Acc::of(0.5) * s);
                }
            }
        });
}

/// `x_fine += P x_coarse` (see [`crate::reference::prolong_add`]).
pub fn prolong_add<T: Storage>(fine: &Level, coarse: &Level, xc: &[T], xf: &mut [T]) {
    let f = fine.dims;
    let c = coarse.dims;
    let g = coarse.ghost;
    xf.par_chunks_mut(f.plane())
        .enumerate()
        .with_min_len(min_planes(&f))
        .for_each(|(z, out)| {
            let wz = prolong_weights(z, c.nz, g);
            for y in 0..f.ny {
                let wy = prolong_weights(y, c.ny, g);
                for x in 0..f.nx {
                    let wx = prolong_weights(x, c.nx, g);
                    let mut v = 0.0f64;
                    for (zc, wzc) in [(Some(wz.0), wz.1), (wz.2, wz.3)] {
                        let Some(zc) = zc else { continue };
                        for (yc, wyc) in [(Some(wy.0), wy.1), (wy.2, wy.3)] {
                            let Some(yc) = yc else { continue };
                            let row = c.idx(0, yc, zc);
                            let (w0, w1) = (wzc * wyc * wx.1, wzc * wyc * wx.3);
                            v += w0 * xc[row + wx.0].load().f64();
                            if let Some(x1) = wx.2 {
                                v += w1 * xc[row + x1].load().f64();
                            }
                        }
                    }
                    let o = y * f.nx + x;
                    out[o] = T::store(out[o].load() + T::Acc::of(v));
                }
            }
        });
}

/// Everything one case's solves need, allocated once.
pub struct CpuSolver<T: Storage> {
    pub method: Method,
    pub dims: Dims,
    pub settings: Settings,
    hierarchy: Option<Hierarchy>,
    coarse: Vec<T::Acc>,
    coarse_n: usize,
    pub b: Vec<T>,
    pub x: Vec<T>,
    r: Vec<T>,
    p: [Vec<T>; 2],
    q: Vec<T>,
    z: Vec<T>,
    /// `(x, b)` of levels 1.. of the hierarchy.
    levels: Vec<(Vec<T>, Vec<T>)>,
}

impl<T: Storage> CpuSolver<T> {
    pub fn new(method: Method, dims: Dims, settings: Settings, b: Vec<T>) -> Self {
        let n = dims.len();
        let hierarchy = method
            .uses_multigrid()
            .then(|| Hierarchy::build(dims).expect("validated by the case"));
        let (coarse, coarse_n) = match &hierarchy {
            Some(h) => {
                let inv = DenseInverse::new(h.coarsest());
                (inv.inv.iter().map(|&v| T::Acc::of(v)).collect(), inv.n)
            }
            None => (Vec::new(), 0),
        };
        let levels = hierarchy.as_ref().map_or_else(Vec::new, |h| {
            h.levels[1..]
                .iter()
                .map(|l| (vec![T::ZERO; l.dims.len()], vec![T::ZERO; l.dims.len()]))
                .collect()
        });
        let cg_vec = || {
            if method == Method::Mg {
                Vec::new()
            } else {
                vec![T::ZERO; n]
            }
        };
        Self {
            method,
            dims,
            settings,
            hierarchy,
            coarse,
            coarse_n,
            b,
            x: vec![T::ZERO; n],
            r: cg_vec(),
            p: [cg_vec(), cg_vec()],
            q: cg_vec(),
            z: if method == Method::MgPcg {
                vec![T::ZERO; n]
            } else {
                Vec::new()
            },
            levels,
        }
    }

    /// One solve from `x = 0`.
    pub fn solve(&mut self) -> Report {
        match self.method {
            Method::Cg | Method::MgPcg => self.solve_cg(),
            Method::Mg => self.solve_mg(),
        }
    }

    fn stop(&self, k: usize, res: f64, res0: f64) -> Option<Report> {
        let converged = reached(res, res0, self.settings.tolerance);
        (converged || k == self.settings.max_iterations).then_some(Report {
            iterations: k,
            relres: relative(res, res0),
            converged,
        })
    }

    fn solve_cg(&mut self) -> Report {
        let d = self.dims;
        let pcg = self.method == Method::MgPcg;
        self.x.par_iter_mut().for_each(|v| *v = T::ZERO);
        self.r.copy_from_slice(&self.b);
        let res0 = dot(&self.b, &self.b);
        let (mut rr, mut rho_prev) = (res0, 0.0f64);
        for k in 0.. {
            if let Some(rep) = self.stop(k, rr, res0) {
                return rep;
            }
            let rho = if pcg {
                let mut z = std::mem::take(&mut self.z);
                let r = std::mem::take(&mut self.r);
                self.vcycle(0, &mut z, &r, true);
                let rho = dot(&r, &z);
                self.z = z;
                self.r = r;
                rho
            } else {
                rr
            };
            let beta = (k > 0).then(|| T::Acc::of(rho / rho_prev));
            // p ping-pongs between two buffers, so the fused pass never overwrites a p_old
            // value a neighbour still needs.
            let [p0, p1] = &mut self.p;
            let (p_new, p_old) = if k % 2 == 0 { (p0, &*p1) } else { (p1, &*p0) };
            let src = if pcg { &self.z } else { &self.r };
            let pq = direction_and_apply(d, src, p_old, p_new, &mut self.q, beta);
            let alpha = T::Acc::of(rho / pq);
            rr = update(&mut self.x, &mut self.r, p_new, &self.q, alpha);
            rho_prev = rho;
        }
        unreachable!("the loop returns at max_iterations")
    }

    fn solve_mg(&mut self) -> Report {
        let fine = Level::finest(self.dims);
        self.x.par_iter_mut().for_each(|v| *v = T::ZERO);
        let res0 = dot(&self.b, &self.b);
        let mut res = res0;
        for k in 0.. {
            if let Some(rep) = self.stop(k, res, res0) {
                return rep;
            }
            let mut x = std::mem::take(&mut self.x);
            let b = std::mem::take(&mut self.b);
            self.vcycle(0, &mut x, &b, false);
            res = residual_norm2(&fine, &x, &b);
            self.x = x;
            self.b = b;
        }
        unreachable!("the loop returns at max_iterations")
    }

    /// One V(s, s) cycle on level `l` for `A_l x = b`; levels below use `self.levels`.
    fn vcycle(&mut self, l: usize, x: &mut [T], b: &[T], zero_init: bool) {
        let h = self.hierarchy.as_ref().expect("multigrid method");
        let level = h.levels[l];
        let coarse = h.levels.get(l + 1).copied();
        let Some(coarse) = coarse else {
            let n = self.coarse_n;
            for (i, xi) in x.iter_mut().enumerate().take(n) {
                let row = &self.coarse[i * n..(i + 1) * n];
                let mut s = T::Acc::ZERO;
                for (a, bj) in row.iter().zip(b) {
                    s = s + *a * bj.load();
                }
                *xi = T::store(s);
            }
            return;
        };
        let sweeps = self.settings.sweeps;
        for s in 0..sweeps {
            rbgs(&level, x, b, 0, zero_init && s == 0);
            rbgs(&level, x, b, 1, false);
        }
        let (mut xc, mut bc) = std::mem::take(&mut self.levels[l]);
        restrict_residual(&level, x, b, &mut bc);
        self.vcycle(l + 1, &mut xc, &bc, true);
        prolong_add(&level, &coarse, &xc, x);
        self.levels[l] = (xc, bc);
        for _ in 0..sweeps {
            rbgs(&level, x, b, 1, false);
            rbgs(&level, x, b, 0, false);
        }
    }
}

#[cfg(test)]
mod tests;
