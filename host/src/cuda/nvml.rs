//! [`Monitor`]: energy, power, SM clock and throttling of the measured GPU through NVML, matched to
//! the CUDA device by UUID (NVML's device order can differ from CUDA's). The energy counter
//! (`nvmlDeviceGetTotalEnergyConsumption`, mJ since driver load) updates coarsely: a 5 ms window
//! read 0 mJ on the H200, so energy is only reported over windows of at least
//! [`MIN_ENERGY_WINDOW_S`]; shorter windows give `energy_unavailable` with the reason. A sampler
//! thread reads power, SM clock and throttle reasons every [`TICK`] during a window.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::Clock;

use crate::measure::{MeasureError, Timer, Workload};
use crate::model::EnergyBlock;

/// The shortest window over which the energy counter is read.
pub const MIN_ENERGY_WINDOW_S: f64 = 1.0;

/// How often the sampler thread reads power, clock and throttle reasons.
pub const TICK: Duration = Duration::from_millis(50);

/// NVML access to one GPU.
pub struct Monitor {
    nvml: Arc<Nvml>,
    uuid: String,
}

/// One reading of the sampler thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    pub power_mw: Option<u32>,
    pub sm_clock_mhz: Option<u32>,
    pub reasons: Option<ThrottleReasons>,
}

impl Monitor {
    /// Opens NVML and finds the GPU whose UUID is `uuid` (`GPU-…`, as `DeviceInfo::uuid`).
    /// `Err` is a reason string for `energy_unavailable` (`nvml_unavailable: …`).
    pub fn open(uuid: &str) -> Result<Self, String> {
        let nvml = Nvml::init().map_err(|e| format!("nvml_unavailable: {e}"))?;
        nvml.device_by_uuid(uuid)
            .map_err(|e| format!("nvml_unavailable: no NVML device has UUID {uuid}: {e}"))?;
        Ok(Self {
            nvml: Arc::new(nvml),
            uuid: uuid.to_string(),
        })
    }

    /// Reads power, SM clock and throttle reasons now.
    pub fn tick(&self) -> Tick {
        read_tick(&self.nvml, &self.uuid)
    }

    /// Whether the GPU is throttled now (for flagging a timing sample just taken).
    pub fn throttled_now(&self) -> bool {
        self.tick().reasons.is_some_and(is_throttling)
    }

    /// Starts a window: reads the energy counter and starts the sampler thread.
    pub fn start(&self) -> EnergyWindow {
        let energy_start = self.energy_mj();
        let stop = Arc::new(AtomicBool::new(false));
        let ticks = Arc::new(Mutex::new(vec![self.tick()]));
        let sampler = {
            let (nvml, uuid, stop, ticks) = (
                self.nvml.clone(),
                self.uuid.clone(),
                stop.clone(),
                ticks.clone(),
            );
            std::thread::Builder::new()
                .name("apex-nvml-sampler".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(TICK);
                        let t = read_tick(&nvml, &uuid);
                        ticks
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(t);
                    }
                })
                .ok()
        };
        EnergyWindow {
            monitor_nvml: self.nvml.clone(),
            uuid: self.uuid.clone(),
            energy_start,
            started: Instant::now(),
            stop,
            ticks,
            sampler,
        }
    }

    /// Runs batch samples of `calls_per_sample` calls with `timer` until at least `min_s`
    /// (at least [`MIN_ENERGY_WINDOW_S`]) has passed, and returns the energy block of that window.
    /// Call after the timing samples, so the extra launches never mix with them.
    pub fn energy_window(
        &self,
        timer: &mut dyn Timer,
        work: &mut dyn Workload,
        calls_per_sample: u64,
        min_s: f64,
    ) -> Result<EnergyBlock, MeasureError> {
        let min_s = min_s.max(MIN_ENERGY_WINDOW_S);
        let calls_per_sample = calls_per_sample.max(1);
        let window = self.start();
        let mut calls = 0u64;
        while window.elapsed_s() < min_s {
            timer.sample(work, calls_per_sample)?;
            calls += calls_per_sample;
        }
        Ok(window.stop(calls))
    }

    fn energy_mj(&self) -> Result<u64, String> {
        self.nvml
            .device_by_uuid(self.uuid.as_str())
            .and_then(|d| d.total_energy_consumption())
            .map_err(|e| format!("the NVML energy counter cannot be read: {e}"))
    }
}

/// A window in progress (see [`Monitor::start`]).
pub struct EnergyWindow {
    monitor_nvml: Arc<Nvml>,
    uuid: String,
    energy_start: Result<u64, String>,
    started: Instant,
    stop: Arc<AtomicBool>,
    ticks: Arc<Mutex<Vec<Tick>>>,
    sampler: Option<std::thread::JoinHandle<()>>,
}

impl EnergyWindow {
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Ends the window, in which `calls` calls completed (the caller synchronized).
    pub fn stop(mut self, calls: u64) -> EnergyBlock {
        let window_s = self.elapsed_s();
        let energy_end = self
            .monitor_nvml
            .device_by_uuid(self.uuid.as_str())
            .and_then(|d| d.total_energy_consumption())
            .map_err(|e| format!("the NVML energy counter cannot be read: {e}"));
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.sampler.take() {
            let _ = h.join();
        }
        let mut ticks = std::mem::take(
            &mut *self
                .ticks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        ticks.push(read_tick(&self.monitor_nvml, &self.uuid));
        let delta = match (&self.energy_start, energy_end) {
            (Ok(a), Ok(b)) => Ok(b.saturating_sub(*a)),
            (Err(e), _) => Err(e.clone()),
            (_, Err(e)) => Err(e),
        };
        energy_block(delta, window_s, calls, &ticks)
    }
}

impl Drop for EnergyWindow {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn read_tick(nvml: &Nvml, uuid: &str) -> Tick {
    match nvml.device_by_uuid(uuid) {
        Ok(d) => Tick {
            power_mw: d.power_usage().ok(),
            sm_clock_mhz: d.clock_info(Clock::SM).ok(),
            reasons: d.current_throttle_reasons().ok(),
        },
        Err(_) => Tick {
            power_mw: None,
            sm_clock_mhz: None,
            reasons: None,
        },
    }
}

/// The reasons that lower clocks under load. `GPU_IDLE` (nothing running), the application and
/// display clock settings (configuration, not a reaction) and `NONE` do not count.
fn throttling_mask() -> ThrottleReasons {
    ThrottleReasons::SW_POWER_CAP
        | ThrottleReasons::HW_SLOWDOWN
        | ThrottleReasons::SYNC_BOOST
        | ThrottleReasons::SW_THERMAL_SLOWDOWN
        | ThrottleReasons::HW_THERMAL_SLOWDOWN
        | ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN
}

/// Whether `reasons` contains a reason that lowers clocks under load.
pub fn is_throttling(reasons: ThrottleReasons) -> bool {
    reasons.intersects(throttling_mask())
}

/// Snake-case names of every reason set in `reasons` (`sw_power_cap`, `hw_thermal_slowdown`, …).
pub fn reason_names(reasons: ThrottleReasons) -> Vec<String> {
    const NAMES: [(ThrottleReasons, &str); 9] = [
        (ThrottleReasons::GPU_IDLE, "gpu_idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks_setting",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal_slowdown"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal_slowdown"),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            "hw_power_brake_slowdown",
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            "display_clock_setting",
        ),
    ];
    NAMES
        .iter()
        .filter(|(flag, _)| reasons.contains(*flag))
        .map(|(_, name)| (*name).to_string())
        .collect()
}

/// The energy block of a window: energy per call when the window is long enough and the counter
/// moved, mean power (from the counter, else from the power readings), the median SM clock, the
/// throttle reasons seen while throttling, and how many readings were throttled.
pub fn energy_block(
    energy_delta_mj: Result<u64, String>,
    window_s: f64,
    calls: u64,
    ticks: &[Tick],
) -> EnergyBlock {
    let mut block = EnergyBlock::default();
    match energy_delta_mj {
        Err(reason) => block.energy_unavailable = Some(reason),
        Ok(_) if window_s < MIN_ENERGY_WINDOW_S => {
            // Too short for the counter: the power readings taken inside the window (not the
            // one at its start) times the window, when there are any.
            let inside: Vec<f64> = ticks
                .iter()
                .skip(1)
                .filter_map(|t| t.power_mw)
                .map(|p| f64::from(p) / 1e3)
                .collect();
            if inside.is_empty() || calls == 0 {
                block.energy_unavailable = Some(format!(
                    "the window of {window_s:.3} s is shorter than the {MIN_ENERGY_WINDOW_S} s the NVML energy counter needs, and held no power reading"
                ));
            } else {
                let watts = inside.iter().sum::<f64>() / inside.len() as f64;
                block.mean_power_w = Some(watts);
                block.energy_per_call_mj = Some(watts * window_s * 1e3 / calls as f64);
                block.energy_method = Some("power_readings".into());
            }
        }
        Ok(0) => {
            block.energy_unavailable = Some(format!(
                "the NVML energy counter did not move in {window_s:.3} s"
            ));
        }
        Ok(_) if calls == 0 => {
            block.energy_unavailable = Some("no calls completed in the window".to_string());
        }
        Ok(mj) => {
            block.energy_per_call_mj = Some(mj as f64 / calls as f64);
            block.energy_method = Some("energy_counter".into());
            block.mean_power_w = Some(mj as f64 / 1e3 / window_s);
        }
    }
    if block.mean_power_w.is_none() {
        let powers: Vec<f64> = ticks
            .iter()
            .filter_map(|t| t.power_mw)
            .map(|p| f64::from(p) / 1e3)
            .collect();
        if !powers.is_empty() {
            block.mean_power_w = Some(powers.iter().sum::<f64>() / powers.len() as f64);
        }
    }
    let mut clocks: Vec<u32> = ticks.iter().filter_map(|t| t.sm_clock_mhz).collect();
    clocks.sort_unstable();
    block.sm_clock_mhz = clocks.get(clocks.len() / 2).copied();
    let mut seen = ThrottleReasons::empty();
    for r in ticks
        .iter()
        .filter_map(|t| t.reasons)
        .filter(|r| is_throttling(*r))
    {
        seen |= r & throttling_mask();
        block.throttled_samples += 1;
    }
    block.throttle_reasons = reason_names(seen);
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(mw: u32, mhz: u32, reasons: ThrottleReasons) -> Tick {
        Tick {
            power_mw: Some(mw),
            sm_clock_mhz: Some(mhz),
            reasons: Some(reasons),
        }
    }

    #[test]
    fn reasons_are_named_and_only_load_reactions_count_as_throttling() {
        let r = ThrottleReasons::SW_POWER_CAP | ThrottleReasons::HW_THERMAL_SLOWDOWN;
        assert_eq!(reason_names(r), ["sw_power_cap", "hw_thermal_slowdown"]);
        assert!(is_throttling(r));
        assert!(!is_throttling(ThrottleReasons::GPU_IDLE));
        assert!(!is_throttling(ThrottleReasons::APPLICATIONS_CLOCKS_SETTING));
        assert!(!is_throttling(ThrottleReasons::empty()));
        assert!(reason_names(ThrottleReasons::empty()).is_empty());
    }

    #[test]
    fn energy_needs_a_long_enough_window_and_a_moving_counter() {
        let ticks = [
            tick(450_000, 1980, ThrottleReasons::empty()),
            tick(
                452_000,
                1755,
                ThrottleReasons::SW_POWER_CAP | ThrottleReasons::GPU_IDLE,
            ),
            tick(451_000, 1980, ThrottleReasons::empty()),
        ];
        // cudaprobe's H200 loop: 913845 mJ over 2.02 s and 9000 launches.
        let b = energy_block(Ok(913_845), 2.02, 9000, &ticks);
        assert!((b.energy_per_call_mj.unwrap() - 101.538).abs() < 1e-3);
        assert!((b.mean_power_w.unwrap() - 452.4).abs() < 0.1);
        assert_eq!(b.sm_clock_mhz, Some(1980));
        assert_eq!(b.throttle_reasons, ["sw_power_cap"]);
        assert_eq!(b.throttled_samples, 1);
        assert!(b.energy_unavailable.is_none());

        // Too short for the counter: the readings inside the window (not the first, taken at
        // its start) give the power, and power × window / calls the energy.
        let short = energy_block(Ok(5), 0.1, 10, &ticks);
        assert!(short.energy_unavailable.is_none());
        assert!((short.mean_power_w.unwrap() - 451.5).abs() < 1e-9);
        assert!((short.energy_per_call_mj.unwrap() - 451.5 * 0.1 * 1e3 / 10.0).abs() < 1e-9);
        assert_eq!(short.energy_method.as_deref(), Some("power_readings"));
        assert_eq!(b.energy_method.as_deref(), Some("energy_counter"));
        let no_reading = energy_block(Ok(5), 0.005, 10, &ticks[..1]);
        assert!(no_reading.energy_per_call_mj.is_none());
        assert!(
            no_reading
                .energy_unavailable
                .unwrap()
                .contains("shorter than the 1 s")
        );

        let stuck = energy_block(Ok(0), 1.5, 10, &[]);
        assert!(stuck.energy_unavailable.unwrap().contains("did not move"));
        assert_eq!(stuck.mean_power_w, None);

        let no_nvml = energy_block(Err("nvml_unavailable: x".into()), 3.0, 10, &[]);
        assert_eq!(
            no_nvml.energy_unavailable.as_deref(),
            Some("nvml_unavailable: x")
        );
    }

    #[test]
    fn opening_without_nvml_gives_a_reason_not_a_panic() {
        if let Err(reason) = Monitor::open("GPU-00000000-0000-0000-0000-000000000000") {
            assert!(reason.starts_with("nvml_unavailable: "), "{reason}");
        }
    }
}
