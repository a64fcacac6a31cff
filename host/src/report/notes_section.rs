//! The `## Kernel notes` section of `summary.md`: what each kernel said about its calls
//! (`Instance::notes`), e.g. an engine runtime's warnings in trtexec's words and the trtexec
//! fields it cannot measure, one bullet per note under the case's id.

use crate::model::RunSummary;

/// Appends the section, or nothing when no case has a note.
pub fn notes_section(s: &RunSummary, md: &mut String) {
    let cases: Vec<_> = s
        .benchmarks
        .values()
        .filter(|c| !c.notes.is_empty())
        .collect();
    if cases.is_empty() {
        return;
    }
    md.push_str("## Kernel notes\n\n");
    for c in cases {
        md.push_str(&format!("`{}`\n\n", c.id));
        for note in &c.notes {
            md.push_str(&format!("- {note}\n"));
        }
        md.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, summary_of};

    #[test]
    fn cases_without_notes_leave_no_section() {
        let s = summary_of(vec![measured_case("tile_ops.tile_pack", "cpu", 1.0, 0.01)]);
        let mut md = String::new();
        notes_section(&s, &mut md);
        assert!(md.is_empty());
    }

    #[test]
    fn each_note_is_a_bullet_under_its_case() {
        let mut c = measured_case("trt_engine.engine", "cpu", 1.0, 0.01);
        c.notes = vec![
            "runtime: ONNX Runtime 1.32.0".into(),
            "* Latency is unstable, with coefficient of variance = 3.1000%".into(),
        ];
        let mut md = String::new();
        notes_section(&summary_of(vec![c]), &mut md);
        assert!(
            md.starts_with("## Kernel notes\n\n`trt_engine.engine/cpu/"),
            "{md}"
        );
        assert!(
            md.contains("\n- runtime: ONNX Runtime 1.32.0\n- * Latency"),
            "{md}"
        );
    }
}
