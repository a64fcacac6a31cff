//! The enqueued solve: every kernel launch of `run`, in order, on the host's stream (the
//! `cg_persistent` or `mg_persistent` launch, or the per-kernel sequence of CG, MG and MG-PCG
//! with its V-cycles).

use apex_plugin_api::{PluginError, cuda::cuda_error};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};

use super::plan::{BLOCK, SolvePath, grid_stride, stencil_grid};
use super::solver::{BufferSet, DeviceSolver};
use crate::{real::Storage, solve::Method};

/// Builds a kernel's argument list: the control arguments of iteration `k` (with or without the
/// stopping test) followed by the kernel's own.
type WithCtl<'a> = &'a dyn Fn(usize, bool, &[Arg]) -> Vec<Arg>;

#[derive(Clone, Copy)]
enum Arg {
    P(u64),
    I(i32),
    L(i64),
    D(f64),
}

/// Function indices into [`program::FUNCTIONS`].
pub(super) mod f {
    pub const INIT: usize = 0;
    pub const CG_DIRECTION: usize = 1;
    pub const CG_UPDATE: usize = 2;
    pub const RBGS: usize = 3;
    pub const RESTRICT: usize = 4;
    pub const PROLONG: usize = 5;
    pub const COARSE: usize = 6;
    pub const RESIDUAL_NORM: usize = 7;
    pub const FINISH: usize = 8;
    pub const CG_PERSISTENT: usize = 9;
    pub const MG_PERSISTENT: usize = 10;
    pub const CG_RESIDENT: usize = 11;
    pub const CG_FINAL_STEP: usize = 12;
}

impl<T: Storage> DeviceSolver<T> {
    fn launch(&self, func: usize, cfg: LaunchConfig, args: &[Arg]) -> Result<(), PluginError> {
        self.launch_with(func, cfg, args, false)
    }

    /// Launches `func`; `cooperative`: with cuLaunchCooperativeKernel, which fails rather than
    /// start a grid whose blocks cannot all be resident at once.
    fn launch_with(
        &self,
        func: usize,
        cfg: LaunchConfig,
        args: &[Arg],
        cooperative: bool,
    ) -> Result<(), PluginError> {
        let mut b = self.session.stream.launch_builder(&self.functions[func]);
        for a in args {
            match a {
                Arg::P(v) => b.arg(v),
                Arg::I(v) => b.arg(v),
                Arg::L(v) => b.arg(v),
                Arg::D(v) => b.arg(v),
            };
        }
        // SAFETY: argument lists match the kernels' signatures in cuda/poisson.cu (checked by
        // the GPU self-check); every pointer is a live allocation of this case sized for the
        // dims passed with it.
        let launched = if cooperative {
            unsafe { b.launch_cooperative(cfg) }
        } else {
            unsafe { b.launch(cfg) }
        };
        launched.map(drop).map_err(cuda_error)
    }

    /// Enqueues one solve on buffer set `set_index`: the memsets, then the plan's cooperative
    /// launch or the per-kernel sequence.
    pub(super) fn enqueue(&self, set_index: usize) -> Result<(), PluginError> {
        let stream = &self.session.stream;
        let set = &self.sets[set_index];
        // The flags (and the cooperative kernels' barrier) start at zero on every solve; the
        // per-iteration slots too, where kernels add into them (the cooperative CG kernels write
        // theirs). Memsets are capturable nodes.
        memset_zero(stream, set.flags.device_ptr(stream).0, 32)?;
        match (self.solve_path, self.method) {
            (SolvePath::Resident { blocks, zch }, _) => {
                self.enqueue_cg_cooperative(set, f::CG_RESIDENT, blocks, zch)
            }
            (SolvePath::Persistent { blocks, zch }, Method::Cg) => {
                self.enqueue_cg_cooperative(set, f::CG_PERSISTENT, blocks, zch)
            }
            (path, _) => {
                let bytes = 3 * self.scalar_len() * 8;
                memset_zero(stream, set.scalars.device_ptr(stream).0, bytes)?;
                match path {
                    SolvePath::Persistent { blocks, zch } => {
                        self.enqueue_mg_persistent(set, blocks, zch)
                    }
                    _ => self.enqueue_launches(set),
                }
            }
        }
    }

    fn tol2(&self) -> f64 {
        self.settings.tolerance * self.settings.tolerance
    }

    /// Launches `func` cooperatively on `blocks` blocks of [`BLOCK`] threads (it fails rather
    /// than start a grid that cannot be co-resident).
    fn launch_cooperative(
        &self,
        func: usize,
        blocks: u32,
        args: &[Arg],
    ) -> Result<(), PluginError> {
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch_with(func, cfg, args, true)
    }

    /// `init_solve`, `max_iterations` iterations of CG, MG or MG-PCG kernels, `finish`, and for CG
    /// and MG-PCG `cg_final_step` (the last iteration's deferred x step).
    fn enqueue_launches(&self, set: &BufferSet) -> Result<(), PluginError> {
        let stream = self.session.stream.clone();
        let ptr = |s: &CudaSlice<u8>| s.device_ptr(&stream).0;
        let (sc, _) = set.scalars.device_ptr(&stream);
        let (fl, _) = set.flags.device_ptr(&stream);
        let m = self.scalar_len() as u64 * 8;
        let (res, pq, rz) = (sc, sc + m, sc + 2 * m);
        let tol2 = self.tol2();
        let ctl = |k: usize, check: bool| {
            [
                Arg::P(fl),
                Arg::P(res),
                Arg::I(k as i32),
                Arg::I(i32::from(check)),
                Arg::D(tol2),
            ]
        };
        let with = |k: usize, check: bool, rest: &[Arg]| -> Vec<Arg> {
            let mut v = ctl(k, check).to_vec();
            v.extend_from_slice(rest);
            v
        };
        let d = self.dims;
        let n = d.len() as i64;
        let (x, b) = (ptr(&set.x), ptr(&set.b));
        let cg: Vec<u64> = set.cg.iter().map(ptr).collect();
        let r = cg.first().copied().unwrap_or(0);
        self.launch(
            f::INIT,
            grid_stride(d.len()),
            &with(
                0,
                false,
                &[Arg::P(b), Arg::P(x), Arg::P(r), Arg::P(res), Arg::L(n)],
            ),
        )?;
        let (sgrid, zch) = stencil_grid(d, self.stencil_resident);
        let dims3 = [
            Arg::I(d.nx as i32),
            Arg::I(d.ny as i32),
            Arg::I(d.nz as i32),
        ];
        // CG's scalar slots: rho = r.r, or r.z with the V-cycle preconditioner.
        let pcg = self.method == Method::MgPcg;
        let rho = if pcg { rz } else { res };
        for k in 0..self.settings.max_iterations {
            match self.method {
                Method::Mg => {
                    self.vcycle(set, &with, 0, x, b, false, k, true, None)?;
                    let mut a = vec![Arg::P(x), Arg::P(b), Arg::P(res)];
                    a.extend_from_slice(&dims3);
                    self.launch(f::RESIDUAL_NORM, grid_stride(d.len()), &with(k, false, &a))?;
                }
                Method::Cg | Method::MgPcg => {
                    let (p0, p1, q) = (cg[1], cg[2], cg[3]);
                    let (p_new, p_old) = if k % 2 == 0 { (p0, p1) } else { (p1, p0) };
                    let src = if pcg {
                        let z = cg[4];
                        self.vcycle(set, &with, 0, z, r, true, k, true, Some(rz))?;
                        z
                    } else {
                        r
                    };
                    let mut a = vec![
                        Arg::P(src),
                        Arg::P(p_old),
                        Arg::P(p_new),
                        Arg::P(q),
                        Arg::P(x),
                        Arg::P(rho),
                        Arg::I(i32::from(k == 0)),
                        Arg::P(pq),
                    ];
                    a.extend_from_slice(&dims3);
                    a.push(Arg::I(zch));
                    self.launch(f::CG_DIRECTION, sgrid, &with(k, !pcg, &a))?;
                    self.launch(
                        f::CG_UPDATE,
                        grid_stride(d.len()),
                        &with(
                            k,
                            false,
                            &[
                                Arg::P(r),
                                Arg::P(q),
                                Arg::P(rho),
                                Arg::P(pq),
                                Arg::P(res),
                                Arg::L(n),
                            ],
                        ),
                    )?;
                }
            }
        }
        self.launch(
            f::FINISH,
            LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (32, 1, 1),
                shared_mem_bytes: 0,
            },
            &[
                Arg::P(fl),
                Arg::P(res),
                Arg::I(self.settings.max_iterations as i32),
                Arg::D(tol2),
            ],
        )?;
        if self.method == Method::Mg {
            return Ok(());
        }
        // CG's x step is deferred by one iteration (`direction_body`): the last one comes after
        // `finish` has recorded how many iterations ran.
        self.launch(
            f::CG_FINAL_STEP,
            grid_stride(d.len()),
            &[
                Arg::P(fl),
                Arg::P(x),
                Arg::P(cg[1]),
                Arg::P(cg[2]),
                Arg::P(rho),
                Arg::P(pq),
                Arg::L(n),
            ],
        )
    }

    /// The whole CG solve as one cooperative launch of `cg_persistent` or `cg_resident`, which
    /// write every scalar slot they report (no memset of them needed).
    fn enqueue_cg_cooperative(
        &self,
        set: &BufferSet,
        func: usize,
        blocks: u32,
        zch: i32,
    ) -> Result<(), PluginError> {
        let stream = &self.session.stream;
        let ptr = |s: &CudaSlice<u8>| s.device_ptr(stream).0;
        let (sc, _) = set.scalars.device_ptr(stream);
        let (fl, _) = set.flags.device_ptr(stream);
        let (part, _) = set.partials.device_ptr(stream);
        let (res, pq) = (sc, sc + self.scalar_len() as u64 * 8);
        let cg: Vec<u64> = set.cg.iter().map(ptr).collect();
        let d = self.dims;
        // The set's CG buffers are r0, p, r1, w0, w1, s0, s1; `cg_persistent` takes p first,
        // `cg_resident` keeps p in registers.
        let order: &[usize] = if func == f::CG_RESIDENT {
            &[0, 2, 3, 4, 5, 6]
        } else {
            &[1, 0, 2, 3, 4, 5, 6]
        };
        let mut args = vec![
            Arg::P(fl),
            Arg::P(res),
            Arg::P(pq),
            Arg::P(part),
            Arg::P(ptr(&set.b)),
            Arg::P(ptr(&set.x)),
        ];
        args.extend(order.iter().map(|&i| Arg::P(cg[i])));
        args.extend_from_slice(&[
            Arg::I(d.nx as i32),
            Arg::I(d.ny as i32),
            Arg::I(d.nz as i32),
            Arg::I(zch),
            Arg::I(self.settings.max_iterations as i32),
            Arg::D(self.tol2()),
        ]);
        self.launch_cooperative(func, blocks, &args)
    }

    /// The whole MG or MG-PCG solve as one cooperative launch of `mg_persistent` (the scalar
    /// slots it adds into are zeroed before it).
    fn enqueue_mg_persistent(
        &self,
        set: &BufferSet,
        blocks: u32,
        zch: i32,
    ) -> Result<(), PluginError> {
        let stream = &self.session.stream;
        let ptr = |s: &CudaSlice<u8>| s.device_ptr(stream).0;
        let (sc, _) = set.scalars.device_ptr(stream);
        let (fl, _) = set.flags.device_ptr(stream);
        let (table, _) = set.level_table.device_ptr(stream);
        let m = self.scalar_len() as u64 * 8;
        let inv = self.coarse_inv.as_ref().expect("multigrid method");
        let (inv, _) = inv.device_ptr(stream);
        let levels = self.hierarchy.as_ref().map_or(0, |h| h.levels.len());
        let pcg = self.method == Method::MgPcg;
        // r, p0, p1, q, z for MG-PCG; MG has no CG vectors (the kernel never touches them).
        let cg: Vec<u64> = set.cg.iter().map(ptr).collect();
        let v = |i: usize| Arg::P(cg.get(i).copied().unwrap_or(0));
        let args = [
            Arg::P(fl),
            Arg::P(sc),
            Arg::P(sc + m),
            Arg::P(sc + 2 * m),
            Arg::P(table),
            Arg::I(levels as i32),
            Arg::P(inv),
            Arg::I(self.coarse_n as i32),
            Arg::P(ptr(&set.b)),
            Arg::P(ptr(&set.x)),
            v(0),
            v(1),
            v(2),
            v(3),
            v(4),
            Arg::I(i32::from(pcg)),
            Arg::I(self.settings.sweeps as i32),
            Arg::I(zch),
            Arg::I(self.settings.max_iterations as i32),
            Arg::D(self.tol2()),
        ];
        self.launch_cooperative(f::MG_PERSISTENT, blocks, &args)
    }

    /// Enqueues one V-cycle on level `l` for `A_l x = b` (device pointers). `check`: its first
    /// kernel applies the stopping test of iteration `k`. `dot`: its last kernel adds `b . x`
    /// into `dot[k]`.
    #[allow(clippy::too_many_arguments)]
    fn vcycle(
        &self,
        set: &BufferSet,
        with: WithCtl<'_>,
        l: usize,
        x: u64,
        b: u64,
        zero_init: bool,
        k: usize,
        check: bool,
        dot: Option<u64>,
    ) -> Result<(), PluginError> {
        let h = self.hierarchy.as_ref().expect("multigrid method");
        let level = h.levels[l];
        let d = level.dims;
        let dot_args = [Arg::P(dot.unwrap_or(0)), Arg::I(k as i32)];
        let Some(coarse) = h.levels.get(l + 1) else {
            let inv = self.coarse_inv.as_ref().expect("multigrid method");
            let (inv, _) = inv.device_ptr(&self.session.stream);
            let mut a = vec![
                Arg::P(inv),
                Arg::P(b),
                Arg::P(x),
                Arg::I(self.coarse_n as i32),
            ];
            a.extend_from_slice(&dot_args);
            return self.launch(
                f::COARSE,
                LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                },
                &with(k, check, &a),
            );
        };
        let pairs = d.nx.div_ceil(2) * d.ny * d.nz;
        let dims3 = [
            Arg::I(d.nx as i32),
            Arg::I(d.ny as i32),
            Arg::I(d.nz as i32),
        ];
        let sweep = |check: bool, color: i32, zero: bool, dot: Option<u64>| {
            let mut a = vec![Arg::P(x), Arg::P(b)];
            a.extend_from_slice(&dims3);
            a.extend_from_slice(&[
                Arg::D(level.ghost),
                Arg::I(color),
                Arg::I(i32::from(zero)),
                Arg::P(dot.unwrap_or(0)),
                Arg::I(k as i32),
            ]);
            self.launch(f::RBGS, grid_stride(pairs), &with(k, check, &a))
        };
        let sweeps = self.settings.sweeps;
        for s in 0..sweeps {
            sweep(check && s == 0, 0, zero_init && s == 0, None)?;
            sweep(false, 1, false, None)?;
        }
        let (xc, bc) = &set.levels[l];
        let stream = &self.session.stream;
        let (xc, bc) = (xc.device_ptr(stream).0, bc.device_ptr(stream).0);
        let mut a = vec![Arg::P(x), Arg::P(b), Arg::P(bc)];
        a.extend_from_slice(&dims3);
        a.push(Arg::D(level.ghost));
        self.launch(
            f::RESTRICT,
            grid_stride(coarse.dims.len()),
            &with(k, false, &a),
        )?;
        self.vcycle(set, with, l + 1, xc, bc, true, k, false, None)?;
        let mut a = vec![Arg::P(xc), Arg::P(x)];
        a.extend_from_slice(&dims3);
        a.push(Arg::D(coarse.ghost));
        self.launch(f::PROLONG, grid_stride(d.len()), &with(k, false, &a))?;
        for s in 0..sweeps {
            sweep(false, 1, false, None)?;
            sweep(false, 0, false, if s + 1 == sweeps { dot } else { None })?;
        }
        Ok(())
    }
}

/// `cuMemsetD8Async(ptr, 0, bytes)` on `stream` (capturable).
fn memset_zero(stream: &CudaStream, ptr: u64, bytes: usize) -> Result<(), PluginError> {
    // SAFETY: `ptr` is the start of a live allocation of at least `bytes` bytes of this case.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }
        .map_err(cuda_error)
}
