//! [`attach`]: puts each anchor row beside the cases it describes. A row matches a case when the
//! kernel, backend and precision are the same and every parameter the row gives has the case's
//! value (a row may give fewer parameters than the case has; it then matches every case that
//! agrees on those). The ratio is anchor time / our p50, so above 1 we are faster; it exists
//! only when the row has a time and the case is `ok`. Our p50 is the headline's, unless the row
//! gives a cache state that the headline's is not and another of our modes has it (an `l2_hot`
//! torch row beside `batch_hot` of `run --l2-hot`): then that mode's, named in `ours_mode`.

use serde_json::Value;

use super::{AnchorSet, SourcedRow};
use crate::model::{
    AnchorMatch, AnchorSummary, CaseKey, CaseResult, CaseStatus, RunSummary, UnmatchedAnchor,
    render_param_value,
};

/// The relative difference under which two numeric parameter values are the same (a YAML
/// `1.0e-5` against a script's `1e-05`).
const NUMERIC_EQUAL: f64 = 1e-9;

/// Replaces the anchors of `summary` (every case's `anchors` and `summary.anchors`) with `set`.
pub fn attach(summary: &mut RunSummary, set: &AnchorSet) {
    for case in summary.benchmarks.values_mut() {
        case.anchors.clear();
    }
    let mut matched_rows = 0;
    let mut unmatched = Vec::new();
    for sourced in &set.rows {
        let mut hit = false;
        for case in summary.benchmarks.values_mut() {
            if matches(sourced, &case.key) {
                case.anchors.push(match_of(sourced, case));
                hit = true;
            }
        }
        if hit {
            matched_rows += 1;
        } else {
            unmatched.push(unmatched_of(sourced));
        }
    }
    summary.anchors = Some(AnchorSummary {
        files: set.files.clone(),
        matched_rows,
        unmatched,
    });
}

fn matches(sourced: &SourcedRow, key: &CaseKey) -> bool {
    let r = &sourced.row;
    r.kernel == key.kernel
        && r.backend == key.backend
        && r.precision == key.precision
        && r.params.iter().all(|(name, value)| {
            key.params
                .get(name)
                .is_some_and(|ours| param_matches(value, ours))
        })
}

/// Whether an anchor's parameter value is the case's (`ours`, as the case id renders it):
/// the same rendering (`64x64x64` for a shape, strings bare), or the same number.
pub fn param_matches(anchor: &Value, ours: &str) -> bool {
    if render_param_value(anchor) == ours {
        return true;
    }
    match (anchor.as_f64(), ours.parse::<f64>()) {
        (Some(a), Ok(b)) => a == b || (a - b).abs() <= NUMERIC_EQUAL * a.abs().max(b.abs()),
        _ => false,
    }
}

/// Our mode for an anchor of cache state `cache`: `None` for the headline (its cache is the
/// anchor's, or it has none, or no other mode has the anchor's), else the first other mode, in
/// name order, labelled with it.
fn like_for_like<'a>(case: &'a CaseResult, cache: Option<&str>) -> Option<(&'a str, f64)> {
    let cache = cache?;
    let head = case.headline.as_deref()?;
    let head_cache = case.timing.get(head)?.cache.as_deref()?;
    if head_cache == cache {
        return None;
    }
    case.timing
        .iter()
        .find(|(mode, t)| mode.as_str() != head && t.cache.as_deref() == Some(cache))
        .map(|(mode, t)| (mode.as_str(), t.stats.p50_ms))
}

fn match_of(sourced: &SourcedRow, case: &CaseResult) -> AnchorMatch {
    let r = &sourced.row;
    let other = like_for_like(case, r.cache.as_deref());
    let ours = other
        .map_or(case.p50_ms, |(_, p50)| Some(p50))
        .filter(|p| case.status == CaseStatus::Ok && *p > 0.0);
    AnchorMatch {
        implementation: r.implementation.clone(),
        us_per_call: r.us_per_call,
        ratio: r.us_per_call.zip(ours).map(|(us, p50)| us / 1e3 / p50),
        ours_mode: other.map(|(mode, _)| mode.to_string()),
        gbps: r.gbps,
        device: r.device.clone(),
        cache: r.cache.clone(),
        note: r.note.clone(),
        error: r.error.clone(),
        source: sourced.source.clone(),
    }
}

fn unmatched_of(sourced: &SourcedRow) -> UnmatchedAnchor {
    let r = &sourced.row;
    UnmatchedAnchor {
        kernel: r.kernel.clone(),
        backend: r.backend.clone(),
        precision: r.precision.clone(),
        params: r.params.clone(),
        implementation: r.implementation.clone(),
        us_per_call: r.us_per_call,
        error: r.error.clone(),
        source: sourced.source.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anchors::AnchorRow;
    use crate::model::ParamMap;
    use crate::report::test_support::{measured_case, skipped_case, summary_of};
    use serde_json::json;

    fn row(v: Value, line: usize) -> SourcedRow {
        SourcedRow {
            row: AnchorRow::from_json(&v).unwrap(),
            source: format!("a.jsonl:{line}"),
        }
    }

    fn set(rows: Vec<SourcedRow>) -> AnchorSet {
        AnchorSet {
            files: Vec::new(),
            rows,
        }
    }

    /// A measured `tile_ssm.forward` case with `p50` ms and the given parameters.
    fn case(backend: &str, p50: f64, params: Value) -> CaseResult {
        let mut c = measured_case("tile_ssm.forward", backend, p50, 0.01);
        let map: ParamMap = serde_json::from_value(params).unwrap();
        c.key = CaseKey::new("tile_ssm.forward", backend, "fp32", &map);
        c.id = c.key.id();
        c
    }

    fn anchor(params: Value, us: f64) -> Value {
        json!({"kernel": "tile_ssm.forward", "impl": "numpy", "params": params,
               "precision": "fp32", "backend": "cpu", "us_per_call": us})
    }

    #[test]
    fn the_ratio_is_anchor_time_over_our_p50() {
        let mut s = summary_of(vec![case("cpu", 0.5, json!({"steps": 256, "batch": 1}))]);
        attach(
            &mut s,
            &set(vec![row(anchor(json!({"steps": 256}), 2000.0), 1)]),
        );
        let c = s.benchmarks.values().next().unwrap();
        assert_eq!(c.anchors.len(), 1);
        let m = &c.anchors[0];
        assert!(
            (m.ratio.unwrap() - 4.0).abs() < 1e-12,
            "2 ms against 0.5 ms"
        );
        assert_eq!(m.source, "a.jsonl:1");
        assert_eq!(s.anchors.as_ref().unwrap().matched_rows, 1);
        assert!(s.anchors.unwrap().unmatched.is_empty());
    }

    #[test]
    fn an_anchor_of_another_cache_state_is_compared_with_our_mode_of_that_state() {
        // A CUDA case: batch (headline, DRAM-cold) 0.5 ms, batch_hot (L2-hot) 0.25 ms.
        let mut c = case("cuda", 0.5, json!({"steps": 256}));
        c.timing.get_mut("batch").unwrap().cache = Some("dram_cold".into());
        let mut hot = c.timing["batch"].clone();
        hot.stats.p50_ms = 0.25;
        hot.cache = Some("l2_hot".into());
        c.timing.insert("batch_hot".into(), hot);
        let mut s = summary_of(vec![c]);
        let cuda = |cache: Option<&str>| {
            let mut v = anchor(json!({"steps": 256}), 1000.0);
            v["backend"] = json!("cuda");
            if let Some(cache) = cache {
                v["cache"] = json!(cache);
            }
            v
        };
        let rows = vec![
            row(cuda(Some("l2_hot")), 1),
            row(cuda(Some("dram_cold")), 2),
            row(cuda(None), 3),
        ];
        attach(&mut s, &set(rows));
        let a = &s.benchmarks.values().next().unwrap().anchors;
        assert_eq!(a[0].ours_mode.as_deref(), Some("batch_hot"));
        assert!(
            (a[0].ratio.unwrap() - 4.0).abs() < 1e-12,
            "1 ms against 0.25"
        );
        for m in &a[1..] {
            assert_eq!(m.ours_mode, None, "{}", m.source);
            assert!((m.ratio.unwrap() - 2.0).abs() < 1e-12, "1 ms against 0.5");
        }
    }

    #[test]
    fn without_a_mode_of_the_anchors_cache_state_the_headline_stays() {
        let mut c = case("cuda", 0.5, json!({"steps": 256}));
        c.timing.get_mut("batch").unwrap().cache = Some("dram_cold".into());
        let mut s = summary_of(vec![c]);
        let mut v = anchor(json!({"steps": 256}), 1000.0);
        v["backend"] = json!("cuda");
        v["cache"] = json!("l2_hot");
        attach(&mut s, &set(vec![row(v, 1)]));
        let m = &s.benchmarks.values().next().unwrap().anchors[0];
        assert_eq!(m.ours_mode, None);
        assert!((m.ratio.unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn every_given_param_must_equal_the_case_value() {
        let mut s = summary_of(vec![
            case("cpu", 1.0, json!({"steps": 256, "batch": 1})),
            case("cpu", 4.0, json!({"steps": 1024, "batch": 1})),
        ]);
        let rows = vec![
            row(anchor(json!({"batch": 1}), 10.0), 1),
            row(anchor(json!({"steps": 1024}), 10.0), 2),
            row(anchor(json!({"steps": 512}), 10.0), 3),
            row(anchor(json!({"channels": 128}), 10.0), 4),
        ];
        attach(&mut s, &set(rows));
        let by_steps = |n: &str| {
            s.benchmarks
                .values()
                .find(|c| c.key.params["steps"] == n)
                .unwrap()
        };
        let lines = |c: &CaseResult| {
            c.anchors
                .iter()
                .map(|a| a.source.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(by_steps("256")), ["a.jsonl:1"]);
        assert_eq!(lines(by_steps("1024")), ["a.jsonl:1", "a.jsonl:2"]);
        let summary = s.anchors.as_ref().unwrap();
        assert_eq!(summary.matched_rows, 2);
        let unmatched: Vec<&str> = summary
            .unmatched
            .iter()
            .map(|u| u.source.as_str())
            .collect();
        assert_eq!(
            unmatched,
            ["a.jsonl:3", "a.jsonl:4"],
            "another value, an unknown param"
        );
    }

    #[test]
    fn kernel_backend_and_precision_must_be_the_same() {
        let mut s = summary_of(vec![case("cpu", 1.0, json!({"steps": 256}))]);
        let mut other_backend = anchor(json!({}), 5.0);
        other_backend["backend"] = json!("cuda");
        let mut other_precision = anchor(json!({}), 5.0);
        other_precision["precision"] = json!("fp16");
        let mut other_kernel = anchor(json!({}), 5.0);
        other_kernel["kernel"] = json!("tile_ssm.backward");
        attach(
            &mut s,
            &set(vec![
                row(other_backend, 1),
                row(other_precision, 2),
                row(other_kernel, 3),
            ]),
        );
        assert!(s.benchmarks.values().all(|c| c.anchors.is_empty()));
        assert_eq!(s.anchors.unwrap().unmatched.len(), 3);
    }

    #[test]
    fn values_match_by_rendering_or_by_number() {
        assert!(param_matches(&json!([64, 64, 32]), "64x64x32"));
        assert!(param_matches(&json!("64x64x32"), "64x64x32"));
        assert!(param_matches(&json!(1e-05), "0.00001"));
        assert!(param_matches(&json!(2), "2.0"));
        assert!(param_matches(&json!(true), "true"));
        assert!(param_matches(&json!("avg"), "avg"));
        assert!(!param_matches(&json!(true), "false"));
        assert!(!param_matches(&json!(2.0001), "2.0"));
        assert!(!param_matches(&json!("sum"), "avg"));
        assert!(!param_matches(&json!([64, 64]), "64x64x32"));
    }

    #[test]
    fn an_error_row_or_a_case_without_a_valid_time_has_no_ratio() {
        let mut failed = case("cpu", 1.0, json!({"steps": 256}));
        failed.status = CaseStatus::FailedAccuracy;
        let skipped = {
            let mut c = skipped_case("tile_ssm.forward", "cuda", "no GPU");
            c.key.precision = "fp32".into();
            c
        };
        let mut s = summary_of(vec![failed, skipped]);
        let mut error_row = anchor(json!({}), 1.0);
        error_row.as_object_mut().unwrap().remove("us_per_call");
        error_row["error"] = json!("RuntimeError: out of memory");
        let mut cuda_row = anchor(json!({}), 7.0);
        cuda_row["backend"] = json!("cuda");
        attach(
            &mut s,
            &set(vec![
                row(anchor(json!({}), 3.0), 1),
                row(error_row, 2),
                row(cuda_row, 3),
            ]),
        );
        let all: Vec<&AnchorMatch> = s.benchmarks.values().flat_map(|c| &c.anchors).collect();
        assert_eq!(all.len(), 3, "every row is kept beside its case");
        assert!(all.iter().all(|m| m.ratio.is_none()));
        assert!(
            all.iter()
                .any(|m| m.error.as_deref() == Some("RuntimeError: out of memory"))
        );
    }

    #[test]
    fn attaching_again_replaces_the_previous_anchors() {
        let mut s = summary_of(vec![case("cpu", 1.0, json!({"steps": 256}))]);
        attach(&mut s, &set(vec![row(anchor(json!({}), 3.0), 1)]));
        attach(&mut s, &set(vec![row(anchor(json!({}), 6.0), 9)]));
        let c = s.benchmarks.values().next().unwrap();
        assert_eq!(c.anchors.len(), 1);
        assert_eq!(c.anchors[0].source, "a.jsonl:9");
    }
}
