//! The terminal table of `apex-host calibrate`: a header naming the device and its software, one
//! line per (mode, kernel, duration) with the error against the known duration and its target,
//! and the copy bandwidth that becomes 100 % of `% of peak`.

use std::fmt::Write as _;

use crate::cuda::calibrate::{CalibrationReport, CalibrationRow};

/// Renders the calibration table (ends with a newline).
pub fn render_calibration(report: &CalibrationReport) -> String {
    let d = &report.device;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "apex-host calibrate: {} (sm_{}, {} SMs, L2 {} MiB), driver {}, CUDA {}, NVRTC {}",
        d.name,
        d.compute_capability.replace('.', ""),
        d.sm_count,
        d.l2_bytes >> 20,
        d.driver_version.as_deref().unwrap_or("n/a"),
        d.cuda_driver_api,
        d.nvrtc_version.as_deref().unwrap_or("n/a"),
    );
    let g = &report.globaltimer;
    let _ = writeln!(
        out,
        "%globaltimer advances every {:.0} ns on average (smallest step {} ns); {} samples per row",
        g.mean_step_ns, g.min_step_ns, report.samples
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<6} {:<9} {:>9} {:>12} {:>9} {:>8} {:>7}  {:>6}  graph",
        "mode", "kernel", "true µs", "measured µs", "error %", "target", "verdict", "calls"
    );
    for row in &report.rows {
        let _ = writeln!(out, "{}", row_line(row));
    }
    let c = &report.copy;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "copy bandwidth: {:.0} GB/s best, {:.0} GB/s median of {} device-to-device copies of {} MiB \
         (read + write counted: {} MiB per copy); {:.0}% of the {:.0} GB/s data-sheet peak",
        c.best_gbps,
        c.median_gbps,
        c.repetitions,
        c.buffer_bytes >> 20,
        c.counted_bytes >> 20,
        c.of_theoretical_pct,
        d.theoretical_peak_bw_gbps,
    );
    let kernel = match (c.kernel_best_gbps, &c.kernel_variant) {
        (Some(k), Some(v)) => format!("{k:.0} GB/s, best variant {v}"),
        (Some(k), None) => format!("{k:.0} GB/s"),
        _ => "not run (no NVRTC)".to_string(),
    };
    let _ = writeln!(
        out,
        "  cuMemcpy (PyTorch's copy_): {:.0} GB/s; the 16-byte copy kernel: {kernel}; the line is the faster.",
        c.memcpy_best_gbps
    );
    let fmt =
        |v: Option<f64>| v.map_or_else(|| "not run (no NVRTC)".into(), |v| format!("{v:.0} GB/s"));
    let _ = writeln!(
        out,
        "  the add line (2 reads : 1 write): {}; the read line (reads only): {}.",
        fmt(c.add_line_gbps),
        fmt(c.read_line_gbps)
    );
    let _ = writeln!(
        out,
        "`% of peak` in every report is measured against {:.0} GB/s (DRAM-cold figures only) for a \
         case that reads no more than it writes, and against the line of its read:write mix for a \
         read-heavier one (between the copy, add and read lines).",
        c.best_gbps
    );
    let _ = writeln!(
        out,
        "L2 line: {:.0} GB/s (the copy kernel looping over an L2-resident buffer); `l2_hot` batch figures are put against it.",
        report.l2_line_gbps
    );
    let _ = writeln!(
        out,
        "cold launch floor: {:.2} µs (an empty kernel timed like a cold call; subtracted from every cold sample).",
        report.launch_floor_us
    );
    if let Some(reason) = report.rows.iter().find_map(|r| r.graph_fallback.as_deref()) {
        let _ = writeln!(
            out,
            "note: graph replay fell back to plain launches: {reason}"
        );
    }
    out
}

fn row_line(row: &CalibrationRow) -> String {
    let (target, verdict) = match (row.target_pct, row.within_target) {
        (Some(t), Some(ok)) => (format!("±{t}%"), if ok { "ok" } else { "MISS" }.to_string()),
        _ if row.kernel == "isolated" => (
            "-".to_string(),
            format!("gap {:.2} µs", row.launch_gap_us()),
        ),
        _ => ("-".to_string(), "-".to_string()),
    };
    format!(
        "{:<6} {:<9} {:>9.3} {:>12.3} {:>+9.2} {:>8} {:>7}  {:>6}  {}",
        row.mode,
        row.kernel,
        row.true_us,
        row.measured_us,
        row.error_pct,
        target,
        verdict,
        row.calls_per_sample,
        if row.used_graph { "yes" } else { "no" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::calibrate::CopyBandwidth;
    use crate::cuda::{DeviceInfo, TimerResolution};

    fn report() -> CalibrationReport {
        CalibrationReport {
            device: DeviceInfo {
                ordinal: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                uuid: "GPU-0".into(),
                compute_capability: "9.0".into(),
                sm_count: 132,
                memory_total_bytes: 80 << 30,
                l2_bytes: 50 << 20,
                sm_clock_max_mhz: 1980,
                memory_clock_mhz: 2619,
                memory_bus_width_bits: 5120,
                theoretical_peak_bw_gbps: 3352.3,
                driver_version: Some("580.159.04".into()),
                cuda_driver_api: "13.0".into(),
                libcuda: None,
                nvrtc_version: Some("13.0".into()),
                libnvrtc: None,
                nvrtc_unavailable: None,
            },
            globaltimer: TimerResolution {
                min_step_ns: 32,
                mean_step_ns: 32.0,
            },
            rows: vec![
                CalibrationRow::from_samples("batch", "paced", 1.0, &[1.05e-6], 1000, true),
                CalibrationRow::from_samples("batch", "isolated", 1.0, &[1.68e-6], 1000, true),
                CalibrationRow::from_samples("cold", "paced", 100.0, &[107e-6], 1, false),
            ],
            copy: CopyBandwidth {
                buffer_bytes: 1 << 30,
                counted_bytes: 2 << 30,
                repetitions: 20,
                best_gbps: 3001.6,
                median_gbps: 2990.0,
                memcpy_best_gbps: 3001.6,
                kernel_best_gbps: Some(2950.0),
                kernel_variant: Some("default hints, 8 blocks of 256/SM".into()),
                add_line_gbps: Some(3100.0),
                read_line_gbps: Some(3200.0),
                of_theoretical_pct: 89.5,
            },
            l2_line_gbps: 9000.0,
            launch_floor_us: 3.1,
            samples: 30,
        }
    }

    #[test]
    fn the_table_shows_errors_verdicts_gaps_and_the_copy_peak() {
        let text = render_calibration(&report());
        assert!(text.starts_with("apex-host calibrate: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, L2 50 MiB), driver 580.159.04"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let paced = lines
            .iter()
            .find(|l| l.starts_with("batch  paced"))
            .unwrap();
        assert!(
            paced.contains("+5.00") && paced.contains("±5%") && paced.contains(" ok "),
            "{paced}"
        );
        let iso = lines
            .iter()
            .find(|l| l.starts_with("batch  isolated"))
            .unwrap();
        assert!(iso.contains("gap 0.68 µs"), "{iso}");
        let cold = lines.iter().find(|l| l.starts_with("cold")).unwrap();
        assert!(cold.contains("MISS"), "{cold}");
        assert!(text.contains("copy bandwidth: 3002 GB/s best"), "{text}");
        assert!(text.contains("measured against 3002 GB/s"), "{text}");
        assert!(
            text.contains("the add line (2 reads : 1 write): 3100 GB/s; the read line (reads only): 3200 GB/s."),
            "{text}"
        );
        assert!(
            text.contains("cuMemcpy (PyTorch's copy_): 3002 GB/s; the 16-byte copy kernel: 2950 GB/s, best variant default hints, 8 blocks of 256/SM"),
            "{text}"
        );
    }
}
