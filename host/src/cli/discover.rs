//! `apex-host discover [--verbose] [--json]` (user story 3): the paths scanned, every library and
//! whether it loaded (and why not), every kernel with its backends, precisions and parameter axes,
//! the config files that apply to it, and how each skip condition evaluates on this machine.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::discovery_opts::DiscoveryOpts;
use super::exit_codes::ApexExitCode;
use crate::config::{CliOverrides, SuiteConfig};
use crate::discovery::Registry;
use crate::facts::Facts;
use crate::model::KernelInfo;
use crate::report::term::{errln, out, outln};
use crate::skip::{self, CaseContext, RuleOutcome};

#[derive(Debug, clap::Args)]
pub struct DiscoverArgs {
    /// Everything: paths, libraries, kernels, parameter axes, configs, skip conditions.
    #[arg(long, short)]
    pub verbose: bool,
    /// The same as data (JSON on stdout).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub discovery: DiscoveryOpts,
}

pub fn exec(args: &DiscoverArgs) -> i32 {
    let opts = args.discovery.resolve();
    let registry = crate::discovery::discover(&opts);
    let suite_dir = args.discovery.suite_dir(opts.root.as_deref());
    let config = match crate::config::load(&registry.bench_files(), &suite_dir) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: invalid configuration:\n{e}");
            return ApexExitCode::CONFIG_ERROR;
        }
    };
    let facts = crate::facts::gather();
    let kernels: Vec<serde_json::Value> = registry
        .kernels()
        .map(|k| kernel_view(k, &config, &facts))
        .collect();
    if args.json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "scanned_paths": registry.scanned_paths,
            "built": registry.built,
            "plugins": registry.plugins,
            "failures": registry.failures,
            "facts": facts,
            "engine_backends": crate::facts::engine_backends::probe_with(&facts),
            "config_files": config.files().iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
            "kernels": kernels,
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        out!("{}", render(&registry, &kernels, &facts, args.verbose));
    }
    if registry.plugins.is_empty() {
        ApexExitCode::NOTHING_RAN
    } else {
        ApexExitCode::OK
    }
}

/// One kernel as `discover` shows it: its descriptor, its parameter axes after configuration
/// (with where each value came from), and each skip rule's outcome per backend × precision.
fn kernel_view(kernel: &KernelInfo, config: &SuiteConfig, facts: &Facts) -> serde_json::Value {
    let cases = config.expand(kernel, &CliOverrides::default());
    let (axes, skips, errors) = match &cases {
        Ok(cases) => {
            let mut axes: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
            for c in cases {
                for (name, v) in &c.params {
                    let values = axes.entry(name).or_default();
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            let mut skips = Vec::new();
            let mut seen = BTreeSet::new();
            for c in cases {
                if !seen.insert((c.backend, c.precision)) {
                    continue;
                }
                let ctx = CaseContext {
                    backend: c.backend,
                    precision: c.precision,
                    params: c.params.clone(),
                };
                if let Some(reason) = skip::implicit_reason(c.backend, facts) {
                    skips.push(serde_json::json!({"backend": c.backend.as_str(), "precision": c.precision.as_str(),
                        "rule": "implicit", "outcome": "skip", "reason": reason}));
                }
                for (rule, outcome) in c.skip.iter().zip(skip::explain(&c.skip, facts, &ctx)) {
                    let outcome = match outcome {
                        RuleOutcome::NotApplicable => continue,
                        RuleOutcome::Skip => "skip".to_string(),
                        RuleOutcome::Run => "run".to_string(),
                        RuleOutcome::Error(e) => format!("error: {e}"),
                    };
                    skips.push(serde_json::json!({"backend": c.backend.as_str(), "precision": c.precision.as_str(),
                        "rule": rule.check.text(), "source": rule.source, "outcome": outcome, "reason": rule.reason}));
                }
            }
            let mut unique = Vec::new();
            for s in skips {
                if !unique.contains(&s) {
                    unique.push(s);
                }
            }
            let skips = unique;
            (
                axes.into_iter()
                    .map(|(k, mut v)| {
                        v.sort_by(axis_order);
                        (k.to_string(), v)
                    })
                    .collect::<BTreeMap<_, _>>(),
                skips,
                None,
            )
        }
        Err(e) => (BTreeMap::new(), Vec::new(), Some(e.to_string())),
    };
    serde_json::json!({
        "id": kernel.id,
        "plugin": kernel.plugin,
        "description": kernel.description,
        "backends": kernel.backends.iter().map(|b| b.as_str()).collect::<Vec<_>>(),
        "precisions": kernel.precisions.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "graph_capturable": kernel.graph_capturable,
        "cases": cases.as_ref().map_or(0, Vec::len),
        "axes": axes,
        "config": config.sources_for(&kernel.id).iter().map(ToString::to_string).collect::<Vec<_>>(),
        "ignored_params": config.ignored_for(kernel).iter().map(ToString::to_string).collect::<Vec<_>>(),
        "skip_conditions": skips,
        "config_error": errors,
    })
}

fn render(reg: &Registry, kernels: &[serde_json::Value], facts: &Facts, verbose: bool) -> String {
    let mut out = String::new();
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let list = |v: &serde_json::Value| {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    if verbose {
        let _ = writeln!(out, "scanned:");
        for p in &reg.scanned_paths {
            let _ = writeln!(out, "  {}", p.display());
        }
        if !reg.built.is_empty() {
            let _ = writeln!(out, "built: {}", reg.built.join(", "));
        }
        let _ = writeln!(
            out,
            "machine: os={} arch={} cuda={} nvml={} trt={}",
            facts.os,
            facts.arch,
            availability(facts.cuda.available, &facts.cuda.reason),
            availability(facts.nvml.available, &facts.nvml.reason),
            availability(facts.trt.available, &facts.trt.reason)
        );
        let _ = writeln!(out, "engine backends (trt_engine):");
        for b in crate::facts::engine_backends::probe_with(facts) {
            let _ = writeln!(
                out,
                "  {:<18} {}: {}",
                b.name,
                if b.available {
                    "available"
                } else {
                    "unavailable"
                },
                b.detail
            );
        }
        let _ = writeln!(out, "libraries:");
        for p in &reg.plugins {
            let _ = writeln!(
                out,
                "  loaded  {} ({} {}, {} kernels, {:.1} ms)",
                p.library.display(),
                p.name,
                p.version,
                p.kernels.len(),
                p.load_ms
            );
        }
        for f in &reg.failures {
            let _ = writeln!(out, "  FAILED  {}: {}", f.path.display(), f.reason);
        }
    }
    let _ = writeln!(out, "kernels:");
    for k in kernels {
        let _ = writeln!(
            out,
            "  {:<34} backends={} precisions={} cases={}  ({})",
            s(&k["id"]),
            list(&k["backends"]),
            list(&k["precisions"]),
            k["cases"],
            s(&k["plugin"])
        );
        if !verbose {
            continue;
        }
        if let Some(axes) = k["axes"].as_object() {
            for (name, values) in axes {
                let _ = writeln!(out, "      param {name} = [{}]", list_raw(values));
            }
        }
        if let Some(cfg) = k["config"].as_array() {
            for c in cfg {
                let _ = writeln!(
                    out,
                    "      config {}",
                    c.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| c.to_string())
                );
            }
        }
        for i in k["ignored_params"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "      ignored {} (not a parameter of this kernel)",
                s(i)
            );
        }
        if let Some(skips) = k["skip_conditions"].as_array() {
            for r in skips {
                let _ = writeln!(
                    out,
                    "      skip[{}/{}] {} -> {} ({})",
                    s(&r["backend"]),
                    s(&r["precision"]),
                    s(&r["rule"]),
                    s(&r["outcome"]),
                    s(&r["reason"])
                );
            }
        }
        if let Some(e) = k["config_error"].as_str() {
            let _ = writeln!(out, "      CONFIG ERROR: {e}");
        }
    }
    let kernels_n = kernels.len();
    let _ = writeln!(
        out,
        "{} plugin(s), {kernels_n} kernel(s), {} load failure(s){}",
        reg.plugins.len(),
        reg.failures.len(),
        if reg.failures.is_empty() || verbose {
            String::new()
        } else {
            " (see --verbose)".into()
        }
    );
    out
}

/// Numbers in numeric order, then everything else in text order.
fn axis_order(a: &serde_json::Value, b: &serde_json::Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.to_string().cmp(&b.to_string()),
    }
}

fn list_raw(v: &serde_json::Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn availability(ok: bool, reason: &Option<String>) -> String {
    if ok {
        "yes".into()
    } else {
        format!("no ({})", reason.as_deref().unwrap_or("unknown"))
    }
}
