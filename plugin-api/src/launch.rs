//! Kernel launches with the driver's launch attributes, which cudarc's `LaunchArgs::launch` has
//! no place for: [`LaunchEx`] calls `cuLaunchKernelEx` (through cudarc's sys bindings) with
//!
//! - a thread-block cluster dimension and scheduling policy ([`LaunchEx::cluster`]): the cluster
//!   size is then a launch argument, so one entry point serves every size;
//! - programmatic dependent launch ([`LaunchEx::dependent`]): the kernel may start while the
//!   stream's previous kernel drains, and must itself wait (`griddepcontrol.wait`) before it
//!   touches memory that kernel could still be using.
//!
//! A plugin's context runs without cudarc's per-buffer event tracking (`CudaSession::attach`
//! turns it off), so taking a buffer's raw device pointer records nothing and these launches are
//! as capturable in a CUDA graph as plain ones.

use std::ffi::c_void;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    sys::{
        CUclusterSchedulingPolicy, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue,
        CUlaunchAttributeValue_union__bindgen_ty_1, CUlaunchConfig, cuLaunchKernelEx,
        cuOccupancyMaxActiveClusters,
    },
};

/// How the driver places a launch's clusters on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterPolicy {
    /// The driver's default (spread over the GPCs).
    Default,
    /// Load balancing: fills SMs more evenly (H100: a cluster kernel whose CTAs wait on their
    /// slowest sibling ran 2 % faster, `plugins/ff_model`).
    LoadBalancing,
}

/// One kernel's arguments and launch attributes. Each argument is kept as its bytes in an 8-byte
/// slot (pointers, `int`s and `float`s): the driver reads each parameter's size from its slot's
/// address.
pub struct LaunchEx<'a> {
    stream: &'a CudaStream,
    func: &'a CudaFunction,
    slots: Vec<[u8; 8]>,
    attributes: Vec<CUlaunchAttribute>,
    /// The cluster width set by [`LaunchEx::cluster`] (1: no clusters).
    cluster_x: u32,
}

impl<'a> LaunchEx<'a> {
    pub fn new(stream: &'a CudaStream, func: &'a CudaFunction) -> Self {
        Self {
            stream,
            func,
            slots: Vec::with_capacity(16),
            attributes: Vec::with_capacity(3),
            cluster_x: 1,
        }
    }

    /// A device buffer's address.
    pub fn ptr<T>(&mut self, buffer: &CudaSlice<T>) -> &mut Self {
        self.ptr_at(buffer, 0)
    }

    /// The address of element `offset` of a device buffer: where a sub-range of it starts (a
    /// launch over some of the batch entries). Panics where `offset` lies past the buffer's end.
    pub fn ptr_at<T>(&mut self, buffer: &CudaSlice<T>, offset: usize) -> &mut Self {
        assert!(
            offset <= buffer.len(),
            "ptr_at: element {offset} of a {}-element buffer",
            buffer.len()
        );
        let (address, _no_event) = buffer.device_ptr(self.stream);
        let bytes = (offset * std::mem::size_of::<T>()) as u64;
        self.slots.push((address + bytes).to_ne_bytes());
        self
    }

    /// A null pointer (an output the kernel skips).
    pub fn null(&mut self) -> &mut Self {
        self.slots.push(0u64.to_ne_bytes());
        self
    }

    /// An `int`, in the first four bytes of its slot.
    pub fn int(&mut self, value: i32) -> &mut Self {
        self.push4(value.to_ne_bytes())
    }

    /// A `float`, in the first four bytes of its slot.
    pub fn float(&mut self, value: f32) -> &mut Self {
        self.push4(value.to_ne_bytes())
    }

    fn push4(&mut self, bytes: [u8; 4]) -> &mut Self {
        let mut slot = [0u8; 8];
        slot[..4].copy_from_slice(&bytes);
        self.slots.push(slot);
        self
    }

    /// Clusters of `x` CTAs along x (the grid's x a multiple of it), placed by `policy`.
    pub fn cluster(&mut self, x: u32, policy: ClusterPolicy) -> &mut Self {
        self.cluster_x = x;
        let mut value = CUlaunchAttributeValue { pad: [0; 64] };
        value.clusterDim = CUlaunchAttributeValue_union__bindgen_ty_1 { x, y: 1, z: 1 };
        self.attribute(
            CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            value,
        );
        if policy == ClusterPolicy::LoadBalancing {
            let mut value = CUlaunchAttributeValue { pad: [0; 64] };
            value.clusterSchedulingPolicyPreference =
                CUclusterSchedulingPolicy::CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING;
            self.attribute(
                CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                value,
            );
        }
        self
    }

    /// Programmatic dependent launch: the kernel's CTAs may be scheduled as soon as every CTA
    /// of the stream's previous kernel has started (or signalled `griddepcontrol.
    /// launch_dependents`), instead of after that kernel has finished. The kernel must run
    /// `griddepcontrol.wait` before its first access to memory the previous kernel may read or
    /// write; that wait returns once the previous kernel has completed and its writes are
    /// visible. Where the previous work is not a kernel (a copy, an event) it is a plain launch.
    pub fn dependent(&mut self) -> &mut Self {
        let mut value = CUlaunchAttributeValue { pad: [0; 64] };
        value.programmaticStreamSerializationAllowed = 1;
        self.attribute(
            CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            value,
        )
    }

    fn attribute(&mut self, id: CUlaunchAttributeID, value: CUlaunchAttributeValue) -> &mut Self {
        self.attributes.push(CUlaunchAttribute {
            id,
            pad: [0; 4],
            value,
        });
        self
    }

    fn config(&mut self, cfg: LaunchConfig) -> CUlaunchConfig {
        CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: self.attributes.as_mut_ptr(),
            numAttrs: self.attributes.len() as u32,
        }
    }

    /// Enqueues the kernel on the stream with `cfg` and the attributes set so far.
    ///
    /// # Safety
    /// The arguments match the entry point's parameters in order and type, every buffer holds
    /// what the kernel indexes (as for cudarc's `LaunchArgs::launch`), and a
    /// [`dependent`](Self::dependent) kernel waits before its first dependent memory access.
    pub unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<(), DriverError> {
        self.stream.context().bind_to_thread()?;
        let config = self.config(cfg);
        let mut params: Vec<*mut c_void> = self
            .slots
            .iter_mut()
            .map(|slot| slot.as_mut_ptr().cast())
            .collect();
        // SAFETY: `config`, the attributes it points to and every slot outlive the call (the
        // driver copies the parameters before it returns); the caller vouches for the arguments.
        unsafe {
            cuLaunchKernelEx(
                &config,
                self.func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
    }

    /// How many clusters of this launch's cluster attributes (blocks of `block` threads, `smem`
    /// bytes of dynamic shared memory, opted in beforehand where past 48 KiB) the device runs at
    /// once: one wave of the kernel (the driver counts registers, shared memory and the GPCs'
    /// cluster slots). The arguments are not needed.
    pub fn max_active_clusters(&mut self, block: u32, smem: u32) -> Result<usize, DriverError> {
        self.stream.context().bind_to_thread()?;
        let config = self.config(LaunchConfig {
            grid_dim: (self.cluster_x, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: smem,
        });
        let mut clusters: std::ffi::c_int = 0;
        // SAFETY: `config` and its attributes outlive the call; the driver only reads them and
        // writes the count.
        unsafe { cuOccupancyMaxActiveClusters(&mut clusters, self.func.cu_function(), &config) }
            .result()?;
        Ok(usize::try_from(clusters).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::{StandaloneGpu, compile_ptx, nvrtc_for_test};

    const SOURCE: &str = r#"
extern "C" __global__ void step(unsigned int* x, int add, float f) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        x[0] = x[0] * 3u + (unsigned int)add;
        x[1] = __float_as_uint(f);
    }
}
extern "C" __global__ void ranks(unsigned int* out) {
    unsigned int n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    if (threadIdx.x == 0) out[blockIdx.x] = n;
}
"#;

    /// A chain of dependent launches, each reading what the previous one wrote, gives the
    /// sequential result (each waits for its predecessor's writes); int and float arguments
    /// arrive intact; a cluster launch runs clusters of the asked size.
    #[test]
    #[expect(
        clippy::print_stderr,
        reason = "a skipped GPU test must say so, not pass silently"
    )]
    fn dependent_launches_keep_their_order_and_clusters_have_the_asked_size() {
        if !nvrtc_for_test() {
            return;
        }
        let Some(gpu) = StandaloneGpu::for_test() else {
            return;
        };
        if gpu.handles.compute_capability_major < 9 {
            eprintln!("skipped: griddepcontrol and clusters need sm_90");
            return;
        }
        let ptx = compile_ptx("launch_test", SOURCE, "sm_90").unwrap();
        let module = gpu.ctx.load_module(ptx).unwrap();
        let (step, ranks) = (
            module.load_function("step").unwrap(),
            module.load_function("ranks").unwrap(),
        );
        let stream = &gpu.stream;
        let x = stream.alloc_zeros::<u32>(2).unwrap();
        let mut expected = 0u32;
        for i in 0..64 {
            // 264 blocks: the next launch's blocks are scheduled while these finish.
            let cfg = LaunchConfig {
                grid_dim: (264, 1, 1),
                block_dim: (128, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = LaunchEx::new(stream, &step);
            launch.ptr(&x).int(i).float(0.5).dependent();
            // SAFETY: `step(unsigned int*, int, float)`; x holds two words.
            unsafe { launch.launch(cfg) }.unwrap();
            expected = expected.wrapping_mul(3).wrapping_add(i as u32);
        }
        let got = stream.clone_dtoh(&x).unwrap();
        assert_eq!(got, vec![expected, 0.5f32.to_bits()]);

        let out = stream.alloc_zeros::<u32>(8).unwrap();
        let mut launch = LaunchEx::new(stream, &ranks);
        launch.ptr(&out).cluster(4, ClusterPolicy::LoadBalancing);
        assert!(launch.max_active_clusters(32, 0).unwrap() > 0);
        let cfg = LaunchConfig {
            grid_dim: (8, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `ranks(unsigned int*)`; out holds a word per block.
        unsafe { launch.launch(cfg) }.unwrap();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![4u32; 8]);

        // ptr_at: four clusters of two from element 4 on leave the first four words alone.
        let out = stream.alloc_zeros::<u32>(8).unwrap();
        let mut launch = LaunchEx::new(stream, &ranks);
        launch.ptr_at(&out, 4).cluster(2, ClusterPolicy::Default);
        let cfg = LaunchConfig {
            grid_dim: (4, 1, 1),
            ..cfg
        };
        // SAFETY: as above; elements 4..8 are a word per block.
        unsafe { launch.launch(cfg) }.unwrap();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), [0, 0, 0, 0, 2, 2, 2, 2]);
        let past = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            LaunchEx::new(stream, &ranks).ptr_at(&out, 9);
        }));
        assert!(past.is_err(), "an offset past the end must panic");
    }
}
