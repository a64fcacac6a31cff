//! The files a comparison produces, as data and as text, and [`write_outputs`] which writes them
//! atomically through `report::write_*`:
//!
//! - `compare_summary.json`: the seeds' `--summary` format (`suite, status, required_status,
//!   current_status, checks[]`) plus `schema_version`, per-kind `counts`, verdict evidence,
//!   `unbaselined_cases`, the `gate_options` used and, for a run of part of the suite, its
//!   `selection` and `unselected_metrics`;
//! - `trend.json`: the normalized trend artifact (`schema_version, suite, timestamp_utc,
//!   overall_status, required_status, current_status, total_metrics, failed_metrics, metrics[]`),
//!   the same shape for every backend (the seeds' CPU file lacked the two status keys);
//! - `regressions.md`: failures first, then noise-aware regressions, improvements, inconclusive
//!   checks and unbaselined cases.

use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::CompareError;
use super::comparison::{Check, CheckStatus, Comparison, STATUS_METRIC};
use super::verdict::Verdict;
use crate::report::{write_atomic, write_json_atomic};

pub const COMPARE_SCHEMA_VERSION: u32 = 1;
pub const TREND_SCHEMA_VERSION: u32 = 1;
pub const COMPARE_SUMMARY_FILE: &str = "compare_summary.json";
pub const TREND_FILE: &str = "trend.json";
pub const REGRESSIONS_FILE: &str = "regressions.md";

/// The compare summary (seed 001 `--summary`, extended).
pub fn compare_summary_json(cmp: &Comparison) -> Value {
    let checks: Vec<Value> = cmp.checks.iter().map(check_json).collect();
    let mut v = json!({
        "schema_version": COMPARE_SCHEMA_VERSION,
        "suite": cmp.suite,
        "baseline_suite": cmp.baseline_suite,
        "timestamp_utc": cmp.timestamp_utc,
        "status": cmp.overall_status(),
        "required_status": cmp.required_status,
        "current_status": cmp.current_status,
        "counts": cmp.counts(),
        "checks": checks,
        "unbaselined_cases": cmp.unbaselined_cases,
        "gate_options": cmp.options,
    });
    if !cmp.selection.is_empty() {
        v["selection"] = json!(cmp.selection);
        v["unselected_metrics"] = json!(cmp.unselected_metrics);
    }
    if cmp.debug_build {
        v["build_profile"] = json!("debug");
    }
    v
}

fn check_json(c: &Check) -> Value {
    if c.status == CheckStatus::StatusMismatch {
        return json!({
            "metric": c.metric,
            "status": c.status.as_str(),
            "expected": c.expected,
            "current": c.current,
            "reason": c.reason,
        });
    }
    let mut v = json!({
        "metric": c.metric,
        "status": c.status.as_str(),
        "baseline_ms": c.baseline_ms,
        "allowed_max_ms": c.allowed_max_ms,
        "current_ms": c.current_ms,
    });
    let obj = v.as_object_mut().expect("json! object");
    // The seeds leave `regression_ratio` out of missing entries and write null for a
    // non-positive baseline.
    if c.current_ms.is_some() {
        obj.insert("regression_ratio".into(), json!(c.regression_ratio));
    }
    if let Some(verdict) = &c.verdict {
        obj.insert("verdict".into(), json!(verdict));
    }
    if let Some(reason) = &c.reason {
        obj.insert("reason".into(), json!(reason));
    }
    v
}

/// The normalized trend artifact (seed 001).
pub fn trend_json(cmp: &Comparison) -> Value {
    let counts = cmp.counts();
    let metrics: Vec<Value> = cmp
        .checks
        .iter()
        .map(|c| {
            json!({
                "metric": c.metric,
                "status": c.status.as_str(),
                "baseline_ms": c.baseline_ms,
                "allowed_max_ms": c.allowed_max_ms,
                "current_ms": c.current_ms,
                "regression_ratio": c.regression_ratio,
                "verdict": c.verdict_kind().map(Verdict::as_str),
            })
        })
        .collect();
    json!({
        "schema_version": TREND_SCHEMA_VERSION,
        "suite": cmp.suite,
        "timestamp_utc": cmp.timestamp_utc,
        "overall_status": cmp.overall_status(),
        "required_status": cmp.required_status,
        "current_status": cmp.current_status,
        "total_metrics": counts.total,
        "failed_metrics": counts.failed,
        "over_limit_metrics": counts.over_limit,
        "missing_metrics": counts.missing,
        "case_not_ok_metrics": counts.case_not_ok,
        "failed_accuracy_metrics": counts.failed_accuracy,
        "regressed_verdicts": counts.verdict_regress,
        "improved_verdicts": counts.verdict_improve,
        "metrics": metrics,
    })
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{x:.4}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{:+.1}%", x * 100.0))
}

fn verdict_cell(c: &Check) -> String {
    let Some(v) = &c.verdict else {
        return "-".into();
    };
    match (
        v.ratio,
        v.ratio_ci_low,
        v.ratio_ci_high,
        v.ci_low_ms,
        v.ci_high_ms,
    ) {
        (Some(r), Some(lo), Some(hi), _, _) => {
            format!("{} (ratio {r:.3}, CI {lo:.3}–{hi:.3})", v.verdict.as_str())
        }
        (_, _, _, Some(lo), Some(hi)) => format!("{} (CI {lo:.4}–{hi:.4} ms)", v.verdict.as_str()),
        _ => format!("{} (point)", v.verdict.as_str()),
    }
}

/// `regressions.md`.
/// The median of `current / baseline - 1` over the checks that have both, and how many there are.
fn median_change(cmp: &Comparison) -> Option<(f64, usize)> {
    let mut changes: Vec<f64> = cmp
        .checks
        .iter()
        .filter_map(|c| c.regression_ratio)
        .filter(|r| r.is_finite())
        .collect();
    if changes.is_empty() {
        return None;
    }
    changes.sort_by(f64::total_cmp);
    Some((crate::stats::quantile_sorted(&changes, 0.5), changes.len()))
}

pub fn render_regressions_markdown(cmp: &Comparison) -> String {
    let counts = cmp.counts();
    let mut md = String::new();
    let _ = writeln!(md, "# Regressions\n");
    let _ = writeln!(md, "- gate: **{}**", cmp.overall_status());
    let _ = writeln!(
        md,
        "- suite: `{}` (baseline suite `{}`)",
        cmp.suite, cmp.baseline_suite
    );
    let _ = writeln!(md, "- run: {}", cmp.timestamp_utc);
    let _ = writeln!(
        md,
        "- run status: `{}`{}",
        cmp.current_status,
        cmp.required_status
            .as_ref()
            .map(|r| format!(" (required `{r}`)"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        md,
        "- checks: {} total, {} passed, {} over limit, {} missing, {} case not ok, {} failed accuracy, {} run status",
        counts.total,
        counts.passed,
        counts.over_limit,
        counts.missing,
        counts.case_not_ok,
        counts.failed_accuracy,
        counts.status_mismatch
    );
    for note in gate_notes(cmp) {
        let _ = writeln!(md, "- {note}");
    }
    let _ = writeln!(
        md,
        "- noise-aware verdicts: {} pass, {} regress, {} improve, {} inconclusive (threshold {:.1}% on devices, {:.1}% on the CPU, twice that for tail quantiles; {:.0}% intervals)",
        counts.verdict_pass,
        counts.verdict_regress,
        counts.verdict_improve,
        counts.verdict_inconclusive,
        cmp.options.practical_threshold * 100.0,
        cmp.options.cpu_practical_threshold * 100.0,
        cmp.options.bootstrap.confidence_level * 100.0
    );
    if let Some((median, n)) = median_change(cmp) {
        let _ = writeln!(
            md,
            "- median change across the {n} metrics with a value on both sides: {:+.1}% (a uniform slowdown, such as a lost compiler flag, moves this line while every case stays within its limit)",
            median * 100.0
        );
    }
    if !cmp.baseline_notes.is_empty() {
        let _ = writeln!(md, "- baseline notes: {}", cmp.baseline_notes);
    }
    let table = |md: &mut String, title: &str, rows: Vec<&Check>, empty: &str| {
        let _ = writeln!(md, "\n## {title}\n");
        if rows.is_empty() {
            let _ = writeln!(md, "{empty}");
            return;
        }
        let _ = writeln!(
            md,
            "| metric | status | baseline ms | allowed max ms | current ms | change | verdict | reason |"
        );
        let _ = writeln!(md, "| --- | --- | --- | --- | --- | --- | --- | --- |");
        for c in rows {
            let _ = writeln!(
                md,
                "| `{}` | `{}` | {} | {} | {} | {} | {} | {} |",
                c.metric,
                c.status.as_str(),
                ms(c.baseline_ms),
                ms(c.allowed_max_ms),
                ms(c.current_ms),
                pct(c.regression_ratio),
                verdict_cell(c),
                c.reason
                    .as_deref()
                    .unwrap_or("")
                    .replace('|', "\\|")
                    .replace('\n', " ")
            );
        }
    };
    let failures: Vec<&Check> = cmp
        .checks
        .iter()
        .filter(|c| c.status != CheckStatus::Pass && !cmp.excused(c))
        .collect();
    table(
        &mut md,
        "Gate failures",
        failures,
        "None: every baselined metric is within its limit.",
    );
    if cmp.options.confirm {
        table(
            &mut md,
            "Over the limit, not confirmed by the samples (`--confirm`)",
            cmp.checks.iter().filter(|c| cmp.excused(c)).collect(),
            "None.",
        );
    }
    let by_verdict = |v: Verdict| -> Vec<&Check> {
        cmp.checks
            .iter()
            .filter(|c| c.status == CheckStatus::Pass && c.verdict_kind() == Some(v))
            .collect()
    };
    table(
        &mut md,
        "Regressions within the limit",
        by_verdict(Verdict::Regress),
        "None: no statistically and practically significant slowdown below the limits.",
    );
    table(
        &mut md,
        "Improvements",
        by_verdict(Verdict::Improve),
        "None.",
    );
    table(
        &mut md,
        "Inconclusive",
        by_verdict(Verdict::Inconclusive),
        "None: every interval was decisive.",
    );
    let _ = writeln!(md, "\n## Cases not in the baseline\n");
    if cmp.unbaselined_cases.is_empty() {
        let _ = writeln!(md, "None.");
    } else {
        for id in &cmp.unbaselined_cases {
            let _ = writeln!(md, "- `{id}`");
        }
        let _ = writeln!(
            md,
            "\nAdd them with `apex-host baseline emit` and merge the keys by hand."
        );
    }
    md
}

/// The gate's notes beside its checks, one Markdown sentence each (inline code, bold): what a run
/// of part of the suite left unchecked, and the warning of a run measured by a debug build. The
/// same sentences in `regressions.md`, compare's terminal and index.html.
pub fn gate_notes(cmp: &Comparison) -> Vec<String> {
    notes_of(&cmp.selection, cmp.unselected_metrics, cmp.debug_build)
}

/// [`gate_notes`] from the fields `compare_summary.json` keeps (`selection`,
/// `unselected_metrics`, `build_profile`).
pub fn notes_of(selection: &str, unselected_metrics: usize, debug_build: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if !selection.is_empty() {
        notes.push(format!(
            "selection: `{selection}`; the gate checks the baseline's metrics of the selected cases, {unselected_metrics} metric(s) of cases it leaves out were not checked"
        ));
    }
    if debug_build {
        notes.push("build: **debug** (apex-host, and the plugins it built): a debug build's timings are not comparable with a baseline of release builds (hint: `cargo run --release -p apex-host -- run …`)".to_string());
    }
    notes
}

/// One line per check, the seeds' `perf_check metric=… status=…` format, for terminals and logs.
pub fn check_lines(cmp: &Comparison) -> Vec<String> {
    cmp.checks
        .iter()
        .map(|c| {
            if c.metric == STATUS_METRIC {
                return format!(
                    "perf_check metric={} status={} expected={} current={}",
                    c.metric,
                    c.status.as_str(),
                    c.expected.as_deref().unwrap_or("-"),
                    c.current.as_deref().unwrap_or("-")
                );
            }
            format!(
                "perf_check metric={} status={} baseline_ms={} allowed_max_ms={} current_ms={} verdict={}",
                c.metric,
                c.status.as_str(),
                ms(c.baseline_ms),
                ms(c.allowed_max_ms),
                ms(c.current_ms),
                c.verdict_kind().map_or("-", Verdict::as_str)
            )
        })
        .collect()
}

/// Writes `compare_summary.json`, `trend.json` and `regressions.md` into `out_dir` (created if
/// needed) and returns their paths in that order.
pub fn write_outputs(cmp: &Comparison, out_dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
    let summary = out_dir.join(COMPARE_SUMMARY_FILE);
    let trend = out_dir.join(TREND_FILE);
    let md = out_dir.join(REGRESSIONS_FILE);
    write_json_atomic(&summary, &compare_summary_json(cmp))?;
    write_json_atomic(&trend, &trend_json(cmp))?;
    write_atomic(&md, render_regressions_markdown(cmp).as_bytes())?;
    Ok(vec![summary, trend, md])
}
