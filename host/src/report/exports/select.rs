//! Which case of a run feeds a field of a seed format. A [`Selector`] names a kernel, a backend, a
//! precision and the parameter values the field stands for (for the Apex-X exports: the fixed
//! profile, `B=1, C=128, 128x128, tile 8, kmax 32, steps 256`); [`Selector::find`] returns the one
//! case of the run that has them, or a sentence saying why there is none. It never picks among
//! several matches and never falls back to a neighbouring shape: a field with no exact case is
//! left empty, with the reason.

use crate::model::{CaseResult, RunSummary};

/// The Apex-X fixed profile's parameters, as the seed formats' fields select them.
pub mod fixed_profile {
    /// TilePack (and the map the other tile ops share): B=1, C=128, 128x128, tile 8, kmax 32.
    pub const TILE_PACK: &[(&str, &str)] = &[
        ("batch", "1"),
        ("channels", "128"),
        ("height", "128"),
        ("width", "128"),
        ("tile_size", "8"),
        ("kmax", "32"),
        ("ids", "sorted"),
    ];
    /// TileUnpack: the TilePack shape, override mode, on-grid tiles.
    pub const TILE_UNPACK: &[(&str, &str)] = &[
        ("batch", "1"),
        ("channels", "128"),
        ("height", "128"),
        ("width", "128"),
        ("tile_size", "8"),
        ("kmax", "32"),
        ("ids", "sorted"),
        ("mode", "override"),
        ("offgrid", "false"),
    ];
    /// FusionGate: the map only, default weights.
    pub const FUSION_GATE: &[(&str, &str)] = &[
        ("batch", "1"),
        ("channels", "128"),
        ("height", "128"),
        ("width", "128"),
        ("bias", "0"),
        ("boundary_log_weight", "1"),
        ("uncertainty_log_weight", "1"),
    ];
    /// The FF end-to-end frame (`spec/apex-x-kernels.md` §2.1): B=1, C=128, a 128x128 map, L0
    /// tiles 16, L1 tiles 8, budgets 16/8, kmax 32/64, on the path named.
    macro_rules! ff_model_frame {
        ($path:literal) => {
            &[
                ("batch", "1"),
                ("channels", "128"),
                ("height", "128"),
                ("width", "128"),
                ("tile_size_l0", "16"),
                ("tile_size_l1", "8"),
                ("budget_b1", "16"),
                ("budget_b2", "8"),
                ("kmax_l0", "32"),
                ("kmax_l1", "64"),
                ("path", $path),
            ]
        };
    }
    /// The FF frame on the fast path (the CPU's only path; on CUDA the torch+Triton fast-path row).
    pub const FF_MODEL_FAST: &[(&str, &str)] = ff_model_frame!("fast");
    /// The same frame on the one-kernel-per-op eager path (the seed's `torch_eager` row).
    pub const FF_MODEL_EAGER: &[(&str, &str)] = ff_model_frame!("eager");
    /// The TileSSM scan: B=1, K=256, C=128, the seed's clamp, no initial state, finite tokens.
    pub const TILE_SSM: &[(&str, &str)] = &[
        ("batch", "1"),
        ("steps", "256"),
        ("channels", "128"),
        ("clamp_value", "10000"),
        ("init_state", "none"),
        ("nonfinite", "false"),
    ];
}

/// The case a seed field is filled from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selector {
    pub kernel: &'static str,
    pub backend: &'static str,
    pub precision: &'static str,
    /// Parameter values the case must have (other parameters may take any value, but exactly
    /// one case may match).
    pub params: &'static [(&'static str, &'static str)],
}

impl Selector {
    /// `kernel/backend/precision` with `k=v,k=v`, as the docs and error messages show it.
    pub fn describe(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut s = format!("{}/{}/{}", self.kernel, self.backend, self.precision);
        if !params.is_empty() {
            s.push_str(" with ");
            s.push_str(&params.join(","));
        }
        s
    }

    fn matches(&self, case: &CaseResult) -> bool {
        case.key.kernel == self.kernel
            && case.key.backend == self.backend
            && case.key.precision == self.precision
            && self.params.iter().all(|(name, want)| {
                case.key
                    .params
                    .get(*name)
                    .is_some_and(|have| same_value(have, want))
            })
    }

    /// The one case of `summary` this selector names (whatever its status), or why there is none.
    pub fn find<'a>(&self, summary: &'a RunSummary) -> Result<&'a CaseResult, String> {
        let found: Vec<&CaseResult> = summary
            .benchmarks
            .values()
            .filter(|c| self.matches(c))
            .collect();
        match found.as_slice() {
            [one] => Ok(one),
            [] => Err(format!(
                "no case {} in this run (hint: it was filtered out, its backend was not run, \
                 or no plugin provides `{}`)",
                self.describe(),
                self.kernel
            )),
            many => Err(format!(
                "{} cases match {} ({}); the export takes none of them (hint: narrow the \
                 run with --filter to one case)",
                many.len(),
                self.describe(),
                many.iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// Case ids render parameters as text (`10000.0`, `0.0`); a selector may spell a number either way.
fn same_value(have: &str, want: &str) -> bool {
    have == want
        || matches!(
            (have.parse::<f64>(), want.parse::<f64>()),
            (Ok(a), Ok(b)) if a == b
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, summary_of};

    const PACK: Selector = Selector {
        kernel: "tile_ops.tile_pack",
        backend: "cuda",
        precision: "fp16",
        params: &[("tile_size", "8.0"), ("kmax", "32")],
    };

    #[test]
    fn finds_the_one_case_with_the_values_and_numbers_compare_as_numbers() {
        let s = summary_of(vec![
            measured_case("tile_ops.tile_pack", "cuda", 0.05, 0.01),
            measured_case("tile_ops.tile_pack", "cpu", 2.0, 0.01),
        ]);
        let case = PACK.find(&s).unwrap();
        assert_eq!(case.key.backend, "cuda");
    }

    #[test]
    fn no_match_and_several_matches_are_reasons_never_a_guess() {
        let s = summary_of(vec![measured_case("tile_ops.tile_pack", "cpu", 2.0, 0.01)]);
        let e = PACK.find(&s).unwrap_err();
        assert!(
            e.contains("no case tile_ops.tile_pack/cuda/fp16 with tile_size=8.0,kmax=32"),
            "{e}"
        );
        let mut other = measured_case("tile_ops.tile_pack", "cuda", 0.06, 0.01);
        other.key.params.insert("ids".into(), "overlap".into());
        other.id = other.key.id();
        let s = summary_of(vec![
            measured_case("tile_ops.tile_pack", "cuda", 0.05, 0.01),
            other,
        ]);
        let e = PACK.find(&s).unwrap_err();
        assert!(e.starts_with("2 cases match"), "{e}");
    }
}
