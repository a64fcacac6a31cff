//! Tests that need a GPU. They return at once where libcuda is absent (so `cargo test` stays
//! green on CPU machines) and check behaviour, never speed, where it is present. The fault test
//! runs its faulting half in a child process: a CUDA fault poisons the whole context, which the
//! other tests in this process share.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::calibrate::{SpinKind, SpinWorkload};
use super::guard::libcuda_present;
use super::nvml::Monitor;
use super::{BatchTimer, ColdTimer, CudaError, Device, PeakMemory, nvrtc};
use crate::measure::{MeasureError, Timer, Workload};

/// Serializes the GPU tests: they share one device, and the memory test reads device-wide counters.
static GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn device() -> Option<(Device, std::sync::MutexGuard<'static, ()>)> {
    if !libcuda_present() {
        return None;
    }
    let guard = GPU
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dev = Device::open(0).expect("a driver is present, so device 0 must open");
    Some((dev, guard))
}

#[test]
fn the_device_reports_its_facts() {
    let Some((dev, _gpu)) = device() else { return };
    let info = dev.info().unwrap();
    assert!(
        info.uuid.starts_with("GPU-") && info.uuid.len() == 40,
        "{}",
        info.uuid
    );
    assert!(info.sm_count > 0 && info.l2_bytes > 0 && info.theoretical_peak_bw_gbps > 0.0);
    assert!(
        info.libcuda.is_some(),
        "libcuda is mapped once the device is open"
    );
    let h = dev.handles();
    assert_ne!(
        h.stream, 0,
        "the measurement stream is not the legacy default stream"
    );
}

#[test]
fn batch_samples_replay_a_graph_of_exactly_n_calls() {
    let Some((dev, _gpu)) = device() else { return };
    let mut timer = BatchTimer::new(&dev, true).unwrap();
    let mut work = SpinWorkload::new(&dev, SpinKind::Paced, 10_000).unwrap();
    for calls in [100u64, 2500] {
        work.reset().unwrap();
        let s = timer.sample(&mut work, calls).unwrap();
        assert!(timer.used_graph(), "{:?}", timer.graph_fallback_reason());
        assert_eq!(work.calls_seen().unwrap(), calls);
        // The paced kernel cannot finish N calls in less than N x 10 µs.
        assert!(s >= calls as f64 * 10e-6, "{s}");
    }
}

/// A workload that synchronizes inside its call, which stream capture forbids.
struct Syncs(Arc<CudaStream>);
impl Workload for Syncs {
    fn call(&mut self) -> Result<(), MeasureError> {
        self.0
            .synchronize()
            .map_err(|e| CudaError::driver("synchronize", e).into())
    }
}

#[test]
fn a_workload_that_cannot_be_captured_falls_back_to_plain_launches() {
    let Some((dev, _gpu)) = device() else { return };
    let mut timer = BatchTimer::new(&dev, true).unwrap();
    let mut work = Syncs(dev.stream().clone());
    timer.sample(&mut work, 3).unwrap();
    assert!(!timer.used_graph());
    assert!(timer.graph_fallback_reason().is_some());
    // The stream left capture mode: ordinary work still runs on it.
    let mut spin = SpinWorkload::new(&dev, SpinKind::Isolated, 1_000).unwrap();
    spin.reset().unwrap();
    timer.sample(&mut spin, 5).unwrap();
    assert_eq!(spin.calls_seen().unwrap(), 5);
}

#[test]
fn a_cold_sample_times_one_call_after_the_flush() {
    let Some((dev, _gpu)) = device() else { return };
    let mut timer = ColdTimer::new(&dev).unwrap();
    assert!(timer.flush_bytes() >= 2 * dev.l2_bytes());
    let mut work = SpinWorkload::new(&dev, SpinKind::Isolated, 50_000).unwrap();
    work.reset().unwrap();
    let s = timer.sample(&mut work, 1).unwrap();
    assert_eq!(work.calls_seen().unwrap(), 1);
    assert!(s >= 50e-6, "{s}");
}

#[test]
fn peak_memory_sees_a_pool_allocation() {
    let Some((dev, _gpu)) = device() else { return };
    let mut peak = PeakMemory::start(&dev).unwrap();
    let buf = dev.stream().alloc_zeros::<u8>(256 << 20).unwrap();
    peak.observe().unwrap();
    drop(buf);
    let mb = peak.finish().unwrap();
    // Another process may use the same GPU, so only a lower bound is exact.
    assert!(mb >= 256.0, "{mb}");
}

#[test]
fn nvml_energy_over_a_one_second_window() {
    let Some((dev, _gpu)) = device() else { return };
    let uuid = dev.info().unwrap().uuid;
    let Ok(monitor) = Monitor::open(&uuid) else {
        return;
    };
    let mut timer = BatchTimer::new(&dev, true).unwrap();
    let mut work = SpinWorkload::new(&dev, SpinKind::Isolated, 100_000).unwrap();
    let block = monitor
        .energy_window(&mut timer, &mut work, 10, 1.0)
        .unwrap();
    assert!(
        block.energy_unavailable.is_none(),
        "{:?}",
        block.energy_unavailable
    );
    assert!(block.energy_per_call_mj.unwrap() > 0.0);
    assert!(block.mean_power_w.unwrap() > 0.0);
    assert!(block.sm_clock_mhz.is_some());
}

const FAULT_CHILD_ENV: &str = "APEX_CUDA_FAULT_CHILD";

struct Fault {
    stream: Arc<CudaStream>,
    f: CudaFunction,
}
impl Workload for Fault {
    fn call(&mut self) -> Result<(), MeasureError> {
        let bogus: u64 = 0x8;
        let mut l = self.stream.launch_builder(&self.f);
        l.arg(&bogus);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: deliberately faulting; this runs only in the child process.
        unsafe { l.launch(cfg) }.map_err(|e| CudaError::driver("launch", e))?;
        Ok(())
    }
}

/// The faulting half; run by [`a_kernel_fault_comes_back_as_the_cuda_error_name`].
#[test]
#[ignore = "runs only as the child of a_kernel_fault_comes_back_as_the_cuda_error_name"]
#[expect(
    clippy::print_stdout,
    reason = "the child reports to its parent on stdout"
)]
fn fault_child() {
    if std::env::var_os(FAULT_CHILD_ENV).is_none() {
        return;
    }
    let (dev, _gpu) = device().unwrap();
    let src = r#"extern "C" __global__ void fault(float* p) { p[threadIdx.x] = 1.0f; }"#;
    let cubin = nvrtc::compile_cubin("fault.cu", src, dev.compute_capability()).unwrap();
    let module = dev.context().load_module(Ptx::from_binary(cubin)).unwrap();
    let mut work = Fault {
        stream: dev.stream().clone(),
        f: module.load_function("fault").unwrap(),
    };
    let mut timer = ColdTimer::new(&dev).unwrap();
    match timer.sample(&mut work, 1) {
        Err(MeasureError::Cuda(m)) => println!("FAULT-RESULT {m}"),
        other => println!("FAULT-RESULT unexpected {other:?}"),
    }
}

#[test]
fn a_kernel_fault_comes_back_as_the_cuda_error_name() {
    if device().is_none() || nvrtc::ensure_loaded().is_err() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "cuda::gpu_tests::fault_child",
            "--ignored",
            "--nocapture",
        ])
        .env(FAULT_CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("FAULT-RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "the child printed no result:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let message = line.split("FAULT-RESULT ").nth(1).unwrap();
    assert!(
        message.starts_with("CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{message}"
    );
}
