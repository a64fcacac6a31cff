//! The `skip_conditions:` key of an entry: a list of `{backend?, precision?, reason, check}` whose
//! `check` is parsed here, at load time, by the skip-expression parser (`crate::skip`). A syntax
//! error is located at the file column of the offending character inside the expression.

use super::errors::{ConfigErrorKind, Loc};
use super::reader::{Reader, index, join};
use super::yaml::Node;
use crate::skip::{Expr, SkipRule};
use apex_plugin_api::{Backend, Precision};

const KEYS: [&str; 4] = ["backend", "precision", "reason", "check"];

/// A parsed rule with the positions resolution needs to report on it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfiguredRule {
    pub rule: SkipRule,
    pub path: String,
    pub check_loc: Loc,
}

pub(crate) fn parse(r: &mut Reader<'_>, node: &Node, path: &str) -> Vec<ConfiguredRule> {
    let hint =
        "e.g. `- {backend: cuda, reason: \"CUDA not available\", check: \"not cuda.available\"}`";
    let (items, is_list) = Reader::items(node);
    if !is_list {
        r.wrong_type(node, path, "a list of rules", hint);
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let p = index(path, i);
        let Some(pairs) = r.map(item, &p, Some(&KEYS), hint) else {
            continue;
        };
        let get = |k: &str| pairs.iter().find(|(n, _, _)| n == k).map(|(_, _, v)| *v);
        let mut ok = true;
        let backend = get("backend").and_then(|v| {
            let bp = join(&p, "backend");
            let name = r.string(v, &bp, "one of: cpu, cuda, trt")?;
            let b = Backend::parse(&name);
            if b.is_none() {
                r.error(
                    v,
                    &bp,
                    ConfigErrorKind::InvalidValue(format!("unknown backend `{name}`")),
                    "backends: cpu, cuda, trt",
                );
                ok = false;
            }
            b
        });
        let precision = get("precision").and_then(|v| {
            let pp = join(&p, "precision");
            let name = r.string(v, &pp, "one of: fp32, fp16, bf16, fp8")?;
            let q = Precision::parse(&name);
            if q.is_none() {
                r.error(
                    v,
                    &pp,
                    ConfigErrorKind::InvalidValue(format!("unknown precision `{name}`")),
                    "precisions: fp32, fp16, bf16, fp8",
                );
                ok = false;
            }
            q
        });
        let reason = match get("reason") {
            Some(v) => r
                .string(
                    v,
                    &join(&p, "reason"),
                    "a short sentence shown for every skipped case",
                )
                .filter(|s| {
                    let empty = s.trim().is_empty();
                    if empty {
                        r.error(
                            v,
                            &join(&p, "reason"),
                            ConfigErrorKind::InvalidValue("`reason` is empty".into()),
                            "say why the case is skipped, e.g. \"CUDA not available\"",
                        );
                    }
                    !empty
                }),
            None => {
                r.error(
                    item,
                    &p,
                    ConfigErrorKind::MissingKey("reason".into()),
                    "every rule says why it skips, e.g. `reason: \"CUDA not available\"`",
                );
                None
            }
        };
        let check = match get("check") {
            Some(v) => {
                let cp = join(&p, "check");
                r.string(
                    v,
                    &cp,
                    "a condition in quotes, e.g. `check: \"not cuda.available\"`",
                )
                .and_then(|text| match Expr::parse(&text) {
                    Ok(e) => Some((e, r.loc(v))),
                    Err(e) => {
                        let mut loc = r.loc(v);
                        loc.column = r.column_inside(v, e.column);
                        let hint = e.hint.clone();
                        r.errors.push(super::errors::ConfigError::new(
                            loc,
                            cp,
                            ConfigErrorKind::Expression(e),
                            hint,
                        ));
                        None
                    }
                })
            }
            None => {
                r.error(
                    item,
                    &p,
                    ConfigErrorKind::MissingKey("check".into()),
                    "add the condition under which to skip, e.g. `check: \"not cuda.available\"`",
                );
                None
            }
        };
        if let (true, Some(reason), Some((check, check_loc))) = (ok, reason, check) {
            out.push(ConfiguredRule {
                rule: SkipRule {
                    backend,
                    precision,
                    reason,
                    check,
                    source: r.loc(item).to_string(),
                },
                path: p,
                check_loc,
            });
        }
    }
    out
}
