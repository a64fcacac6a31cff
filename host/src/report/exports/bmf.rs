//! `bmf.json`: Bencher Metric Format (<https://bencher.dev/bmf.json>, JSON Schema draft-07; a copy
//! in `docs/schemas/bmf.schema.json`). One benchmark per ok case, named by its case id:
//!
//! - `latency`: the headline p50 in **nanoseconds** (Bencher's unit), with the bootstrap 95 % CI
//!   of the median as `lower_value` / `upper_value`;
//! - `throughput`: the kernel's declared unit per second at that p50 (elements, tiles, tokens or
//!   frames), when it declares one;
//! - `bandwidth`: GB/s at that p50, when the kernel declares bytes.
//!
//! Cases that are not `ok` have no valid figure and are left out (Bencher has no status field).

use serde_json::{Map, Value, json};

use crate::model::RunSummary;

pub fn render(summary: &RunSummary) -> String {
    let mut doc = Map::new();
    for case in summary.benchmarks.values() {
        let Some(h) = super::headline(case) else {
            continue;
        };
        let mut measures = Map::new();
        measures.insert(
            "latency".into(),
            json!({
                "value": h.p50_ms * 1e6,
                "lower_value": h.ci_low_ms * 1e6,
                "upper_value": h.ci_high_ms * 1e6,
            }),
        );
        if let Some((_, rate)) = h.unit_rate {
            measures.insert("throughput".into(), json!({ "value": rate }));
        }
        if let Some(gbps) = h.gbps {
            measures.insert("bandwidth".into(), json!({ "value": gbps }));
        }
        doc.insert(case.id.clone(), Value::Object(measures));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    #[test]
    fn ok_cases_become_benchmarks_in_nanoseconds_with_the_median_ci() {
        let s = sample_summary();
        let doc: Value = serde_json::from_str(&render(&s)).unwrap();
        let ok: Vec<_> = s
            .benchmarks
            .values()
            .filter(|c| c.status == crate::model::CaseStatus::Ok)
            .collect();
        assert_eq!(doc.as_object().unwrap().len(), ok.len());
        for case in ok {
            let latency = &doc[&case.id]["latency"];
            let p50_ns = case.p50_ms.unwrap() * 1e6;
            assert!((latency["value"].as_f64().unwrap() - p50_ns).abs() < 1e-6 * p50_ns);
            assert!(latency["lower_value"].as_f64().unwrap() <= p50_ns);
            assert!(latency["upper_value"].as_f64().unwrap() >= p50_ns);
        }
        let schema: Value =
            serde_json::from_str(include_str!("../../../../docs/schemas/bmf.schema.json")).unwrap();
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.add_resource("bmf.json", schema).unwrap();
        let index = compiler.compile("bmf.json", &mut schemas).unwrap();
        schemas.validate(&doc, index).expect("valid BMF");
        let broken = json!({"k": {"latency": {"lower_value": 1.0}}});
        assert!(
            schemas.validate(&broken, index).is_err(),
            "the schema has teeth"
        );
    }
}
