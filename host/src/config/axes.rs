//! The parameter side of resolving one kernel: its axes (declared defaults overridden by the
//! entries, each value checked against the default's type), its `zip` groups and its `exclude`
//! rules, with provenance and located errors. [`super::resolve`] calls these; `sweep` expands them.

use super::entry::{Entry, ExcludeRule, Located, ParamSetting};
use super::errors::{ConfigError, ConfigErrorKind, ConfigErrors, Loc};
use super::provenance::{Provenance, Source};
use super::sweep::{Axis, Exclusion};
use crate::model::KernelInfo;
use serde_json::Value;

pub(super) fn declared_params(kernel: &KernelInfo) -> String {
    if kernel.params.is_empty() {
        return format!("kernel `{}` declares no parameters", kernel.id);
    }
    let names: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
    format!("parameters of `{}`: {}", kernel.id, names.join(", "))
}

pub(super) fn render_list(values: &[Value]) -> String {
    Value::Array(values.to_vec()).to_string()
}

pub(super) fn describe_json(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string {s:?}"),
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("the number `{n}`"),
        Value::Number(n) => format!("the integer `{n}`"),
        other => other.to_string(),
    }
}

/// A shape value: a non-empty list of positive integers.
fn is_shape(v: &Value) -> bool {
    v.as_array().is_some_and(|dims| {
        !dims.is_empty() && dims.iter().all(|d| d.as_i64().is_some_and(|d| d > 0))
    })
}

/// A flat list of integers given to a parameter declared as a shape is one shape (seed 002's
/// `grid_size: [64, 64, 64]`), not a sweep; a list of lists stays a sweep of shapes.
fn as_one_shape(
    default: &Value,
    values: &[Located<Value>],
    is_list: bool,
    loc: &Loc,
) -> Option<Located<Value>> {
    let flat = is_list && default.is_array() && values.iter().all(|v| v.value.is_i64());
    flat.then(|| Located {
        value: Value::Array(values.iter().map(|v| v.value.clone()).collect()),
        loc: loc.clone(),
    })
}

/// `value` converted to the type of `default`, or what was expected.
pub(super) fn coerce(default: &Value, value: &Value) -> Result<Value, &'static str> {
    match default {
        Value::Number(d) if d.is_f64() => value
            .as_f64()
            .filter(|_| value.is_number())
            .map(Value::from)
            .ok_or("a number"),
        Value::Number(_) if value.is_i64() || value.is_u64() => Ok(value.clone()),
        Value::Number(_) => Err("an integer"),
        Value::Bool(_) => value.as_bool().map(Value::from).ok_or("a boolean"),
        Value::String(_) if value.is_string() => Ok(value.clone()),
        Value::String(_) => Err("a string"),
        Value::Array(_) if is_shape(value) => Ok(value.clone()),
        Value::Array(_) => Err("a shape (a list of positive integers, e.g. [64, 64, 64])"),
        _ => Ok(value.clone()),
    }
}

pub(super) fn coerce_located(
    kernel: &KernelInfo,
    name: &str,
    values: &[Located<Value>],
    is_list: bool,
    path: &str,
    errors: &mut ConfigErrors,
) -> Option<Vec<Value>> {
    let decl = kernel.params.iter().find(|p| p.name == name)?;
    let mut out = Vec::new();
    let mut ok = true;
    for (i, v) in values.iter().enumerate() {
        match coerce(&decl.default, &v.value) {
            Ok(c) => out.push(c),
            Err(expected) => {
                ok = false;
                let p = if is_list {
                    format!("{path}[{i}]")
                } else {
                    path.to_string()
                };
                errors.push(ConfigError::new(
                    v.loc.clone(),
                    p,
                    ConfigErrorKind::WrongType {
                        expected: format!(
                            "{expected} (`{}` of `{}` defaults to {})",
                            name, kernel.id, decl.default
                        ),
                        found: describe_json(&v.value),
                    },
                    format!(
                        "write the value like the default, e.g. `{name}: {}`",
                        decl.default
                    ),
                ));
            }
        }
    }
    ok.then_some(out)
}

pub(super) fn not_declared(
    what: &'static str,
    name: &str,
    kernel: &KernelInfo,
    loc: Loc,
    path: String,
    hint: String,
) -> ConfigError {
    ConfigError::new(
        loc,
        path,
        ConfigErrorKind::NotDeclared {
            what,
            name: name.to_string(),
            kernel: kernel.id.clone(),
        },
        hint,
    )
}

pub(super) fn resolve_params(
    kernel: &KernelInfo,
    entries: &[&Entry],
    errors: &mut ConfigErrors,
) -> (Vec<Axis>, Vec<Provenance>) {
    let mut axes: Vec<(Axis, Provenance, bool)> = kernel
        .params
        .iter()
        .map(|p| {
            (
                Axis {
                    name: p.name.clone(),
                    values: vec![p.default.clone()],
                },
                Provenance {
                    key: p.name.clone(),
                    value: p.default.to_string(),
                    source: Source::KernelDefault,
                },
                false,
            )
        })
        .collect();
    for e in entries {
        for ParamSetting {
            name,
            values,
            is_list,
            loc,
            key_loc,
            path,
        } in &e.problem_size
        {
            let Some(slot) = axes.iter_mut().find(|(a, _, _)| a.name == *name) else {
                if e.exact {
                    errors.push(not_declared(
                        "parameter",
                        name,
                        kernel,
                        key_loc.clone(),
                        path.clone(),
                        if kernel.params.is_empty() {
                            declared_params(kernel)
                        } else {
                            super::suggest::hint_for(
                                name,
                                &kernel
                                    .params
                                    .iter()
                                    .map(|p| p.name.as_str())
                                    .collect::<Vec<_>>(),
                                &format!("parameters of `{}`", kernel.id),
                            )
                        },
                    ));
                }
                continue;
            };
            let default = kernel
                .params
                .iter()
                .find(|p| p.name == *name)
                .map(|p| &p.default);
            let one_shape = default.and_then(|d| as_one_shape(d, values, *is_list, loc));
            let (values, is_list) = match &one_shape {
                Some(shape) => (std::slice::from_ref(shape), &false),
                None => (values.as_slice(), is_list),
            };
            if let Some(coerced) = coerce_located(kernel, name, values, *is_list, path, errors) {
                slot.1 = Provenance {
                    key: name.clone(),
                    value: if *is_list {
                        render_list(&coerced)
                    } else {
                        coerced[0].to_string()
                    },
                    source: Source::File(loc.clone()),
                };
                slot.0.values = coerced;
                slot.2 = *is_list;
            }
        }
    }
    let prov = axes.iter().map(|(_, p, _)| p.clone()).collect();
    (axes.into_iter().map(|(a, _, _)| a).collect(), prov)
}

pub(super) fn resolve_zip(
    kernel: &KernelInfo,
    entries: &[&Entry],
    axes: &[Axis],
    errors: &mut ConfigErrors,
    prov: &mut Vec<Provenance>,
) -> Vec<Vec<usize>> {
    let Some((entry, zip)) = entries
        .iter()
        .rev()
        .find_map(|e| e.zip.as_ref().map(|z| (*e, z)))
    else {
        return Vec::new();
    };
    let zip_path = if entry.path.is_empty() {
        "zip".to_string()
    } else {
        format!("{}.zip", entry.path)
    };
    let mut groups = Vec::new();
    for (gi, group) in zip.value.iter().enumerate() {
        let mut idx = Vec::new();
        let mut skip_group = false;
        for name in group {
            match axes.iter().position(|a| a.name == name.value) {
                Some(i) => idx.push(i),
                None if entry.exact => {
                    errors.push(not_declared(
                        "parameter",
                        &name.value,
                        kernel,
                        name.loc.clone(),
                        format!("{zip_path}[{gi}]"),
                        declared_params(kernel),
                    ));
                    skip_group = true;
                }
                None => skip_group = true,
            }
        }
        if skip_group {
            continue;
        }
        let lens: Vec<usize> = idx.iter().map(|&i| axes[i].values.len()).collect();
        if lens.iter().any(|l| *l != lens[0]) {
            let detail: Vec<String> = idx
                .iter()
                .map(|&i| format!("`{}` has {}", axes[i].name, axes[i].values.len()))
                .collect();
            errors.push(ConfigError::new(
                zip.loc.clone(),
                format!("{zip_path}[{gi}]"),
                ConfigErrorKind::InvalidValue(format!(
                    "zipped axes differ in length for `{}`: {}",
                    kernel.id,
                    detail.join(", ")
                )),
                "zipped axes vary together, so their lists must be equally long",
            ));
            continue;
        }
        groups.push(idx);
    }
    let rendered: Vec<Vec<&str>> = zip
        .value
        .iter()
        .map(|g| g.iter().map(|n| n.value.as_str()).collect())
        .collect();
    prov.push(Provenance {
        key: "zip".into(),
        value: serde_json::to_string(&rendered).unwrap_or_default(),
        source: Source::File(zip.loc.clone()),
    });
    groups
}

pub(super) fn resolve_exclusions(
    kernel: &KernelInfo,
    entries: &[&Entry],
    errors: &mut ConfigErrors,
    prov: &mut Vec<Provenance>,
) -> Vec<Exclusion> {
    let mut out = Vec::new();
    for e in entries {
        for ExcludeRule { items, loc, path } in &e.exclude {
            let mut resolved = Vec::new();
            let mut applies = true;
            for (key, values) in items {
                let k = key.value.as_str();
                if k == "backend" || k == "precision" {
                    resolved.push((
                        k.to_string(),
                        values.iter().map(|v| v.value.clone()).collect(),
                    ));
                    continue;
                }
                if !kernel.params.iter().any(|p| p.name == k) {
                    if e.exact {
                        errors.push(not_declared(
                            "parameter",
                            k,
                            kernel,
                            key.loc.clone(),
                            format!("{path}.{k}"),
                            format!(
                                "{}; `backend` and `precision` may be excluded too",
                                declared_params(kernel)
                            ),
                        ));
                    }
                    applies = false;
                    continue;
                }
                match coerce_located(
                    kernel,
                    k,
                    values,
                    values.len() > 1,
                    &format!("{path}.{k}"),
                    errors,
                ) {
                    Some(v) => resolved.push((k.to_string(), v)),
                    None => applies = false,
                }
            }
            if applies {
                let shown: serde_json::Map<String, Value> = resolved
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            if v.len() == 1 {
                                v[0].clone()
                            } else {
                                Value::Array(v.clone())
                            },
                        )
                    })
                    .collect();
                prov.push(Provenance {
                    key: "exclude".into(),
                    value: Value::Object(shown).to_string(),
                    source: Source::File(loc.clone()),
                });
                out.push(Exclusion { items: resolved });
            }
        }
    }
    out
}
