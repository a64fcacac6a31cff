//! What `apex-host run` does for `--partition`: resolve the shard and keep its cases, gate a
//! shard on its own cases only, and record the plan (`summary.json`'s `plan`) that
//! `apex-host merge` checks shards against.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use super::failure::Failure;
use crate::compare::{Baseline, split_metric};
use crate::model::{PartitionRecord, PlanRecord};
use crate::plan::{Partition, PartitionSpec, Plan, PlanIdentity};

/// Parses a `--partition` value.
pub fn parse_partition(s: &str) -> Result<PartitionSpec, String> {
    PartitionSpec::parse(s).map_err(|e| e.to_string())
}

/// Resolves `spec` (with the environment for `auto`) and keeps only the shard's cases of `plan`.
pub fn apply(
    spec: &PartitionSpec,
    total_flag: Option<u32>,
    plan: &mut Plan,
) -> Result<Partition, Failure> {
    let p = spec
        .resolve(|k| std::env::var(k).ok(), total_flag)
        .map_err(|e| (ApexExitCode::USAGE, format!("--partition: {e}")))?;
    p.apply(plan);
    Ok(p)
}

/// Drops from `baseline` the metrics of the plan's cases that belong to other shards, so a shard
/// is gated on its own cases (metrics of cases outside the plan stay: they are `missing`).
pub fn keep_shard_metrics(baseline: &mut Baseline, identity: &PlanIdentity, shard: &Plan) {
    let mine: BTreeSet<String> = shard.cases.iter().map(|c| c.key.id()).collect();
    let others: BTreeSet<&str> = identity
        .case_ids
        .iter()
        .filter(|id| !mine.contains(*id))
        .map(String::as_str)
        .collect();
    baseline
        .metrics
        .retain(|metric, _| split_metric(metric).is_none_or(|(case, _)| !others.contains(case)));
}

/// The plan record of `summary.json`: the plan's identity, the digest of `config` (less the GPU
/// choice, which is each machine's own) and of the `suite_files`, and this run's shard of it.
pub fn plan_record(
    config: &serde_json::Value,
    suite_files: &[PathBuf],
    identity: PlanIdentity,
    partition: Option<&Partition>,
    cases: usize,
) -> PlanRecord {
    let mut flags = config.clone();
    if let Some(o) = flags.as_object_mut() {
        o.remove("device");
        o.remove("devices");
    }
    PlanRecord {
        digest: identity.digest,
        config_digest: crate::plan::config_digest(&flags, suite_files),
        case_ids: identity.case_ids,
        partition: partition.map(|p| PartitionRecord {
            label: p.label(),
            index: p.index,
            total: p.total,
            source: p.source.clone(),
            cases,
        }),
        merged_from: Vec::new(),
        missing: Vec::new(),
    }
}
