//! Real-shaped cases and summaries for the report module's unit tests (built through the model
//! types, so a model change that breaks the renderers breaks these tests).

use serde_json::json;
use std::collections::BTreeMap;

use crate::model::{
    AccuracyBlock, CaseKey, CaseResult, CaseStatus, EnergyBlock, ModeTiming, Outliers, ParamMap,
    ProtocolInfo, Resources, RunSummary, SUITE_NAME, SUMMARY_SCHEMA_VERSION, Summary, WorkBlock,
};
use crate::report::throughput;

pub fn stats(p50: f64, cv: f64) -> Summary {
    Summary {
        n: 30,
        p50_ms: p50,
        p90_ms: p50 * 1.05,
        p95_ms: p50 * 1.08,
        p99_ms: p50 * 1.12,
        mean_ms: p50 * 1.01,
        std_ms: p50 * 1.01 * cv,
        min_ms: p50 * 0.97,
        max_ms: p50 * 1.2,
        cv,
        iqr_ms: p50 * 0.03,
        median_ci_low_ms: p50 * 0.99,
        median_ci_high_ms: p50 * 1.01,
        ci_level: 0.95,
        outliers: Outliers {
            high_mild: 1,
            ..Outliers::default()
        },
    }
}

fn key(kernel: &str, backend: &str) -> CaseKey {
    let mut p = ParamMap::new();
    p.insert("tile_size".into(), 8.into());
    p.insert("kmax".into(), 32.into());
    CaseKey::new(kernel, backend, "fp16", &p)
}

/// An `ok` case; CUDA cases get a `cold` mode 3× slower than `batch` and NVML figures.
pub fn measured_case(kernel: &str, backend: &str, p50: f64, cv: f64) -> CaseResult {
    let key = key(kernel, backend);
    let work = WorkBlock {
        bytes_read: 8 << 20,
        bytes_written: 4 << 20,
        flops: 1.0e8,
        items: 2048.0,
        unit: "tiles".into(),
    };
    let mut timing = BTreeMap::new();
    let (headline, copy_bw, resources) = if backend == "cuda" {
        timing.insert(
            "cold".to_string(),
            ModeTiming {
                calls_per_sample: 1,
                graph: false,
                cache: None,
                buffer_sets: None,
                short_holds: None,
                stats: stats(p50 * 3.0, cv),
                samples_ms: None,
                samples_per_process: None,
            },
        );
        timing.insert(
            "batch".to_string(),
            ModeTiming {
                calls_per_sample: 100,
                graph: true,
                cache: None,
                buffer_sets: None,
                short_holds: None,
                stats: stats(p50, cv),
                samples_ms: None,
                samples_per_process: None,
            },
        );
        let resources = Resources {
            peak_rss_mb: None,
            peak_device_memory_mb: Some(24.5),
            energy: Some(EnergyBlock {
                energy_per_call_mj: Some(12.5),
                energy_unavailable: None,
                mean_power_w: Some(310.0),
                sm_clock_mhz: Some(1980),
                throttle_reasons: vec![],
                throttled_samples: 0,
                energy_method: None,
            }),
        };
        ("batch", Some(3000.0), resources)
    } else {
        timing.insert(
            "cpu".to_string(),
            ModeTiming {
                calls_per_sample: 4,
                graph: false,
                cache: None,
                buffer_sets: None,
                short_holds: None,
                stats: stats(p50, cv),
                samples_ms: Some(vec![p50; 3]),
                samples_per_process: None,
            },
        );
        let resources = Resources {
            peak_rss_mb: Some(130.25),
            ..Resources::default()
        };
        ("cpu", None, resources)
    };
    CaseResult {
        id: key.id(),
        plugin: kernel.split('.').next().unwrap_or(kernel).to_string(),
        key,
        status: CaseStatus::Ok,
        reason: None,
        headline: Some(headline.into()),
        p50_ms: Some(p50),
        p95_ms: Some(p50 * 1.08),
        peak_memory_mb: resources.peak_device_memory_mb.or(resources.peak_rss_mb),
        throughput: Some(throughput(
            &work,
            p50,
            copy_bw.map(|copy| crate::report::BandwidthLines {
                copy,
                add: None,
                read: None,
            }),
        )),
        work: Some(work),
        timing,
        accuracy: Some(AccuracyBlock {
            passed: true,
            elements: 1 << 20,
            rmse: 1.0e-4,
            max_abs_error: 4.9e-4,
            max_rel_error: 1.0e-3,
            mismatch_ratio: 0.0,
            non_finite: 0,
            tolerance: BTreeMap::from([("atol".into(), 1e-3), ("rtol".into(), 1e-2)]),
            note: None,
        }),
        figures: BTreeMap::new(),
        notes: Vec::new(),
        resources,
        protocol: Some(ProtocolInfo {
            warmup_calls: 10,
            stopped_by: "converged".into(),
            measure_time_s: 0.4,
            worker_start_ms: 35.0,
            seed: 1337,
            processes: 1,
            phases_s: Default::default(),
            launch_floor_us: None,
            worker_case: 0,
        }),
        ran_on: Default::default(),
        anchors: Vec::new(),
    }
}

/// [`measured_case`] with the key `kernel/backend/precision/params` (values as given).
pub fn case_at(
    kernel: &str,
    backend: &str,
    precision: &str,
    params: &[(&str, &str)],
    p50: f64,
) -> CaseResult {
    let mut c = measured_case(kernel, backend, p50, 0.01);
    let params: ParamMap = params
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    c.key = CaseKey::new(kernel, backend, precision, &params);
    c.id = c.key.id();
    c
}

pub fn skipped_case(kernel: &str, backend: &str, reason: &str) -> CaseResult {
    CaseResult::without_measurements(
        key(kernel, backend),
        kernel.split('.').next().unwrap_or(kernel),
        CaseStatus::Skipped,
        reason.into(),
    )
}

pub fn summary_of(cases: Vec<CaseResult>) -> RunSummary {
    let mut counts = BTreeMap::new();
    for c in &cases {
        *counts.entry(c.status.as_str().to_string()).or_insert(0) += 1;
    }
    let status = RunSummary::status_of(&cases).to_string();
    RunSummary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        suite: SUITE_NAME.into(),
        timestamp_utc: "2026-01-02T03:04:05.000000+00:00".into(),
        environment: json!({
            "host": {"hostname": "bench-01", "os": "Linux", "os_pretty": "Debian GNU/Linux 12",
                     "kernel_release": "6.1.0", "arch": "x86_64", "cpu_model": "Test CPU 3000",
                     "logical_cpus": 16, "memory_total_mb": 128000.0},
            "git": {"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": true},
            "tool": {"name": "apex-host", "version": "0.1.0", "build_profile": "release"},
            "cuda": {"available": true, "device_name": "NVIDIA H100", "driver_version": "570.1",
                     "cuda_version": "12.8"}
        }),
        config: json!({"seed": 1337, "backends": ["cpu", "cuda"], "quick": false}),
        status,
        counts,
        benchmarks: cases.into_iter().map(|c| (c.id.clone(), c)).collect(),
        time_accounting: None,
        plan: None,
        anchors: None,
    }
}

/// Two kernels on CPU and CUDA, one accuracy failure, one crash, one skip.
pub fn sample_summary() -> RunSummary {
    let mut wrong = measured_case("nn_ops.gelu", "cpu", 0.8, 0.02);
    wrong.status = CaseStatus::FailedAccuracy;
    if let Some(acc) = wrong.accuracy.as_mut() {
        acc.passed = false;
        acc.max_abs_error = 0.25;
        acc.mismatch_ratio = 0.125;
    }
    let mut crashed = CaseResult::without_measurements(
        key("nn_ops.layer_norm", "cpu"),
        "nn_ops",
        CaseStatus::Failed,
        "signal: SIGSEGV (segmentation fault)".into(),
    );
    crashed.id = crashed.key.id();
    summary_of(vec![
        measured_case("tile_ops.tile_pack", "cpu", 2.5, 0.01),
        measured_case("tile_ops.tile_pack", "cuda", 0.05, 0.02),
        measured_case("tile_ops.fusion_gate", "cpu", 0.9, 0.03),
        wrong,
        crashed,
        skipped_case(
            "nn_ops.gelu",
            "cuda",
            "cuda_unavailable: libcuda.so.1 not found",
        ),
    ])
}
