//! [`SkipRule`]: one `skip_conditions` item of a bench.yaml, and the decision for a case.
//!
//! Polarity: a `check` that evaluates **true means skip**. The product example
//! `{backend: cuda, reason: "CUDA not available", check: "not cuda.available"}` skips the CUDA cases
//! when CUDA is absent. The optional `backend` / `precision` restrict which cases a rule applies to.
//!
//! Independently of any rule, [`implicit_reason`] skips a CUDA or TensorRT case on a machine that
//! lacks the library, with the reason the facts recorded.

use super::errors::EvalError;
use super::expr::{CaseContext, Expr};
use crate::facts::Facts;
use apex_plugin_api::{Backend, Precision};
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkipRule {
    #[serde(serialize_with = "opt_backend")]
    pub backend: Option<Backend>,
    #[serde(serialize_with = "opt_precision")]
    pub precision: Option<Precision>,
    pub reason: String,
    pub check: Expr,
    /// `file:line:col` of the rule in its bench.yaml.
    pub source: String,
}

impl SkipRule {
    /// Whether the rule's `backend` / `precision` filters select this case.
    pub fn applies_to(&self, ctx: &CaseContext) -> bool {
        self.backend.is_none_or(|b| b == ctx.backend)
            && self.precision.is_none_or(|p| p == ctx.precision)
    }
}

/// How one rule evaluated for one case (for `discover --verbose`).
#[derive(Debug, Clone, PartialEq)]
pub enum RuleOutcome {
    /// The rule's backend/precision filter does not select this case.
    NotApplicable,
    Skip,
    Run,
    Error(EvalError),
}

/// The reason of the first applicable rule whose check is true, or `None` to run the case.
///
/// A check that cannot be evaluated is returned with its rule, never turned into a skip: the
/// caller reports it as a config error (and the load-time type check, `types.rs`, rejects every
/// such condition before this runs).
pub fn evaluate<'r>(
    rules: &'r [SkipRule],
    facts: &Facts,
    ctx: &CaseContext,
) -> Result<Option<String>, (&'r SkipRule, EvalError)> {
    for rule in rules.iter().filter(|r| r.applies_to(ctx)) {
        if rule.check.eval(facts, ctx).map_err(|e| (rule, e))? {
            return Ok(Some(rule.reason.clone()));
        }
    }
    Ok(None)
}

/// Every rule's outcome for one case, in order.
pub fn explain(rules: &[SkipRule], facts: &Facts, ctx: &CaseContext) -> Vec<RuleOutcome> {
    rules
        .iter()
        .map(|rule| {
            if !rule.applies_to(ctx) {
                return RuleOutcome::NotApplicable;
            }
            match rule.check.eval(facts, ctx) {
                Ok(true) => RuleOutcome::Skip,
                Ok(false) => RuleOutcome::Run,
                Err(e) => RuleOutcome::Error(e),
            }
        })
        .collect()
}

/// The built-in rule: a CUDA or `trt` case without CUDA is skipped with the probe's reason (e.g.
/// `cuda_unavailable: libcuda.so.1 not found`). A `trt` case is an engine on a GPU runtime
/// (TensorRT, or ONNX Runtime's CUDA provider): whether its runtime is installed is the engine
/// plugin's check (`Kernel::unavailable`), made in the seed's order after the engine path and
/// file and naming the library and where it looked; `trt.available` stays a fact for
/// skip_conditions.
pub fn implicit_reason(backend: Backend, facts: &Facts) -> Option<String> {
    let cuda = || {
        (!facts.cuda.available).then(|| {
            facts
                .cuda
                .reason
                .clone()
                .unwrap_or_else(|| "cuda_unavailable".into())
        })
    };
    match backend {
        Backend::Cpu => None,
        Backend::Cuda | Backend::Trt => cuda(),
    }
}

fn opt_backend<S: Serializer>(v: &Option<Backend>, s: S) -> Result<S::Ok, S::Error> {
    v.map(Backend::as_str).serialize(s)
}

fn opt_precision<S: Serializer>(v: &Option<Precision>, s: S) -> Result<S::Ok, S::Error> {
    v.map(Precision::as_str).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ParamMap;

    fn rule(backend: Option<Backend>, reason: &str, check: &str) -> SkipRule {
        SkipRule {
            backend,
            precision: None,
            reason: reason.into(),
            check: Expr::parse(check).unwrap(),
            source: "bench.yaml:3:5".into(),
        }
    }

    fn ctx(backend: Backend) -> CaseContext {
        CaseContext {
            backend,
            precision: Precision::Fp32,
            params: ParamMap::new(),
        }
    }

    #[test]
    fn true_check_means_skip_with_reason() {
        let rules = [rule(
            Some(Backend::Cuda),
            "CUDA not available",
            "not cuda.available",
        )];
        let cpu = Facts::cpu_only();
        assert_eq!(
            evaluate(&rules, &cpu, &ctx(Backend::Cuda)),
            Ok(Some("CUDA not available".to_string()))
        );
        assert_eq!(evaluate(&rules, &cpu, &ctx(Backend::Cpu)), Ok(None));
        assert_eq!(
            explain(&rules, &cpu, &ctx(Backend::Cpu)),
            vec![RuleOutcome::NotApplicable]
        );
    }

    #[test]
    fn a_broken_check_is_returned_with_its_rule_never_a_skip() {
        let rules = [rule(None, "never", "os < 3")];
        let (broken, e) = evaluate(&rules, &Facts::cpu_only(), &ctx(Backend::Cpu)).unwrap_err();
        assert_eq!(broken.source, "bench.yaml:3:5");
        assert!(e.message.contains("cannot compare"), "{e}");
    }

    #[test]
    fn implicit_rule_uses_probe_reasons() {
        let cpu = Facts::cpu_only();
        assert_eq!(implicit_reason(Backend::Cpu, &cpu), None);
        assert_eq!(
            implicit_reason(Backend::Cuda, &cpu).as_deref(),
            Some("cuda_unavailable: libcuda.so.1 not found")
        );
        // A trt case needs a GPU; its runtime library is the engine plugin's check.
        assert_eq!(
            implicit_reason(Backend::Trt, &cpu).as_deref(),
            Some("cuda_unavailable: libcuda.so.1 not found")
        );
    }
}
