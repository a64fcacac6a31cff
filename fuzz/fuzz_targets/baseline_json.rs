//! The baseline reader (`apex_host::compare::Baseline::parse`, what `compare` and `run --compare`
//! call) on arbitrary text, a baseline file or a run's summary.json; what parses is then gated
//! against a fixed run and rendered. Nothing panics, and a parse error names the file.

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use apex_host::compare::{
    Baseline, GateOptions, compare_summary_json, gate, render_regressions_markdown, trend_json,
};
use apex_host::model::RunSummary;
use libfuzzer_sys::fuzz_target;

/// A real run summary (the attestation fixture) to gate the fuzzed baselines against.
fn current() -> &'static RunSummary {
    static RUN: OnceLock<RunSummary> = OnceLock::new();
    RUN.get_or_init(|| {
        serde_json::from_str(include_str!(
            "../../host/tests/fixtures/attest/reports/summary.json"
        ))
        .expect("the fixture summary parses")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let origin = Path::new("baselines/fuzz.json");
    match Baseline::parse(text, origin) {
        Ok(baseline) => {
            let cmp = gate(current(), &baseline, &GateOptions::default());
            let _ = cmp.exit_code();
            let _ = compare_summary_json(&cmp);
            let _ = trend_json(&cmp);
            let _ = render_regressions_markdown(&cmp);
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(
                shown.contains("baselines/fuzz.json"),
                "the error names the file: {shown}"
            );
        }
    }
});
