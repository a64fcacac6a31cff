//! `junit.xml`: one JUnit test case per benchmark case, grouped in one test suite per kernel, so
//! CI systems show benchmark outcomes as tests. `failed` and `failed_accuracy` cases are
//! `<failure>`s (type = the status, message = the reason); so is a case the regression gate
//! failed (type `regression`, message = the gate's reason); `skipped` cases are `<skipped>`. A
//! test case's `time` is the case's sampling time. The shape follows the common JUnit schema
//! (`testsuites` > `testsuite` > `testcase` > `failure` | `skipped` | `system-out`).

use std::collections::BTreeMap;

use crate::compare::{CheckStatus, Comparison};
use crate::model::{CaseResult, CaseStatus, RunSummary};

pub fn render(summary: &RunSummary, gate: Option<&Comparison>) -> String {
    let regressions = gate_failures(gate);
    let mut suites: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for case in summary.benchmarks.values() {
        suites
            .entry(case.key.kernel.as_str())
            .or_default()
            .push(case);
    }
    let failed = |c: &CaseResult| {
        matches!(c.status, CaseStatus::Failed | CaseStatus::FailedAccuracy)
            || regressions.contains_key(c.id.as_str())
    };
    let time = |c: &CaseResult| c.protocol.as_ref().map_or(0.0, |p| p.measure_time_s);
    let all: Vec<&CaseResult> = summary.benchmarks.values().collect();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"apex-bench\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6}\" timestamp=\"{}\">\n",
        all.len(),
        all.iter().filter(|c| failed(c)).count(),
        all.iter().filter(|c| c.status == CaseStatus::Skipped).count(),
        all.iter().map(|c| time(c)).sum::<f64>(),
        escape(&summary.timestamp_utc),
    ));
    for (kernel, cases) in &suites {
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6}\">\n",
            escape(kernel),
            cases.len(),
            cases.iter().filter(|c| failed(c)).count(),
            cases.iter().filter(|c| c.status == CaseStatus::Skipped).count(),
            cases.iter().map(|c| time(c)).sum::<f64>(),
        ));
        for case in cases {
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6}\"",
                escape(kernel),
                escape(&case.id),
                time(case)
            ));
            let reason = escape(case.reason.as_deref().unwrap_or(""));
            let mut body = String::new();
            match case.status {
                CaseStatus::Failed | CaseStatus::FailedAccuracy => body.push_str(&format!(
                    "      <failure type=\"{}\" message=\"{reason}\">{reason}</failure>\n",
                    case.status.as_str()
                )),
                CaseStatus::Skipped => {
                    body.push_str(&format!("      <skipped message=\"{reason}\"/>\n"));
                }
                CaseStatus::Ok => {}
            }
            if let Some(why) = regressions.get(case.id.as_str()) {
                let why = escape(why);
                body.push_str(&format!(
                    "      <failure type=\"regression\" message=\"{why}\">{why}</failure>\n"
                ));
            }
            if let (Some(p50), Some(mode)) = (case.p50_ms, case.headline.as_deref()) {
                body.push_str(&format!(
                    "      <system-out>p50 {p50} ms ({mode})</system-out>\n"
                ));
            }
            if body.is_empty() {
                xml.push_str("/>\n");
            } else {
                xml.push_str(">\n");
                xml.push_str(&body);
                xml.push_str("    </testcase>\n");
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Case id → the gate's reason, for every metric check that failed on a case.
fn gate_failures(gate: Option<&Comparison>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for check in gate.map(|g| g.checks.as_slice()).unwrap_or_default() {
        if check.status != CheckStatus::Fail {
            continue;
        }
        let Some((case, stat)) = crate::compare::split_metric(&check.metric) else {
            continue;
        };
        let why = check
            .reason
            .clone()
            .unwrap_or_else(|| format!("{stat} over the baseline's limit"));
        out.entry(case.to_string())
            .and_modify(|w: &mut String| {
                w.push_str("; ");
                w.push_str(&why);
            })
            .or_insert(why);
    }
    out
}

/// Text as XML attribute or element content.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            c if (c as u32) < 0x20 && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    #[test]
    fn statuses_become_failures_and_skips_and_the_counts_agree() {
        let s = sample_summary();
        let xml = render(&s, None);
        let count =
            |status: CaseStatus| s.benchmarks.values().filter(|c| c.status == status).count();
        let failures = count(CaseStatus::Failed) + count(CaseStatus::FailedAccuracy);
        assert_eq!(xml.matches("<testcase ").count(), s.benchmarks.len());
        assert_eq!(xml.matches("<failure ").count(), failures);
        assert_eq!(xml.matches("<skipped ").count(), count(CaseStatus::Skipped));
        assert!(xml.contains(&format!(
            "tests=\"{}\" failures=\"{failures}\"",
            s.benchmarks.len()
        )));
        assert_eq!(
            xml.matches("<testsuite ").count(),
            xml.matches("</testsuite>").count()
        );
        assert_eq!(escape("a<b & \"c\"\n"), "a&lt;b &amp; &quot;c&quot;&#10;");
    }
}
