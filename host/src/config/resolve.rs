//! [`SuiteConfig::expand`]: resolves one kernel's cases from its declared defaults, the matching
//! entries (plugin bench.yaml, then bench.yaml.d in lexical order; later wins, key by key) and the
//! command line, recording where every value came from.
//!
//! Rules (docs/config-reference.md states them for users):
//! * a parameter the config does not set takes the kernel's declared default; a configured value
//!   must have the declared default's type (an integer default takes integers only; a float
//!   default takes any number);
//! * an entry whose `kernel` is an exact id may only name parameters, backends and precisions the
//!   kernel declares (else a located error); a glob entry applies what each kernel declares and
//!   ignores the rest (`SuiteConfig::check` reports names no matched kernel declares);
//! * backends / precisions of a case: the last configured list, else the declared list, always
//!   intersected with what the kernel declares, then narrowed by the CLI list;
//! * `zip`: the last entry that sets it wins; `exclude` and `skip_conditions` accumulate.

use super::axes::{declared_params, not_declared, resolve_exclusions, resolve_params, resolve_zip};
use super::entry::{Entry, Located};
use super::errors::{ConfigError, ConfigErrorKind, ConfigErrors, Loc};
use super::overrides::CliOverrides;
use super::protocol::{self, ProtoKey, ProtoValue};
use super::provenance::{Provenance, Source};
use super::suite::SuiteConfig;
use super::sweep;
use super::tolerance;
use crate::model::{KernelInfo, ParamMap, ProtocolSettings};
use crate::skip::{SkipRule, Ty};
use apex_plugin_api::{Backend, Precision, Tolerance};
use serde_json::Value;

/// More cases than this for one kernel is almost certainly a mistake in a sweep.
pub const MAX_CASES_PER_KERNEL: usize = 10_000;

/// One case to run (or skip), fully resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedCase {
    pub params: ParamMap,
    pub backend: Backend,
    pub precision: Precision,
    pub tolerance: Tolerance,
    pub protocol: ProtocolSettings,
    /// The skip rules of every matching entry, in precedence order (`skip::evaluate` applies
    /// their backend/precision filters).
    pub skip: Vec<SkipRule>,
    /// Where each parameter, list, tolerance and protocol value came from.
    pub provenance: Vec<Provenance>,
}

impl SuiteConfig {
    pub(crate) fn matching<'a>(&'a self, kernel_id: &'a str) -> impl Iterator<Item = &'a Entry> {
        self.entries
            .iter()
            .filter(move |e| e.matcher.is_match(kernel_id))
    }

    /// Every case of `kernel`: for each sweep block (see [`SuiteConfig::blocks`]), backend ×
    /// precision × parameter sweep minus exclusions; the union over blocks, a case produced by
    /// two blocks kept once (the first).
    pub fn expand(
        &self,
        kernel: &KernelInfo,
        cli: &CliOverrides,
    ) -> Result<Vec<ResolvedCase>, ConfigErrors> {
        let mut errors = ConfigErrors::default();
        let blocks = self.blocks(&kernel.id);
        if blocks.len() > MAX_CASES_PER_KERNEL {
            let e = blocks[0]
                .last()
                .map_or_else(|| kernel_loc(kernel), |e| e.kernel.loc.clone());
            errors.push(ConfigError::new(
                e,
                "problem_size",
                ConfigErrorKind::InvalidValue(format!(
                    "the sweep blocks of `{}` combine into more than {MAX_CASES_PER_KERNEL} blocks",
                    kernel.id
                )),
                "use fewer entries with `problem_size` per file",
            ));
            return Err(errors);
        }
        let mut cases: Vec<ResolvedCase> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for block in &blocks {
            let budget = MAX_CASES_PER_KERNEL - cases.len().min(MAX_CASES_PER_KERNEL);
            for case in expand_block(kernel, block, cli, budget, &mut errors) {
                let key = (
                    case.backend,
                    case.precision,
                    Value::Object(case.params.clone().into_iter().collect()).to_string(),
                );
                if seen.insert(key) {
                    cases.push(case);
                }
            }
        }
        errors.into_result(cases)
    }

    /// The kernel's sweep blocks: each a list of matching entries in precedence order. Files are
    /// applied in precedence order; inside one file, the entries that set `problem_size` are
    /// alternatives (each starts its own block, so a plugin can list several sweeps), and the
    /// other entries apply to every block. A file with at most one such entry overlays every
    /// block, so later files override earlier ones key by key.
    pub(crate) fn blocks<'a>(&'a self, kernel_id: &'a str) -> Vec<Vec<&'a Entry>> {
        let matching: Vec<&Entry> = self.matching(kernel_id).collect();
        let mut blocks: Vec<Vec<&Entry>> = vec![Vec::new()];
        for file in matching.chunk_by(|a, b| a.file_index == b.file_index) {
            let sweeps: Vec<usize> = (0..file.len())
                .filter(|&i| !file[i].problem_size.is_empty())
                .collect();
            if sweeps.len() <= 1 {
                for b in &mut blocks {
                    b.extend(file.iter().copied());
                }
                continue;
            }
            let mut next = Vec::with_capacity(blocks.len() * sweeps.len());
            for b in &blocks {
                for &s in &sweeps {
                    let mut nb = b.clone();
                    nb.extend(
                        file.iter()
                            .enumerate()
                            .filter(|(i, _)| *i == s || !sweeps.contains(i))
                            .map(|(_, e)| *e),
                    );
                    next.push(nb);
                }
            }
            blocks = next;
            if blocks.len() > MAX_CASES_PER_KERNEL {
                break;
            }
        }
        blocks
    }
}

/// The cases of one block (at most `budget`; more is an error).
fn expand_block(
    kernel: &KernelInfo,
    entries: &[&Entry],
    cli: &CliOverrides,
    budget: usize,
    errors: &mut ConfigErrors,
) -> Vec<ResolvedCase> {
    let errors_before = errors.len();
    let mut prov = Vec::new();
    let (axes, param_prov) = resolve_params(kernel, entries, errors);
    prov.extend(param_prov);
    let zip = resolve_zip(kernel, entries, &axes, errors, &mut prov);
    let exclusions = resolve_exclusions(kernel, entries, errors, &mut prov);
    let backends = choose(
        "backend",
        "backends",
        kernel,
        &kernel.backends,
        entries
            .iter()
            .map(|e| (e.backends.as_ref(), e.exact, e.path.as_str())),
        cli.backends.as_deref().map(|b| (b, "--backends")),
        Backend::as_str,
        errors,
        &mut prov,
    );
    let precisions = choose(
        "precision",
        "precisions",
        kernel,
        &kernel.precisions,
        entries
            .iter()
            .map(|e| (e.precisions.as_ref(), e.exact, e.path.as_str())),
        cli.precisions.as_deref().map(|p| (p, "--precision")),
        Precision::as_str,
        errors,
        &mut prov,
    );
    let skip = resolve_skip(kernel, entries, errors, &mut prov);
    let (protocol, protocol_prov) = resolve_protocol(entries, cli);

    let Some(n) = sweep::count(&axes, &zip)
        .and_then(|n| n.checked_mul(backends.len()))
        .and_then(|n| n.checked_mul(precisions.len()))
        .filter(|n| *n <= budget)
    else {
        let at = entries
            .iter()
            .rev()
            .flat_map(|e| e.problem_size.iter().filter(|p| p.is_list))
            .next()
            .map(|p| (p.loc.clone(), p.path.clone()));
        let (loc, path) = at.unwrap_or_else(|| {
            (
                entries
                    .first()
                    .map_or_else(|| kernel_loc(kernel), |e| e.kernel.loc.clone()),
                "problem_size".into(),
            )
        });
        errors.push(ConfigError::new(
                loc,
                path,
                ConfigErrorKind::InvalidValue(format!(
                    "the sweep of `{}` expands to more than {MAX_CASES_PER_KERNEL} cases",
                    kernel.id
                )),
                "shorten the lists, vary axes together with `zip`, or remove combinations with `exclude`",
            ));
        return Vec::new();
    };
    if errors.len() > errors_before {
        return Vec::new();
    }

    let combos = sweep::combinations(&axes, &zip);
    let mut cases = Vec::with_capacity(n);
    for &backend in &backends {
        for &precision in &precisions {
            let tol_layers: Vec<&[tolerance::TolSetting]> =
                entries.iter().map(|e| e.tolerances.as_slice()).collect();
            let (tol, tol_prov) =
                tolerance::apply(kernel.tolerance(precision), precision, &tol_layers);
            for params in &combos {
                if exclusions
                    .iter()
                    .any(|x| x.matches(params, backend, precision))
                {
                    continue;
                }
                let mut provenance = prov.clone();
                provenance.extend(tol_prov.iter().cloned());
                provenance.extend(protocol_prov.iter().cloned());
                cases.push(ResolvedCase {
                    params: params.clone(),
                    backend,
                    precision,
                    tolerance: tol,
                    protocol,
                    skip: skip.clone(),
                    provenance,
                });
            }
        }
    }
    cases
}

/// Where to point when a kernel has no config entry at all (errors then come from CLI only).
fn kernel_loc(kernel: &KernelInfo) -> Loc {
    let file = kernel
        .crate_dir
        .as_ref()
        .map_or_else(|| kernel.library.clone(), |d| d.join("bench.yaml"));
    Loc::file_only(&std::sync::Arc::new(file))
}

/// Backends or precisions of the cases, with provenance.
#[expect(
    clippy::too_many_arguments,
    reason = "one shared routine for backends and precisions"
)]
fn choose<'a, T: Copy + PartialEq + 'a>(
    what: &'static str,
    key: &'static str,
    kernel: &KernelInfo,
    declared: &[T],
    configured: impl Iterator<Item = (Option<&'a Located<Vec<Located<T>>>>, bool, &'a str)>,
    cli: Option<(&[T], &'static str)>,
    name: fn(T) -> &'static str,
    errors: &mut ConfigErrors,
    prov: &mut Vec<Provenance>,
) -> Vec<T> {
    let render = |v: &[T]| {
        format!(
            "[{}]",
            v.iter().map(|x| name(*x)).collect::<Vec<_>>().join(",")
        )
    };
    let mut chosen: Vec<T> = declared.to_vec();
    let mut source = Source::KernelDefault;
    let mut asked = render(declared);
    for (list, exact, entry_path) in configured {
        let Some(list) = list else { continue };
        let values: Vec<T> = list.value.iter().map(|l| l.value).collect();
        if exact {
            for (i, item) in list.value.iter().enumerate() {
                if !declared.contains(&item.value) {
                    let at = if entry_path.is_empty() {
                        format!("{key}[{i}]")
                    } else {
                        format!("{entry_path}.{key}[{i}]")
                    };
                    errors.push(not_declared(
                        what,
                        name(item.value),
                        kernel,
                        item.loc.clone(),
                        at,
                        format!("{key} of `{}`: {}", kernel.id, render(declared)),
                    ));
                }
            }
        }
        chosen = values
            .iter()
            .copied()
            .filter(|v| declared.contains(v))
            .collect();
        asked = render(&values);
        source = Source::File(list.loc.clone());
    }
    // The command line narrows what the configuration chose (`--backends cpu` runs the CPU
    // cases; it never puts a CUDA-only sweep on the CPU).
    if let Some((values, flag)) = cli {
        chosen.retain(|v| values.contains(v));
        asked = format!("{asked} ∩ {}", render(values));
        source = Source::Cli(flag);
    }
    prov.push(Provenance {
        key: key.into(),
        value: asked,
        source,
    });
    chosen
}

fn resolve_skip(
    kernel: &KernelInfo,
    entries: &[&Entry],
    errors: &mut ConfigErrors,
    prov: &mut Vec<Provenance>,
) -> Vec<SkipRule> {
    let mut out = Vec::new();
    let param_type = |name: &str| {
        kernel
            .params
            .iter()
            .find(|d| d.name == name)
            .map(|d| Ty::of_json(&d.default))
    };
    for e in entries {
        for rule in &e.skip {
            let declared = rule
                .rule
                .check
                .params()
                .iter()
                .all(|p| kernel.params.iter().any(|d| d.name == *p));
            if !e.exact && !declared {
                // A rule of a glob entry reads `param.NAME`: it applies to the kernels that have
                // that parameter, as the entry's `problem_size` keys do (`check` rejects a name
                // that none of them declares).
                continue;
            }
            if declared && let Err(t) = rule.rule.check.check_types(&param_type) {
                errors.push(ConfigError::new(
                    rule.check_loc.clone(),
                    format!("{}.check", rule.path),
                    ConfigErrorKind::InvalidValue(format!(
                        "the condition cannot be evaluated for `{}`: {} (column {} of `{}`)",
                        kernel.id,
                        t.message,
                        t.column,
                        rule.rule.check.text()
                    )),
                    t.hint,
                ));
            }
            if e.exact {
                for p in rule.rule.check.params() {
                    if !kernel.params.iter().any(|d| d.name == p) {
                        errors.push(not_declared(
                            "parameter",
                            p,
                            kernel,
                            rule.check_loc.clone(),
                            format!("{}.check", rule.path),
                            format!("`param.{p}` reads a parameter; {}", declared_params(kernel)),
                        ));
                    }
                }
            }
            prov.push(Provenance {
                key: "skip_conditions".into(),
                value: Value::from(rule.rule.check.text()).to_string(),
                source: Source::File(rule.check_loc.clone()),
            });
            out.push(rule.rule.clone());
        }
    }
    out
}

fn resolve_protocol(entries: &[&Entry], cli: &CliOverrides) -> (ProtocolSettings, Vec<Provenance>) {
    let (base, base_source) = if cli.quick {
        (
            ProtocolSettings::quick(),
            Source::BuiltIn("the --quick profile"),
        )
    } else {
        (
            ProtocolSettings::default(),
            Source::BuiltIn("the protocol defaults"),
        )
    };
    let mut layers: Vec<(ProtoKey, ProtoValue, Source)> = entries
        .iter()
        .flat_map(|e| e.protocol.iter())
        .map(|s| (s.key, s.value, Source::File(s.loc.clone())))
        .collect();
    if let Some(w) = cli.warmup {
        layers.push((
            ProtoKey::Warmup,
            ProtoValue::Count(w),
            Source::Cli("--warmup"),
        ));
    }
    if let Some(i) = cli.iters {
        layers.push((
            ProtoKey::Iters,
            ProtoValue::Count(i),
            Source::Cli("--iters"),
        ));
    }
    if let Some(t) = cli.timeout_s {
        layers.push((
            ProtoKey::TimeoutS,
            ProtoValue::Seconds(t),
            Source::Cli("--timeout"),
        ));
    }
    let (mut settings, mut provenance) = protocol::apply(base, &base_source, &layers);
    if cli.l2_hot {
        settings.l2_hot_batch = true;
        provenance.push(Provenance {
            key: "protocol.l2_hot_batch".into(),
            value: "true".into(),
            source: Source::Cli("--l2-hot"),
        });
    }
    (settings, provenance)
}
