//! [`assemble`]: a worker's outcome → the case's [`CaseResult`], with statistics per mode, the
//! headline figures, throughput and the status rule:
//!
//! - the kernel said the case cannot run here (`Kernel::unavailable`) → `skipped` with its reason;
//! - no reply, a crash, a timeout or an error → `failed` with the reason;
//! - a reply whose accuracy check failed → `failed_accuracy`; its timings stay in `timing` for
//!   diagnosis, but no headline p50, p95 or throughput is given, so it is never presented as valid;
//! - otherwise `ok`.

use std::collections::BTreeMap;

use super::isolation::WorkerOutcome;
use super::rotation::CacheState;
use super::wire::WorkerReply;
use crate::model::{
    CaseKey, CaseResult, CaseStatus, FigureBlock, ModeTiming, ProtocolInfo, Resources,
};

/// Run-wide inputs of assembly.
#[derive(Debug, Clone, Copy)]
pub struct AssembleContext {
    pub seed: u64,
    pub save_samples: bool,
    /// The device's measured bandwidth lines (copy, add, read), for `% of peak` (CUDA cases,
    /// DRAM-cold figures); `None` when not calibrated.
    pub bandwidth: Option<crate::report::BandwidthLines>,
    /// The device's L2-resident copy line, for `l2_hot` batch figures.
    pub l2_line_gbps: Option<f64>,
}

/// Builds the case's result from how its worker ended.
pub fn assemble(
    key: CaseKey,
    plugin: &str,
    outcome: WorkerOutcome,
    ctx: &AssembleContext,
) -> CaseResult {
    let reply = match outcome {
        WorkerOutcome::Replied(r) => *r,
        WorkerOutcome::Crashed(reason) => {
            return CaseResult::without_measurements(key, plugin, CaseStatus::Failed, reason);
        }
        WorkerOutcome::TimedOut(s) => {
            return CaseResult::without_measurements(
                key,
                plugin,
                CaseStatus::Failed,
                format!("timeout after {s} s"),
            );
        }
        // The schedule stops instead of assembling an interrupted case; this arm only keeps the
        // match whole.
        WorkerOutcome::Interrupted => {
            return CaseResult::without_measurements(
                key,
                plugin,
                CaseStatus::Failed,
                "interrupted".into(),
            );
        }
    };
    if let Some(reason) = &reply.skipped {
        return CaseResult::without_measurements(key, plugin, CaseStatus::Skipped, reason.clone());
    }
    if let Some(err) = &reply.error {
        let mut r = CaseResult::without_measurements(key, plugin, CaseStatus::Failed, err.clone());
        r.protocol = Some(protocol_info(&reply, ctx));
        return r;
    }
    let timing: BTreeMap<String, ModeTiming> = reply
        .modes
        .iter()
        .filter_map(|m| {
            let stats = crate::stats::summarize(&m.per_call_ms, ctx.seed)?;
            Some((
                m.mode.clone(),
                ModeTiming {
                    calls_per_sample: m.calls_per_sample,
                    graph: m.graph,
                    cache: m.cache.clone(),
                    buffer_sets: m.buffer_sets,
                    short_holds: m.short_holds,
                    stats,
                    samples_ms: ctx.save_samples.then(|| m.per_call_ms.clone()),
                    samples_per_process: (ctx.save_samples && m.samples_per_process.len() > 1)
                        .then(|| m.samples_per_process.clone()),
                },
            ))
        })
        .collect();
    let headline = ["batch", "cpu", "cold"]
        .into_iter()
        .find(|m| timing.contains_key(*m))
        .map(str::to_string);
    let accuracy_ok = reply.accuracy.as_ref().is_some_and(|a| a.passed);
    let (status, reason) = match (&headline, &reply.accuracy) {
        (None, _) => (
            CaseStatus::Failed,
            Some("the worker returned no timing samples".to_string()),
        ),
        (_, None) => (
            CaseStatus::Failed,
            Some("the worker returned no accuracy check".to_string()),
        ),
        (_, Some(a)) if !accuracy_ok => (CaseStatus::FailedAccuracy, Some(accuracy_reason(a))),
        _ => (CaseStatus::Ok, None),
    };
    let head = headline
        .as_ref()
        .and_then(|h| timing.get(h))
        .filter(|_| status == CaseStatus::Ok);
    let p50_ms = head.map(|t| t.stats.p50_ms);
    let throughput = match (head, &reply.work) {
        (Some(t), Some(w)) => Some(headline_throughput(w, t, ctx)),
        _ => None,
    };
    CaseResult {
        id: key.id(),
        key,
        plugin: plugin.into(),
        status,
        reason,
        headline,
        p50_ms,
        p95_ms: head.map(|t| t.stats.p95_ms),
        peak_memory_mb: reply
            .peak_device_memory_mb
            .filter(|_| status == CaseStatus::Ok),
        timing,
        throughput,
        work: reply.work.clone(),
        accuracy: reply.accuracy.clone(),
        figures: reply
            .figures
            .iter()
            .map(|f| (f.name.clone(), FigureBlock::from_values(&f.unit, &f.values)))
            .collect(),
        notes: reply.notes.clone(),
        resources: Resources {
            peak_rss_mb: reply.peak_rss_mb,
            peak_device_memory_mb: reply.peak_device_memory_mb,
            energy: reply.energy.clone(),
        },
        protocol: Some(protocol_info(&reply, ctx)),
        ran_on: crate::model::Provenance::default(),
        anchors: Vec::new(),
    }
}

/// Throughput at the headline: `% of the copy line` only from a DRAM-cold figure; an `l2_hot`
/// batch figure is put against the L2 line instead, so no L2-resident rate reads as DRAM.
fn headline_throughput(
    work: &crate::model::WorkBlock,
    head: &ModeTiming,
    ctx: &AssembleContext,
) -> crate::model::Throughput {
    let l2_hot = head.cache.as_deref() == Some(CacheState::L2Hot.as_str());
    let line = if l2_hot { None } else { ctx.bandwidth };
    let mut t = crate::report::throughput(work, head.stats.p50_ms, line);
    if l2_hot {
        t.pct_of_l2_line = ctx
            .l2_line_gbps
            .filter(|bw| bw.is_finite() && *bw > 0.0)
            .map(|bw| t.gbps / bw * 100.0);
    }
    t
}

fn protocol_info(reply: &WorkerReply, ctx: &AssembleContext) -> ProtocolInfo {
    let first = reply.modes.first();
    ProtocolInfo {
        warmup_calls: first.map_or(0, |m| m.warmup_calls),
        stopped_by: reply
            .modes
            .iter()
            .map(|m| format!("{}:{}", m.mode, m.stopped_by))
            .collect::<Vec<_>>()
            .join(","),
        measure_time_s: reply.modes.iter().map(|m| m.elapsed_s).sum(),
        worker_start_ms: reply.loaded_after_ms,
        seed: ctx.seed,
        processes: 1,
        phases_s: reply.phases.iter().cloned().collect(),
        launch_floor_us: reply.launch_floor_us,
        worker_case: reply.worker_case,
    }
}

/// `mismatch_ratio 0.5 > 0 allowed; rmse 1 > 1e-05; 64 non-finite outputs`.
fn accuracy_reason(a: &crate::model::AccuracyBlock) -> String {
    let allowed = |k: &str| a.tolerance.get(k).copied().unwrap_or(0.0);
    let mut parts = Vec::new();
    if a.non_finite > 0 {
        parts.push(format!(
            "{} of {} outputs are NaN or infinite",
            a.non_finite, a.elements
        ));
    }
    if a.mismatch_ratio > allowed("max_mismatch_ratio") {
        parts.push(format!(
            "mismatch_ratio {:.3e} > {:.3e} allowed (atol {:.1e}, rtol {:.1e})",
            a.mismatch_ratio,
            allowed("max_mismatch_ratio"),
            allowed("atol"),
            allowed("rtol")
        ));
    }
    if a.rmse > allowed("rmse") {
        parts.push(format!("rmse {:.3e} > {:.3e}", a.rmse, allowed("rmse")));
    }
    if parts.is_empty() {
        parts.push("the kernel's check reported a failure".into());
    }
    let numbers = format!("output outside tolerance: {}", parts.join("; "));
    match &a.note {
        Some(note) => format!("{note}; {numbers}"),
        None => numbers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::wire::RawMode;
    use crate::model::{AccuracyBlock, WorkBlock};

    fn key() -> CaseKey {
        CaseKey::new("k.x", "cpu", "fp32", &Default::default())
    }

    fn reply(passed: bool) -> WorkerReply {
        WorkerReply {
            modes: vec![RawMode {
                mode: "cpu".into(),
                calls_per_sample: 10,
                graph: false,
                per_call_ms: vec![1.0, 2.0, 3.0],
                samples_per_process: vec![3],
                warmup_calls: 3,
                stopped_by: "fixed".into(),
                elapsed_s: 0.1,
                cache: None,
                buffer_sets: None,
                short_holds: None,
            }],
            accuracy: Some(AccuracyBlock {
                passed,
                elements: 4,
                rmse: if passed { 0.0 } else { 1.0 },
                max_abs_error: 1.0,
                max_rel_error: 1.0,
                mismatch_ratio: if passed { 0.0 } else { 1.0 },
                non_finite: 0,
                tolerance: crate::model::tolerance_map(&apex_plugin_api::Tolerance::EXACT),
                note: None,
            }),
            work: Some(WorkBlock {
                bytes_read: 1000,
                bytes_written: 1000,
                flops: 0.0,
                items: 4.0,
                unit: "elements".into(),
            }),
            ..WorkerReply::default()
        }
    }

    const CTX: AssembleContext = AssembleContext {
        seed: 1,
        save_samples: false,
        bandwidth: None,
        l2_line_gbps: None,
    };

    #[test]
    fn only_dram_cold_figures_count_against_the_copy_line() {
        let ctx = AssembleContext {
            bandwidth: Some(crate::report::BandwidthLines {
                copy: 1.0,
                add: None,
                read: None,
            }),
            l2_line_gbps: Some(4.0),
            ..CTX
        };
        let mut r = reply(true);
        r.modes[0].mode = "batch".into();
        // 2000 bytes per call in 2 ms: 1e-3 GB/s.
        r.modes[0].cache = Some("dram_cold".into());
        let cold = assemble(
            key(),
            "p",
            WorkerOutcome::Replied(Box::new(r.clone())),
            &ctx,
        );
        let t = cold.throughput.unwrap();
        assert!((t.pct_of_copy_bandwidth.unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(t.pct_of_l2_line, None);
        assert_eq!(cold.timing["batch"].cache.as_deref(), Some("dram_cold"));

        r.modes[0].cache = Some("l2_hot".into());
        let hot = assemble(key(), "p", WorkerOutcome::Replied(Box::new(r)), &ctx);
        let t = hot.throughput.unwrap();
        assert_eq!(
            t.pct_of_copy_bandwidth, None,
            "an L2-hot figure never reads as DRAM"
        );
        assert!((t.pct_of_l2_line.unwrap() - 0.025).abs() < 1e-9);
    }

    #[test]
    fn ok_case_has_headline_figures() {
        let r = assemble(
            key(),
            "p",
            WorkerOutcome::Replied(Box::new(reply(true))),
            &CTX,
        );
        assert_eq!(r.status, CaseStatus::Ok);
        assert_eq!(r.p50_ms, Some(2.0));
        assert_eq!(r.headline.as_deref(), Some("cpu"));
        assert!(r.throughput.unwrap().elements_per_s.unwrap() > 0.0);
        assert!(r.timing["cpu"].samples_ms.is_none());
    }

    #[test]
    fn wrong_output_is_failed_accuracy_without_headline() {
        let r = assemble(
            key(),
            "p",
            WorkerOutcome::Replied(Box::new(reply(false))),
            &CTX,
        );
        assert_eq!(r.status, CaseStatus::FailedAccuracy);
        assert!(r.p50_ms.is_none() && r.throughput.is_none());
        assert!(r.reason.unwrap().contains("mismatch_ratio"));
        assert!(r.timing.contains_key("cpu"), "timings kept for diagnosis");
    }

    #[test]
    fn crashes_and_timeouts_are_failed_with_reasons() {
        let r = assemble(key(), "p", WorkerOutcome::TimedOut(5.0), &CTX);
        assert_eq!(
            (r.status, r.reason.as_deref()),
            (CaseStatus::Failed, Some("timeout after 5 s"))
        );
        let r = assemble(
            key(),
            "p",
            WorkerOutcome::Crashed("killed by SIGSEGV (signal 11)".into()),
            &CTX,
        );
        assert_eq!(r.reason.as_deref(), Some("killed by SIGSEGV (signal 11)"));
    }
}
