//! [`build`]: config × registry × CLI × machine facts → [`Plan`].

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::{
    CliOverrides, ConfigError, ConfigErrorKind, ConfigErrors, Loc, ResolvedCase, SuiteConfig,
};
use crate::discovery::Registry;
use crate::facts::Facts;
use crate::model::{CaseKey, KernelInfo};
use crate::skip::{self, CaseContext};

/// One case of the plan.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    pub key: CaseKey,
    pub kernel: KernelInfo,
    pub resolved: ResolvedCase,
    /// Why the case will not run, when it will not.
    pub skip: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub cases: Vec<PlannedCase>,
}

/// `--filter GLOB` (repeatable): a case is kept when any glob matches its kernel id or its full
/// case id (`kernel/backend/precision/params`).
#[derive(Debug, Clone, Default)]
pub struct Filter(Option<GlobSet>);

impl Filter {
    pub fn new(globs: &[String]) -> Result<Filter, globset::Error> {
        if globs.is_empty() {
            return Ok(Filter(None));
        }
        let mut b = GlobSetBuilder::new();
        for g in globs {
            b.add(Glob::new(g)?);
        }
        Ok(Filter(Some(b.build()?)))
    }

    fn keeps(&self, key: &CaseKey) -> bool {
        self.keeps_id(&key.id())
    }

    /// Whether the filter keeps the case `id` (`kernel/backend/precision/params`): a glob
    /// matches its kernel id (the part before the first `/`) or the whole id.
    pub fn keeps_id(&self, id: &str) -> bool {
        let kernel = id.split('/').next().unwrap_or(id);
        self.0
            .as_ref()
            .is_none_or(|set| set.is_match(kernel) || set.is_match(id))
    }
}

/// A check that failed to evaluate (the load-time type check makes this unreachable in practice;
/// it is still a config error, never a skip), located at the rule.
fn evaluation_error(rule: &skip::SkipRule, e: &skip::EvalError) -> ConfigError {
    let mut parts = rule.source.rsplitn(3, ':');
    let column = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    let file = std::sync::Arc::new(std::path::PathBuf::from(
        parts.next().unwrap_or(&rule.source),
    ));
    ConfigError::new(
        Loc { file, line, column },
        "skip_conditions.check",
        ConfigErrorKind::InvalidValue(e.to_string()),
        "fix the condition: a check that cannot be evaluated never skips a case",
    )
}

/// Expands every loaded kernel into cases. A config error anywhere stops planning (nothing runs).
pub fn build(
    registry: &Registry,
    config: &SuiteConfig,
    cli: &CliOverrides,
    filter: &Filter,
    facts: &Facts,
) -> Result<Plan, ConfigErrors> {
    let mut plan = Plan::default();
    let mut errors = ConfigErrors::default();
    for kernel in registry.kernels() {
        let cases = match config.expand(kernel, cli) {
            Ok(c) => c,
            Err(e) => {
                errors.extend(e);
                continue;
            }
        };
        for resolved in cases {
            let key = CaseKey::new(
                &kernel.id,
                resolved.backend.as_str(),
                resolved.precision.as_str(),
                &resolved.params,
            );
            if !filter.keeps(&key) {
                continue;
            }
            let ctx = CaseContext {
                backend: resolved.backend,
                precision: resolved.precision,
                params: resolved.params.clone(),
            };
            let skip = match skip::implicit_reason(resolved.backend, facts) {
                Some(reason) => Some(reason),
                None => match skip::evaluate(&resolved.skip, facts, &ctx) {
                    Ok(reason) => reason,
                    Err((rule, e)) => {
                        errors.push(evaluation_error(rule, &e));
                        continue;
                    }
                },
            };
            plan.cases.push(PlannedCase {
                key,
                kernel: kernel.clone(),
                resolved,
                skip,
            });
        }
    }
    errors.into_result(plan)
}
