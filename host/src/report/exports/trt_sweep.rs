//! Seed 003's TensorRT regression wrapper (`scripts/perf_regression_trt.py`, apex-x-kernels.md
//! §3.3 and §4.3): its baseline keys and its status, over the `trt_engine.engine` cases of a run.
//!
//! - `case.<label>.p50_ms`, `case.<label>.p95_ms`: the engine case whose `shape_case` is
//!   `<label>` (`default`, `case_001_1_3_256_256`, …). Exactly one case must have it: with the
//!   same sweep on `cpu` and `trt`, restrict the run with `--backends`.
//! - `summary.p50_ms_{min,median,max}`: the seed's figures over the sweep's ok cases. They are no
//!   one case's metric, and the gate checks cases: such a key is `missing`, and says so.
//! - The status: the sweep's, as the seed computes it: `ok` when at least one case is ok and none
//!   failed, otherwise `partial` (an all-skipped sweep is `partial`, so the wrapper's
//!   `required_status: "ok"` fails when no engine ran).

use crate::model::{CaseStatus, RunSummary};

/// The kernel whose cases form the sweep.
pub const KERNEL: &str = "trt_engine.engine";

/// Whether `key` is one of the wrapper's keys.
pub fn is_key(key: &str) -> bool {
    key.starts_with("case.") || key.starts_with("summary.")
}

/// The metric id the wrapper's `key` names, or why no single case's metric is there.
pub fn resolve_key(summary: &RunSummary, key: &str) -> Result<String, String> {
    if key.starts_with("summary.") {
        return Err(format!(
            "`{key}` summarizes the sweep's cases and is no one case's metric; gate each case's `case.<label>.p50_ms` instead"
        ));
    }
    let Some((label, stat)) = key
        .strip_prefix("case.")
        .and_then(|rest| rest.rsplit_once('.'))
        .filter(|(_, stat)| matches!(*stat, "p50_ms" | "p95_ms"))
    else {
        return Err(format!(
            "`{key}` is not `case.<label>.p50_ms` or `case.<label>.p95_ms`"
        ));
    };
    let matching: Vec<_> = summary
        .benchmarks
        .values()
        .filter(|c| {
            c.key.kernel == KERNEL
                && c.key.params.get("shape_case").map(String::as_str) == Some(label)
        })
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.key.metric(stat)),
        [] => Err(format!(
            "no {KERNEL} case has shape_case `{label}` in this run"
        )),
        many => Err(format!(
            "{} {KERNEL} cases have shape_case `{label}` ({}); restrict the run to one with --backends or --filter",
            many.len(),
            many.iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The sweep's status as the seed computes it.
pub fn status(summary: &RunSummary) -> &'static str {
    let cases = summary
        .benchmarks
        .values()
        .filter(|c| c.key.kernel == KERNEL);
    let (mut ok, mut failed) = (0, 0);
    for c in cases {
        match c.status {
            CaseStatus::Ok => ok += 1,
            CaseStatus::Failed | CaseStatus::FailedAccuracy => failed += 1,
            _ => {}
        }
    }
    if ok > 0 && failed == 0 {
        "ok"
    } else {
        "partial"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, summary_of};

    fn engine_case(backend: &str, label: &str, status: CaseStatus) -> crate::model::CaseResult {
        let mut c = measured_case(KERNEL, backend, 1.0, 0.01);
        c.key.params.insert("shape_case".into(), label.into());
        c.id = c.key.id();
        c.status = status;
        c
    }

    #[test]
    fn a_label_names_its_one_case() {
        let run = summary_of(vec![
            engine_case("trt", "default", CaseStatus::Ok),
            engine_case("trt", "case_001_8_32", CaseStatus::Ok),
        ]);
        let id = resolve_key(&run, "case.case_001_8_32.p95_ms").unwrap();
        assert!(
            id.starts_with("trt_engine.engine/trt/") && id.ends_with("/p95_ms"),
            "{id}"
        );
        assert!(id.contains("shape_case=case_001_8_32"), "{id}");
        assert!(
            resolve_key(&run, "case.case_009_1.p50_ms")
                .unwrap_err()
                .contains("no trt_engine.engine case")
        );
        assert!(
            resolve_key(&run, "summary.p50_ms_min")
                .unwrap_err()
                .contains("no one case's metric")
        );
        assert!(resolve_key(&run, "case.default.mean").is_err());
    }

    #[test]
    fn the_same_label_on_two_backends_is_ambiguous() {
        let run = summary_of(vec![
            engine_case("cpu", "default", CaseStatus::Ok),
            engine_case("trt", "default", CaseStatus::Skipped),
        ]);
        let e = resolve_key(&run, "case.default.p50_ms").unwrap_err();
        assert!(
            e.contains("2 trt_engine.engine cases") && e.contains("--backends"),
            "{e}"
        );
    }

    #[test]
    fn the_status_is_the_seeds() {
        let ok = summary_of(vec![
            engine_case("trt", "default", CaseStatus::Ok),
            engine_case("trt", "case_001_2", CaseStatus::Skipped),
        ]);
        assert_eq!(status(&ok), "ok");
        let skipped = summary_of(vec![engine_case("trt", "default", CaseStatus::Skipped)]);
        assert_eq!(status(&skipped), "partial");
        let failed = summary_of(vec![
            engine_case("trt", "default", CaseStatus::Ok),
            engine_case("trt", "case_001_2", CaseStatus::Failed),
        ]);
        assert_eq!(status(&failed), "partial");
    }
}
