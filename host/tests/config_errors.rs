//! Malformed bench.yaml / bench.yaml.d files through the library API (`apex_host::config::load`,
//! then `expand` / `unmatched` where the mistake needs the kernel): each must produce a located
//! error naming the file, `line:col`, the key path and a hint, and nothing may panic.

use apex_host::config::{CliOverrides, ConfigErrors, SuiteConfig, load};
use apex_host::model::{KernelInfo, ParamInfo};
use apex_plugin_api::{Backend, Precision};
use std::collections::BTreeMap;
use std::path::PathBuf;

const FILE: &str = "20-cuda.yaml";

/// A rule in a one-rule file: the `check` value starts at column 12 of line 5 (its quote), so
/// expression column `c` is file column `12 + c`.
fn rule(expr: &str) -> String {
    format!(
        "kernel: tile_ops.tile_pack\nskip_conditions:\n  - backend: cuda\n    reason: \"r\"\n    check: \"{expr}\"\n"
    )
}

fn kernel() -> KernelInfo {
    KernelInfo {
        id: "tile_ops.tile_pack".into(),
        description: String::new(),
        backends: vec![Backend::Cpu, Backend::Cuda],
        precisions: vec![Precision::Fp32, Precision::Fp16],
        params: [
            ("tile_size", serde_json::json!(8)),
            ("kmax", serde_json::json!(32)),
        ]
        .into_iter()
        .map(|(n, d)| ParamInfo {
            name: n.into(),
            default: d,
            description: String::new(),
        })
        .collect(),
        tolerances: BTreeMap::new(),
        graph_capturable: false,
        plugin: "tile_ops".into(),
        library: PathBuf::from("libtile_ops.so"),
        crate_dir: None,
    }
}

/// Loads `text` as `bench.yaml.d/20-cuda.yaml`; if it loads, resolves it for `tile_ops.tile_pack`
/// and checks the `kernel` globs against that one id. Returns the errors of the first stage that
/// failed.
fn errors_of(text: &str) -> ConfigErrors {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("bench.yaml.d");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(suite.join(FILE), text).unwrap();
    let cfg: SuiteConfig = match load(&[], &suite) {
        Ok(c) => c,
        Err(e) => return e,
    };
    if let Err(e) = cfg.expand(&kernel(), &CliOverrides::default()) {
        return e;
    }
    let e = cfg.unmatched(&["tile_ops.tile_pack"]);
    assert!(!e.is_empty(), "expected an error for:\n{text}");
    e
}

/// Asserts that one of the errors reads `…/20-cuda.yaml:LINE:COL: PATH: …MESSAGE…` with a hint.
fn expect(text: &str, line_col: &str, path: &str, message: &str) {
    let errors = errors_of(text);
    let rendered = errors.to_string();
    let prefix = format!("{FILE}:{line_col}: {path}: ");
    let hit = errors.iter().find(|e| e.to_string().contains(&prefix));
    let Some(hit) = hit else {
        panic!("no error at `{prefix}` for:\n{text}\ngot:\n{rendered}");
    };
    let shown = hit.to_string();
    assert!(shown.contains(message), "`{message}` not in:\n{shown}");
    assert!(shown.contains("\n  (hint: "), "no hint in:\n{shown}");
    assert!(
        hit.loc.file.ends_with(format!("bench.yaml.d/{FILE}")),
        "{shown}"
    );
    assert!(rendered.starts_with("error: "), "{rendered}");
}

#[test]
fn broken_yaml() {
    expect(
        "kernel: a\nbackends: [cpu, cuda\n",
        "2:11",
        "<document>",
        "invalid YAML: unclosed bracket",
    );
}

#[test]
fn tab_indentation() {
    expect(
        "kernel: a\nprotocol:\n\twarmup: 3\n",
        "3:2",
        "<document>",
        "tabs",
    );
}

#[test]
fn duplicate_keys() {
    expect(
        "kernel: a\nbackends: [cpu]\nbackends: [cuda]\n",
        "3:1",
        "<document>",
        "duplicate mapping key",
    );
}

#[test]
fn anchor_bomb() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let errors = errors_of(&text);
    let shown = errors.to_string();
    assert!(shown.contains(&format!("{FILE}:")), "{shown}");
    assert!(
        shown.contains(": <document>: invalid YAML: budget breached"),
        "{shown}"
    );
    assert!(shown.contains("anchor bomb"), "{shown}");
}

#[test]
fn scalar_document() {
    expect(
        "hello\n",
        "1:1",
        "<document>",
        "expected a mapping (one entry) or a list of entries",
    );
}

#[test]
fn missing_kernel() {
    expect(
        "backends: [cpu]\n",
        "1:1",
        "<document>",
        "missing required key `kernel`",
    );
}

#[test]
fn unknown_top_level_key() {
    expect(
        "kernel: tile_ops.tile_pack\nprecision: [fp32]\n",
        "2:1",
        "precision",
        "did you mean `precisions`?",
    );
}

#[test]
fn unknown_key_in_protocol() {
    expect(
        "kernel: tile_ops.tile_pack\nprotocol:\n  warmups: 3\n",
        "3:3",
        "protocol.warmups",
        "unknown key `warmups`",
    );
}

#[test]
fn unknown_key_in_per_precision_tolerance() {
    expect(
        "kernel: tile_ops.tile_pack\ntolerances:\n  fp16:\n    rtoll: 1.0e-2\n",
        "4:5",
        "tolerances.fp16.rtoll",
        "did you mean `rtol`?",
    );
}

#[test]
fn unknown_key_in_skip_condition() {
    expect(
        &format!("{}    when: always\n", rule("not cuda.available")),
        "6:5",
        "skip_conditions[0].when",
        "unknown key `when`",
    );
}

#[test]
fn wrong_type_problem_size() {
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size: 5\n",
        "2:15",
        "problem_size",
        "expected a mapping, found the integer `5`",
    );
}

#[test]
fn wrong_type_iters() {
    expect(
        "kernel: tile_ops.tile_pack\nprotocol:\n  iters: thirty\n",
        "3:10",
        "protocol.iters",
        "expected an integer",
    );
}

#[test]
fn yaml11_boolean_is_a_string() {
    expect(
        "kernel: tile_ops.tile_pack\nprotocol: {warmup: yes}\n",
        "2:20",
        "protocol.warmup",
        "found the string \"yes\"",
    );
}

#[test]
fn zero_iters() {
    expect(
        "kernel: tile_ops.tile_pack\nprotocol: {iters: 0}\n",
        "2:19",
        "protocol.iters",
        "must be at least 1",
    );
}

#[test]
fn fixed_and_adaptive_together() {
    expect(
        "kernel: tile_ops.tile_pack\nprotocol: {iters: 5, max_time_s: 2}\n",
        "2:12",
        "protocol.iters",
        "cannot both be set",
    );
}

#[test]
fn rtol_and_its_alias() {
    expect(
        "kernel: tile_ops.tile_pack\ntolerances: {rtol: 0.1, relative_error: 0.1}\n",
        "2:25",
        "tolerances.relative_error",
        "same setting",
    );
}

#[test]
fn negative_tolerance() {
    expect(
        "kernel: tile_ops.tile_pack\ntolerances: {rmse: -1}\n",
        "2:20",
        "tolerances.rmse",
        "must not be negative",
    );
}

#[test]
fn unknown_backend() {
    expect(
        "kernel: tile_ops.tile_pack\nbackends: [cpu, tpu]\n",
        "2:17",
        "backends[1]",
        "unknown backend `tpu`",
    );
}

#[test]
fn unknown_precision() {
    expect(
        "kernel: tile_ops.tile_pack\nprecisions: [fp64]\n",
        "2:14",
        "precisions[0]",
        "unknown precision `fp64`",
    );
}

#[test]
fn undeclared_backend_for_exact_id() {
    expect(
        "kernel: tile_ops.tile_pack\nbackends: [cpu, trt]\n",
        "2:17",
        "backends[1]",
        "backend `trt` is not declared by kernel `tile_ops.tile_pack`",
    );
}

#[test]
fn error_in_second_entry_of_a_list() {
    expect(
        "- kernel: tile_ops.tile_pack\n- kernel: tile_ops.*\n  backends: [gpu]\n",
        "3:14",
        "[1].backends[0]",
        "did you mean `cpu`?",
    );
}

#[test]
fn a_shape_given_to_a_scalar_parameter() {
    // A list inside a sweep is a shape value; `tile_size` is declared as an integer.
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [[8, 16]]\n",
        "3:15",
        "problem_size.tile_size[0]",
        "expected an integer (`tile_size` of `tile_ops.tile_pack` defaults to 8), found [8,16]",
    );
}

#[test]
fn value_of_wrong_type_for_declared_default() {
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [8, 16.5]\n",
        "3:18",
        "problem_size.tile_size[1]",
        "expected an integer",
    );
}

#[test]
fn undeclared_parameter() {
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile: 8\n",
        "3:3",
        "problem_size.tile",
        "did you mean `tile_size`?",
    );
}

#[test]
fn zip_of_unequal_lengths() {
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [8, 16, 32]\n  kmax: [32, 64]\nzip: [[tile_size, kmax]]\n",
        "5:19",
        "zip[0]",
        "zipped axes differ in length",
    );
}

/// A zip group of non-names (found by the config fuzzer, 2026-11-26: it indexed an empty group)
/// is a located error, not a crash.
#[test]
fn zip_group_of_numbers() {
    expect(
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [8, 16]\n  kmax: [32, 64]\nzip: [[tile_size, kmax], [4, 5]]\n",
        "5:27",
        "zip[1][0]",
        "expected a string, found the integer `4`",
    );
}

#[test]
fn exclude_of_unknown_param() {
    expect(
        "kernel: tile_ops.tile_pack\nexclude:\n  - {tile_size: 8, colour: red}\n",
        "3:20",
        "exclude[0].colour",
        "parameter `colour` is not declared by kernel `tile_ops.tile_pack`",
    );
}

#[test]
fn invalid_glob() {
    expect(
        "kernel: \"tile_ops.[ab\"\n",
        "1:9",
        "kernel",
        "invalid glob",
    );
}

#[test]
fn glob_matching_nothing() {
    expect(
        "kernel: tile_ops.tile_pak\n",
        "1:9",
        "kernel",
        "did you mean `tile_ops.tile_pack`?",
    );
}

#[test]
fn missing_reason() {
    expect(
        "kernel: tile_ops.tile_pack\nskip_conditions:\n  - check: \"not cuda.available\"\n",
        "3:5",
        "skip_conditions[0]",
        "missing required key `reason`",
    );
}

#[test]
fn unknown_fact() {
    expect(
        &rule("cuda.avail"),
        "5:13",
        "skip_conditions[0].check",
        "unknown fact `cuda.avail`",
    );
}

#[test]
fn triple_equals() {
    expect(
        &rule("cuda.available === true"),
        "5:28",
        "skip_conditions[0].check",
        "`===` is not an operator",
    );
}

#[test]
fn double_ampersand() {
    expect(
        &rule("cuda.available && trt.available"),
        "5:28",
        "skip_conditions[0].check",
        "use `and`",
    );
}

#[test]
fn unbalanced_paren() {
    expect(
        &rule("(not cuda.available"),
        "5:13",
        "skip_conditions[0].check",
        "unbalanced `(`",
    );
}

#[test]
fn unbalanced_quote() {
    expect(
        &rule("os == 'linux"),
        "5:19",
        "skip_conditions[0].check",
        "unterminated string",
    );
}

#[test]
fn function_call_open() {
    expect(
        &rule("open('/etc/passwd')"),
        "5:13",
        "skip_conditions[0].check",
        "function calls are not allowed: `open(...)`",
    );
}

#[test]
fn dunder_import() {
    expect(
        &rule("__import__('os').system('x')"),
        "5:13",
        "skip_conditions[0].check",
        "function calls are not allowed",
    );
}

#[test]
fn seed_style_torch_check() {
    let errors = errors_of(&rule("not torch.cuda.is_available()"));
    let shown = errors.to_string();
    assert!(
        shown.contains(&format!("{FILE}:5:17: skip_conditions[0].check: ")),
        "{shown}"
    );
    assert!(shown.contains("is the fact `cuda.available`"), "{shown}");
}

#[test]
fn attribute_access() {
    expect(
        &rule("cuda.available.real"),
        "5:13",
        "skip_conditions[0].check",
        "attribute access beyond a fact",
    );
}

#[test]
fn subscript() {
    expect(
        &rule("env['HOME'] == 'x'"),
        "5:16",
        "skip_conditions[0].check",
        "subscripts are not allowed",
    );
}

#[test]
fn lambda() {
    expect(
        &rule("lambda: true"),
        "5:13",
        "skip_conditions[0].check",
        "`lambda` is not allowed",
    );
}

#[test]
fn arithmetic() {
    expect(
        &rule("cuda.device_count + 1 > 2"),
        "5:31",
        "skip_conditions[0].check",
        "arithmetic is not supported",
    );
}

#[test]
fn empty_check() {
    expect(
        &rule(""),
        "5:13",
        "skip_conditions[0].check",
        "empty expression",
    );
}

#[test]
fn undeclared_param_in_check() {
    expect(
        &rule("param.tile_sz > 8"),
        "5:12",
        "skip_conditions[0].check",
        "parameter `tile_sz` is not declared",
    );
}

#[test]
fn errors_of_all_files_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("bench.yaml.d");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(suite.join("10-a.yaml"), "kernel: a\nbackend: [cpu]\n").unwrap();
    std::fs::write(
        suite.join("20-b.yaml"),
        "kernel: b\nprotocol: {iters: -1}\n",
    )
    .unwrap();
    let plugin = dir.path().join("plugins/x/bench.yaml");
    let errors = load(&[plugin], &suite).unwrap_err();
    let shown = errors.to_string();
    assert_eq!(errors.len(), 3, "{shown}");
    assert!(
        shown.contains("plugins/x/bench.yaml: <file>: cannot read the file"),
        "{shown}"
    );
    assert!(
        shown.contains("10-a.yaml:2:1: backend: unknown key `backend`"),
        "{shown}"
    );
    assert!(
        shown.contains("20-b.yaml:2:19: protocol.iters: must not be negative"),
        "{shown}"
    );
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Arbitrary text as a suite file: any outcome but a panic.
        #[test]
        fn arbitrary_files_never_panic(text in "[a-z_:\\[\\]{}\"'\\-#&*!|>,. 0-9\n\t]{0,200}") {
            let _ = errors_of_or_ok(&text);
        }

        /// Arbitrary expressions in a `check`: any outcome but a panic.
        #[test]
        fn arbitrary_checks_never_panic(expr in "[a-z_.()\\[\\]=!<>&|'0-9 ]{0,60}") {
            let _ = apex_host::skip::Expr::parse(&expr);
        }
    }

    fn errors_of_or_ok(text: &str) -> Option<String> {
        let dir = tempfile::tempdir().ok()?;
        let suite = dir.path().join("bench.yaml.d");
        std::fs::create_dir_all(&suite).ok()?;
        std::fs::write(suite.join(FILE), text).ok()?;
        match load(&[], &suite) {
            Ok(cfg) => cfg
                .expand(&kernel(), &CliOverrides::default())
                .err()
                .map(|e| e.to_string()),
            Err(e) => Some(e.to_string()),
        }
    }
}

#[test]
fn a_skip_condition_comparing_across_types_is_an_error_not_a_skip() {
    // Issue 11, finding 1: this used to skip every case, and the run said ok.
    expect(
        &rule("cuda.device_count < \\\"two\\\""),
        "5:12",
        "skip_conditions[0].check",
        "cannot compare number with string",
    );
}

#[test]
fn a_skip_condition_reading_an_undeclared_parameter_is_an_error() {
    expect(
        &rule("param.levels > 2"),
        "5:12",
        "skip_conditions[0].check",
        "not declared by kernel `tile_ops.tile_pack`",
    );
}
