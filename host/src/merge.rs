//! [`merge`]: the reports of several runs of one plan (the shards of `--partition`, or any runs
//! of the same plan) as one report. Pure: the caller reads the `summary.json` files and writes
//! the result like any run's.
//!
//! Shards belong together when they have the same plan (digest of the case ids), the same
//! config digest (flags and suite files) and the same commit; anything else is refused with one
//! line that names the two shards and what differs. A case that two shards both ran is refused
//! too (which figure would be true?). A case of the plan that no shard ran is reported: the
//! merged report's status is `incomplete` and `plan.missing` lists them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::model::{
    CaseStatus, PlanRecord, RunSummary, STATUS_INCOMPLETE, ShardRecord, TimeAccounting,
};

/// One run to merge: where it was read from and its summary.
#[derive(Debug, Clone)]
pub struct Shard {
    pub dir: String,
    pub summary: RunSummary,
}

/// Why shards cannot be merged. Each message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give at least one report folder")]
    Empty,
    #[error(
        "`{dir}` has no plan record (its summary.json was written by an apex-host without one); rerun that shard"
    )]
    NoPlan { dir: String },
    #[error(
        "`{a}` and `{b}` are from different plans ({a_cases} vs {b_cases} cases, plan {a_digest} vs {b_digest}): run every shard with the same --filter, --backends, --precision and plugins"
    )]
    DifferentPlans {
        a: String,
        b: String,
        a_cases: usize,
        b_cases: usize,
        a_digest: String,
        b_digest: String,
    },
    #[error(
        "`{a}` and `{b}` ran with different flags or suite files (config {a_digest} vs {b_digest}): run every shard with the same command line and checkout"
    )]
    DifferentConfig {
        a: String,
        b: String,
        a_digest: String,
        b_digest: String,
    },
    #[error("`{a}` and `{b}` were built from different commits ({a_commit} vs {b_commit})")]
    DifferentCommits {
        a: String,
        b: String,
        a_commit: String,
        b_commit: String,
    },
    #[error(
        "{count} case(s) were run by more than one shard, e.g. `{first}` in `{a}` and `{b}`: give each shard once, all from one --partition scheme"
    )]
    Duplicates {
        count: usize,
        first: String,
        a: String,
        b: String,
    },
    #[error("`{dir}` has case `{case}`, which is not in the plan it claims")]
    Foreign { dir: String, case: String },
}

/// The short form of a digest in messages.
fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}

fn commit_of(s: &RunSummary) -> Option<String> {
    s.environment
        .pointer("/git/commit")
        .and_then(Value::as_str)
        .map(String::from)
}

fn host_of(s: &RunSummary) -> Option<String> {
    s.environment
        .pointer("/host/hostname")
        .and_then(Value::as_str)
        .map(String::from)
}

fn gpu_of(s: &RunSummary) -> Option<String> {
    s.environment
        .pointer("/cuda_device/name")
        .and_then(Value::as_str)
        .map(String::from)
}

/// The label of a shard in records: its partition, or `whole plan`.
fn label_of(plan: &PlanRecord) -> String {
    plan.partition
        .as_ref()
        .map_or_else(|| "whole plan".to_string(), |p| p.label.clone())
}

/// Checks that `shards` belong together and joins them into one summary.
pub fn merge(shards: Vec<Shard>) -> Result<RunSummary, MergeError> {
    let first = shards.first().ok_or(MergeError::Empty)?;
    let plans = shards
        .iter()
        .map(|s| {
            s.summary
                .plan
                .as_ref()
                .ok_or_else(|| MergeError::NoPlan { dir: s.dir.clone() })
        })
        .collect::<Result<Vec<&PlanRecord>, _>>()?;
    let base = plans[0].clone();
    for (s, plan) in shards.iter().zip(&plans).skip(1) {
        check_compatible(first, &base, s, plan)?;
    }

    let plan_ids: BTreeSet<&str> = base.case_ids.iter().map(String::as_str).collect();
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    let mut duplicates: Vec<(String, String, String)> = Vec::new();
    let mut benchmarks = BTreeMap::new();
    let mut records = Vec::new();
    let mut accounting = TimeAccounting::default();
    for (s, plan) in shards.iter().zip(&plans) {
        let label = label_of(plan);
        for (id, case) in &s.summary.benchmarks {
            if !plan_ids.contains(id.as_str()) {
                return Err(MergeError::Foreign {
                    dir: s.dir.clone(),
                    case: id.clone(),
                });
            }
            if let Some(other) = owner.insert(id.clone(), &s.dir) {
                duplicates.push((id.clone(), other.to_string(), s.dir.clone()));
                continue;
            }
            let mut case = case.clone();
            // A shard's anchors were matched against that shard alone; the merged report gets
            // its own from `merge --anchor-results`.
            case.anchors.clear();
            case.ran_on.shard = Some(label.clone());
            case.ran_on.host = host_of(&s.summary);
            benchmarks.insert(id.clone(), case);
        }
        let t = s.summary.time_accounting.as_ref();
        if let Some(t) = t {
            accounting.wall_s += t.wall_s;
            accounting.sampling_s += t.sampling_s;
            for (phase, secs) in &t.phases_s {
                *accounting.phases_s.entry(phase.clone()).or_default() += secs;
            }
        }
        records.push(ShardRecord {
            dir: s.dir.clone(),
            partition: label,
            host: host_of(&s.summary),
            gpu: gpu_of(&s.summary),
            timestamp_utc: s.summary.timestamp_utc.clone(),
            cases: s.summary.benchmarks.len(),
            wall_s: t.map(|t| t.wall_s),
        });
    }
    if let Some((first, a, b)) = duplicates.first() {
        return Err(MergeError::Duplicates {
            count: duplicates.len(),
            first: first.clone(),
            a: a.clone(),
            b: b.clone(),
        });
    }
    accounting.sampling_pct = if accounting.wall_s > 0.0 {
        100.0 * accounting.sampling_s / accounting.wall_s
    } else {
        0.0
    };

    let missing: Vec<String> = base
        .case_ids
        .iter()
        .filter(|id| !benchmarks.contains_key(*id))
        .cloned()
        .collect();
    let mut counts = BTreeMap::new();
    for status in [
        CaseStatus::Ok,
        CaseStatus::Skipped,
        CaseStatus::Failed,
        CaseStatus::FailedAccuracy,
    ] {
        let n = benchmarks.values().filter(|c| c.status == status).count();
        counts.insert(status.as_str().to_string(), n);
    }
    counts.insert("total".into(), base.case_ids.len());
    if !missing.is_empty() {
        counts.insert("missing".into(), missing.len());
    }
    let status = if missing.is_empty() {
        RunSummary::status_of(benchmarks.values()).to_string()
    } else {
        STATUS_INCOMPLETE.to_string()
    };
    let latest = shards
        .iter()
        .map(|s| s.summary.timestamp_utc.clone())
        .max()
        .unwrap_or_default();
    let mut environment = first.summary.environment.clone();
    if let Value::Object(env) = &mut environment {
        env.insert(
            "shards".into(),
            shards
                .iter()
                .map(|s| s.summary.environment.clone())
                .collect::<Vec<_>>()
                .into(),
        );
    }
    Ok(RunSummary {
        schema_version: first.summary.schema_version,
        suite: first.summary.suite.clone(),
        timestamp_utc: latest,
        environment,
        config: first.summary.config.clone(),
        status,
        counts,
        benchmarks,
        time_accounting: Some(accounting),
        plan: Some(PlanRecord {
            partition: None,
            merged_from: records,
            missing,
            ..base
        }),
        anchors: None,
    })
}

fn check_compatible(
    a: &Shard,
    a_plan: &PlanRecord,
    b: &Shard,
    b_plan: &PlanRecord,
) -> Result<(), MergeError> {
    if a_plan.digest != b_plan.digest {
        return Err(MergeError::DifferentPlans {
            a: a.dir.clone(),
            b: b.dir.clone(),
            a_cases: a_plan.case_ids.len(),
            b_cases: b_plan.case_ids.len(),
            a_digest: short(&a_plan.digest),
            b_digest: short(&b_plan.digest),
        });
    }
    if a_plan.config_digest != b_plan.config_digest {
        return Err(MergeError::DifferentConfig {
            a: a.dir.clone(),
            b: b.dir.clone(),
            a_digest: short(&a_plan.config_digest),
            b_digest: short(&b_plan.config_digest),
        });
    }
    let (ca, cb) = (commit_of(&a.summary), commit_of(&b.summary));
    if ca != cb {
        let name = |c: Option<String>| c.map_or_else(|| "no git checkout".into(), |c| short(&c));
        return Err(MergeError::DifferentCommits {
            a: a.dir.clone(),
            b: b.dir.clone(),
            a_commit: name(ca),
            b_commit: name(cb),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseKey, CaseResult, PartitionRecord};
    use crate::report::test_support::summary_of;

    fn case(id: u32, status: CaseStatus) -> CaseResult {
        let key = CaseKey {
            kernel: "k.op".into(),
            backend: "cpu".into(),
            precision: "fp32".into(),
            params: [("n".to_string(), id.to_string())].into(),
        };
        CaseResult::without_measurements(key, "k", status, "test".into())
    }

    /// Shard `index` of `total` of a 10-case plan, holding the cases `i % total == index - 1`.
    fn shard(index: u32, total: u32, commit: &str) -> Shard {
        let all: Vec<CaseResult> = (0..10).map(|i| case(i, CaseStatus::Skipped)).collect();
        let ids = all.iter().map(|c| c.id.clone()).collect();
        let mine: Vec<CaseResult> = all
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i as u32 % total == index - 1)
            .map(|(_, c)| c)
            .collect();
        let cases = mine.len();
        let mut summary = summary_of(mine);
        summary.environment = serde_json::json!({"git": {"commit": commit}, "host": {"hostname": format!("node{index}")}});
        summary.time_accounting = Some(TimeAccounting {
            wall_s: 10.0,
            sampling_s: 4.0,
            ..TimeAccounting::default()
        });
        summary.plan = Some(PlanRecord {
            digest: "plan-a".into(),
            config_digest: "config-a".into(),
            case_ids: ids,
            partition: Some(PartitionRecord {
                label: format!("slice:{index}/{total}"),
                index,
                total,
                source: "--partition".into(),
                cases,
            }),
            merged_from: Vec::new(),
            missing: Vec::new(),
        });
        Shard {
            dir: format!("shard{index}"),
            summary,
        }
    }

    #[test]
    fn shards_join_into_the_whole_plan_with_provenance() {
        let merged = merge(vec![shard(1, 3, "c"), shard(2, 3, "c"), shard(3, 3, "c")]).unwrap();
        assert_eq!(merged.benchmarks.len(), 10);
        assert_eq!(merged.status, "ok");
        assert_eq!(merged.counts["total"], 10);
        assert_eq!(merged.counts["skipped"], 10);
        let plan = merged.plan.unwrap();
        assert!(plan.partition.is_none() && plan.missing.is_empty());
        assert_eq!(plan.merged_from.len(), 3);
        let c = &merged.benchmarks[&case(1, CaseStatus::Ok).id];
        assert_eq!(c.ran_on.shard.as_deref(), Some("slice:2/3"));
        assert_eq!(c.ran_on.host.as_deref(), Some("node2"));
        let t = merged.time_accounting.unwrap();
        assert_eq!((t.wall_s, t.sampling_s, t.sampling_pct), (30.0, 12.0, 40.0));
    }

    #[test]
    fn a_missing_shard_makes_the_report_incomplete_and_names_its_cases() {
        let merged = merge(vec![shard(1, 3, "c"), shard(3, 3, "c")]).unwrap();
        assert_eq!(merged.status, STATUS_INCOMPLETE);
        assert_eq!(merged.counts["missing"], 3);
        let missing = merged.plan.unwrap().missing;
        assert_eq!(missing.len(), 3);
        assert!(missing.contains(&case(1, CaseStatus::Ok).id));
    }

    #[test]
    fn shards_that_do_not_belong_together_are_refused_in_one_line() {
        let mut other_plan = shard(2, 2, "c");
        other_plan.summary.plan.as_mut().unwrap().digest = "plan-b".into();
        let e = merge(vec![shard(1, 2, "c"), other_plan])
            .unwrap_err()
            .to_string();
        assert!(e.contains("different plans") && e.contains("shard2"), "{e}");
        assert!(!e.contains('\n'));

        let mut other_config = shard(2, 2, "c");
        other_config.summary.plan.as_mut().unwrap().config_digest = "config-b".into();
        let e = merge(vec![shard(1, 2, "c"), other_config]).unwrap_err();
        assert!(matches!(e, MergeError::DifferentConfig { .. }), "{e}");

        let e = merge(vec![shard(1, 2, "c"), shard(2, 2, "d")]).unwrap_err();
        assert!(e.to_string().contains("different commits (c vs d)"), "{e}");

        let e = merge(vec![shard(1, 2, "c"), shard(1, 2, "c")]).unwrap_err();
        assert!(
            matches!(e, MergeError::Duplicates { count: 5, .. }),
            "the same shard twice: {e}"
        );

        let mut no_plan = shard(2, 2, "c");
        no_plan.summary.plan = None;
        assert!(matches!(
            merge(vec![shard(1, 2, "c"), no_plan]),
            Err(MergeError::NoPlan { .. })
        ));
        assert_eq!(merge(Vec::new()).unwrap_err(), MergeError::Empty);
    }
}
