//! [`Partition`]: which share of the plan one machine runs when a suite is sharded over several
//! (`--partition hash:M/N | slice:M/N | auto`).
//!
//! - `hash:M/N` keeps the cases whose xxh64 of the case id is `M-1` modulo `N`. A case's shard
//!   depends only on its own id, so adding or removing another case never moves it.
//! - `slice:M/N` keeps every N-th case of the plan from the M-th on (round robin in plan order):
//!   shards stay within one case of each other in size, but a new case shifts the ones after it.
//! - `auto` reads the shard index and count of the scheduler the run is inside (the table in
//!   [`from_env`]) and shards by hash.
//!
//! Partitioning applies after `--filter` and skip conditions: a skipped case is still a case of
//! exactly one shard, so the merged report holds every case of the unsharded plan.

/// How a shard picks its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Hash,
    Slice,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Hash => "hash",
            Strategy::Slice => "slice",
        }
    }
}

/// One shard of `total`: `index` counts from 1 (`hash:1/4` is the first of four).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub strategy: Strategy,
    pub index: u32,
    pub total: u32,
    /// Where the shard came from: `--partition` or the environment variables read by `auto`.
    pub source: String,
}

/// What `--partition` asked for, before `auto` is resolved against the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionSpec {
    Explicit(Partition),
    Auto,
}

/// A `--partition` value or scheduler variable that does not name a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    #[error(
        "`{0}` is not a partition (expected `hash:M/N`, `slice:M/N` or `auto`, with 1 <= M <= N, e.g. `hash:2/4`)"
    )]
    Syntax(String),
    #[error(
        "{origin}: shard {index} of {total} does not exist (the shard index counts from {base})"
    )]
    OutOfRange {
        origin: String,
        index: i64,
        total: i64,
        base: u8,
    },
    #[error("{variable}=`{value}` is not a whole number")]
    NotANumber { variable: String, value: String },
    #[error(
        "--partition auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the number of shards is not: pass --partition-total N (the Job's `completions`)"
    )]
    KubernetesTotal,
    #[error(
        "--partition auto: no scheduler variables found; set one of SLURM_ARRAY_TASK_ID + SLURM_ARRAY_TASK_COUNT (Slurm), JOB_COMPLETION_INDEX + --partition-total (Kubernetes), TEST_SHARD_INDEX + TEST_TOTAL_SHARDS (Bazel), BUILDKITE_PARALLEL_JOB + BUILDKITE_PARALLEL_JOB_COUNT (Buildkite) or APEX_SHARD_INDEX + APEX_SHARD_COUNT (GitHub Actions matrices and anything else; index from 0)"
    )]
    NoScheduler,
}

impl PartitionSpec {
    /// Parses a `--partition` value.
    pub fn parse(text: &str) -> Result<PartitionSpec, PartitionError> {
        let syntax = || PartitionError::Syntax(text.to_string());
        if text == "auto" {
            return Ok(PartitionSpec::Auto);
        }
        let (strategy, rest) = text.split_once(':').ok_or_else(syntax)?;
        let strategy = match strategy {
            "hash" => Strategy::Hash,
            "slice" => Strategy::Slice,
            _ => return Err(syntax()),
        };
        let (m, n) = rest.split_once('/').ok_or_else(syntax)?;
        let m: i64 = m.parse().map_err(|_| syntax())?;
        let n: i64 = n.parse().map_err(|_| syntax())?;
        let partition = checked(strategy, m, n, 1, "--partition".into())?;
        Ok(PartitionSpec::Explicit(partition))
    }

    /// The shard this run is: the explicit one, or `auto` resolved with `env` (a variable
    /// lookup, `std::env::var` in the binary) and `--partition-total`.
    pub fn resolve(
        &self,
        env: impl Fn(&str) -> Option<String>,
        total_flag: Option<u32>,
    ) -> Result<Partition, PartitionError> {
        match self {
            PartitionSpec::Explicit(p) => Ok(p.clone()),
            PartitionSpec::Auto => from_env(env, total_flag),
        }
    }
}

/// A shard with `index` counted from `base` (0 or 1), checked and turned to counting from 1.
fn checked(
    strategy: Strategy,
    index: i64,
    total: i64,
    base: u8,
    source: String,
) -> Result<Partition, PartitionError> {
    let first = i64::from(base);
    let in_range = total >= 1 && index >= first && index - first < total;
    let as_u32 = |v: i64| u32::try_from(v).ok();
    match (in_range, as_u32(index - first + 1), as_u32(total)) {
        (true, Some(index), Some(total)) => Ok(Partition {
            strategy,
            index,
            total,
            source,
        }),
        _ => Err(PartitionError::OutOfRange {
            origin: source,
            index,
            total,
            base,
        }),
    }
}

/// `--partition auto`: the first scheduler whose variables are set, in this order.
///
/// | scheduler | index (from) | count |
/// |---|---|---|
/// | Slurm job array | `SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` (0) | `SLURM_ARRAY_TASK_COUNT` |
/// | Kubernetes Indexed Job | `JOB_COMPLETION_INDEX` (0) | `--partition-total` |
/// | Bazel test sharding | `TEST_SHARD_INDEX` (0) | `TEST_TOTAL_SHARDS` |
/// | Buildkite parallelism | `BUILDKITE_PARALLEL_JOB` (0) | `BUILDKITE_PARALLEL_JOB_COUNT` |
/// | anything else (GitHub Actions matrix) | `APEX_SHARD_INDEX` (0) | `APEX_SHARD_COUNT` |
pub fn from_env(
    env: impl Fn(&str) -> Option<String>,
    total_flag: Option<u32>,
) -> Result<Partition, PartitionError> {
    let number = |variable: &str| -> Result<Option<i64>, PartitionError> {
        match env(variable).filter(|v| !v.trim().is_empty()) {
            None => Ok(None),
            Some(value) => value
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| PartitionError::NotANumber {
                    variable: variable.into(),
                    value,
                }),
        }
    };
    let pairs = [
        ("TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS"),
        ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT"),
        ("APEX_SHARD_INDEX", "APEX_SHARD_COUNT"),
    ];
    if let (Some(id), Some(count)) = (
        number("SLURM_ARRAY_TASK_ID")?,
        number("SLURM_ARRAY_TASK_COUNT")?,
    ) {
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let source = format!(
            "SLURM_ARRAY_TASK_ID={id} (SLURM_ARRAY_TASK_MIN={min}), SLURM_ARRAY_TASK_COUNT={count}"
        );
        return checked(Strategy::Hash, id - min, count, 0, source);
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let total = total_flag.ok_or(PartitionError::KubernetesTotal)?;
        let source = format!("JOB_COMPLETION_INDEX={index}, --partition-total {total}");
        return checked(Strategy::Hash, index, i64::from(total), 0, source);
    }
    for (index_var, count_var) in pairs {
        if let (Some(index), Some(count)) = (number(index_var)?, number(count_var)?) {
            let source = format!("{index_var}={index}, {count_var}={count}");
            return checked(Strategy::Hash, index, count, 0, source);
        }
    }
    Err(PartitionError::NoScheduler)
}

impl Partition {
    /// Keeps only this shard's cases of `plan`, in plan order.
    pub fn apply(&self, plan: &mut super::Plan) {
        let mut position = 0;
        plan.cases.retain(|case| {
            let keep = self.keeps(&case.key.id(), position);
            position += 1;
            keep
        });
    }

    /// `hash:2/4`.
    pub fn label(&self) -> String {
        format!("{}:{}/{}", self.strategy.as_str(), self.index, self.total)
    }

    /// Whether the case with id `case_id`, at `position` in the plan, belongs to this shard.
    pub fn keeps(&self, case_id: &str, position: usize) -> bool {
        let bucket = match self.strategy {
            Strategy::Hash => {
                xxhash_rust::xxh64::xxh64(case_id.as_bytes(), 0) % u64::from(self.total)
            }
            Strategy::Slice => (position % self.total as usize) as u64,
        };
        bucket + 1 == u64::from(self.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn explicit(text: &str) -> Partition {
        match PartitionSpec::parse(text) {
            Ok(PartitionSpec::Explicit(p)) => p,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn flags_parse_and_bad_ones_say_what_is_expected() {
        let p = explicit("hash:2/4");
        assert_eq!((p.strategy, p.index, p.total), (Strategy::Hash, 2, 4));
        assert_eq!(p.label(), "hash:2/4");
        assert_eq!(explicit("slice:1/1").strategy, Strategy::Slice);
        assert_eq!(PartitionSpec::parse("auto"), Ok(PartitionSpec::Auto));
        for bad in ["hash", "hash:1", "count:1/2", "hash:a/2", "hash:1/x", ""] {
            let e = PartitionSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("expected `hash:M/N`"), "{bad}: {e}");
        }
        for bad in ["hash:0/4", "hash:5/4", "slice:1/0", "hash:-1/2"] {
            let e = PartitionSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("does not exist"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_case_lands_in_exactly_one_shard() {
        let ids: Vec<String> = (0..200).map(|i| format!("k.op/cpu/fp32/n={i}")).collect();
        for strategy in ["hash", "slice"] {
            for total in [1u32, 2, 3, 7] {
                let shards: Vec<Partition> = (1..=total)
                    .map(|m| explicit(&format!("{strategy}:{m}/{total}")))
                    .collect();
                for (pos, id) in ids.iter().enumerate() {
                    let n = shards.iter().filter(|s| s.keeps(id, pos)).count();
                    assert_eq!(n, 1, "{strategy} {total}: {id}");
                }
                let sizes: Vec<usize> = shards
                    .iter()
                    .map(|s| {
                        ids.iter()
                            .enumerate()
                            .filter(|(p, id)| s.keeps(id, *p))
                            .count()
                    })
                    .collect();
                // Hash shards are balanced only statistically; each still gets a fair share.
                assert!(
                    sizes.iter().all(|&s| s * (total as usize) * 2 >= ids.len()),
                    "{strategy} {total}: {sizes:?}"
                );
            }
        }
    }

    #[test]
    fn hash_shards_do_not_move_when_a_case_is_added() {
        let p = explicit("hash:2/3");
        let before: Vec<bool> = (0..50)
            .map(|i| p.keeps(&format!("k/cpu/fp32/n={i}"), i))
            .collect();
        // A new case at the front shifts every position; the hash ignores positions.
        let after: Vec<bool> = (0..50)
            .map(|i| p.keeps(&format!("k/cpu/fp32/n={i}"), i + 1))
            .collect();
        assert_eq!(before, after);
        assert_eq!(
            xxhash_rust::xxh64::xxh64(b"", 0),
            0xef46_db37_51d8_e999,
            "the published xxh64 test vector: shard assignment is the standard hash"
        );
    }

    #[test]
    fn auto_reads_every_scheduler_family() {
        // (variables, --partition-total, expected index, expected count)
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<u32>, u32, u32);
        let cases: [Case<'_>; 6] = [
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "2"),
                    ("SLURM_ARRAY_TASK_COUNT", "4"),
                ],
                None,
                3,
                4,
            ),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "5"),
                    ("SLURM_ARRAY_TASK_MIN", "4"),
                    ("SLURM_ARRAY_TASK_COUNT", "3"),
                ],
                None,
                2,
                3,
            ),
            (&[("JOB_COMPLETION_INDEX", "0")], Some(2), 1, 2),
            (
                &[("TEST_SHARD_INDEX", "6"), ("TEST_TOTAL_SHARDS", "7")],
                None,
                7,
                7,
            ),
            (
                &[
                    ("BUILDKITE_PARALLEL_JOB", "1"),
                    ("BUILDKITE_PARALLEL_JOB_COUNT", "2"),
                ],
                None,
                2,
                2,
            ),
            (
                &[("APEX_SHARD_INDEX", "0"), ("APEX_SHARD_COUNT", "3")],
                None,
                1,
                3,
            ),
        ];
        for (vars, total, index, count) in cases {
            let p = PartitionSpec::Auto.resolve(env(vars), total).unwrap();
            assert_eq!(
                (p.index, p.total, p.strategy),
                (index, count, Strategy::Hash)
            );
            assert!(p.source.contains(vars[0].0), "{}", p.source);
        }
    }

    #[test]
    fn auto_explains_what_is_missing_or_wrong() {
        let e = |vars: &[(&str, &str)], total| {
            PartitionSpec::Auto
                .resolve(env(vars), total)
                .unwrap_err()
                .to_string()
        };
        assert!(e(&[], None).contains("no scheduler variables"));
        assert!(e(&[("JOB_COMPLETION_INDEX", "1")], None).contains("--partition-total"));
        assert!(
            e(
                &[("TEST_SHARD_INDEX", "x"), ("TEST_TOTAL_SHARDS", "2")],
                None
            )
            .contains("TEST_SHARD_INDEX=`x` is not a whole number")
        );
        let out = e(
            &[
                ("BUILDKITE_PARALLEL_JOB", "2"),
                ("BUILDKITE_PARALLEL_JOB_COUNT", "2"),
            ],
            None,
        );
        assert!(
            out.contains("shard 2 of 2 does not exist") && out.contains("from 0"),
            "{out}"
        );
    }
}
