//! `github-action-benchmark.json`: the `customSmallerIsBetter` input of
//! benchmark-action/github-action-benchmark: a JSON array of `{name, unit, value, range, extra}`.
//! One entry per ok case: its headline p50 in ms, the half-width of the median's 95 % CI as
//! `range` (`± x`), and the mode, unit rate and bandwidth in `extra`.

use serde_json::{Value, json};

use crate::model::RunSummary;

pub fn render(summary: &RunSummary) -> String {
    let entries: Vec<Value> = summary
        .benchmarks
        .values()
        .filter_map(|case| {
            let h = super::headline(case)?;
            let half_width = (h.ci_high_ms - h.ci_low_ms) / 2.0;
            let mut extra = vec![format!("mode: {}", case.headline.as_deref().unwrap_or("?"))];
            if let Some((unit, rate)) = h.unit_rate {
                extra.push(format!("{unit}: {rate:.6e}"));
            }
            if let Some(gbps) = h.gbps {
                extra.push(format!("GB/s: {gbps:.3}"));
            }
            Some(json!({
                "name": case.id,
                "unit": "ms",
                "value": h.p50_ms,
                "range": format!("± {half_width:.6}"),
                "extra": extra.join("\n"),
            }))
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    #[test]
    fn entries_have_the_fields_the_action_reads() {
        let s = sample_summary();
        let doc: Value = serde_json::from_str(&render(&s)).unwrap();
        let entries = doc.as_array().unwrap();
        assert!(!entries.is_empty());
        for e in entries {
            assert!(e["name"].is_string() && e["unit"] == "ms");
            assert!(e["value"].as_f64().unwrap() > 0.0);
            assert!(e["range"].as_str().unwrap().starts_with("± "));
            let case = &s.benchmarks[e["name"].as_str().unwrap()];
            assert_eq!(case.p50_ms, e["value"].as_f64());
        }
    }
}
