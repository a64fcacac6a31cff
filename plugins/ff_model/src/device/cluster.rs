//! Launches with a thread-block cluster dimension. cudarc's `LaunchArgs::launch` has no cluster
//! dimension, so [`ClusterLaunch`] calls the driver's `cuLaunchKernelEx` with a
//! `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` attribute (through cudarc's sys bindings): the cluster
//! size is then a launch argument, so one entry point serves every tile size. The clusters are
//! scheduled with the load-balancing policy ([`cluster_attributes`]).
//!
//! [`max_active_clusters`] asks the driver how many such clusters the device holds at once.
//!
//! The plugin's context runs without cudarc's per-buffer event tracking (`CudaSession::attach`
//! turns it off), so taking a buffer's raw device pointer records nothing and the launch is as
//! capturable in a CUDA graph as the plain ones.

use std::ffi::c_void;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    sys::{
        CUclusterSchedulingPolicy, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue,
        CUlaunchAttributeValue_union__bindgen_ty_1, CUlaunchConfig, cuLaunchKernelEx,
        cuOccupancyMaxActiveClusters,
    },
};

/// One kernel's arguments for a cluster launch, each kept as its bytes in an 8-byte slot (every
/// argument of the plugin's kernels is a pointer or an `int`): the driver reads each parameter's
/// size from its slot's address.
pub struct ClusterLaunch<'a> {
    stream: &'a CudaStream,
    func: &'a CudaFunction,
    slots: Vec<[u8; 8]>,
}

impl<'a> ClusterLaunch<'a> {
    pub fn new(stream: &'a CudaStream, func: &'a CudaFunction) -> Self {
        Self {
            stream,
            func,
            slots: Vec::with_capacity(16),
        }
    }

    /// A device buffer's address.
    pub fn ptr<T>(&mut self, buffer: &CudaSlice<T>) -> &mut Self {
        let (address, _no_event) = buffer.device_ptr(self.stream);
        self.slots.push(address.to_ne_bytes());
        self
    }

    /// A null pointer (an output the kernel skips).
    pub fn null(&mut self) -> &mut Self {
        self.slots.push(0u64.to_ne_bytes());
        self
    }

    /// An `int`, in the first four bytes of its slot.
    pub fn int(&mut self, value: i32) -> &mut Self {
        let mut slot = [0u8; 8];
        slot[..4].copy_from_slice(&value.to_ne_bytes());
        self.slots.push(slot);
        self
    }

    /// Enqueues the kernel on the stream with `cfg` and clusters of `cluster_x` CTAs along x
    /// (`cfg.grid_dim.0` a multiple of it).
    ///
    /// # Safety
    /// The arguments match the entry point's parameters in order and type, and every buffer
    /// holds what the kernel indexes (as for cudarc's `LaunchArgs::launch`).
    pub unsafe fn launch(&mut self, cfg: LaunchConfig, cluster_x: u32) -> Result<(), DriverError> {
        self.stream.context().bind_to_thread()?;
        let mut attributes = cluster_attributes(cluster_x);
        let config = CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: attributes.as_mut_ptr(),
            numAttrs: attributes.len() as u32,
        };
        let mut params: Vec<*mut c_void> = self
            .slots
            .iter_mut()
            .map(|slot| slot.as_mut_ptr().cast())
            .collect();
        // SAFETY: `config`, `attribute` and every slot outlive the call (the driver copies the
        // parameters before it returns); the caller vouches for the arguments.
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
}

/// The launch attributes of clusters of `cluster_x` CTAs along x, scheduled with the driver's
/// load-balancing policy: against the default (spread) it took the B=8 frame from 229.2 to 224.1
/// µs, the profile unchanged (H100, 2026-11-26, session 12 call 5), where the lean refine's CTAs
/// spent 41 % of their stall samples waiting for the slowest CTA of their cluster.
fn cluster_attributes(cluster_x: u32) -> [CUlaunchAttribute; 2] {
    let mut value = CUlaunchAttributeValue { pad: [0; 64] };
    value.clusterSchedulingPolicyPreference =
        CUclusterSchedulingPolicy::CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING;
    let policy = CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
        pad: [0; 4],
        value,
    };
    [cluster_attribute(cluster_x), policy]
}

/// The launch attribute of clusters of `cluster_x` CTAs along x.
fn cluster_attribute(cluster_x: u32) -> CUlaunchAttribute {
    let mut value = CUlaunchAttributeValue { pad: [0; 64] };
    value.clusterDim = CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: cluster_x,
        y: 1,
        z: 1,
    };
    CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value,
    }
}

/// How many clusters of `cluster_x` CTAs of `func` (blocks of `block` threads, `smem` bytes of
/// dynamic shared memory, opted in beforehand where past 48 KiB) the device runs at once: one
/// wave of the kernel (the driver counts registers, shared memory and the GPCs' cluster slots).
pub fn max_active_clusters(
    stream: &CudaStream,
    func: &CudaFunction,
    cluster_x: u32,
    block: u32,
    smem: u32,
) -> Result<usize, DriverError> {
    stream.context().bind_to_thread()?;
    let mut attributes = cluster_attributes(cluster_x);
    let config = CUlaunchConfig {
        gridDimX: cluster_x,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: smem,
        hStream: stream.cu_stream(),
        attrs: attributes.as_mut_ptr(),
        numAttrs: attributes.len() as u32,
    };
    let mut clusters: std::ffi::c_int = 0;
    // SAFETY: `config` and `attribute` outlive the call; the driver only reads them and writes
    // the count.
    unsafe { cuOccupancyMaxActiveClusters(&mut clusters, func.cu_function(), &config) }.result()?;
    Ok(usize::try_from(clusters).unwrap_or(0))
}
