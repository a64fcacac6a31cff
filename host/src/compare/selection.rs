//! [`Selection`]: the part of the suite a run chose with `--filter`, `--backends` and
//! `--precision`, read back from its summary's `config`, so that the gate checks the baseline's
//! metrics of those cases only. A baseline metric of a case the selection leaves out is not a
//! `missing` check but an unselected one, counted and named in the gate's outputs; a metric of a
//! selected case the run lacks (a renamed case) is still `missing`.

use crate::model::RunSummary;
use crate::plan::Filter;

/// The cases a run selected.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    filter: Filter,
    globs: Vec<String>,
    backends: Option<Vec<String>>,
    precisions: Option<Vec<String>>,
}

impl Selection {
    /// The selection `summary` records (`config.filter`, `config.backends`,
    /// `config.precisions`); every case when it records none, or globs that no longer parse.
    pub fn of(summary: &RunSummary) -> Selection {
        let strings = |key: &str| -> Option<Vec<String>> {
            summary.config.get(key)?.as_array().map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
        };
        let globs = strings("filter").unwrap_or_default();
        Selection {
            filter: Filter::new(&globs).unwrap_or_default(),
            globs,
            backends: strings("backends"),
            precisions: strings("precisions"),
        }
    }

    /// Whether the selection keeps the case `id` (`kernel/backend/precision/params`). An id not
    /// of that form (none that a run writes) is kept.
    pub fn keeps(&self, id: &str) -> bool {
        let mut parts = id.splitn(4, '/');
        let (Some(_), Some(backend), Some(precision)) = (parts.next(), parts.next(), parts.next())
        else {
            return true;
        };
        let listed = |list: &Option<Vec<String>>, v: &str| {
            list.as_ref().is_none_or(|l| l.iter().any(|x| x == v))
        };
        self.filter.keeps_id(id)
            && listed(&self.backends, backend)
            && listed(&self.precisions, precision)
    }

    /// The flags that made the selection, as typed: `--filter 'a' --backends cuda`.
    pub fn flags(&self) -> String {
        let mut parts: Vec<String> = self
            .globs
            .iter()
            .map(|g| format!("--filter '{g}'"))
            .collect();
        if let Some(b) = &self.backends {
            parts.push(format!("--backends {}", b.join(",")));
        }
        if let Some(p) = &self.precisions {
            parts.push(format!("--precision {}", p.join(",")));
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(config: serde_json::Value) -> Selection {
        let mut summary = crate::report::test_support::summary_of(Vec::new());
        summary.config = config;
        Selection::of(&summary)
    }

    const SSM: &str = "tile_ssm.bidirectional/cuda/fp16/batch=1,channels=128,steps=256";
    const OPS: &str = "tile_ops.tile_pack/cpu/fp32/batch=1,tile_size=8";

    #[test]
    fn no_flags_select_every_case() {
        let s = selection(serde_json::json!({"filter": [], "backends": null, "precisions": null}));
        assert!(s.keeps(SSM) && s.keeps(OPS));
        assert_eq!(s.flags(), "");
        // A summary without a config (an older or hand-written one) selects everything too.
        let none = selection(serde_json::Value::Null);
        assert!(none.keeps(SSM) && none.keeps(OPS) && none.flags().is_empty());
    }

    #[test]
    fn the_filter_matches_the_kernel_or_the_whole_id_as_the_plan_does() {
        let s = selection(serde_json::json!({"filter": ["tile_ssm.*"]}));
        assert!(s.keeps(SSM) && !s.keeps(OPS));
        let by_id = selection(serde_json::json!({"filter": ["*/cpu/*"]}));
        assert!(by_id.keeps(OPS) && !by_id.keeps(SSM));
        assert_eq!(s.flags(), "--filter 'tile_ssm.*'");
    }

    #[test]
    fn backends_and_precisions_keep_only_the_listed_values() {
        let s = selection(serde_json::json!({"backends": ["cpu"], "precisions": ["fp32", "bf16"]}));
        assert!(s.keeps(OPS) && !s.keeps(SSM));
        let fp16 = selection(serde_json::json!({"precisions": ["fp16"]}));
        assert!(fp16.keeps(SSM) && !fp16.keeps(OPS));
        assert_eq!(s.flags(), "--backends cpu --precision fp32,bf16");
        // A key that is not a case id (a seed key's unresolved form) is never dropped.
        assert!(s.keeps("benchmarks.tile_ops.tilepack.dispatch.p50_ms"));
    }
}
