//! Tests of [`super`]: every section present and in order, sorting, `n/a` cells.
use super::*;
use crate::report::test_support::{measured_case, sample_summary, summary_of};

#[test]
fn every_section_is_present_in_order() {
    let md = render_summary_markdown(
        &sample_summary(),
        Some("| metric | status |\n|---|---|\n| x | regress |"),
    );
    let order = [
        "# apex-bench report",
        "## Environment",
        "## Leaderboard (by p50)",
        "## Timing modes (CUDA: cold, launch, batch)",
        "## Resource use",
        "## Skipped (1)",
        "## Failed (2)",
        "## Key findings",
        "## Recommendations",
        "## Regressions",
        "| x | regress |",
        ".partial/<run_id>/cases.jsonl",
    ];
    let mut at = 0;
    for h in order {
        let pos = md[at..]
            .find(h)
            .unwrap_or_else(|| panic!("`{h}` missing after byte {at}:\n{md}"));
        at += pos + h.len();
    }
    assert!(md.ends_with('\n'));
}

#[test]
fn leaderboard_is_sorted_by_p50_and_lists_only_ok_cases() {
    let md = render_summary_markdown(&sample_summary(), None);
    let board = &md[md.find("## Leaderboard").unwrap()..md.find("## Timing modes").unwrap()];
    let rows: Vec<&str> = board
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 3, "{board}");
    assert!(
        rows[0].starts_with("| 1 | tile_ops.tile_pack | cuda |"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("| 2 | tile_ops.fusion_gate | cpu |"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].starts_with("| 3 | tile_ops.tile_pack | cpu |"),
        "{}",
        rows[2]
    );
    assert!(rows[0].contains("| 0.05000 |"), "{}", rows[0]);
    assert!(rows[0].contains("tiles/s"), "{}", rows[0]);
    assert!(
        !board.contains("nn_ops.gelu"),
        "failed_accuracy timing is not on the leaderboard"
    );
    assert!(!md.contains("## Regressions"));
}

#[test]
fn missing_values_print_na() {
    let mut c = measured_case("a.b", "cpu", 1.0, 0.01);
    c.throughput = None;
    c.accuracy = None;
    c.resources = Default::default();
    let mut s = summary_of(vec![c]);
    s.environment = serde_json::json!({});
    let md = render_summary_markdown(&s, None);
    assert!(md.contains("| GPU | n/a |"), "{md}");
    assert!(md.contains("| git | n/a |"), "{md}");
    let row = md.lines().find(|l| l.starts_with("| 1 | a.b |")).unwrap();
    assert!(row.ends_with("| n/a | n/a | n/a | n/a | n/a |"), "{row}");
}

#[test]
fn environment_reads_the_merged_keys() {
    let md = render_summary_markdown(&sample_summary(), None);
    for s in [
        "| host | bench-01 |",
        "| OS | Debian GNU/Linux 12 (kernel 6.1.0) |",
        "| CPU | Test CPU 3000 (16 logical CPUs, x86_64) |",
        "| GPU | NVIDIA H100 |",
        "- cases: 6 (failed 1, failed_accuracy 1, ok 3, skipped 1)",
        "| driver | 570.1 |",
        "| CUDA | 12.8 |",
        "| git | 0123456789abcdef0123456789abcdef01234567 (dirty) |",
    ] {
        assert!(md.contains(s), "`{s}` missing:\n{md}");
    }
    let mut s = sample_summary();
    s.environment =
        serde_json::json!({"cuda": {"available": false, "reason": "libcuda.so.1 not found"}});
    let md = render_summary_markdown(&s, None);
    assert!(
        md.contains("| GPU | none (libcuda.so.1 not found) |"),
        "{md}"
    );
}

#[test]
fn failures_and_skips_carry_their_reasons() {
    let md = render_summary_markdown(&sample_summary(), None);
    assert!(md.contains("signal: SIGSEGV (segmentation fault)"));
    assert!(md.contains("| cuda_unavailable: libcuda.so.1 not found | 1 |"));
    assert!(
        md.contains("| 12.5% |"),
        "mismatch ratio of the failed_accuracy case"
    );
    assert!(md.contains("| 3.00× |"), "cold over batch ratio");
}

#[test]
fn a_regressions_block_with_its_own_heading_is_not_given_a_second_one() {
    let md = render_summary_markdown(&sample_summary(), Some("## Regressions\n\nnone\n"));
    assert_eq!(md.matches("## Regressions").count(), 1);
}

#[test]
fn the_hot_batch_gets_its_columns_only_when_a_case_has_it() {
    let plain = render_summary_markdown(&sample_summary(), None);
    assert!(!plain.contains("batch_hot"), "{plain}");

    let mut case = measured_case("tile_ops.tile_pack", "cuda", 0.05, 0.01);
    let mut hot = case.timing["batch"].clone();
    hot.stats = crate::report::test_support::stats(0.02, 0.01);
    hot.cache = Some("l2_hot".into());
    hot.buffer_sets = Some(1);
    case.timing.insert(HOT_BATCH_MODE.into(), hot);
    let md = render_summary_markdown(&summary_of(vec![case]), None);
    let modes = &md[md.find("## Timing modes").unwrap()..md.find("## Resource use").unwrap()];
    assert!(
        modes.contains("batch_hot p50 ms") && modes.contains("batch_hot cache"),
        "{modes}"
    );
    let row = modes
        .lines()
        .find(|l| l.starts_with("| tile_ops.tile_pack"))
        .unwrap();
    assert!(row.ends_with("| 0.02000 | l2_hot |"), "{row}");
}

#[test]
fn short_holds_are_listed_under_the_timing_modes_only_where_a_sample_had_one() {
    let plain = render_summary_markdown(&sample_summary(), None);
    assert!(!plain.contains("Short holds"), "{plain}");

    let mut case = measured_case("tile_ops.tile_pack", "cuda", 0.05, 0.01);
    case.timing.get_mut("batch").unwrap().short_holds = Some(3);
    let md = render_summary_markdown(&summary_of(vec![case.clone()]), None);
    let modes = &md[md.find("## Timing modes").unwrap()..md.find("## Resource use").unwrap()];
    let n = case.timing["batch"].stats.n;
    assert!(modes.contains("Short holds"), "{modes}");
    assert!(
        modes.contains(&format!("- `{}` batch: 3 of {n} samples", case.id)),
        "{modes}"
    );
}
