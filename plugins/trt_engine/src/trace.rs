//! The query trace of one engine case and trtexec's report over it.
//!
//! Every `run` is one query; the case records when it started and ended on the host clock and,
//! where the runtime has them, its phases (TensorRT: CUDA events around H2D, the enqueued
//! compute and D2H; the host time of `enqueueV3`). [`Trace::report`] turns the trace into
//! trtexec's fields with trtexec's definitions (`samples/common/sampleReporting.cpp`,
//! `printMetricExplanations`; `docs/engines.md` cites each):
//!
//! - Throughput = queries ÷ Total Host Walltime (`throughput_qps`);
//! - Latency = H2D + GPU Compute + D2H (`latency_ms`; for ONNX Runtime, whose `Run` is one
//!   synchronous call, the host time of that call);
//! - Enqueue Time = the host time to enqueue a query (`enqueue_ms`);
//! - H2D Latency, GPU Compute Time, D2H Latency (`h2d_ms`, `gpu_compute_ms`, `d2h_ms`);
//! - Total Host Walltime = from the first query after warm-up being enqueued to the last query
//!   completing (`total_host_walltime_s`);
//! - Total GPU Compute Time = mean GPU compute × number of queries (`total_gpu_compute_time_s`);
//! - the warnings, in trtexec's words (enqueue-bound, transfer-bound, CoV > 1 %).
//!
//! Each series becomes a figure with one value per query, which the host summarizes with min,
//! max, mean, median and p90/p95/p99: trtexec's statistics. A field a runtime cannot measure is
//! absent, and a note says why; it is never a zero.
//!
//! Warm-up: trtexec's default, 200 ms (`--warmUp=200`): queries that start within 200 ms of the
//! first are left out. The host's protocol decides how long a case runs, and a short case (a
//! `--quick` run of a 20 µs model) has fewer than 10 queries (trtexec's minimum,
//! `--iterations=10`) after 200 ms: then the first tenth of the queries (at least one) is the
//! warm-up instead, and a note says so.

use std::time::Instant;

use apex_plugin_api::Figure;

/// trtexec's default warm-up, in ms.
pub const WARMUP_MS: f64 = 200.0;
/// trtexec's minimum number of timed queries.
pub const MIN_QUERIES: usize = 10;
/// trtexec warns above this coefficient of variance of the GPU compute time, in %.
pub const COV_WARN_PCT: f64 = 1.0;

/// The device phases of one query, in ms (CUDA events), and its host enqueue time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevicePhases {
    pub enqueue_ms: f64,
    pub h2d_ms: f64,
    pub gpu_compute_ms: f64,
    pub d2h_ms: f64,
}

/// One query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Query {
    pub start: Instant,
    pub end: Instant,
    pub phases: Option<DevicePhases>,
}

/// What the runtime is, for the report's notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// ONNX Runtime's CPU provider: one synchronous call, host memory only.
    OrtCpu,
    /// ONNX Runtime's CUDA provider: one synchronous call; the transfers happen inside it.
    OrtCuda,
    /// TensorRT: H2D, enqueueV3 and D2H timed with CUDA events on the case's stream.
    TensorRt,
}

/// The queries of one case, in order.
#[derive(Debug, Clone)]
pub struct Trace {
    pub kind: TraceKind,
    pub queries: Vec<Query>,
    /// Set once the accuracy check starts: its query is not part of the trace.
    pub frozen: bool,
}

/// trtexec's report over a trace: figures and notes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Coefficient of variance in %, as trtexec computes it (population standard deviation ÷ mean).
pub fn cov_pct(v: &[f64]) -> f64 {
    let m = mean(v);
    if m == 0.0 {
        return 0.0;
    }
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64;
    var.sqrt() / m * 100.0
}

impl Trace {
    pub fn new(kind: TraceKind) -> Self {
        Self {
            kind,
            queries: Vec::new(),
            frozen: false,
        }
    }

    pub fn push(&mut self, q: Query) {
        if !self.frozen {
            self.queries.push(q);
        }
    }

    /// The timed queries: after the warm-up, at least [`MIN_QUERIES`] when there are that many.
    /// The flag says whether the warm-up had to be shortened to a tenth of the queries.
    pub fn timed(&self) -> (&[Query], bool) {
        let Some(first) = self.queries.first() else {
            return (&[], false);
        };
        let after = self
            .queries
            .iter()
            .position(|q| (q.start - first.start).as_secs_f64() * 1e3 >= WARMUP_MS)
            .unwrap_or(self.queries.len());
        let remaining = self.queries.len() - after;
        if remaining >= MIN_QUERIES {
            (&self.queries[after..], false)
        } else {
            let warm = (self.queries.len() / 10).max(1).min(self.queries.len() - 1);
            (&self.queries[warm..], true)
        }
    }

    /// trtexec's fields, definitions and warnings over the timed queries.
    pub fn report(&self) -> Report {
        let (timed, shortened) = self.timed();
        let mut r = Report::default();
        if timed.is_empty() {
            r.notes
                .push("trtexec fields: absent: no query was timed".to_string());
            return r;
        }
        let n = timed.len();
        let walltime_s = (timed[n - 1].end - timed[0].start).as_secs_f64();
        let host_ms: Vec<f64> = timed
            .iter()
            .map(|q| (q.end - q.start).as_secs_f64() * 1e3)
            .collect();
        r.figures.push(Figure::value("queries", "", n as f64));
        r.figures
            .push(Figure::value("total_host_walltime_s", "s", walltime_s));
        if walltime_s > 0.0 {
            r.figures.push(Figure::value(
                "throughput_qps",
                "qps",
                n as f64 / walltime_s,
            ));
        }
        r.notes.push(if shortened {
            format!(
                "trace: {n} queries timed over {walltime_s:.4} s; the run was too short for trtexec's {WARMUP_MS:.0} ms warm-up followed by {MIN_QUERIES} queries, so the first tenth of its {} queries was the warm-up",
                self.queries.len()
            )
        } else {
            format!(
                "trace: {n} queries timed over {walltime_s:.4} s, after trtexec's {WARMUP_MS:.0} ms warm-up"
            )
        });
        let phases: Option<Vec<DevicePhases>> = timed.iter().map(|q| q.phases).collect();
        match (self.kind, phases) {
            (TraceKind::TensorRt, Some(p)) => device_report(&p, &mut r),
            (kind, _) => host_only_report(kind, &host_ms, &mut r),
        }
        r
    }
}

/// TensorRT: every field, from the CUDA events.
fn device_report(p: &[DevicePhases], r: &mut Report) {
    let pick = |f: fn(&DevicePhases) -> f64| p.iter().map(f).collect::<Vec<f64>>();
    let (enq, h2d, gpu, d2h) = (
        pick(|x| x.enqueue_ms),
        pick(|x| x.h2d_ms),
        pick(|x| x.gpu_compute_ms),
        pick(|x| x.d2h_ms),
    );
    let latency: Vec<f64> = p
        .iter()
        .map(|x| x.h2d_ms + x.gpu_compute_ms + x.d2h_ms)
        .collect();
    r.figures.push(Figure::series("latency_ms", "ms", latency));
    r.figures
        .push(Figure::series("enqueue_ms", "ms", enq.clone()));
    r.figures.push(Figure::series("h2d_ms", "ms", h2d.clone()));
    r.figures
        .push(Figure::series("gpu_compute_ms", "ms", gpu.clone()));
    r.figures.push(Figure::series("d2h_ms", "ms", d2h.clone()));
    r.figures.push(Figure::value(
        "total_gpu_compute_time_s",
        "s",
        mean(&gpu) * gpu.len() as f64 / 1e3,
    ));
    let gpu_median = median(&gpu);
    if median(&enq) > 0.8 * gpu_median {
        r.notes.push(
            "* Throughput may be bound by Enqueue Time rather than GPU Compute and the GPU may be under-utilized."
                .to_string(),
        );
    }
    if median(&h2d) >= gpu_median {
        r.notes.push(
            "* Throughput may be bound by host-to-device transfers for the inputs rather than GPU Compute and the GPU may be under-utilized."
                .to_string(),
        );
    }
    if median(&d2h) >= gpu_median {
        r.notes.push(
            "* Throughput may be bound by device-to-host transfers for the outputs rather than GPU Compute and the GPU may be under-utilized."
                .to_string(),
        );
    }
    let cov = cov_pct(&gpu);
    if cov > COV_WARN_PCT {
        r.notes.push(format!(
            "* GPU compute time is unstable, with coefficient of variance = {cov:.4}%. If not already in use, locking GPU clock frequency or adding --useSpinWait may improve the stability."
        ));
    }
}

/// ONNX Runtime: one synchronous call per query; the phases are not separable.
fn host_only_report(kind: TraceKind, host_ms: &[f64], r: &mut Report) {
    r.figures
        .push(Figure::series("latency_ms", "ms", host_ms.to_vec()));
    let why = match kind {
        TraceKind::OrtCpu => {
            "ONNX Runtime's CPU provider runs a query as one synchronous call on host memory: there are no transfers, and the compute is the whole latency"
        }
        TraceKind::OrtCuda => {
            "ONNX Runtime's CUDA provider copies the inputs in, computes and copies the outputs back inside one synchronous Run: the phases cannot be timed apart"
        }
        TraceKind::TensorRt => "the TensorRT queries carried no device phases",
    };
    r.notes.push(format!(
        "absent: Enqueue Time, H2D Latency, GPU Compute Time, D2H Latency, Total GPU Compute Time ({why}); Latency is the host time of the call"
    ));
    let cov = cov_pct(host_ms);
    if cov > COV_WARN_PCT {
        r.notes.push(format!(
            "* Latency is unstable, with coefficient of variance = {cov:.4}% (trtexec's GPU-compute warning, over the whole synchronous call)."
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn trace(kind: TraceKind, times_ms: &[f64], phases: Option<DevicePhases>) -> Trace {
        let t0 = Instant::now();
        let mut t = Trace::new(kind);
        let mut at = 0.0;
        for &d in times_ms {
            let start = t0 + Duration::from_secs_f64(at / 1e3);
            at += d;
            t.push(Query {
                start,
                end: t0 + Duration::from_secs_f64(at / 1e3),
                phases,
            });
        }
        t
    }

    fn figure<'a>(r: &'a Report, name: &str) -> Option<&'a Figure> {
        r.figures.iter().find(|f| f.name.as_str() == name)
    }

    #[test]
    fn warm_up_is_200_ms_and_throughput_is_queries_over_walltime() {
        // 40 queries of 10 ms: the first 20 start within 200 ms.
        let t = trace(TraceKind::OrtCpu, &[10.0; 40], None);
        let (timed, short) = t.timed();
        assert_eq!((timed.len(), short), (20, false));
        let r = t.report();
        let qps = figure(&r, "throughput_qps").unwrap().values[0];
        assert!((qps - 100.0).abs() < 1e-6, "{qps}");
        assert_eq!(figure(&r, "latency_ms").unwrap().values.len(), 20);
        assert!(
            figure(&r, "h2d_ms").is_none(),
            "no transfer is faked on the CPU"
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.starts_with("absent: Enqueue Time"))
        );
    }

    #[test]
    fn a_short_trace_takes_a_tenth_as_warm_up_and_says_so() {
        let r = trace(TraceKind::OrtCpu, &[50.0; 12], None).report();
        assert_eq!(figure(&r, "queries").unwrap().values[0], 11.0);
        assert!(r.notes[0].contains("first tenth"), "{:?}", r.notes);
        let r = trace(TraceKind::OrtCpu, &[1.0; 40], None).report();
        assert_eq!(figure(&r, "queries").unwrap().values[0], 36.0);
    }

    #[test]
    fn tensorrt_phases_give_every_field_and_the_totals() {
        let p = DevicePhases {
            enqueue_ms: 0.5,
            h2d_ms: 0.1,
            gpu_compute_ms: 1.0,
            d2h_ms: 0.2,
        };
        let r = trace(TraceKind::TensorRt, &[2.0; 200], Some(p)).report();
        for name in [
            "latency_ms",
            "enqueue_ms",
            "h2d_ms",
            "gpu_compute_ms",
            "d2h_ms",
            "total_host_walltime_s",
            "total_gpu_compute_time_s",
            "throughput_qps",
        ] {
            assert!(figure(&r, name).is_some(), "{name}");
        }
        assert!((figure(&r, "latency_ms").unwrap().values[0] - 1.3).abs() < 1e-12);
        let n = figure(&r, "queries").unwrap().values[0];
        let total = figure(&r, "total_gpu_compute_time_s").unwrap().values[0];
        assert!((total - n * 1.0 / 1e3).abs() < 1e-12);
        assert!(r.notes.iter().all(|n| !n.starts_with('*')), "{:?}", r.notes);
    }

    #[test]
    fn trtexecs_warnings_fire_on_their_conditions() {
        let p = DevicePhases {
            enqueue_ms: 0.9,
            h2d_ms: 1.0,
            gpu_compute_ms: 1.0,
            d2h_ms: 1.5,
        };
        let r = trace(TraceKind::TensorRt, &[4.0; 100], Some(p)).report();
        let stars: Vec<_> = r.notes.iter().filter(|n| n.starts_with('*')).collect();
        assert_eq!(stars.len(), 3, "{stars:?}");
        let mut ms = vec![1.0; 50];
        ms.extend(vec![1.5; 50]);
        let cov = cov_pct(&ms);
        assert!((cov - 20.0).abs() < 1e-9, "{cov}");
        let r = trace(TraceKind::OrtCpu, &ms.repeat(10), None).report();
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("coefficient of variance")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn the_accuracy_checks_query_is_not_traced() {
        let mut t = trace(TraceKind::OrtCpu, &[1.0; 3], None);
        t.frozen = true;
        let q = t.queries[0];
        t.push(q);
        assert_eq!(t.queries.len(), 3);
    }
}
