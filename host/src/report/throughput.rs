//! [`throughput`]: the derived rates of a case at its headline p50, from the work the kernel
//! declares per call (its cost model, not a measurement).
//!
//! Only the rate key of the declared unit is filled (`tiles` → `tiles_per_s`, ...), as Apex-X
//! writes one `<unit>_per_s` per metrics block. Bandwidth counts both directions:
//! `gbps = (bytes_read + bytes_written) / seconds / 1e9`.

use crate::model::{Throughput, WorkBlock};

/// Rates of one call of `work` taking `p50_ms`, and the share of the device's measured copy
/// bandwidth (`copy_bandwidth_gbps`, CUDA only) that the call reaches.
///
/// A `p50_ms` that is not a positive finite number yields no rates: the unit key and the
/// percentage stay absent and `gbps`/`tflops` are 0 (Apex-X writes `null` when `p50 <= 0`).
pub fn throughput(work: &WorkBlock, p50_ms: f64, copy_bandwidth_gbps: Option<f64>) -> Throughput {
    if !(p50_ms.is_finite() && p50_ms > 0.0) {
        return Throughput::default();
    }
    let seconds = p50_ms / 1e3;
    let items_per_s = work.items / seconds;
    // Byte counts of real kernels stay far below 2^53, so the conversion is exact.
    let bytes = (work.bytes_read as f64) + (work.bytes_written as f64);
    let gbps = bytes / seconds / 1e9;
    let tflops = work.flops / seconds / 1e12;
    let pct_of_copy_bandwidth = copy_bandwidth_gbps
        .filter(|bw| bw.is_finite() && *bw > 0.0)
        .map(|bw| gbps / bw * 100.0);
    let mut t = Throughput {
        gbps,
        tflops,
        pct_of_copy_bandwidth,
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

    #[test]
    fn percent_of_copy_bandwidth() {
        let t = throughput(&work("elements"), 2.0, Some(8.0));
        assert!(close(t.pct_of_copy_bandwidth.unwrap(), 25.0));
        // A missing or meaningless calibration gives no percentage rather than a made-up one.
        assert_eq!(
            throughput(&work("elements"), 2.0, Some(0.0)).pct_of_copy_bandwidth,
            None
        );
        assert_eq!(
            throughput(&work("elements"), 2.0, Some(f64::NAN)).pct_of_copy_bandwidth,
            None
        );
    }

    #[test]
    fn no_rates_without_a_positive_time() {
        for p50 in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let t = throughput(&work("tiles"), p50, Some(100.0));
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
