//! [`throughput`]: the derived rates of a case at its headline p50, from the work the kernel
//! declares per call (its cost model, not a measurement).
//!
//! Only the rate key of the declared unit is filled (`tiles` → `tiles_per_s`, ...), as Apex-X
//! writes one `<unit>_per_s` per metrics block. Bandwidth counts both directions:
//! `gbps = (bytes_read + bytes_written) / seconds / 1e9`.

use crate::model::{Throughput, WorkBlock};

/// A device's measured DRAM bandwidth lines, by traffic mix (`cuda::calibrate`): the copy line
/// (1 read : 1 write), the add line (2 : 1, STREAM's `add`) and the read line (reads only). DRAM
/// serves reads faster than a mix with writes, so a kernel that reads more than it writes can
/// pass the copy line without breaking any limit; it is put against the line of its own mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthLines {
    pub copy: f64,
    pub add: Option<f64>,
    pub read: Option<f64>,
}

impl BandwidthLines {
    /// The line for a call reading `read` and writing `written` bytes: the copy line at a read
    /// fraction of 1/2 or less, the add line at 2/3, the read line at 1, linear in the read
    /// fraction between two measured points (a missing line: the last one below it holds).
    pub fn for_mix(&self, read: u64, written: u64) -> f64 {
        let total = read as f64 + written as f64;
        let r = if total > 0.0 {
            read as f64 / total
        } else {
            0.5
        };
        let mut points = vec![(0.5, self.copy)];
        points.extend(
            self.add
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(|v| (2.0 / 3.0, v)),
        );
        points.extend(
            self.read
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(|v| (1.0, v)),
        );
        let mut line = self.copy;
        for pair in points.windows(2) {
            let ((r0, v0), (r1, v1)) = (pair[0], pair[1]);
            if r > r0 {
                line = v0 + (v1 - v0) * ((r.min(r1) - r0) / (r1 - r0));
            }
        }
        line
    }
}

/// Rates of one call of `work` taking `p50_ms`, and the share of the device's measured
/// bandwidth line for the call's mix (`lines`, CUDA only) that the call reaches.
///
/// A `p50_ms` that is not a positive finite number yields no rates: the unit key and the
/// percentage stay absent and `gbps`/`tflops` are 0 (Apex-X writes `null` when `p50 <= 0`).
pub fn throughput(work: &WorkBlock, p50_ms: f64, lines: Option<BandwidthLines>) -> Throughput {
    if !(p50_ms.is_finite() && p50_ms > 0.0) {
        return Throughput::default();
    }
    let seconds = p50_ms / 1e3;
    let items_per_s = work.items / seconds;
    // Byte counts of real kernels stay far below 2^53, so the conversion is exact.
    let bytes = (work.bytes_read as f64) + (work.bytes_written as f64);
    let gbps = bytes / seconds / 1e9;
    let tflops = work.flops / seconds / 1e12;
    let line_gbps = lines
        .filter(|l| l.copy.is_finite() && l.copy > 0.0)
        .map(|l| l.for_mix(work.bytes_read, work.bytes_written));
    let pct_of_copy_bandwidth = line_gbps.map(|bw| gbps / bw * 100.0);
    let mut t = Throughput {
        gbps,
        tflops,
        pct_of_copy_bandwidth,
        line_gbps,
        ..Throughput::default()
    };
    match work.unit.as_str() {
        "elements" => t.elements_per_s = Some(items_per_s),
        "tiles" => t.tiles_per_s = Some(items_per_s),
        "tokens" => t.tokens_per_s = Some(items_per_s),
        "frames" => t.frames_per_s = Some(items_per_s),
        _ => {}
    }
    t
}

/// The declared-unit rate of `t` with its metric name (`tiles_per_s`, ...), if any.
pub fn unit_rate(t: &Throughput) -> Option<(&'static str, f64)> {
    [
        ("elements_per_s", t.elements_per_s),
        ("tiles_per_s", t.tiles_per_s),
        ("tokens_per_s", t.tokens_per_s),
        ("frames_per_s", t.frames_per_s),
    ]
    .into_iter()
    .find_map(|(name, v)| v.map(|v| (name, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(unit: &str) -> WorkBlock {
        WorkBlock {
            bytes_read: 3_000_000,
            bytes_written: 1_000_000,
            flops: 2.0e9,
            items: 4096.0,
            unit: unit.into(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn rates_follow_the_declared_unit() {
        // 4096 tiles in 2 ms: 2.048e6 tiles/s; 4 MB in 2 ms: 2 GB/s; 2 GFLOP in 2 ms: 1 TFLOP/s.
        let t = throughput(&work("tiles"), 2.0, None);
        assert!(close(t.tiles_per_s.unwrap(), 2.048e6));
        assert_eq!(
            (t.elements_per_s, t.tokens_per_s, t.frames_per_s),
            (None, None, None)
        );
        assert!(close(t.gbps, 2.0));
        assert!(close(t.tflops, 1.0));
        assert_eq!(t.pct_of_copy_bandwidth, None);
        assert_eq!(unit_rate(&t).unwrap().0, "tiles_per_s");

        for (unit, key) in [
            ("elements", "elements_per_s"),
            ("tokens", "tokens_per_s"),
            ("frames", "frames_per_s"),
        ] {
            let t = throughput(&work(unit), 0.5, None);
            let (name, v) = unit_rate(&t).unwrap();
            assert_eq!(name, key);
            assert!(close(v, 4096.0 / 0.5e-3));
        }
    }

    fn copy_only(copy: f64) -> Option<BandwidthLines> {
        Some(BandwidthLines {
            copy,
            add: None,
            read: None,
        })
    }

    #[test]
    fn percent_of_copy_bandwidth() {
        let t = throughput(&work("elements"), 2.0, copy_only(8.0));
        assert!(close(t.pct_of_copy_bandwidth.unwrap(), 25.0));
        assert_eq!(t.line_gbps, Some(8.0));
        // A missing or meaningless calibration gives no percentage rather than a made-up one.
        for bad in [0.0, f64::NAN] {
            let t = throughput(&work("elements"), 2.0, copy_only(bad));
            assert_eq!((t.pct_of_copy_bandwidth, t.line_gbps), (None, None));
        }
    }

    #[test]
    fn the_line_follows_the_read_fraction_between_the_measured_mixes() {
        let lines = BandwidthLines {
            copy: 3000.0,
            add: Some(3300.0),
            read: Some(3500.0),
        };
        // Read fraction: 1/4, 1/2 (copy), 2/3 (add), 3/4, 1 (read).
        assert!(close(lines.for_mix(1, 3), 3000.0));
        assert!(close(lines.for_mix(5, 5), 3000.0));
        assert!(close(lines.for_mix(2, 1), 3300.0));
        assert!(close(lines.for_mix(3, 1), 3350.0));
        assert!(close(lines.for_mix(7, 0), 3500.0));
        // Between copy and add at 7/12: halfway.
        assert!(close(lines.for_mix(7, 5), 3150.0));
        // Without the add line, copy to read directly; without either, the copy line.
        let no_add = BandwidthLines { add: None, ..lines };
        assert!(close(no_add.for_mix(3, 1), 3250.0));
        assert!(close(copy_only(3000.0).unwrap().for_mix(1, 0), 3000.0));
        // A case with no bytes is read as 1:1.
        assert!(close(lines.for_mix(0, 0), 3000.0));
        // 3 MB read and 1 MB written in 2 ms against these lines: 2 GB/s of 3350.
        let t = throughput(&work("elements"), 2.0, Some(lines));
        assert!(close(t.line_gbps.unwrap(), 3350.0));
        assert!(close(t.pct_of_copy_bandwidth.unwrap(), 200.0 / 3350.0));
    }

    #[test]
    fn no_rates_without_a_positive_time() {
        for p50 in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let t = throughput(&work("tiles"), p50, copy_only(100.0));
            assert_eq!(t, Throughput::default(), "p50 = {p50}");
            assert_eq!(unit_rate(&t), None);
        }
    }

    #[test]
    fn unknown_unit_fills_only_bandwidth() {
        let t = throughput(&work("bytes"), 1.0, None);
        assert_eq!(unit_rate(&t), None);
        assert!(close(t.gbps, 4.0));
    }
}
