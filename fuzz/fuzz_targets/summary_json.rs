//! The run-summary reader on arbitrary text: `summary.json` as `compare`, `report` and `baseline
//! emit` read it (serde into `RunSummary`), then everything those commands compute from it: the
//! gate against a fixed baseline and against itself, the baseline template, the history record
//! and the Markdown report. Nothing panics.

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use apex_host::compare::history::HistoryRecord;
use apex_host::compare::{
    Baseline, GateOptions, TemplateOptions, compare_summary_json, emit_template, gate,
    render_regressions_markdown,
};
use apex_host::model::RunSummary;
use apex_host::report::render_summary_markdown;
use libfuzzer_sys::fuzz_target;

/// The attestation fixture's baseline, to gate the fuzzed runs against.
fn baseline() -> &'static Baseline {
    static BASELINE: OnceLock<Baseline> = OnceLock::new();
    BASELINE.get_or_init(|| {
        Baseline::parse(
            include_str!("../../host/tests/fixtures/attest/baseline.json"),
            Path::new("baseline.json"),
        )
        .expect("the fixture baseline parses")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(run) = serde_json::from_str::<RunSummary>(text) else {
        return;
    };
    let opts = GateOptions::default();
    let cmp = gate(&run, baseline(), &opts);
    let _ = compare_summary_json(&cmp);
    let _ = render_regressions_markdown(&cmp);
    let emitted = emit_template(&run, &TemplateOptions::default());
    let against_itself = gate(
        &run,
        &Baseline::from_run(run.clone(), &TemplateOptions::default()),
        &opts,
    );
    let _ = against_itself.exit_code();
    let _ = emitted.baseline.metrics.len();
    let _ = HistoryRecord::from_run(&run);
    let _ = render_summary_markdown(&run, Some("## Regressions\n"));
});
