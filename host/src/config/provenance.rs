//! [`Provenance`]: where a resolved value came from, e.g.
//! `tile_size=[8,16,32] from plugins/tile_ops/bench.yaml:4:5`, for `discover --verbose` and for each
//! resolved case.

use super::errors::Loc;
use serde::{Serialize, Serializer};
use std::fmt;

/// The layer a value came from, lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The kernel's declared default (parameters, backends, precisions, tolerances).
    KernelDefault,
    /// The host's protocol defaults (`ProtocolSettings::default()`), or the `--quick` profile.
    BuiltIn(&'static str),
    /// A key in a bench.yaml (plugin) or bench.yaml.d file.
    File(Loc),
    /// A command-line flag, e.g. `--iters`.
    Cli(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::KernelDefault => f.write_str("the kernel's declared default"),
            Source::BuiltIn(what) => f.write_str(what),
            Source::File(loc) => write!(f, "{loc}"),
            Source::Cli(flag) => write!(f, "{flag}"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// One resolved (or configured) value and its origin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// `tile_size` for parameters; `backends`, `precisions`, `zip`, `exclude[0]`,
    /// `tolerances.rtol`, `tolerances.fp16.rtol`, `protocol.iters`, `skip_conditions[0]` otherwise.
    pub key: String,
    /// The value as written, compact JSON-like (`[8,16,32]`, `0.01`, `"cuda"`).
    pub value: String,
    pub source: Source,
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={} from {}", self.key, self.value, self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    #[test]
    fn displays_like_discover_verbose() {
        let p = Provenance {
            key: "tile_size".into(),
            value: "[8,16,32]".into(),
            source: Source::File(Loc {
                file: Arc::new(PathBuf::from("plugins/tile_ops/bench.yaml")),
                line: 4,
                column: 5,
            }),
        };
        assert_eq!(
            p.to_string(),
            "tile_size=[8,16,32] from plugins/tile_ops/bench.yaml:4:5"
        );
        assert_eq!(
            serde_json::to_value(&p).unwrap()["source"],
            "plugins/tile_ops/bench.yaml:4:5"
        );
    }
}
