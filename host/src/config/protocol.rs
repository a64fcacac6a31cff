//! The `protocol:` key of an entry: overrides of the measurement protocol (product.md §5), and
//! how layered overrides fold into a [`ProtocolSettings`].
//!
//! `iters` selects the fixed stopping rule; any of `min_samples`, `min_time_s`,
//! `target_rel_noise`, `max_time_s` selects the adaptive one. One entry may not set both; across
//! layers the later setting wins.

use super::errors::{ConfigErrorKind, Loc};
use super::provenance::{Provenance, Source};
use super::reader::{Reader, join};
use super::yaml::Node;
use crate::model::{ProtocolSettings, StoppingRule};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProtoKey {
    Warmup,
    WarmupMaxS,
    Iters,
    MinSamples,
    MinTimeS,
    TargetRelNoise,
    MaxTimeS,
    TimeoutS,
    Processes,
}

pub(crate) const PROTOCOL_KEYS: [&str; 9] = [
    "warmup",
    "warmup_max_s",
    "iters",
    "min_samples",
    "min_time_s",
    "target_rel_noise",
    "max_time_s",
    "timeout_s",
    "processes",
];

impl ProtoKey {
    fn parse(s: &str) -> Option<ProtoKey> {
        Some(match s {
            "warmup" => ProtoKey::Warmup,
            "warmup_max_s" => ProtoKey::WarmupMaxS,
            "iters" => ProtoKey::Iters,
            "min_samples" => ProtoKey::MinSamples,
            "min_time_s" => ProtoKey::MinTimeS,
            "target_rel_noise" => ProtoKey::TargetRelNoise,
            "max_time_s" => ProtoKey::MaxTimeS,
            "timeout_s" => ProtoKey::TimeoutS,
            "processes" => ProtoKey::Processes,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        PROTOCOL_KEYS[self as usize]
    }

    fn adaptive(self) -> bool {
        matches!(
            self,
            ProtoKey::MinSamples
                | ProtoKey::MinTimeS
                | ProtoKey::TargetRelNoise
                | ProtoKey::MaxTimeS
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ProtoValue {
    Count(u64),
    Seconds(f64),
}

impl ProtoValue {
    pub(crate) fn render(self) -> String {
        match self {
            ProtoValue::Count(n) => n.to_string(),
            ProtoValue::Seconds(x) => serde_json::Value::from(x).to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProtoSetting {
    pub key: ProtoKey,
    pub value: ProtoValue,
    pub loc: Loc,
}

pub(crate) fn parse(r: &mut Reader<'_>, node: &Node, path: &str) -> Vec<ProtoSetting> {
    let hint = "e.g. `protocol: {warmup: 3, iters: 30}`";
    let Some(pairs) = r.map(node, path, Some(&PROTOCOL_KEYS), hint) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, _, v) in &pairs {
        let Some(key) = ProtoKey::parse(name) else {
            continue;
        };
        let p = join(path, name);
        let value = match key {
            ProtoKey::Warmup | ProtoKey::Iters | ProtoKey::MinSamples | ProtoKey::Processes => {
                let hint = format!("`{name}` is a whole number of calls, e.g. `{name}: 10`");
                match r.u64(v, &p, &hint) {
                    Some(0) if key != ProtoKey::Warmup => {
                        r.error(
                            v,
                            &p,
                            ConfigErrorKind::InvalidValue(format!("`{name}` must be at least 1")),
                            hint,
                        );
                        None
                    }
                    n => n.map(ProtoValue::Count),
                }
            }
            _ => {
                let hint = format!("`{name}` is in seconds (or a ratio), e.g. `{name}: 0.5`");
                match r.f64(v, &p, &hint) {
                    Some(x) if !seconds_ok(key, x) => {
                        let rule = if key == ProtoKey::TargetRelNoise {
                            "must be greater than 0 and less than 1"
                        } else if key == ProtoKey::MinTimeS {
                            "must not be negative"
                        } else {
                            "must be greater than 0"
                        };
                        r.error(
                            v,
                            &p,
                            ConfigErrorKind::InvalidValue(format!("`{name}: {x}` {rule}")),
                            hint,
                        );
                        None
                    }
                    x => x.map(ProtoValue::Seconds),
                }
            }
        };
        if let Some(value) = value {
            out.push(ProtoSetting {
                key,
                value,
                loc: r.loc(v),
            });
        }
    }
    let fixed = pairs.iter().find(|(n, _, _)| n == "iters");
    let adaptive = pairs
        .iter()
        .find(|(n, _, _)| ProtoKey::parse(n).is_some_and(ProtoKey::adaptive));
    if let (Some((_, k, _)), Some((a, _, _))) = (fixed, adaptive) {
        r.error(
            k,
            &join(path, "iters"),
            ConfigErrorKind::InvalidValue(format!(
                "`iters` (fixed sample count) and `{a}` (adaptive stopping) cannot both be set"
            )),
            "keep `iters` for a fixed number of samples, or the adaptive keys for nvbench-style stopping",
        );
    }
    out
}

fn seconds_ok(key: ProtoKey, x: f64) -> bool {
    match key {
        ProtoKey::TargetRelNoise => x > 0.0 && x < 1.0,
        ProtoKey::MinTimeS => x >= 0.0,
        _ => x > 0.0,
    }
}

/// Folds settings (each with its source, lowest precedence first) over `base`.
pub(crate) fn apply(
    base: ProtocolSettings,
    base_source: &Source,
    layers: &[(ProtoKey, ProtoValue, Source)],
) -> (ProtocolSettings, Vec<Provenance>) {
    let mut s = base;
    let (mut min_samples, mut min_time_s, mut target_rel_noise, mut max_time_s) =
        match base.stopping {
            StoppingRule::Adaptive {
                min_samples,
                min_time_s,
                target_rel_noise,
                max_time_s,
            } => (min_samples, min_time_s, target_rel_noise, max_time_s),
            StoppingRule::Fixed { .. } => match ProtocolSettings::default().stopping {
                StoppingRule::Adaptive {
                    min_samples,
                    min_time_s,
                    target_rel_noise,
                    max_time_s,
                } => (min_samples, min_time_s, target_rel_noise, max_time_s),
                StoppingRule::Fixed { .. } => (20, 0.2, 0.005, 3.0),
            },
        };
    let mut fixed = match base.stopping {
        StoppingRule::Fixed { iters } => Some(iters),
        StoppingRule::Adaptive { .. } => None,
    };
    let mut sources: Vec<(ProtoKey, String, Source)> = PROTOCOL_KEYS
        .iter()
        .filter_map(|k| ProtoKey::parse(k))
        .map(|k| (k, String::new(), base_source.clone()))
        .collect();
    for (key, value, source) in layers {
        let count = |v: ProtoValue| match v {
            ProtoValue::Count(n) => n,
            ProtoValue::Seconds(x) => x as u64,
        };
        let secs = |v: ProtoValue| match v {
            ProtoValue::Count(n) => n as f64,
            ProtoValue::Seconds(x) => x,
        };
        match key {
            ProtoKey::Warmup => s.warmup = count(*value),
            ProtoKey::WarmupMaxS => s.warmup_max_s = secs(*value),
            ProtoKey::TimeoutS => s.timeout_s = secs(*value),
            ProtoKey::Processes => s.processes = u32::try_from(count(*value)).unwrap_or(u32::MAX),
            ProtoKey::Iters => fixed = Some(count(*value)),
            ProtoKey::MinSamples => {
                fixed = None;
                min_samples = count(*value);
            }
            ProtoKey::MinTimeS => {
                fixed = None;
                min_time_s = secs(*value);
            }
            ProtoKey::TargetRelNoise => {
                fixed = None;
                target_rel_noise = secs(*value);
            }
            ProtoKey::MaxTimeS => {
                fixed = None;
                max_time_s = secs(*value);
            }
        }
        let slot = &mut sources[*key as usize];
        slot.1 = value.render();
        slot.2 = source.clone();
    }
    s.stopping = match fixed {
        Some(iters) => StoppingRule::Fixed { iters },
        None => StoppingRule::Adaptive {
            min_samples,
            min_time_s,
            target_rel_noise,
            max_time_s,
        },
    };
    let current = |k: ProtoKey| -> Option<String> {
        let num = |x: f64| serde_json::Value::from(x).to_string();
        Some(match k {
            ProtoKey::Warmup => s.warmup.to_string(),
            ProtoKey::WarmupMaxS => num(s.warmup_max_s),
            ProtoKey::TimeoutS => num(s.timeout_s),
            ProtoKey::Processes => s.processes.to_string(),
            ProtoKey::Iters => fixed?.to_string(),
            ProtoKey::MinSamples if fixed.is_none() => min_samples.to_string(),
            ProtoKey::MinTimeS if fixed.is_none() => num(min_time_s),
            ProtoKey::TargetRelNoise if fixed.is_none() => num(target_rel_noise),
            ProtoKey::MaxTimeS if fixed.is_none() => num(max_time_s),
            _ => return None,
        })
    };
    let provenance = sources
        .into_iter()
        .filter_map(|(k, _, source)| {
            Some(Provenance {
                key: format!("protocol.{}", k.name()),
                value: current(k)?,
                source,
            })
        })
        .collect();
    (s, provenance)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn setting(key: ProtoKey, value: ProtoValue) -> (ProtoKey, ProtoValue, Source) {
        let loc = Loc {
            file: Arc::new(PathBuf::from("f.yaml")),
            line: 1,
            column: 1,
        };
        (key, value, Source::File(loc))
    }

    #[test]
    fn later_layers_switch_stopping_rules() {
        let base = ProtocolSettings::default();
        let (s, prov) = apply(
            base,
            &Source::BuiltIn("protocol defaults"),
            &[
                setting(ProtoKey::Iters, ProtoValue::Count(30)),
                setting(ProtoKey::Warmup, ProtoValue::Count(3)),
            ],
        );
        assert_eq!(s.stopping, StoppingRule::Fixed { iters: 30 });
        assert_eq!(s.warmup, 3);
        let iters = prov.iter().find(|p| p.key == "protocol.iters").unwrap();
        assert_eq!(iters.to_string(), "protocol.iters=30 from f.yaml:1:1");
        assert!(prov.iter().all(|p| p.key != "protocol.min_samples"));

        let (s, _) = apply(
            s,
            &Source::BuiltIn("x"),
            &[setting(ProtoKey::MaxTimeS, ProtoValue::Seconds(1.5))],
        );
        assert_eq!(
            s.stopping,
            StoppingRule::Adaptive {
                min_samples: 20,
                min_time_s: 0.2,
                target_rel_noise: 0.005,
                max_time_s: 1.5
            }
        );
    }
}
