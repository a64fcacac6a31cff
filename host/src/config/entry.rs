//! [`Entry`]: one validated bench.yaml entry (a mapping with `kernel:`), converted from the located
//! YAML tree with every value's position kept for errors and provenance.
//!
//! A file holds either one entry (a mapping) or a list of entries (a sequence of mappings).

use super::errors::{ConfigErrorKind, Loc};
use super::protocol::{self, ProtoSetting};
use super::reader::{Reader, index, join};
use super::skip_conditions::{self, ConfiguredRule};
use super::tolerance::{self, TolSetting};
use super::yaml::{Node, Raw};
use apex_plugin_api::{Backend, Precision};
use globset::{GlobBuilder, GlobMatcher};

pub(crate) const ENTRY_KEYS: [&str; 9] = [
    "kernel",
    "problem_size",
    "zip",
    "exclude",
    "precisions",
    "backends",
    "tolerances",
    "protocol",
    "skip_conditions",
];

/// A value with the position it was written at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Located<T> {
    pub value: T,
    pub loc: Loc,
}

/// `problem_size.NAME`: one value, or a list (an axis of the sweep). An item may itself be a list of
/// integers: the value of a shape parameter (`grid_size: [[64, 64, 64], [128, 128, 64]]`). Whether
/// a flat list of integers is one shape or a sweep is decided per kernel, by the parameter's
/// declared type (`axes::resolve_params`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamSetting {
    pub name: String,
    pub values: Vec<Located<serde_json::Value>>,
    pub is_list: bool,
    /// Position of the value (the list or the scalar).
    pub loc: Loc,
    /// Position of the parameter's name.
    pub key_loc: Loc,
    pub path: String,
}

/// One `exclude` item: every named key must match for a case to be removed. A list value
/// matches any of its items. Keys are parameters, or `backend` / `precision`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExcludeRule {
    pub items: Vec<(Located<String>, Vec<Located<serde_json::Value>>)>,
    pub loc: Loc,
    pub path: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub kernel: Located<String>,
    pub matcher: GlobMatcher,
    /// `kernel` names one id (no glob characters): settings it cannot apply are errors, not skipped.
    pub exact: bool,
    pub problem_size: Vec<ParamSetting>,
    pub zip: Option<Located<Vec<Vec<Located<String>>>>>,
    pub exclude: Vec<ExcludeRule>,
    pub precisions: Option<Located<Vec<Located<Precision>>>>,
    pub backends: Option<Located<Vec<Located<Backend>>>>,
    pub tolerances: Vec<TolSetting>,
    pub protocol: Vec<ProtoSetting>,
    pub skip: Vec<ConfiguredRule>,
    /// Key path prefix of this entry in its file: empty for a one-entry file, `[2]` in a list.
    pub path: String,
    /// Index of the file in `SuiteConfig::files` (entries of one file form one layer).
    pub file_index: usize,
}

/// Splits a document into entries and validates each; errors go to `r`.
pub(crate) fn parse_document(r: &mut Reader<'_>, doc: &Node) -> Vec<Entry> {
    match &doc.value {
        Raw::Map(_) => parse_entry(r, doc, "").into_iter().collect(),
        Raw::Seq(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, n)| parse_entry(r, n, &index("", i)))
            .collect(),
        _ => {
            r.wrong_type(
                doc,
                "<document>",
                "a mapping (one entry) or a list of entries",
                "start the file with `kernel: <id or glob>`",
            );
            Vec::new()
        }
    }
}

fn parse_entry(r: &mut Reader<'_>, node: &Node, path: &str) -> Option<Entry> {
    let hint = "an entry is a mapping such as `kernel: tile_ops.*` plus the keys to set";
    let here = |k: &str| join(path, k);
    let errors_before = r.errors.len();
    let pairs = r.map(node, path, Some(&ENTRY_KEYS), hint)?;
    // A key with no value (`protocol:` with every line commented out) counts as not set.
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(n, _, v)| n == k && v.value != Raw::Null)
            .map(|(_, _, v)| *v)
    };
    let kernel_node = pairs
        .iter()
        .find(|(n, _, _)| n == "kernel")
        .map(|(_, _, v)| *v);

    let kernel = match kernel_node {
        Some(v) => {
            let p = here("kernel");
            r.string(
                v,
                &p,
                "a kernel id such as `tile_ops.tile_pack` or a glob such as `tile_ops.*`",
            )
            .and_then(|s| {
                let built = GlobBuilder::new(&s).build().map(|g| g.compile_matcher());
                match built {
                    _ if s.trim().is_empty() => {
                        r.error(
                            v,
                            &p,
                            ConfigErrorKind::InvalidValue("`kernel` is empty".into()),
                            "write a kernel id, or `\"*\"` for every kernel",
                        );
                        None
                    }
                    Ok(m) => Some((
                        Located {
                            value: s,
                            loc: r.loc(v),
                        },
                        m,
                    )),
                    Err(e) => {
                        r.error(
                            v,
                            &p,
                            ConfigErrorKind::InvalidValue(format!("invalid glob: {}", e.kind())),
                            "globs use `*`, `?`, `[abc]` and `{a,b}`; quote them in YAML",
                        );
                        None
                    }
                }
            })
        }
        None => {
            r.error(
                node,
                if path.is_empty() { "<document>" } else { path },
                ConfigErrorKind::MissingKey("kernel".into()),
                "name the kernels this entry configures, e.g. `kernel: tile_ops.tile_pack`, or `kernel: \"*\"` for all",
            );
            None
        }
    };

    let problem_size = get("problem_size")
        .map(|v| parse_problem_size(r, v, &here("problem_size")))
        .unwrap_or_default();
    let zip = get("zip").and_then(|v| parse_zip(r, v, &here("zip"), &problem_size));
    let exclude = get("exclude")
        .map(|v| parse_exclude(r, v, &here("exclude")))
        .unwrap_or_default();
    let precisions = get("precisions").and_then(|v| {
        names(
            r,
            v,
            &here("precisions"),
            "precision",
            Precision::parse,
            &["fp32", "fp16", "bf16", "fp8"],
        )
    });
    let backends = get("backends").and_then(|v| {
        names(
            r,
            v,
            &here("backends"),
            "backend",
            Backend::parse,
            &["cpu", "cuda", "trt"],
        )
    });
    let tolerances = get("tolerances")
        .map(|v| tolerance::parse(r, v, &here("tolerances")))
        .unwrap_or_default();
    let protocol = get("protocol")
        .map(|v| protocol::parse(r, v, &here("protocol")))
        .unwrap_or_default();
    let skip = get("skip_conditions")
        .map(|v| skip_conditions::parse(r, v, &here("skip_conditions")))
        .unwrap_or_default();

    let (kernel, matcher) = kernel?;
    if r.errors.len() > errors_before {
        return None;
    }
    let exact = !kernel.value.contains(['*', '?', '[', '{']);
    Some(Entry {
        kernel,
        matcher,
        exact,
        problem_size,
        zip,
        exclude,
        precisions,
        backends,
        tolerances,
        protocol,
        skip,
        path: path.to_string(),
        file_index: 0,
    })
}

fn parse_problem_size(r: &mut Reader<'_>, node: &Node, path: &str) -> Vec<ParamSetting> {
    let hint = "e.g. `problem_size: {tile_size: [8, 16, 32], kmax: 32}`";
    let Some(pairs) = r.map(node, path, None, hint) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, k, v) in pairs {
        let p = join(path, &name);
        let (items, is_list) = Reader::items(v);
        if is_list && items.is_empty() {
            r.error(
                v,
                &p,
                ConfigErrorKind::InvalidValue("empty list: the sweep would have no cases".into()),
                "give at least one value, or remove the key to use the kernel's default",
            );
            continue;
        }
        let mut values = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let ip = if is_list { index(&p, i) } else { p.clone() };
            let hint = if is_list {
                "list items are single values; one list per parameter is one sweep axis"
            } else {
                "a parameter is a value, or a list of values to sweep"
            };
            let value = match Reader::items(item) {
                (dims, true) => r.shape(item, &dims, &ip),
                _ => r.scalar(item, &ip, hint),
            };
            match value {
                Some(value) => values.push(Located {
                    value,
                    loc: r.loc(item),
                }),
                None => ok = false,
            }
        }
        if ok {
            out.push(ParamSetting {
                name,
                values,
                is_list,
                loc: r.loc(v),
                key_loc: r.loc(k),
                path: p,
            });
        }
    }
    out
}

fn parse_zip(
    r: &mut Reader<'_>,
    node: &Node,
    path: &str,
    problem_size: &[ParamSetting],
) -> Option<Located<Vec<Vec<Located<String>>>>> {
    let hint = "e.g. `zip: [[batch, seq_len]]`: the named list axes vary together";
    let (items, is_list) = Reader::items(node);
    if !is_list {
        r.wrong_type(node, path, "a list of groups of parameter names", hint);
        return None;
    }
    let all_strings = items.iter().all(|i| matches!(i.value, Raw::Str(_)));
    let groups: Vec<(String, Vec<&Node>)> = if all_strings && !items.is_empty() {
        vec![(path.to_string(), items)]
    } else {
        items
            .iter()
            .enumerate()
            .map(|(i, g)| (index(path, i), Reader::items(g)))
            .filter_map(|(p, (names, list))| {
                if list {
                    Some((p, names))
                } else {
                    r.wrong_type(names[0], &p, "a list of parameter names", hint);
                    None
                }
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (gp, names) in groups {
        let mut group = Vec::new();
        for (j, n) in names.iter().enumerate() {
            let np = index(&gp, j);
            let Some(name) = r.string(n, &np, hint) else {
                continue;
            };
            if seen.contains(&name) {
                r.error(
                    n,
                    &np,
                    ConfigErrorKind::InvalidValue(format!(
                        "`{name}` appears in more than one zip position"
                    )),
                    "name each axis once across all zip groups",
                );
                continue;
            }
            seen.push(name.clone());
            group.push(Located {
                value: name,
                loc: r.loc(n),
            });
        }
        if names.len() < 2 {
            let at = names.first().copied().unwrap_or(node);
            r.error(
                at,
                &gp,
                ConfigErrorKind::InvalidValue("a zip group needs at least two axes".into()),
                hint,
            );
            continue;
        }
        // A group whose names were rejected above (not strings, or already zipped) has its
        // errors recorded; fewer than two axes left zip nothing.
        if group.len() < 2 {
            continue;
        }
        check_zip_lengths(r, &group, problem_size, &gp);
        out.push(group);
    }
    Some(Located {
        value: out,
        loc: r.loc(node),
    })
}

/// Equal lengths are checked here when every zipped axis is set in the same entry; axes spread
/// over several files are checked again at resolution.
fn check_zip_lengths(
    r: &mut Reader<'_>,
    group: &[Located<String>],
    ps: &[ParamSetting],
    path: &str,
) {
    let lens: Vec<(&str, Option<&ParamSetting>)> = group
        .iter()
        .map(|n| (n.value.as_str(), ps.iter().find(|p| p.name == n.value)))
        .collect();
    let Some(((_, Some(first)), rest)) = lens.split_first() else {
        return;
    };
    if rest.iter().any(|(_, p)| p.is_none()) {
        return;
    }
    for (name, p) in rest {
        let p = p.expect("checked");
        if p.values.len() != first.values.len() {
            let e = super::errors::ConfigError::new(
                group
                    .iter()
                    .find(|g| g.value == *name)
                    .expect("in group")
                    .loc
                    .clone(),
                path.to_string(),
                ConfigErrorKind::InvalidValue(format!(
                    "zipped axes differ in length: `{}` has {} values, `{name}` has {}",
                    first.name,
                    first.values.len(),
                    p.values.len()
                )),
                "zipped axes vary together, so their lists must be equally long",
            );
            r.errors.push(e);
        }
    }
}

fn parse_exclude(r: &mut Reader<'_>, node: &Node, path: &str) -> Vec<ExcludeRule> {
    let hint = "e.g. `exclude: [{batch: 128, seq_len: 2048}]` removes those combinations";
    let (items, is_list) = Reader::items(node);
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = if is_list {
            index(path, i)
        } else {
            path.to_string()
        };
        let Some(pairs) = r.map(item, &p, None, hint) else {
            continue;
        };
        if pairs.is_empty() {
            r.error(
                item,
                &p,
                ConfigErrorKind::InvalidValue("an empty exclude matches every case".into()),
                hint,
            );
            continue;
        }
        let mut rule = Vec::new();
        let mut ok = true;
        for (name, k, v) in pairs {
            let kp = join(&p, &name);
            let (vals, list) = Reader::items(v);
            let mut values = Vec::new();
            for (j, val) in vals.iter().enumerate() {
                let vp = if list { index(&kp, j) } else { kp.clone() };
                match r.scalar(val, &vp, hint) {
                    Some(value) => {
                        let bad = match (name.as_str(), &value) {
                            ("backend", serde_json::Value::String(s)) => {
                                Backend::parse(s).is_none()
                            }
                            ("precision", serde_json::Value::String(s)) => {
                                Precision::parse(s).is_none()
                            }
                            ("backend" | "precision", _) => true,
                            _ => false,
                        };
                        if bad {
                            r.error(
                                val,
                                &vp,
                                ConfigErrorKind::InvalidValue(format!("unknown {name} {value}")),
                                if name == "backend" {
                                    "backends: cpu, cuda, trt"
                                } else {
                                    "precisions: fp32, fp16, bf16, fp8"
                                },
                            );
                            ok = false;
                        }
                        values.push(Located {
                            value,
                            loc: r.loc(val),
                        });
                    }
                    None => ok = false,
                }
            }
            rule.push((
                Located {
                    value: name,
                    loc: r.loc(k),
                },
                values,
            ));
        }
        if ok {
            out.push(ExcludeRule {
                items: rule,
                loc: r.loc(item),
                path: p,
            });
        }
    }
    out
}

/// A list of backend or precision names (a single name is a one-item list).
fn names<T: Copy + PartialEq>(
    r: &mut Reader<'_>,
    node: &Node,
    path: &str,
    what: &str,
    parse: fn(&str) -> Option<T>,
    known: &[&str],
) -> Option<Located<Vec<Located<T>>>> {
    let hint = format!("{what}s: {}", known.join(", "));
    let (items, is_list) = Reader::items(node);
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let p = if is_list {
            index(path, i)
        } else {
            path.to_string()
        };
        let Some(name) = r.string(item, &p, &hint) else {
            ok = false;
            continue;
        };
        match parse(&name) {
            Some(v) if out.iter().any(|o: &Located<T>| o.value == v) => {
                r.error(
                    item,
                    &p,
                    ConfigErrorKind::InvalidValue(format!("{what} `{name}` is listed twice")),
                    "list each once",
                );
                ok = false;
            }
            Some(v) => out.push(Located {
                value: v,
                loc: r.loc(item),
            }),
            None => {
                r.error(
                    item,
                    &p,
                    ConfigErrorKind::InvalidValue(format!("unknown {what} `{name}`")),
                    super::suggest::hint_for(&name, known, &format!("{what}s")),
                );
                ok = false;
            }
        }
    }
    if ok && out.is_empty() {
        r.error(
            node,
            path,
            ConfigErrorKind::InvalidValue(format!("empty list of {what}s: nothing would run")),
            format!("list at least one, or remove the key ({hint})"),
        );
        ok = false;
    }
    ok.then(|| Located {
        value: out,
        loc: r.loc(node),
    })
}
