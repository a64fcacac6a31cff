//! The bench (`--bench`): each profile verified once at full size, then timed DRAM-cold like
//! apex-host's batch mode (with `--l2-hot`, on one buffer set, like its hot batch), against a
//! float4 copy kernel measured the same way.

use std::sync::Arc;

use apex_plugin_api::{
    Backend, CudaHandles, PluginError,
    cuda::{compile_ptx, cuda_error},
};
use apex_plugin_nn_ops::harness::{check, describe, params, request};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
    sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode},
};

use crate::profiles::profiles;

/// Calls per CUDA graph and graph replays per timing.
const GRAPH_CALLS: usize = 40;
const REPLAYS: usize = 5;

/// µs per call of `run`, DRAM-cold: `GRAPH_CALLS` calls captured in one graph, replayed
/// `REPLAYS` times between two events.
fn batch_us(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    mut run: impl FnMut() -> Result<(), PluginError>,
) -> Result<f64, PluginError> {
    for _ in 0..3 {
        run()?;
    }
    stream.synchronize().map_err(cuda_error)?;
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(cuda_error)?;
    let captured = (0..GRAPH_CALLS).try_for_each(|_| run());
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(cuda_error)?;
    captured?;
    let graph = graph.ok_or_else(|| PluginError::other("empty graph"))?;
    graph.launch().map_err(cuda_error)?;
    stream.synchronize().map_err(cuda_error)?;
    let ev = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda_error)
    };
    let (start, end) = (ev()?, ev()?);
    start.record(stream).map_err(cuda_error)?;
    for _ in 0..REPLAYS {
        graph.launch().map_err(cuda_error)?;
    }
    end.record(stream).map_err(cuda_error)?;
    stream.synchronize().map_err(cuda_error)?;
    let ms = f64::from(start.elapsed_ms(&end).map_err(cuda_error)?);
    Ok(ms * 1e3 / (GRAPH_CALLS * REPLAYS) as f64)
}

const COPY_SRC: &str = r#"
extern "C" __global__ void copy4(const uint4* __restrict__ a, uint4* __restrict__ b, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}
"#;

/// The float4 copy kernel, loaded once, and its launch shape (8 blocks of 256 a SM).
struct CopyKernel {
    f: CudaFunction,
    cfg: LaunchConfig,
}

impl CopyKernel {
    fn load(ctx: &Arc<CudaContext>, arch: &'static str) -> Result<Self, PluginError> {
        let ptx = compile_ptx("copy4", COPY_SRC, arch)?;
        let module = ctx.load_module(ptx).map_err(cuda_error)?;
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(cuda_error)? as u32;
        Ok(Self {
            f: module.load_function("copy4").map_err(cuda_error)?,
            cfg: LaunchConfig {
                grid_dim: (sms * 8, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
        })
    }

    /// µs per call over `sets` pairs of `bytes`-byte buffers (a multiple of 16), walked
    /// round-robin and timed like the ops.
    fn us(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: usize,
        sets: usize,
    ) -> Result<f64, PluginError> {
        let n = (bytes / 16) as u64;
        let buffers = (0..sets)
            .map(|_| {
                let a = stream.alloc_zeros::<u8>(bytes).map_err(cuda_error)?;
                let b = stream.alloc_zeros::<u8>(bytes).map_err(cuda_error)?;
                Ok((a, b))
            })
            .collect::<Result<Vec<_>, PluginError>>()?;
        let mut next = 0;
        batch_us(ctx, stream, || {
            let (a, b) = &buffers[next];
            next = (next + 1) % buffers.len();
            let mut l = stream.launch_builder(&self.f);
            l.arg(a).arg(b).arg(&n);
            // SAFETY: copy4(a, b, n) over two buffers of n uint4.
            unsafe { l.launch(self.cfg) }.map(drop).map_err(cuda_error)
        })
    }

    /// GB/s over 1 GiB (two 1 GiB buffers: DRAM to DRAM): the bench's copy line.
    fn line_gbps(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
    ) -> Result<f64, PluginError> {
        let us = self.us(ctx, stream, 1 << 30, 1)?;
        Ok(2.0 * (1u64 << 30) as f64 / us / 1e3)
    }

    /// The same-size copy's µs for an op that reads as many bytes as it writes (within 5 %): a
    /// copy of its written bytes over as many buffer sets, the time any kernel moving those bytes
    /// in one launch pays, ramp and tail included. `None` for ops whose traffic is not a copy's
    /// shape.
    fn same_size_us(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        (read, written): (u64, u64),
        sets: usize,
    ) -> Option<Result<f64, PluginError>> {
        let (r, w) = (read as f64, written as f64);
        ((r - w).abs() <= 0.05 * (r + w)).then(|| {
            let bytes = (written as usize).div_ceil(16) * 16;
            self.us(ctx, stream, bytes, sets)
        })
    }
}

/// Benches the profiles whose "name precision params" line contains `only` (all without it);
/// prints a line each and returns how many failed.
#[expect(clippy::print_stdout, reason = "a command-line example")]
pub fn run(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    handles: CudaHandles,
    only: Option<&str>,
    l2_hot: bool,
) -> usize {
    let arch: &'static str = Box::leak(
        format!(
            "sm_{}{}",
            handles.compute_capability_major, handles.compute_capability_minor
        )
        .into_boxed_str(),
    );
    let l2 = ctx
        .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .unwrap_or(50 << 20) as f64;
    let copy_kernel = match CopyKernel::load(ctx, arch) {
        Ok(k) => k,
        Err(e) => {
            println!("bench copy: error {e}");
            return 1;
        }
    };
    let copy = match copy_kernel.line_gbps(ctx, stream) {
        Ok(g) => g,
        Err(e) => {
            println!("bench copy: error {e}");
            return 1;
        }
    };
    println!(
        "bench copy line (float4 kernel, 1 GiB, graph): {copy:.0} GB/s; L2 {:.0} MiB; {}",
        l2 / 1048576.0,
        if l2_hot {
            "L2-hot: one buffer set"
        } else {
            "DRAM-cold: buffer sets over 3 x L2"
        }
    );
    println!(
        "{:<20} {:<5} {:<36} {:>5} {:>10} {:>8} {:>6} {:>10}  verify",
        "op", "prec", "params", "sets", "us/call", "GB/s", "%copy", "%copy@size"
    );
    let sync = || stream.synchronize().map_err(cuda_error);
    let mut failures = 0;
    for (name, kernel, overrides, precision, variant) in profiles() {
        let shown = format!("{}{}", describe(&overrides), variant.suffix());
        let line = format!("{name} {precision} {shown}");
        if only.is_some_and(|t| !line.contains(t)) {
            continue;
        }
        let tol = kernel.descriptor().tolerance_for(precision);
        let p = params(kernel.as_ref(), &overrides);
        let result = variant
            .apply(|| kernel.setup(&request(p, Backend::Cuda, precision, 5, Some(handles))))
            .and_then(|mut inst| {
                let acc = check(inst.as_mut(), 6, &tol, &sync)?;
                let work = inst.work();
                let bytes = (work.bytes_read + work.bytes_written) as f64;
                let want = if l2_hot {
                    1
                } else {
                    (3.0 * l2 / bytes).ceil().clamp(4.0, 16.0) as u32
                };
                let sets = inst.rotate(want)?;
                let us = batch_us(ctx, stream, || inst.run())?;
                let traffic = (work.bytes_read, work.bytes_written);
                let same = copy_kernel
                    .same_size_us(ctx, stream, traffic, sets as usize)
                    .transpose()?;
                Ok((acc, bytes, sets, us, same))
            });
        match result {
            Ok((acc, bytes, sets, us, same)) => {
                let ok = acc.within(&tol);
                failures += usize::from(!ok);
                let gbps = bytes / us / 1e3;
                let at_size = same.map_or("-".to_string(), |c| format!("{:.1}", 100.0 * c / us));
                println!(
                    "{name:<20} {precision:<5} {shown:<36} {sets:>5} {us:>10.2} {gbps:>8.0} {:>6.1} {at_size:>10}  {}",
                    100.0 * gbps / copy,
                    if ok {
                        "PASS".to_string()
                    } else {
                        format!("FAIL {acc:?}")
                    }
                );
            }
            Err(e) => {
                failures += 1;
                println!("{name:<20} {precision:<5} {shown:<36} error: {e}");
            }
        }
    }
    failures
}
