//! The command line (the usage is in `main.rs`): every flag read and checked before the GPU is
//! opened; a bad value is an error naming the flag and what it takes.

use apex_plugin_api::Precision;
use apex_plugin_ff_model::device::Refine;

use crate::bench::{Order, Stage};

/// What the command line asks for.
pub struct Args {
    /// The shapes `--only` names (every shape where none).
    pub only: Option<Vec<String>>,
    /// `--bench-only`: no check.
    pub bench_only: bool,
    /// `--bench` or `--bench-only`.
    pub bench: bool,
    pub refines: Vec<Refine>,
    pub stage: Stage,
    pub seed: u64,
    pub order: Order,
    /// The storages `--precision` names, if it does.
    pub precisions: Option<Vec<Precision>>,
}

impl Args {
    /// Reads `args` (the program's arguments, without its name); `Err` is the message for a bad
    /// value.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let bench_only = args.iter().any(|a| a == "--bench-only");
        let mut refines = Vec::new();
        for name in list(args, "--refine").unwrap_or_else(|| vec!["auto".into(), "split".into()]) {
            refines.push(match name.as_str() {
                "auto" => Refine::Auto,
                "fused" => Refine::Fused,
                "lean" => Refine::FusedLean,
                "wg" => Refine::Wg,
                "split" => Refine::Split,
                other => {
                    return Err(format!(
                        "--refine {other}: expected auto, fused, lean, wg or split (or a comma \
                         list of them)"
                    ));
                }
            });
        }
        let seed_arg = list(args, "--seed");
        let seed = match seed_arg.as_deref() {
            None => Some(21),
            Some([n]) => n.parse::<u64>().ok(),
            Some(_) => None,
        }
        .ok_or_else(|| {
            format!(
                "--seed {}: expected one unsigned integer",
                seed_arg.unwrap_or_default().join(",")
            )
        })?;
        let precisions = match list(args, "--precision") {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|name| match Precision::parse(name) {
                        Some(p @ (Precision::Fp16 | Precision::Bf16 | Precision::Fp32)) => Ok(p),
                        _ => Err(format!(
                            "--precision {name}: expected fp16, bf16 or fp32 (or a comma list of \
                             them)"
                        )),
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Self {
            only: list(args, "--only"),
            bench_only,
            bench: bench_only || args.iter().any(|a| a == "--bench"),
            refines,
            stage: one_of(
                args,
                "--stage",
                &[("frame", Stage::Frame), ("refines", Stage::Refines)],
            )?,
            seed,
            order: one_of(
                args,
                "--order",
                &[("bench", Order::Bench), ("host", Order::Host)],
            )?,
            precisions,
        })
    }
}

/// The value after `flag`, split at commas.
fn list(args: &[String], flag: &str) -> Option<Vec<String>> {
    let i = args.iter().position(|a| a == flag)?;
    Some(
        args.get(i + 1)
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default(),
    )
}

/// The one value of `flag` among two `choices` (name, value), the first without the flag.
fn one_of<T: Copy>(args: &[String], flag: &str, choices: &[(&str, T); 2]) -> Result<T, String> {
    match list(args, flag).as_deref() {
        None => Ok(choices[0].1),
        Some([v]) => choices
            .iter()
            .find(|(name, _)| name == v)
            .map(|&(_, value)| value)
            .ok_or_else(|| expected(flag, v, choices)),
        Some(other) => Err(expected(flag, &other.join(","), choices)),
    }
}

fn expected<T>(flag: &str, got: &str, [(a, _), (b, _)]: &[(&str, T); 2]) -> String {
    format!("{flag} {got}: expected {a} or {b}")
}
