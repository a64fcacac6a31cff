//! Whole-suite checks that need the discovered kernels: entries whose `kernel` glob matches no
//! kernel ([`SuiteConfig::unmatched`]), names that no matched kernel declares, and every kernel's
//! resolution ([`SuiteConfig::check`]); plus [`SuiteConfig::sources_for`] and
//! [`SuiteConfig::ignored_for`] for `discover --verbose`.

use super::entry::Entry;
use super::errors::{ConfigError, ConfigErrorKind, ConfigErrors};
use super::overrides::CliOverrides;
use super::provenance::{Provenance, Source};
use super::suggest::hint_for;
use super::suite::SuiteConfig;
use crate::model::KernelInfo;
use serde_json::Value;

impl SuiteConfig {
    /// One error per entry whose `kernel` matches none of `kernel_ids`, with the ids that exist.
    pub fn unmatched(&self, kernel_ids: &[&str]) -> ConfigErrors {
        let mut errors = ConfigErrors::default();
        for e in &self.entries {
            if kernel_ids.iter().any(|id| e.matcher.is_match(id)) {
                continue;
            }
            let hint = if kernel_ids.is_empty() {
                "no kernel was discovered; build the plugins or check `--plugin-dir`".to_string()
            } else {
                hint_for(&e.kernel.value, kernel_ids, "kernels found")
            };
            errors.push(ConfigError::new(
                e.kernel.loc.clone(),
                key(e, "kernel"),
                ConfigErrorKind::NoMatch(e.kernel.value.clone()),
                hint,
            ));
        }
        errors
    }

    /// Everything that can be checked before running: unmatched entries, parameter / backend /
    /// precision names that none of a glob's kernels declares, and each kernel's resolution
    /// (types, zips, exclusions, sweep size). Errors are deduplicated.
    pub fn check(&self, kernels: &[KernelInfo]) -> Result<(), ConfigErrors> {
        let ids: Vec<&str> = kernels.iter().map(|k| k.id.as_str()).collect();
        let mut errors = self.unmatched(&ids);
        for e in self.entries.iter().filter(|e| !e.exact) {
            let matched: Vec<&KernelInfo> = kernels
                .iter()
                .filter(|k| e.matcher.is_match(&k.id))
                .collect();
            if matched.is_empty() {
                continue;
            }
            let declares = |name: &str| {
                matched
                    .iter()
                    .any(|k| k.params.iter().any(|p| p.name == name))
            };
            let mut known: Vec<&str> = matched
                .iter()
                .flat_map(|k| k.params.iter().map(|p| p.name.as_str()))
                .collect();
            known.sort_unstable();
            known.dedup();
            let names_hint = |n: &str| {
                hint_for(
                    n,
                    &known,
                    &format!("parameters of the kernels matching `{}`", e.kernel.value),
                )
            };
            let mut unknown = |name: &str, loc: &super::errors::Loc, path: String| {
                errors.push(ConfigError::new(
                    loc.clone(),
                    path,
                    ConfigErrorKind::InvalidValue(format!(
                        "parameter `{name}` is declared by none of the kernels matching `{}`",
                        e.kernel.value
                    )),
                    names_hint(name),
                ));
            };
            for p in &e.problem_size {
                if !declares(&p.name) {
                    unknown(&p.name, &p.key_loc, p.path.clone());
                }
            }
            for x in &e.exclude {
                for (k, _) in &x.items {
                    if k.value != "backend" && k.value != "precision" && !declares(&k.value) {
                        unknown(&k.value, &k.loc, format!("{}.{}", x.path, k.value));
                    }
                }
            }
            if let Some(z) = &e.zip {
                for n in z.value.iter().flatten() {
                    if !declares(&n.value) {
                        unknown(&n.value, &n.loc, key(e, "zip"));
                    }
                }
            }
            for r in &e.skip {
                for p in r.rule.check.params() {
                    if !declares(p) {
                        unknown(p, &r.check_loc, format!("{}.check", r.path));
                    }
                }
            }
            for list in e.backends.iter() {
                for b in &list.value {
                    if !matched.iter().any(|k| k.backends.contains(&b.value)) {
                        errors.push(ConfigError::new(
                            b.loc.clone(),
                            key(e, "backends"),
                            ConfigErrorKind::InvalidValue(format!(
                                "backend `{}` is declared by none of the kernels matching `{}`",
                                b.value, e.kernel.value
                            )),
                            "remove it, or narrow `kernel` to kernels that have it",
                        ));
                    }
                }
            }
            for list in e.precisions.iter() {
                for p in &list.value {
                    if !matched.iter().any(|k| k.precisions.contains(&p.value)) {
                        errors.push(ConfigError::new(
                            p.loc.clone(),
                            key(e, "precisions"),
                            ConfigErrorKind::InvalidValue(format!(
                                "precision `{}` is declared by none of the kernels matching `{}`",
                                p.value.as_str(),
                                e.kernel.value
                            )),
                            "remove it, or narrow `kernel` to kernels that have it",
                        ));
                    }
                }
            }
        }
        for k in kernels {
            if let Err(e) = self.expand(k, &CliOverrides::default()) {
                errors.extend(e);
            }
        }
        errors.into_result(())
    }

    /// The `problem_size` keys of glob entries matching `kernel` that it does not declare, each
    /// with where it was written (`tile_size=[8,16,32] from plugins/tile_ops/bench.yaml:26:5`):
    /// a glob entry gives each kernel only the parameters it declares (`discover --verbose`
    /// lists the rest, so a user sees why a sweep did not multiply a kernel's cases).
    pub fn ignored_for(&self, kernel: &KernelInfo) -> Vec<Provenance> {
        let mut out = Vec::new();
        for e in self.matching(&kernel.id).filter(|e| !e.exact) {
            for p in &e.problem_size {
                if kernel.params.iter().any(|d| d.name == p.name) {
                    continue;
                }
                let vals: Vec<Value> = p.values.iter().map(|v| v.value.clone()).collect();
                let shown = if p.is_list {
                    Value::Array(vals).to_string()
                } else {
                    vals[0].to_string()
                };
                out.push(Provenance {
                    key: p.name.clone(),
                    value: shown,
                    source: Source::File(p.key_loc.clone()),
                });
            }
        }
        out
    }

    /// Every value the config files set for `kernel_id`, in precedence order (later entries
    /// override earlier ones key by key), e.g. `tile_size=[8,16,32] from
    /// plugins/tile_ops/bench.yaml:4:5`. Kernel defaults and CLI values are in each
    /// `ResolvedCase::provenance`.
    pub fn sources_for(&self, kernel_id: &str) -> Vec<Provenance> {
        let mut out = Vec::new();
        for e in self.matching(kernel_id) {
            let mut push = |key: String, value: String, loc: &super::errors::Loc| {
                out.push(Provenance {
                    key,
                    value,
                    source: Source::File(loc.clone()),
                });
            };
            push("kernel".into(), e.kernel.value.clone(), &e.kernel.loc);
            for p in &e.problem_size {
                let vals: Vec<Value> = p.values.iter().map(|v| v.value.clone()).collect();
                let shown = if p.is_list {
                    Value::Array(vals).to_string()
                } else {
                    vals[0].to_string()
                };
                push(p.name.clone(), shown, &p.loc);
            }
            if let Some(z) = &e.zip {
                let groups: Vec<Vec<&str>> = z
                    .value
                    .iter()
                    .map(|g| g.iter().map(|n| n.value.as_str()).collect())
                    .collect();
                push(
                    "zip".into(),
                    serde_json::to_string(&groups).unwrap_or_default(),
                    &z.loc,
                );
            }
            for x in &e.exclude {
                let m: serde_json::Map<String, Value> = x
                    .items
                    .iter()
                    .map(|(k, v)| {
                        let vals: Vec<Value> = v.iter().map(|l| l.value.clone()).collect();
                        (
                            k.value.clone(),
                            if vals.len() == 1 {
                                vals[0].clone()
                            } else {
                                Value::Array(vals)
                            },
                        )
                    })
                    .collect();
                push("exclude".into(), Value::Object(m).to_string(), &x.loc);
            }
            if let Some(b) = &e.backends {
                let names: Vec<&str> = b.value.iter().map(|x| x.value.as_str()).collect();
                push("backends".into(), format!("[{}]", names.join(",")), &b.loc);
            }
            if let Some(p) = &e.precisions {
                let names: Vec<&str> = p.value.iter().map(|x| x.value.as_str()).collect();
                push(
                    "precisions".into(),
                    format!("[{}]", names.join(",")),
                    &p.loc,
                );
            }
            for t in &e.tolerances {
                let k = match t.precision {
                    Some(p) => format!("tolerances.{}.{}", p.as_str(), t.field.name()),
                    None => format!("tolerances.{}", t.field.name()),
                };
                push(k, Value::from(t.value).to_string(), &t.loc);
            }
            for s in &e.protocol {
                push(
                    format!("protocol.{}", s.key.name()),
                    s.value.render(),
                    &s.loc,
                );
            }
            for r in &e.skip {
                push(
                    "skip_conditions".into(),
                    Value::from(r.rule.check.text()).to_string(),
                    &r.check_loc,
                );
            }
        }
        out
    }
}

/// The key path of `k` inside entry `e` (`[2].kernel` in a list file).
fn key(e: &Entry, k: &str) -> String {
    if e.path.is_empty() {
        k.to_string()
    } else {
        format!("{}.{k}", e.path)
    }
}
