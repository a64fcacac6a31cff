// The Poisson solvers' device code. Expects STORE (0 fp32, 1 fp16 = raw 16-bit with f32
// arithmetic, 2 fp64). No CUDA headers: fp16 goes through PTX cvt, as tile_ops does.
//
// `cg_persistent` is the exception: the whole CG solve in one cooperative launch (see there).
//
// Every kernel but `finish` and `cg_persistent` starts with the same control arguments
//   (int* flags, const double* res, int k, int check, double tol2)
// flags[0] = done, flags[1] = iterations taken, flags[2] = converged. With `check`, the kernel is
// the first of iteration k and applies the stopping test res[k] <= tol2 * res[0] (squared norms):
// if it holds, block (0,0,0) records k and every block returns. Every later kernel of the solve
// then sees done and returns at once, so a whole solve of max_iterations is enqueued without any
// host synchronisation. The test is block-uniform (every thread reads the same values), so the
// early return never splits a block around __syncthreads.
//
// Dot products are summed in double: per thread, per warp (shuffles), per block, then one
// atomicAdd into a per-iteration slot (zeroed by a memset at the start of each solve).

#if STORE == 0
typedef float S;
typedef float A;
#elif STORE == 1
typedef unsigned short S;
typedef float A;
#else
typedef double S;
typedef double A;
#endif

// The helpers take plain pointers: a kernel's own `__restrict__` parameters decide whether a load
// may take the read-only path, and `cg_persistent` reads buffers it wrote itself.
__device__ __forceinline__ A ld(const S* p, long long i) {
#if STORE == 1
    float f;
    unsigned short h = p[i];
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return p[i];
#endif
}

__device__ __forceinline__ void st(S* p, long long i, A v) {
#if STORE == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    p[i] = h;
#else
    p[i] = v;
#endif
}

__device__ __forceinline__ bool stopped(int* flags, const double* res, int k, int check, double tol2) {
    if (*(volatile int*)flags != 0) return true;
    if (check && res[k] <= tol2 * res[0]) {
        if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 &&
            threadIdx.y == 0) {
            flags[1] = k;
            flags[2] = 1;
            __threadfence();
            flags[0] = 1;
        }
        return true;
    }
    return false;
}

// Adds every thread's v into *target. Call once per kernel, from every thread of the block
// (blockDim.x * blockDim.y a multiple of 32, at most 1024).
__device__ __forceinline__ void block_add(double v, double* target) {
    __shared__ double warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    const int tid = threadIdx.x + threadIdx.y * blockDim.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int nw = (blockDim.x * blockDim.y + 31) >> 5;
        v = lane < nw ? warp_sums[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) atomicAdd(target, v);
    }
}

__device__ __forceinline__ int faces(int x, int y, int z, int nx, int ny, int nz) {
    return (x == 0) + (x + 1 == nx) + (y == 0) + (y + 1 == ny) + (z == 0) + (z + 1 == nz);
}

// b - A x at (x, y, z) of a level with the given ghost.
__device__ __forceinline__ A residual_at(const S* __restrict__ xv, const S* __restrict__ b, int x,
                                         int y, int z, int nx, int ny, int nz, A ghost) {
    const long long plane = (long long)nx * ny;
    const long long i = (long long)z * plane + (long long)y * nx + x;
    A s = (A)0;
    if (x > 0) s += ld(xv, i - 1);
    if (x + 1 < nx) s += ld(xv, i + 1);
    if (y > 0) s += ld(xv, i - nx);
    if (y + 1 < ny) s += ld(xv, i + nx);
    if (z > 0) s += ld(xv, i - plane);
    if (z + 1 < nz) s += ld(xv, i + plane);
    const A d = (A)6 + ghost * (A)faces(x, y, z, nx, ny, nz);
    return ld(b, i) - (d * ld(xv, i) - s);
}

#define GRID_STRIDE(i, n)                                                                     \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);            \
         i += (long long)gridDim.x * blockDim.x)

// ---------------------------------------------------------------------------------------------
// The solvers' steps as device functions over the whole grid (grid-stride loops or tiles dealt
// round robin, so any grid size works). The per-kernel launches below wrap each in a kernel that
// first applies the stopping test; `mg_persistent` calls them between grid-wide barriers. Scalars
// come in as values (the caller reads them: a kernel with plain loads, the persistent kernels
// from L2 after a barrier). The functions' `__restrict__` parameters say that the buffers of one
// step are distinct (true in both callers; the launch path was 4-14 % slower at 256^3 without it,
// H100 session 7 call 1). The read-only path (ld.global.nc) is chosen only for a kernel's own
// `__restrict__ const` parameters, i.e. in the wrappers, never in `mg_persistent`, whose
// parameters are plain because it reads buffers it wrote itself.

// x = 0, r = b (when r is not null), *res0 += b.b.
__device__ __forceinline__ void init_body(const S* __restrict__ b, S* __restrict__ x,
                                          S* __restrict__ r, double* res0, long long n) {
    double acc = 0.0;
    GRID_STRIDE(i, n) {
        const A bv = ld(b, i);
        st(x, i, (A)0);
        if (r != nullptr) st(r, i, bv);
        acc += (double)bv * (double)bv;
    }
    block_add(acc, res0);
}

// (cg_persistent marches its tiles the same way. One shared template taking the value and the
// per-point work as lambdas was tried: cg_direction became 12 % slower at 256^3 and its empty
// launches 16 % slower, H100 2026-11-25, call 13, so the two loops stay written out.)
//
// CG's fused pass on the finest level: p = src + beta*p_old (p = src when `first`), computed for
// the point and its neighbours on the fly; p_new = p, q = A p, *pq += p.q; and, unless `first`,
// the previous iteration's solution step x += alpha_prev * p_old, deferred to this pass because
// it reads p_old anyway (the update pass then moves 3 words a point instead of 6: 9 a CG
// iteration instead of 10). The last step is `final_step_body`'s, after the loop.
//
// Thread (tx, ty) of a 32 x 8 block: one 32 x 8 tile of (x, y) marching `zch` planes in z,
// keeping p at z-1, z, z+1 in registers. The loads from DRAM run one plane ahead: the step at z
// issues the loads of src and p_old at z+2 and of x at z+1, then those of its x- and
// y-neighbours (L1 and L2 hits: the planes their own threads loaded a step earlier), then its
// arithmetic, so a DRAM load has a whole step to arrive (the stencil was bound by load latency:
// 84 % of its stalls, Nsight Compute, H100 session 8). The tiles are dealt to the blocks round
// robin, so the grid can be sized to what is resident (an empty launch after convergence then
// schedules that many blocks, not one per tile).
__device__ __forceinline__ void direction_body(int tx, int ty, const S* __restrict__ src,
                                               const S* __restrict__ p_old, S* __restrict__ p_new,
                                               S* __restrict__ q, S* __restrict__ xv, A beta,
                                               A alpha_prev, bool first, double* pq, int nx,
                                               int ny, int nz, int zch) {
    const long long plane = (long long)nx * ny;
    const int tbx = (nx + 31) >> 5, tby = (ny + 7) >> 3, tbz = (nz + zch - 1) / zch;
    const int tiles = tbx * tby * tbz;
    auto P = [&](long long j) -> A {
        return first ? ld(src, j) : ld(src, j) + beta * ld(p_old, j);
    };
    auto O = [&](long long j) -> A { return first ? (A)0 : ld(p_old, j); };
    double acc = 0.0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int x = (t % tbx) * 32 + tx;
        const int y = ((t / tbx) % tby) * 8 + ty;
        const int z0 = (t / (tbx * tby)) * zch;
        const int z1 = min(z0 + zch, nz);
        if (x >= nx || y >= ny) continue;
        // The planes this tile reads: z0-1 .. z1 (its last plane's upper neighbour), in the grid.
        const int zlast = min(z1, nz - 1);
        long long i = (long long)z0 * plane + (long long)y * nx + x;
        A pm = z0 > 0 ? P(i - plane) : (A)0;
        A oc = O(i);
        A pc = first ? ld(src, i) : ld(src, i) + beta * oc;
        // src and p_old at z+1, x at z: loaded a step ahead of their use.
        A s1 = z0 + 1 <= zlast ? ld(src, i + plane) : (A)0;
        A o1 = z0 + 1 <= zlast ? O(i + plane) : (A)0;
        A xc = first ? (A)0 : ld(xv, i);
        for (int z = z0; z < z1; ++z, i += plane) {
            const bool ahead = z + 2 <= zlast;
            const A s2 = ahead ? ld(src, i + 2 * plane) : (A)0;
            const A o2 = ahead ? O(i + 2 * plane) : (A)0;
            const A xn = !first && z + 1 < z1 ? ld(xv, i + plane) : (A)0;
            const A sl = x > 0 ? ld(src, i - 1) : (A)0;
            const A ol = x > 0 ? O(i - 1) : (A)0;
            const A sr = x + 1 < nx ? ld(src, i + 1) : (A)0;
            const A orr = x + 1 < nx ? O(i + 1) : (A)0;
            const A ym = y > 0 ? P(i - nx) : (A)0;
            const A yp = y + 1 < ny ? P(i + nx) : (A)0;
            const A pp = first ? s1 : s1 + beta * o1;
            A s = pm + pp;
            if (x > 0) s += first ? sl : sl + beta * ol;
            if (x + 1 < nx) s += first ? sr : sr + beta * orr;
            if (y > 0) s += ym;
            if (y + 1 < ny) s += yp;
            const A qv = (A)6 * pc - s;
            st(p_new, i, pc);
            st(q, i, qv);
            if (!first) st(xv, i, xc + alpha_prev * oc);
            acc += (double)pc * (double)qv;
            pm = pc;
            pc = pp;
            oc = o1;
            s1 = s2;
            o1 = o2;
            xc = xn;
        }
    }
    block_add(acc, pq);
}

// r -= alpha q; *rr += r.r (x's step is deferred to the next direction pass). Four grid-stride
// elements per thread and step, their loads issued together.
__device__ __forceinline__ void update_body(S* __restrict__ r, const S* __restrict__ q, A alpha,
                                            double* rr, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    double acc = 0.0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride) {
        A rv[4], qv[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long j = i + u * stride;
            rv[u] = j < n ? ld(r, j) : (A)0;
            qv[u] = j < n ? ld(q, j) : (A)0;
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long j = i + u * stride;
            if (j < n) {
                const A v = rv[u] - alpha * qv[u];
                st(r, j, v);
                acc += (double)v * (double)v;
            }
        }
    }
    block_add(acc, rr);
}

// The solve's last deferred step, after `iterations` (flags[1]) iterations: x += alpha p of
// iteration `iterations - 1` (alpha = rho / pq there; p ping-pongs between p0 and p1).
__device__ __forceinline__ void final_step_body(S* __restrict__ xv, const S* p0, const S* p1,
                                                const double* rho, const double* pq,
                                                int iterations, long long n) {
    if (iterations == 0) return;
    const int k = iterations - 1;
    const A alpha = (A)(__ldcg(rho + k) / __ldcg(pq + k));
    const S* p = (k & 1) ? p1 : p0;
    GRID_STRIDE(i, n) st(xv, i, ld(xv, i) + alpha * ld(p, i));
}

// One red-black Gauss-Seidel half-sweep: cells with (x+y+z)%2 == color get (b + neighbours)/d.
// One thread per pair of cells (2t, 2t+1) along x: it updates the one of `color` and, with
// zero_init, sets the other to 0 (the iterate starts at zero). With dot != null it adds b.x over
// both cells of its pair into *dot (the last half-sweep of the preconditioner: r.z).
__device__ __forceinline__ void rbgs_body(S* __restrict__ x, const S* __restrict__ b, int nx, int ny, int nz, A g,
                                          int color, bool zero_init, double* dot) {
    const int half = (nx + 1) >> 1;
    const long long pairs = (long long)half * ny * nz;
    const long long plane = (long long)nx * ny;
    double acc = 0.0;
    GRID_STRIDE(t, pairs) {
        const int px = (int)(t % half);
        const long long rest = t / half;
        const int y = (int)(rest % ny);
        const int z = (int)(rest / ny);
        const int odd = (color + y + z) & 1;
        const int xc = 2 * px + odd;
        const int xo = 2 * px + 1 - odd;
        const long long row = (long long)z * plane + (long long)y * nx;
        if (xc < nx) {
            const long long i = row + xc;
            const A d = (A)6 + g * (A)faces(xc, y, z, nx, ny, nz);
            A v;
            if (zero_init) {
                v = ld(b, i) / d;
            } else {
                // Every load unconditional (a neighbour outside the grid reads the cell itself
                // and is dropped), then the sum in the same order as ever. With predicated
                // loads ptxas put adds between them, each waiting for its load, and the
                // fine-level sweep at 256^3 took 28 % longer (Nsight Compute, H100 session 7
                // call 6).
                const A vxm = ld(x, xc > 0 ? i - 1 : i);
                const A vxp = ld(x, xc + 1 < nx ? i + 1 : i);
                const A vym = ld(x, y > 0 ? i - nx : i);
                const A vyp = ld(x, y + 1 < ny ? i + nx : i);
                const A vzm = ld(x, z > 0 ? i - plane : i);
                const A vzp = ld(x, z + 1 < nz ? i + plane : i);
                const A bv = ld(b, i);
                const A xm = xc > 0 ? vxm : (A)0;
                const A xp = xc + 1 < nx ? vxp : (A)0;
                const A ym = y > 0 ? vym : (A)0;
                const A yp = y + 1 < ny ? vyp : (A)0;
                const A zm = z > 0 ? vzm : (A)0;
                const A zp = z + 1 < nz ? vzp : (A)0;
                A s = (A)0;
                s += xm;
                s += xp;
                s += ym;
                s += yp;
                s += zm;
                s += zp;
                v = (bv + s) / d;
            }
            st(x, i, v);
            if (dot != nullptr) acc += (double)ld(b, i) * (double)ld(x, i);
        }
        if (xo < nx) {
            const long long i = row + xo;
            if (zero_init) {
                st(x, i, (A)0);
            } else if (dot != nullptr) {
                acc += (double)ld(b, i) * (double)ld(x, i);
            }
        }
    }
    if (dot != nullptr) block_add(acc, dot);
}

// Coarse right-hand side: bc = 0.5 * sum of the 8 children's residuals (fine dims all even).
__device__ __forceinline__ void restrict_body(const S* __restrict__ x, const S* __restrict__ b,
                                              S* __restrict__ bc, int nx, int ny,
                                              int nz, A g) {
    const int cx = nx >> 1, cy = ny >> 1, cz = nz >> 1;
    const long long nc = (long long)cx * cy * cz;
    GRID_STRIDE(t, nc) {
        const int X = (int)(t % cx);
        const long long rest = t / cx;
        const int Y = (int)(rest % cy);
        const int Z = (int)(rest / cy);
        A s = (A)0;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            s += residual_at(x, b, 2 * X + (c & 1), 2 * Y + ((c >> 1) & 1), 2 * Z + (c >> 2), nx, ny,
                             nz, g);
        }
        st(bc, t, (A)0.5 * s);
    }
}

// Along one axis: fine index i takes w_own * own + w_other * other, the other coarse cell on i's
// side; outside the grid it is the ghost -gc * own, folded into w_own.
__device__ __forceinline__ void weights(int i, int nc, A gc, int& own, int& other, A& w_own,
                                        A& w_other) {
    own = i >> 1;
    other = (i & 1) ? own + 1 : own - 1;
    if (other < 0 || other >= nc) {
        other = own;
        w_own = (A)0.75 - (A)0.25 * gc;
        w_other = (A)0;
    } else {
        w_own = (A)0.75;
        w_other = (A)0.25;
    }
}

// x_fine += P x_coarse: cell-centred trilinear interpolation with the coarse level's ghost.
__device__ __forceinline__ void prolong_body(const S* __restrict__ xc, S* __restrict__ xf, int nx, int ny, int nz, A gc) {
    const int cx = nx >> 1, cy = ny >> 1;
    const long long n = (long long)nx * ny * nz;
    GRID_STRIDE(t, n) {
        const int x = (int)(t % nx);
        const long long rest = t / nx;
        const int y = (int)(rest % ny);
        const int z = (int)(rest / ny);
        int ox, tx, oy, ty, oz, tz;
        A wx0, wx1, wy0, wy1, wz0, wz1;
        weights(x, cx, gc, ox, tx, wx0, wx1);
        weights(y, cy, gc, oy, ty, wy0, wy1);
        weights(z, nz >> 1, gc, oz, tz, wz0, wz1);
        const long long cplane = (long long)cx * cy;
        const long long r00 = (long long)oz * cplane + (long long)oy * cx;
        const long long r01 = (long long)oz * cplane + (long long)ty * cx;
        const long long r10 = (long long)tz * cplane + (long long)oy * cx;
        const long long r11 = (long long)tz * cplane + (long long)ty * cx;
        const A v = wz0 * (wy0 * (wx0 * ld(xc, r00 + ox) + wx1 * ld(xc, r00 + tx)) +
                           wy1 * (wx0 * ld(xc, r01 + ox) + wx1 * ld(xc, r01 + tx))) +
                    wz1 * (wy0 * (wx0 * ld(xc, r10 + ox) + wx1 * ld(xc, r10 + tx)) +
                           wy1 * (wx0 * ld(xc, r11 + ox) + wx1 * ld(xc, r11 + tx)));
        st(xf, t, ld(xf, t) + v);
    }
}

// *out += ||b - A x||^2 on the finest level.
__device__ __forceinline__ void residual_norm_body(const S* __restrict__ x, const S* __restrict__ b,
                                                   double* out, int nx,
                                                   int ny, int nz) {
    const long long n = (long long)nx * ny * nz;
    double acc = 0.0;
    GRID_STRIDE(t, n) {
        const int xi = (int)(t % nx);
        const long long rest = t / nx;
        const int y = (int)(rest % ny);
        const int z = (int)(rest / ny);
        const A r = residual_at(x, b, xi, y, z, nx, ny, nz, (A)0);
        acc += (double)r * (double)r;
    }
    block_add(acc, out);
}

// ---------------------------------------------------------------------------------------------
// The per-kernel launches: each applies the stopping test of iteration k, then its step.

extern "C" __global__ void init_solve(int* flags, const double* res, int k, int check, double tol2,
                                      const S* __restrict__ b, S* __restrict__ x, S* __restrict__ r,
                                      double* res0, long long n) {
    (void)flags; (void)res; (void)k; (void)check; (void)tol2;
    init_body(b, x, r, res0, n);
}

// cg_direction's blocks per SM that ptxas must fit: 4 (64 registers) for fp32 and fp64. Without
// the bound the one-plane-ahead loads take 78 registers in fp32 (94 in fp64), 3 blocks fit, and
// CG at 256^3 ran 274 us per iteration against 253 with it (H100, session 8 call 3; fp64 500
// against 494; fp64 spills 4 bytes). fp16 stays unbounded (72 registers; bounded to 64, ptxas
// spills 16 bytes; fp16 CG is not benchmarked, see bench.yaml).
#if STORE == 1
#define DIRECTION_MIN_BLOCKS 1
#else
#define DIRECTION_MIN_BLOCKS 4
#endif

// beta = rho[k] / rho[k-1], and x's step of iteration k-1 with alpha = rho[k-1] / pq[k-1];
// block (32, 8).
extern "C" __global__ void __launch_bounds__(256, DIRECTION_MIN_BLOCKS) cg_direction(int* flags, const double* res, int k, int check, double tol2,
                                        const S* __restrict__ src, const S* __restrict__ p_old,
                                        S* __restrict__ p_new, S* __restrict__ q,
                                        S* __restrict__ x, const double* rho, int first,
                                        double* pq, int nx, int ny, int nz, int zch) {
    if (stopped(flags, res, k, check, tol2)) return;
    const A beta = first ? (A)0 : (A)(rho[k] / rho[k - 1]);
    const A alpha_prev = first ? (A)0 : (A)(rho[k - 1] / pq[k - 1]);
    direction_body(threadIdx.x, threadIdx.y, src, p_old, p_new, q, x, beta, alpha_prev,
                   first != 0, pq + k, nx, ny, nz, zch);
}

// alpha = rho[k] / pq[k]; rr[k+1] += r.r.
extern "C" __global__ void cg_update(int* flags, const double* res, int k, int check, double tol2,
                                     S* __restrict__ r, const S* __restrict__ q,
                                     const double* rho, const double* pq, double* rr,
                                     long long n) {
    if (stopped(flags, res, k, check, tol2)) return;
    update_body(r, q, (A)(rho[k] / pq[k]), rr + k + 1, n);
}

// After `finish`: the last iteration's deferred x step (flags[1] iterations were taken).
extern "C" __global__ void cg_final_step(const int* flags, S* __restrict__ x,
                                         const S* __restrict__ p0, const S* __restrict__ p1,
                                         const double* rho, const double* pq, long long n) {
    final_step_body(x, p0, p1, rho, pq, flags[1], n);
}

extern "C" __global__ void rbgs(int* flags, const double* res, int k, int check, double tol2,
                                S* __restrict__ x, const S* __restrict__ b, int nx, int ny, int nz,
                                double ghost, int color, int zero_init, double* dot, int dot_k) {
    if (stopped(flags, res, k, check, tol2)) return;
    rbgs_body(x, b, nx, ny, nz, (A)ghost, color, zero_init != 0,
              dot != nullptr ? dot + dot_k : nullptr);
}

extern "C" __global__ void restrict_residual(int* flags, const double* res, int k, int check,
                                             double tol2, const S* __restrict__ x,
                                             const S* __restrict__ b, S* __restrict__ bc, int nx,
                                             int ny, int nz, double ghost) {
    if (stopped(flags, res, k, check, tol2)) return;
    restrict_body(x, b, bc, nx, ny, nz, (A)ghost);
}

extern "C" __global__ void prolong_add(int* flags, const double* res, int k, int check, double tol2,
                                       const S* __restrict__ xc, S* __restrict__ xf, int nx, int ny,
                                       int nz, double ghost_coarse) {
    if (stopped(flags, res, k, check, tol2)) return;
    prolong_body(xc, xf, nx, ny, nz, (A)ghost_coarse);
}

// The coarsest level's exact solve, x = inv * b (n <= 512), by one block; with dot != null it
// adds b.x into dot[dot_k] (a one-level preconditioner).
extern "C" __global__ void coarse_solve(int* flags, const double* res, int k, int check, double tol2,
                                        const A* __restrict__ inv, const S* __restrict__ b,
                                        S* __restrict__ x, int n, double* dot, int dot_k) {
    if (stopped(flags, res, k, check, tol2)) return;
    __shared__ A sb[512];
    for (int j = threadIdx.x; j < n; j += blockDim.x) sb[j] = ld(b, j);
    __syncthreads();
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const A* row = inv + (long long)i * n;
        A s = (A)0;
        for (int j = 0; j < n; ++j) s += row[j] * sb[j];
        st(x, i, s);
        if (dot != nullptr) acc += (double)sb[i] * (double)ld(x, i);
    }
    if (dot != nullptr) block_add(acc, dot + dot_k);
}

// res[k+1] += ||b - A x||^2 on the finest level (multigrid's residual after cycle k).
extern "C" __global__ void residual_norm(int* flags, const double* res, int k, int check, double tol2,
                                         const S* __restrict__ x, const S* __restrict__ b,
                                         double* out, int nx, int ny, int nz) {
    if (stopped(flags, res, k, check, tol2)) return;
    residual_norm_body(x, b, out + k + 1, nx, ny, nz);
}

// After the last iteration: a solve that never met the test took max_it iterations; it converged
// if res[max_it] meets it.
extern "C" __global__ void finish(int* flags, const double* res, int max_it, double tol2) {
    if (threadIdx.x == 0 && blockIdx.x == 0 && flags[0] == 0) {
        flags[1] = max_it;
        flags[2] = res[max_it] <= tol2 * res[0] ? 1 : 0;
        flags[0] = 1;
    }
}

// ---------------------------------------------------------------------------------------------
// The whole CG solve in one cooperative launch, one grid-wide barrier per iteration.
//
// The algorithm is CG in Chronopoulos and Gear's single-reduction form (s = A p, w = A r):
//   x_k = x_{k-1} + a_{k-1} p_{k-1}        p_{k-1} = r_{k-1} + b_{k-1} p_{k-2}
//   r_k = r_{k-1} - a_{k-1} s_{k-1}        s_{k-1} = w_{k-1} + b_{k-1} s_{k-2}
//   w_k = A r_k,   g_k = r_k.r_k,   d_k = w_k.r_k
//   b_k = g_k / g_{k-1},   a_k = g_k / (d_k - b_k g_k / a_{k-1})   (b_0 = 0, a_0 = g_0 / d_0)
// Both dot products of an iteration come from the same pass, so an iteration is ONE pass over
// the grid and one barrier: the pass computes r_k at a point's neighbours on the fly from
// r_{k-1}, w_{k-1} and s_{k-2} (as cg_direction computes p), and writes x_k, p_{k-1} (in place),
// s_{k-1}, r_k and w_k. r, w and s alternate between two buffers. Traffic: read r, w, s, p, x;
// write the same five: the 10 words per point of the two-kernel form. Iteration k's test is
// g_k <= tol^2 g_0, as everywhere else (solve.rs), so the iteration counts agree with the
// reference up to rounding.
//
// The grid must be co-resident (the host launches it with cuLaunchCooperativeKernel, which
// refuses a grid that is not). Barrier: one counter that only grows (zeroed with the flags before
// the launch); thread 0 of each block adds 1 with release semantics and waits with acquire loads
// until it reaches (barriers passed) x gridDim.x.
//
// Dot products: each block stores its partial sums in part[] (no atomics); after the barrier every
// block adds all partials in the same fixed order, so every block holds the same value and takes
// the same branch, and the result does not depend on timing. Partials alternate between two
// halves by iteration parity (a block can be one pass ahead of another, never two). Block 0 also
// records g_k in res[k] and d_k in pq[k] for the host's report.
__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void grid_barrier(unsigned int* count, unsigned int& target) {
    __syncthreads();
    target += gridDim.x;
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
        while (load_acquire(count) < target) {
        }
    }
    __syncthreads();
}

// A load of a buffer this kernel writes: an ordinary L1-cached load (ld.global.ca), which the
// acquire of the last barrier orders after the other blocks' writes (the PTX memory model: a weak
// load after an acquire that synchronizes with their release observes them). Never the
// read-only path (ld.global.nc), which is not coherent within a kernel. (L2-only loads,
// ld.global.cg, were measured too: 10.8 against 9.6 us per iteration at 64^3 on the H100, as
// every neighbour then comes from L2.)
__device__ __forceinline__ A ldc(const S* p, long long i) {
#if STORE == 1
    float f;
    unsigned short h = __ldca(p + i);
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return __ldca(p + i);
#endif
}

// Stores this block's partial sums of u and v in pu[block], pv[block] (every thread calls it).
__device__ __forceinline__ void block_partials(double u, double v, double* pu, double* pv) {
    __shared__ double sums[2][8];
    for (int o = 16; o > 0; o >>= 1) {
        u += __shfl_down_sync(0xffffffffu, u, o);
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        sums[0][warp] = u;
        sums[1][warp] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, c = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            a += sums[0][w];
            c += sums[1][w];
        }
        pu[blockIdx.x] = a;
        pv[blockIdx.x] = c;
    }
}

// The sums of every block's partials, in a fixed order, in every thread (after a grid barrier).
__device__ __forceinline__ void grid_totals(const double* pu, const double* pv, double& u,
                                            double& v) {
    __shared__ double totals[2];
    if (threadIdx.x < 32) {
        double a = 0.0, c = 0.0;
        for (int b = threadIdx.x; b < (int)gridDim.x; b += 32) {
            a += __ldcg(pu + b);
            c += __ldcg(pv + b);
        }
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_down_sync(0xffffffffu, a, o);
            c += __shfl_down_sync(0xffffffffu, c, o);
        }
        if (threadIdx.x == 0) {
            totals[0] = a;
            totals[1] = c;
        }
    }
    __syncthreads();
    u = totals[0];
    v = totals[1];
    __syncthreads();
}

// Chronopoulos and Gear's scalars from iteration to iteration, the same in every block (every
// block reads the same totals): `cg_persistent` and `cg_resident` share them.
struct CgScalars {
    double alpha = 0.0, beta = 0.0, g_prev = 0.0, g0 = 0.0;

    // After iteration k's totals g = r_k.r_k and d = (A r_k).r_k: block 0 records them in res[k]
    // and pq[k]; the stopping test g <= tol2 g0 (converged) or k == max_it ends the solve (true);
    // else alpha_k and beta_k for the next pass.
    __device__ bool next(int k, double g, double d, double* res, double* pq, double tol2,
                         int max_it, bool& converged) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            res[k] = g;
            pq[k] = d;
        }
        if (k == 0) g0 = g;
        if (g <= tol2 * g0) {
            converged = true;
            return true;
        }
        if (k == max_it) return true;
        const double bk = k == 0 ? 0.0 : g / g_prev;
        alpha = k == 0 ? g / d : g / (d - bk * g / alpha);
        beta = bk;
        g_prev = g;
        return false;
    }
};

// Block: 256 threads, one 32 x 8 tile of (x, y) marching `zch` planes in z (the tiles are dealt
// to the blocks round robin). part: 4 x gridDim.x doubles. rb/wb/sb: the two buffers of r, w, s.
extern "C" __global__ void __launch_bounds__(256)
cg_persistent(int* flags, double* res, double* pq, double* part, const S* __restrict__ b,
              S* __restrict__ xv, S* __restrict__ p, S* __restrict__ rb0, S* __restrict__ rb1,
              S* __restrict__ wb0, S* __restrict__ wb1, S* __restrict__ sb0, S* __restrict__ sb1,
              int nx, int ny, int nz, int zch, int max_it, double tol2) {
    unsigned int* count = (unsigned int*)(flags + 4);
    unsigned int target = 0;
    const long long plane = (long long)nx * ny;
    const int tbx = (nx + 31) >> 5, tby = (ny + 7) >> 3, tbz = (nz + zch - 1) / zch;
    const int tiles = tbx * tby * tbz;
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;

    // One pass: k = 0 is the start (x = 0, r_0 = b, w_0 = A b); k >= 1 is iteration k.
    CgScalars cs;
    int k = 0;
    bool converged = false;
    for (;; ++k) {
        const int cur = k & 1, old = cur ^ 1;
        S* __restrict__ r_new = cur ? rb1 : rb0;
        S* __restrict__ w_new = cur ? wb1 : wb0;
        const S* __restrict__ r_old = old ? rb1 : rb0;
        const S* __restrict__ w_old = old ? wb1 : wb0;
        // s_{k-1} is written to the buffer of parity k-1, s_{k-2} read from that of parity k.
        S* __restrict__ s_out = old ? sb1 : sb0;
        const S* __restrict__ s_in = cur ? sb1 : sb0;
        const A alpha = (A)cs.alpha, beta = (A)cs.beta;
        const bool start = k == 0, second = k == 1;
        // s_{k-1} at j, and r_k at j.
        auto Sv = [&](long long j) -> A {
            return second ? ldc(w_old, j) : ldc(w_old, j) + beta * ldc(s_in, j);
        };
        auto R = [&](long long j) -> A {
            return start ? ld(b, j) : ldc(r_old, j) - alpha * Sv(j);
        };
        double gg = 0.0, dd = 0.0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const int x = (t % tbx) * 32 + tx;
            const int y = ((t / tbx) % tby) * 8 + ty;
            const int z0 = (t / (tbx * tby)) * zch;
            const int z1 = min(z0 + zch, nz);
            if (x >= nx || y >= ny) continue;
            long long i = (long long)z0 * plane + (long long)y * nx + x;
            A rm = z0 > 0 ? R(i - plane) : (A)0;
            A rc = R(i);
            for (int z = z0; z < z1; ++z, i += plane) {
                const A rp = z + 1 < nz ? R(i + plane) : (A)0;
                A nb = rm + rp;
                if (x > 0) nb += R(i - 1);
                if (x + 1 < nx) nb += R(i + 1);
                if (y > 0) nb += R(i - nx);
                if (y + 1 < ny) nb += R(i + nx);
                const A wv = (A)6 * rc - nb;
                if (start) {
                    st(xv, i, (A)0);
                } else {
                    const A pv = second ? ldc(r_old, i) : ldc(r_old, i) + beta * ldc(p, i);
                    st(p, i, pv);
                    st(s_out, i, Sv(i));
                    st(xv, i, ldc(xv, i) + alpha * pv);
                }
                st(r_new, i, rc);
                st(w_new, i, wv);
                gg += (double)rc * (double)rc;
                dd += (double)wv * (double)rc;
                rm = rc;
                rc = rp;
            }
        }
        double* pg = part + (size_t)(2 * cur) * gridDim.x;
        double* pd = pg + gridDim.x;
        block_partials(gg, dd, pg, pd);
        grid_barrier(count, target);
        double g, d;
        grid_totals(pg, pd, g, d);
        if (cs.next(k, g, d, res, pq, tol2, max_it, converged)) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        flags[1] = k;
        flags[2] = converged ? 1 : 0;
        __threadfence();
        flags[0] = 1;
    }
}


// ---------------------------------------------------------------------------------------------
// The whole MG or MG-PCG solve in one cooperative launch: the steps of the per-kernel path, in
// the same order and with the same arithmetic, separated by grid-wide barriers instead of
// launches. The loop ends at convergence, so none of the per-kernel path's empty launches follow
// it. The coarse solve is spread over the grid, one warp per row of the inverse (the per-kernel
// path gives it one block).
//
// Scalar slots (res, rz, pq: zeroed by a memset before the launch) are added into with atomics,
// as in the per-kernel path, and read from L2 (ld.cg) after the barrier that follows them, so
// every block reads the same value and takes the same branch.

// One level of the hierarchy as the host writes it: 5 x 8 bytes.
struct Level {
    S* x;
    S* b;
    int nx, ny, nz, pad;
    double ghost;
};

// x = inv * b on the coarsest level (n <= 512), one warp per row; with dot != null, *dot += b.x.
__device__ __forceinline__ void coarse_rows(const A* __restrict__ inv, const S* __restrict__ b,
                                            S* __restrict__ x, int n, double* dot) {
    const int lane = threadIdx.x & 31;
    const int warps = (int)((gridDim.x * blockDim.x) >> 5);
    double acc = 0.0;
    for (int i = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5); i < n; i += warps) {
        const A* row = inv + (long long)i * n;
        A s = (A)0;
        for (int j = lane; j < n; j += 32) s += row[j] * ld(b, j);
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) {
            st(x, i, s);
            acc += (double)ld(b, i) * (double)ld(x, i);
        }
    }
    if (dot != nullptr) block_add(acc, dot);
}

// One V-cycle for A x = b on level 0 (x0, b0), the levels below in lv[1..nl). `dot`: the last
// step adds b.x into *dot.
__device__ void vcycle_grid(const Level* lv, int nl, S* x0, const S* b0, bool zero_init,
                            const A* inv, int cn, double* dot, int sweeps, unsigned int* count,
                            unsigned int& target) {
    for (int l = 0; l + 1 < nl; ++l) {
        const Level L = lv[l];
        S* x = l == 0 ? x0 : L.x;
        const S* b = l == 0 ? b0 : L.b;
        const bool zi = l == 0 ? zero_init : true;
        for (int s = 0; s < sweeps; ++s) {
            rbgs_body(x, b, L.nx, L.ny, L.nz, (A)L.ghost, 0, zi && s == 0, nullptr);
            grid_barrier(count, target);
            rbgs_body(x, b, L.nx, L.ny, L.nz, (A)L.ghost, 1, false, nullptr);
            grid_barrier(count, target);
        }
        restrict_body(x, b, lv[l + 1].b, L.nx, L.ny, L.nz, (A)L.ghost);
        grid_barrier(count, target);
    }
    coarse_rows(inv, nl == 1 ? b0 : lv[nl - 1].b, nl == 1 ? x0 : lv[nl - 1].x, cn,
                nl == 1 ? dot : nullptr);
    grid_barrier(count, target);
    for (int l = nl - 2; l >= 0; --l) {
        const Level L = lv[l];
        S* x = l == 0 ? x0 : L.x;
        const S* b = l == 0 ? b0 : L.b;
        prolong_body(lv[l + 1].x, x, L.nx, L.ny, L.nz, (A)lv[l + 1].ghost);
        grid_barrier(count, target);
        for (int s = 0; s < sweeps; ++s) {
            rbgs_body(x, b, L.nx, L.ny, L.nz, (A)L.ghost, 1, false, nullptr);
            grid_barrier(count, target);
            rbgs_body(x, b, L.nx, L.ny, L.nz, (A)L.ghost, 0, false,
                      l == 0 && s + 1 == sweeps ? dot : nullptr);
            grid_barrier(count, target);
        }
    }
}

// pcg = 0: multigrid (V-cycles on x, then ||b - A x||^2 into res[k+1]); pcg = 1: CG
// preconditioned by one V-cycle (z = V(r), r.z into rz[k], then the CG pair of the per-kernel
// path). cgv: r, p0, p1, q, z (pcg only). Block: 256 threads (the CG pass runs as 32 x 8).
extern "C" __global__ void __launch_bounds__(256)
mg_persistent(int* flags, double* res, double* pq, double* rz, const Level* lv, int nl,
              const A* inv, int cn, const S* b, S* xv, S* r, S* p0, S* p1, S* q, S* z, int pcg,
              int sweeps, int zch, int max_it, double tol2) {
    unsigned int* count = (unsigned int*)(flags + 4);
    unsigned int target = 0;
    const int nx = lv[0].nx, ny = lv[0].ny, nz = lv[0].nz;
    const long long n = (long long)nx * ny * nz;
    init_body(b, xv, pcg ? r : nullptr, res, n);
    grid_barrier(count, target);
    const double g0 = __ldcg(res);
    int k = 0;
    bool converged = false;
    for (;; ++k) {
        if (__ldcg(res + k) <= tol2 * g0) {
            converged = true;
            break;
        }
        if (k == max_it) break;
        if (!pcg) {
            vcycle_grid(lv, nl, xv, b, false, inv, cn, nullptr, sweeps, count, target);
            residual_norm_body(xv, b, res + k + 1, nx, ny, nz);
            grid_barrier(count, target);
            continue;
        }
        vcycle_grid(lv, nl, z, r, true, inv, cn, rz + k, sweeps, count, target);
        const double rho = __ldcg(rz + k);
        const bool first = k == 0;
        const A beta = first ? (A)0 : (A)(rho / __ldcg(rz + k - 1));
        S* p_new = (k & 1) ? p1 : p0;
        const S* p_old = (k & 1) ? p0 : p1;
        const A alpha_prev = first ? (A)0 : (A)(__ldcg(rz + k - 1) / __ldcg(pq + k - 1));
        direction_body(threadIdx.x & 31, threadIdx.x >> 5, z, p_old, p_new, q, xv, beta,
                       alpha_prev, first, pq + k, nx, ny, nz, zch);
        grid_barrier(count, target);
        update_body(r, q, (A)(rho / __ldcg(pq + k)), res + k + 1, n);
        grid_barrier(count, target);
    }
    // The last iteration's deferred x step (every block left the loop at the same k, after a
    // barrier).
    if (pcg) final_step_body(xv, p0, p1, rz, pq, k, n);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        flags[1] = k;
        flags[2] = converged ? 1 : 0;
        __threadfence();
        flags[0] = 1;
    }
}

// ---------------------------------------------------------------------------------------------
// CG with the solve's vectors resident in registers: the same single-reduction iteration as
// cg_persistent (same expressions, same rounding to the storage type), one block per 32 x 8 x zch
// tile (zch <= RES_ZMAX), each thread holding x, p, r, w and s of its column's points across the
// whole solve. Within a tile, r_k at a neighbour comes from a shuffle (x), shared memory (y) or
// the thread's own registers (z); only the tile's boundary points go through memory: each
// iteration a block stores (r_k, w_k, s_{k-1}) at its boundary points into the buffers of parity
// k, and the neighbouring tiles recompute r_k there from them (as cg_persistent does for every
// neighbour). The halo loads are issued before the scalars they are combined with are known, so
// they overlap the read of the partial sums. Per-block partial sums are read by all threads at
// once (one load each, at most 256 blocks) and reduced in a fixed tree: every block gets the same
// totals. Iteration traffic: the tile surfaces instead of 10 words per point.
#define RES_ZMAX 8

// Rounds to the storage type (what a store and a load would do).
__device__ __forceinline__ A rs(A v) {
#if STORE == 1
    unsigned short h;
    float f;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return v;
#endif
}

// The sums of part_g[0..gridDim.x) and part_d[..] (gridDim.x <= 256 = blockDim.x), the same
// fixed tree in every block.
__device__ __forceinline__ void resident_totals(const double* pg, const double* pd, double& g,
                                                double& d) {
    __shared__ double sums[2][8];
    double a = 0.0, c = 0.0;
    if ((int)threadIdx.x < (int)gridDim.x) {
        a = __ldcg(pg + threadIdx.x);
        c = __ldcg(pd + threadIdx.x);
    }
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        c += __shfl_down_sync(0xffffffffu, c, o);
    }
    if ((threadIdx.x & 31) == 0) {
        sums[0][threadIdx.x >> 5] = a;
        sums[1][threadIdx.x >> 5] = c;
    }
    __syncthreads();
    a = 0.0;
    c = 0.0;
    for (int w = 0; w < 8; ++w) {
        a += sums[0][w];
        c += sums[1][w];
    }
    g = a;
    d = c;
    __syncthreads();
}

// Block: 256 threads as 32 x 8; grid: exactly one block per tile (at most 256 blocks). part:
// 4 x gridDim.x doubles. rb/wb/sb: the two parity buffers of r, w and s (boundary points only).
extern "C" __global__ void __launch_bounds__(256)
cg_resident(int* flags, double* res, double* pq, double* part, const S* __restrict__ b,
            S* __restrict__ xv, S* rb0, S* rb1, S* wb0, S* wb1, S* sb0, S* sb1, int nx, int ny,
            int nz, int zch, int max_it, double tol2) {
    __shared__ A tile[RES_ZMAX][8][32];
    unsigned int* count = (unsigned int*)(flags + 4);
    unsigned int target = 0;
    const long long plane = (long long)nx * ny;
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int tbx = (nx + 31) >> 5, tby = (ny + 7) >> 3;
    const int t = blockIdx.x;
    const int x = (t % tbx) * 32 + tx;
    const int y = ((t / tbx) % tby) * 8 + ty;
    const int z0 = (t / (tbx * tby)) * zch;
    const int zn = min(zch, nz - z0);
    const bool valid = x < nx && y < ny;
    const long long base = (long long)z0 * plane + (long long)y * nx + x;
    // Where this thread's neighbours live: in the tile (shuffle, shared memory, registers), in
    // another tile (a halo point, recomputed from memory), or outside the grid (zero).
    const bool x_lo_halo = tx == 0 && x > 0;
    const bool x_hi_halo = tx == 31 && x + 1 < nx;
    const bool y_lo_halo = ty == 0 && y > 0;
    const bool y_hi_halo = ty == 7 && y + 1 < ny;
    const bool z_lo_halo = z0 > 0;
    const bool z_hi_halo = z0 + zn < nz;
    // Points another tile reads as its halo.
    const bool boundary_column = tx == 0 || tx == 31 || ty == 0 || ty == 7;
    const long long hx = x_lo_halo ? -1 : 1;
    const long long hy = y_lo_halo ? -(long long)nx : (long long)nx;

    A xr[RES_ZMAX], pr[RES_ZMAX], rr[RES_ZMAX], wr[RES_ZMAX], sreg[RES_ZMAX];
#pragma unroll
    for (int j = 0; j < RES_ZMAX; ++j) {
        xr[j] = (A)0;
        pr[j] = (A)0;
        rr[j] = (A)0;
        wr[j] = (A)0;
        sreg[j] = (A)0;
    }

    CgScalars cs;
    int k = 0;
    bool converged = false;
    for (;; ++k) {
        const bool start = k == 0, second = k == 1;
        const int old = (k & 1) ^ 1;
        const S* r_old = old ? rb1 : rb0;
        const S* w_old = old ? wb1 : wb0;
        const S* s_in = old ? sb1 : sb0;
        S* r_out = old ? rb0 : rb1;
        S* w_out = old ? wb0 : wb1;
        S* s_out = old ? sb0 : sb1;
        const A alpha = (A)cs.alpha, beta = (A)cs.beta;
        // The halo: r_k at the points of other tiles next to this thread's, recomputed from
        // what those tiles stored last iteration (r, w, s; b at the start). First every load,
        // each group in one branch with nothing but loads in it, so all of them are in flight at
        // once (with the arithmetic in the branches, each plane's loads waited for the last
        // ones: 7.70 µs per iteration at 64^3, H100 session 7 call 3); then the arithmetic.
        const S* r_src = start ? b : r_old;
        A zhr[2] = {(A)0, (A)0}, zhw[2] = {(A)0, (A)0}, zhs[2] = {(A)0, (A)0};
        A xhr[RES_ZMAX], xhw[RES_ZMAX], xhs[RES_ZMAX], yhr[RES_ZMAX], yhw[RES_ZMAX], yhs[RES_ZMAX];
#pragma unroll
        for (int j = 0; j < RES_ZMAX; ++j) {
            xhr[j] = xhw[j] = xhs[j] = yhr[j] = yhw[j] = yhs[j] = (A)0;
        }
        if (valid && z_lo_halo) {
            const long long i = base - plane;
            zhr[0] = ldc(r_src, i);
            zhw[0] = ldc(w_old, i);
            zhs[0] = ldc(s_in, i);
        }
        if (valid && z_hi_halo) {
            const long long i = base + (long long)zn * plane;
            zhr[1] = ldc(r_src, i);
            zhw[1] = ldc(w_old, i);
            zhs[1] = ldc(s_in, i);
        }
        // The column of (r, w, s) at `offset` from this thread's points, plane by plane; planes
        // past zn repeat the last one (a valid address; the value is never used).
        auto load_column = [&](long long offset, A* hr, A* hw, A* hs) {
#pragma unroll
            for (int j = 0; j < RES_ZMAX; ++j) {
                const long long i = base + (long long)min(j, zn - 1) * plane + offset;
                hr[j] = ldc(r_src, i);
                hw[j] = ldc(w_old, i);
                hs[j] = ldc(s_in, i);
            }
        };
        if (valid && (x_lo_halo || x_hi_halo)) load_column(hx, xhr, xhw, xhs);
        if (valid && (y_lo_halo || y_hi_halo)) load_column(hy, yhr, yhw, yhs);
        // r_k from a stored triple (s is ignored on the second iteration, everything but r at
        // the start, where the buffers still hold the poison).
        auto R = [&](A r, A w, A sv) -> A {
            return start ? r : r - alpha * (second ? w : w + beta * sv);
        };
        const A hzm = z_lo_halo ? R(zhr[0], zhw[0], zhs[0]) : (A)0;
        const A hzp = z_hi_halo ? R(zhr[1], zhw[1], zhs[1]) : (A)0;
        A hxv[RES_ZMAX], hyv[RES_ZMAX];
#pragma unroll
        for (int j = 0; j < RES_ZMAX; ++j) {
            hxv[j] = R(xhr[j], xhw[j], xhs[j]);
            hyv[j] = R(yhr[j], yhw[j], yhs[j]);
        }
        // This thread's points: p_{k-1}, s_{k-1}, x_k and r_k (unrounded in rc, as a neighbour
        // recomputes it).
        A rc[RES_ZMAX];
#pragma unroll
        for (int j = 0; j < RES_ZMAX; ++j) {
            rc[j] = (A)0;
            if (j < zn && valid) {
                if (start) {
                    rc[j] = ld(b, base + (long long)j * plane);
                } else {
                    const A pv = second ? rr[j] : rr[j] + beta * pr[j];
                    const A sv = second ? wr[j] : wr[j] + beta * sreg[j];
                    pr[j] = rs(pv);
                    sreg[j] = rs(sv);
                    xr[j] = rs(xr[j] + alpha * pv);
                    rc[j] = rr[j] - alpha * sv;
                }
            }
            tile[j][ty][tx] = rc[j];
        }
        __syncthreads();
        double gg = 0.0, dd = 0.0;
#pragma unroll
        for (int j = 0; j < RES_ZMAX; ++j) {
            const A up = __shfl_down_sync(0xffffffffu, rc[j], 1);
            const A dn = __shfl_up_sync(0xffffffffu, rc[j], 1);
            if (j < zn && valid) {
                A nb = (j > 0 ? rc[j - 1] : hzm) + (j + 1 < zn ? rc[j + 1] : hzp);
                // A halo value serves the one side its flag names (a one-point-wide tile has
                // neither neighbour inside the tile).
                nb += tx > 0 ? dn : (x_lo_halo ? hxv[j] : (A)0);
                nb += (tx < 31 && x + 1 < nx) ? up : (x_hi_halo ? hxv[j] : (A)0);
                nb += ty > 0 ? tile[j][ty - 1][tx] : (y_lo_halo ? hyv[j] : (A)0);
                nb += (ty < 7 && y + 1 < ny) ? tile[j][ty + 1][tx] : (y_hi_halo ? hyv[j] : (A)0);
                const A wv = (A)6 * rc[j] - nb;
                gg += (double)rc[j] * (double)rc[j];
                dd += (double)wv * (double)rc[j];
                rr[j] = rs(rc[j]);
                wr[j] = rs(wv);
                if (boundary_column || j == 0 || j + 1 == zn) {
                    const long long i = base + (long long)j * plane;
                    st(r_out, i, rr[j]);
                    st(w_out, i, wr[j]);
                    if (!start) st(s_out, i, sreg[j]);
                }
            }
        }
        double* pg = part + (size_t)(2 * (k & 1)) * gridDim.x;
        double* pd = pg + gridDim.x;
        block_partials(gg, dd, pg, pd);
        grid_barrier(count, target);
        double g, d;
        resident_totals(pg, pd, g, d);
        if (cs.next(k, g, d, res, pq, tol2, max_it, converged)) break;
    }
    if (valid) {
#pragma unroll
        for (int j = 0; j < RES_ZMAX; ++j) {
            if (j < zn) st(xv, base + (long long)j * plane, xr[j]);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        flags[1] = k;
        flags[2] = converged ? 1 : 0;
        __threadfence();
        flags[0] = 1;
    }
}
