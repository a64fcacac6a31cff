//! `results.csv`: one row per case, every case of the run (a skipped or failed one has its
//! status and reason and empty figures). RFC 4180: comma-separated, CRLF line ends, a field with
//! a comma, quote or line break in double quotes with quotes doubled.

use crate::model::RunSummary;

const COLUMNS: [&str; 16] = [
    "case_id",
    "kernel",
    "backend",
    "precision",
    "params",
    "status",
    "headline_mode",
    "p50_ms",
    "p95_ms",
    "median_ci_low_ms",
    "median_ci_high_ms",
    "unit",
    "unit_per_s",
    "gbps",
    "pct_of_copy_bandwidth",
    "reason",
];

pub fn render(summary: &RunSummary) -> String {
    let mut out = String::new();
    push_row(&mut out, COLUMNS.iter().map(|c| c.to_string()));
    for case in summary.benchmarks.values() {
        let h = super::headline(case);
        let num = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
        let pct = case
            .throughput
            .as_ref()
            .and_then(|t| t.pct_of_copy_bandwidth)
            .filter(|_| h.is_some());
        push_row(
            &mut out,
            [
                case.id.clone(),
                case.key.kernel.clone(),
                case.key.backend.clone(),
                case.key.precision.clone(),
                case.key.params_label(),
                case.status.as_str().to_string(),
                case.headline
                    .clone()
                    .filter(|_| h.is_some())
                    .unwrap_or_default(),
                num(h.as_ref().map(|h| h.p50_ms)),
                num(case.p95_ms.filter(|_| h.is_some())),
                num(h.as_ref().map(|h| h.ci_low_ms)),
                num(h.as_ref().map(|h| h.ci_high_ms)),
                h.as_ref()
                    .and_then(|h| h.unit_rate)
                    .map(|(u, _)| u.trim_end_matches("_per_s").to_string())
                    .unwrap_or_default(),
                num(h.as_ref().and_then(|h| h.unit_rate).map(|(_, v)| v)),
                num(h.as_ref().and_then(|h| h.gbps)),
                num(pct),
                case.reason.clone().unwrap_or_default(),
            ]
            .into_iter(),
        );
    }
    out
}

fn push_row(out: &mut String, fields: impl Iterator<Item = String>) {
    let fields: Vec<String> = fields.map(|f| quote(&f)).collect();
    out.push_str(&fields.join(","));
    out.push_str("\r\n");
}

/// A field as RFC 4180 writes it.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_summary;

    /// A minimal RFC 4180 reader, to prove the file reads back field for field.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
        let mut chars = text.chars().peekable();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => field.push(c),
                (false, '"') => quoted = true,
                (false, ',') => row.push(std::mem::take(&mut field)),
                (false, '\r') => {}
                (false, '\n') => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                (false, c) => field.push(c),
            }
        }
        rows
    }

    #[test]
    fn every_case_is_a_row_that_reads_back() {
        let s = sample_summary();
        let rows = parse(&render(&s));
        assert_eq!(rows[0], COLUMNS);
        assert_eq!(rows.len(), s.benchmarks.len() + 1);
        for (row, case) in rows[1..].iter().zip(s.benchmarks.values()) {
            assert_eq!(row.len(), COLUMNS.len());
            assert_eq!(row[0], case.id, "ids with commas survive quoting");
            assert_eq!(row[5], case.status.as_str());
            if case.status == crate::model::CaseStatus::Ok {
                assert_eq!(row[7].parse::<f64>().unwrap(), case.p50_ms.unwrap());
            } else {
                assert!(row[7].is_empty(), "no figure for a case that is not ok");
            }
        }
        assert_eq!(quote("a\"b,c"), "\"a\"\"b,c\"");
    }
}
