//! The `tolerances:` key of an entry. Flat fields apply to every precision; a precision name maps
//! to fields for that precision only and wins over the flat ones of the same entry:
//!
//! ```yaml
//! tolerances: {rmse: 1.0e-3, relative_error: 1.0e-2, fp16: {atol: 1.0e-2}}
//! ```
//!
//! `relative_error` (the QuASIM seed's name) is an alias of `rtol`.

use super::errors::{ConfigErrorKind, Loc};
use super::provenance::{Provenance, Source};
use super::reader::{Reader, join};
use super::yaml::Node;
use apex_plugin_api::{Precision, Tolerance};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TolField {
    Atol,
    Rtol,
    Rmse,
    MaxMismatchRatio,
}

const FIELDS: [&str; 5] = [
    "atol",
    "rtol",
    "relative_error",
    "rmse",
    "max_mismatch_ratio",
];

impl TolField {
    fn parse(s: &str) -> Option<TolField> {
        Some(match s {
            "atol" => TolField::Atol,
            "rtol" | "relative_error" => TolField::Rtol,
            "rmse" => TolField::Rmse,
            "max_mismatch_ratio" => TolField::MaxMismatchRatio,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            TolField::Atol => "atol",
            TolField::Rtol => "rtol",
            TolField::Rmse => "rmse",
            TolField::MaxMismatchRatio => "max_mismatch_ratio",
        }
    }

    fn slot(self, t: &mut Tolerance) -> &mut f64 {
        match self {
            TolField::Atol => &mut t.atol,
            TolField::Rtol => &mut t.rtol,
            TolField::Rmse => &mut t.rmse,
            TolField::MaxMismatchRatio => &mut t.max_mismatch_ratio,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TolSetting {
    pub precision: Option<Precision>,
    pub field: TolField,
    pub value: f64,
    pub loc: Loc,
}

pub(crate) fn parse(r: &mut Reader<'_>, node: &Node, path: &str) -> Vec<TolSetting> {
    let mut allowed: Vec<&str> = FIELDS.to_vec();
    allowed.extend(Precision::ALL.iter().map(|p| p.as_str()));
    let hint = "e.g. `tolerances: {rmse: 1.0e-3, rtol: 1.0e-2}`";
    let Some(pairs) = r.map(node, path, Some(&allowed), hint) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut flat = Vec::new();
    for (name, k, v) in &pairs {
        if let Some(p) = Precision::parse(name) {
            let sub = join(path, name);
            let Some(inner) = r.map(v, &sub, Some(&FIELDS), hint) else {
                continue;
            };
            fields(r, &inner, &sub, Some(p), &mut out);
        } else {
            flat.push((name.clone(), *k, *v));
        }
    }
    fields(r, &flat, path, None, &mut out);
    out
}

fn fields(
    r: &mut Reader<'_>,
    pairs: &[(String, &Node, &Node)],
    path: &str,
    precision: Option<Precision>,
    out: &mut Vec<TolSetting>,
) {
    let has = |n: &str| pairs.iter().any(|(k, _, _)| k == n);
    if has("rtol") && has("relative_error") {
        let (_, k, _) = pairs
            .iter()
            .find(|(n, _, _)| n == "relative_error")
            .expect("checked");
        r.error(
            k,
            &join(path, "relative_error"),
            ConfigErrorKind::InvalidValue(
                "`relative_error` and `rtol` are the same setting".into(),
            ),
            "keep one of them",
        );
    }
    for (name, _, v) in pairs {
        let Some(field) = TolField::parse(name) else {
            continue;
        };
        let p = join(path, name);
        let hint = format!("`{name}` is a non-negative number, e.g. `{name}: 1.0e-3`");
        let Some(x) = r.f64(v, &p, &hint) else {
            continue;
        };
        let bad = if x < 0.0 {
            Some("must not be negative")
        } else if field == TolField::MaxMismatchRatio && x > 1.0 {
            Some("is a fraction of elements and must be at most 1")
        } else {
            None
        };
        if let Some(why) = bad {
            r.error(
                v,
                &p,
                ConfigErrorKind::InvalidValue(format!("`{name}: {x}` {why}")),
                hint,
            );
            continue;
        }
        out.push(TolSetting {
            precision,
            field,
            value: x,
            loc: r.loc(v),
        });
    }
}

/// Folds the entries' settings (in precedence order) over the kernel's declared tolerance for
/// `precision`. Within one entry, the precision-specific fields are applied after the flat ones,
/// so they win.
pub(crate) fn apply(
    declared: Tolerance,
    precision: Precision,
    entries: &[&[TolSetting]],
) -> (Tolerance, Vec<Provenance>) {
    let mut t = declared;
    let mut prov: Vec<Provenance> = [
        TolField::Atol,
        TolField::Rtol,
        TolField::Rmse,
        TolField::MaxMismatchRatio,
    ]
    .into_iter()
    .map(|f| Provenance {
        key: format!("tolerances.{}", f.name()),
        value: serde_json::Value::from(*f.slot(&mut t)).to_string(),
        source: Source::KernelDefault,
    })
    .collect();
    for settings in entries {
        let flat = settings.iter().filter(|s| s.precision.is_none());
        let specific = settings.iter().filter(|s| s.precision == Some(precision));
        for s in flat.chain(specific) {
            *s.field.slot(&mut t) = s.value;
            let slot = &mut prov[s.field as usize];
            slot.value = serde_json::Value::from(s.value).to_string();
            slot.source = Source::File(s.loc.clone());
            if let Some(p) = s.precision {
                slot.key = format!("tolerances.{}.{}", p.as_str(), s.field.name());
            } else {
                slot.key = format!("tolerances.{}", s.field.name());
            }
        }
    }
    (t, prov)
}
