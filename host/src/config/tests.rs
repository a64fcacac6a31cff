//! Resolution tests: sweeps (cartesian, zip, exclude), precedence across layers, provenance, type
//! checks against declared defaults, and the shipped `bench.yaml.d`.

use super::*;
use crate::model::{KernelInfo, ParamInfo, StoppingRule};
use apex_plugin_api::{Backend, Precision};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn kernel(id: &str, params: &[(&str, serde_json::Value)]) -> KernelInfo {
    KernelInfo {
        id: id.into(),
        description: String::new(),
        backends: vec![Backend::Cpu, Backend::Cuda],
        precisions: vec![Precision::Fp32, Precision::Fp16],
        params: params
            .iter()
            .map(|(n, d)| ParamInfo {
                name: (*n).into(),
                default: d.clone(),
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

fn tile_pack() -> KernelInfo {
    kernel(
        "tile_ops.tile_pack",
        &[
            ("tile_size", 8.into()),
            ("kmax", 32.into()),
            ("scale", 1.0.into()),
            ("mode", "blend".into()),
        ],
    )
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn suite(&self) -> PathBuf {
        self.dir.path().join("bench.yaml.d")
    }
}

fn load_ok(plugin: &[PathBuf], suite: &Path) -> SuiteConfig {
    match load(plugin, suite) {
        Ok(c) => c,
        Err(e) => panic!("unexpected config errors:\n{e}"),
    }
}

fn labels(cases: &[ResolvedCase]) -> Vec<String> {
    cases
        .iter()
        .map(|c| {
            let p: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{}/{}/{}", c.backend, c.precision, p.join(","))
        })
        .collect()
}

#[test]
fn product_example_resolves_with_cartesian_sweep() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/tile_ops/bench.yaml",
        r#"kernel: tile_ops.tile_pack        # id or glob
problem_size:
  tile_size: [8, 16, 32]
  kmax: 32
precisions: [fp32, fp16]
backends: [cpu, cuda]
tolerances: {rmse: 1.0e-3, relative_error: 1.0e-2}
protocol: {warmup: 3, iters: 30}
skip_conditions:
  - backend: cuda
    reason: "CUDA not available"
    check: "not cuda.available"
"#,
    );
    let cfg = load_ok(&[plugin], &f.suite());
    assert_eq!(cfg.files().len(), 1);
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    assert_eq!(cases.len(), 2 * 2 * 3);
    assert_eq!(
        labels(&cases)[..3],
        [
            "cpu/fp32/kmax=32,mode=\"blend\",scale=1.0,tile_size=8",
            "cpu/fp32/kmax=32,mode=\"blend\",scale=1.0,tile_size=16",
            "cpu/fp32/kmax=32,mode=\"blend\",scale=1.0,tile_size=32",
        ]
    );
    let c = &cases[0];
    assert_eq!(c.tolerance.rmse, 1e-3);
    assert_eq!(c.tolerance.rtol, 1e-2);
    assert_eq!(c.protocol.warmup, 3);
    assert_eq!(c.protocol.stopping, StoppingRule::Fixed { iters: 30 });
    assert_eq!(c.skip.len(), 1);
    assert_eq!(c.skip[0].reason, "CUDA not available");
    let shown: Vec<String> = c.provenance.iter().map(ToString::to_string).collect();
    let file = Path::new("plugins/tile_ops/bench.yaml");
    let tile = shown.iter().find(|s| s.starts_with("tile_size=")).unwrap();
    assert!(tile.starts_with("tile_size=[8,16,32] from "), "{tile}");
    assert!(
        tile.ends_with(&format!("{}:3:14", file.display())),
        "{tile}"
    );
    assert!(shown.contains(&"mode=\"blend\" from the kernel's declared default".to_string()));
    assert!(
        shown
            .iter()
            .any(|s| s.starts_with("protocol.iters=30 from "))
    );
}

#[test]
fn suite_files_override_plugin_file_key_by_key_in_lexical_order() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/tile_ops/bench.yaml",
        "kernel: tile_ops.tile_pack\nproblem_size: {tile_size: [8, 16], kmax: 64}\nprotocol: {warmup: 3}\n",
    );
    f.write(
        "bench.yaml.d/20-later.yaml",
        "kernel: tile_ops.*\nproblem_size: {tile_size: 32}\nbackends: [cpu]\n",
    );
    f.write(
        "bench.yaml.d/10-first.yaml",
        "kernel: '*'\nproblem_size: {tile_size: [1, 2, 3]}\nprotocol: {warmup: 5, max_time_s: 1.5}\n",
    );
    f.write("bench.yaml.d/notes.txt", "not yaml: [");
    f.write("bench.yaml.d/.swap.yaml", "not yaml: [");
    let cfg = load_ok(&[plugin], &f.suite());
    let kinds: Vec<FileKind> = cfg.files().iter().map(|x| x.kind).collect();
    assert_eq!(kinds, [FileKind::Plugin, FileKind::Suite, FileKind::Suite]);
    assert!(cfg.files()[1].path.ends_with("10-first.yaml"));
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    assert_eq!(
        labels(&cases),
        [
            "cpu/fp32/kmax=64,mode=\"blend\",scale=1.0,tile_size=32",
            "cpu/fp16/kmax=64,mode=\"blend\",scale=1.0,tile_size=32"
        ]
    );
    assert_eq!(cases[0].protocol.warmup, 5);
    assert!(matches!(
        cases[0].protocol.stopping,
        StoppingRule::Adaptive { max_time_s, .. } if max_time_s == 1.5
    ));
    let src = cfg.sources_for("tile_ops.tile_pack");
    let tile: Vec<String> = src
        .iter()
        .filter(|p| p.key == "tile_size")
        .map(|p| p.value.clone())
        .collect();
    assert_eq!(tile, ["[8,16]", "[1,2,3]", "32"]);
    assert!(cfg.sources_for("other.kernel").iter().all(|p| {
        !p.source.to_string().contains("20-later") && !p.source.to_string().contains("tile_ops/")
    }));
}

#[test]
fn cli_narrows_the_configured_backends_and_wins_over_protocol_keys() {
    let f = Files::new();
    f.write(
        "bench.yaml.d/10.yaml",
        "kernel: '*'\nbackends: [cpu, cuda]\nprecisions: [fp16]\nprotocol: {iters: 7, warmup: 1}\n",
    );
    let cfg = load_ok(&[], &f.suite());
    let cli = CliOverrides {
        backends: Some(vec![Backend::Cuda, Backend::Trt]),
        precisions: None,
        iters: Some(50),
        warmup: None,
        timeout_s: Some(9.0),
        quick: true,
        l2_hot: true,
    };
    let cases = cfg.expand(&tile_pack(), &cli).unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].backend, Backend::Cuda);
    assert_eq!(cases[0].precision, Precision::Fp16);
    assert_eq!(
        cases[0].protocol.stopping,
        StoppingRule::Fixed { iters: 50 }
    );
    assert_eq!(cases[0].protocol.warmup, 1);
    assert_eq!(cases[0].protocol.timeout_s, 9.0);
    let quick = crate::model::ProtocolSettings::quick();
    assert_eq!(cases[0].protocol.warmup_max_s, quick.warmup_max_s);
    let shown: Vec<String> = cases[0]
        .provenance
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        shown.contains(&"backends=[cpu,cuda] ∩ [cuda,trt] from --backends".to_string()),
        "{shown:?}"
    );
    assert!(shown.contains(&"protocol.iters=50 from --iters".to_string()));
    assert!(shown.contains(&"protocol.warmup_max_s=0.2 from the --quick profile".to_string()));
    assert!(cases[0].protocol.l2_hot_batch);
    assert!(shown.contains(&"protocol.l2_hot_batch=true from --l2-hot".to_string()));

    // The command line selects among configured cases; it never adds one.
    let cuda_only = CliOverrides {
        backends: Some(vec![Backend::Cuda]),
        ..CliOverrides::default()
    };
    // Without --l2-hot no case asks for the hot batch.
    let cases = cfg.expand(&tile_pack(), &cuda_only).unwrap();
    assert!(cases.iter().all(|c| !c.protocol.l2_hot_batch));
    f.write("bench.yaml.d/20.yaml", "kernel: '*'\nbackends: [cpu]\n");
    let cfg = load_ok(&[], &f.suite());
    assert!(cfg.expand(&tile_pack(), &cuda_only).unwrap().is_empty());
}

#[test]
fn zip_and_exclude_shape_the_sweep() {
    let f = Files::new();
    f.write(
        "bench.yaml.d/10.yaml",
        r#"kernel: ffn.*
problem_size:
  batch: [16, 32, 64]
  seq: [256, 512, 1024]
  dim: [8, 16]
zip: [[batch, seq]]
exclude:
  - {batch: 64, dim: 16}
  - {backend: cuda, dim: [8]}
backends: [cpu, cuda]
precisions: [fp32]
"#,
    );
    let k = kernel(
        "ffn.layer",
        &[("batch", 1.into()), ("seq", 1.into()), ("dim", 1.into())],
    );
    let cfg = load_ok(&[], &f.suite());
    let cases = cfg.expand(&k, &CliOverrides::default()).unwrap();
    let l = labels(&cases);
    assert_eq!(
        l,
        [
            "cpu/fp32/batch=16,dim=8,seq=256",
            "cpu/fp32/batch=16,dim=16,seq=256",
            "cpu/fp32/batch=32,dim=8,seq=512",
            "cpu/fp32/batch=32,dim=16,seq=512",
            "cpu/fp32/batch=64,dim=8,seq=1024",
            "cuda/fp32/batch=16,dim=16,seq=256",
            "cuda/fp32/batch=32,dim=16,seq=512",
        ]
    );
}

#[test]
fn values_are_checked_against_declared_default_types() {
    let f = Files::new();
    f.write(
        "bench.yaml.d/20-cuda.yaml",
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [8, \"16\"]\n  scale: 2\n  mode: 3\n",
    );
    let cfg = load_ok(&[], &f.suite());
    let err = cfg
        .expand(&tile_pack(), &CliOverrides::default())
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.len(), 2, "{text}");
    assert!(
        text.contains("20-cuda.yaml:3:18: problem_size.tile_size[1]: expected an integer"),
        "{text}"
    );
    assert!(
        text.contains("problem_size.mode: expected a string"),
        "{text}"
    );
    assert!(text.contains("(hint: "), "{text}");
}

#[test]
fn exact_ids_reject_undeclared_names_and_globs_skip_them() {
    let f = Files::new();
    f.write(
        "bench.yaml.d/10.yaml",
        "- kernel: tile_ops.tile_pack\n  problem_size: {tile_sz: 8}\n  backends: [trt]\n- kernel: 'tile_ops.*'\n  problem_size: {other: 1}\n  backends: [cpu, trt]\n",
    );
    let cfg = load_ok(&[], &f.suite());
    let err = cfg
        .expand(&tile_pack(), &CliOverrides::default())
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("[0].problem_size.tile_sz: parameter `tile_sz` is not declared by kernel `tile_ops.tile_pack`"), "{text}");
    assert!(text.contains("did you mean `tile_size`?"), "{text}");
    assert!(text.contains("backend `trt` is not declared"), "{text}");
    assert_eq!(err.len(), 2, "{text}");

    let ok = Files::new();
    ok.write(
        "bench.yaml.d/10.yaml",
        "kernel: 'tile_ops.*'\nproblem_size: {other: 1}\nbackends: [cpu, trt]\n",
    );
    let cfg = load_ok(&[], &ok.suite());
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    assert!(cases.iter().all(|c| c.backend == Backend::Cpu));
    let all = cfg.check(&[tile_pack()]).unwrap_err().to_string();
    assert!(
        all.contains("parameter `other` is declared by none of the kernels matching `tile_ops.*`"),
        "{all}"
    );
    assert!(all.contains("backend `trt` is declared by none"), "{all}");
}

#[test]
fn unmatched_globs_name_the_existing_ids() {
    let f = Files::new();
    f.write("bench.yaml.d/10.yaml", "kernel: tile_ops.tile_pak\n");
    let cfg = load_ok(&[], &f.suite());
    let e = cfg.unmatched(&["tile_ops.tile_pack", "ssm.scan"]);
    assert_eq!(e.len(), 1);
    let text = e.to_string();
    assert!(
        text.contains("10.yaml:1:9: kernel: `kernel: tile_ops.tile_pak` matches no kernel"),
        "{text}"
    );
    assert!(
        text.contains("did you mean `tile_ops.tile_pack`?"),
        "{text}"
    );
    assert!(cfg.unmatched(&["tile_ops.tile_pak"]).is_empty());
}

#[test]
fn oversized_sweeps_are_refused() {
    let f = Files::new();
    let list: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let l = list.join(", ");
    f.write(
        "bench.yaml.d/10.yaml",
        &format!("kernel: tile_ops.tile_pack\nproblem_size: {{tile_size: [{l}], kmax: [{l}]}}\n"),
    );
    let cfg = load_ok(&[], &f.suite());
    let e = cfg
        .expand(&tile_pack(), &CliOverrides::default())
        .unwrap_err();
    assert!(
        e.to_string().contains("expands to more than 10000 cases"),
        "{e}"
    );
}

#[test]
fn missing_suite_dir_and_comment_only_files_are_fine() {
    let f = Files::new();
    let cfg = load_ok(&[], &f.dir.path().join("does-not-exist"));
    assert!(cfg.files().is_empty());
    f.write("bench.yaml.d/00.yaml", "# nothing yet\n");
    let cfg = load_ok(&[], &f.suite());
    assert_eq!(cfg.files()[0].entries, 0);
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[0].protocol, crate::model::ProtocolSettings::default());
}

#[test]
fn shipped_suite_files_load_and_apply() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench.yaml.d");
    let cfg = load_ok(&[], &dir);
    assert!(
        cfg.files()
            .iter()
            .any(|f| f.path.ends_with("00-defaults.yaml"))
    );
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    assert!(!cases.is_empty());
}

#[test]
fn entries_with_problem_size_in_one_file_are_alternative_sweeps() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/tile_ops/bench.yaml",
        r#"- kernel: "tile_ops.*"
  protocol: {warmup: 2}
- kernel: "tile_ops.*"
  problem_size: {tile_size: 8, kmax: 32}
  precisions: [fp16, fp32]
  backends: [cpu]
- kernel: "tile_ops.*"
  problem_size: {tile_size: [8, 16], kmax: 16}
  precisions: [fp16]
  backends: [cpu]
- kernel: "tile_ops.*"
  problem_size: {tile_size: 8, kmax: 32}
  precisions: [fp16]
  backends: [cpu]
"#,
    );
    f.write(
        "bench.yaml.d/30-override.yaml",
        "kernel: tile_ops.tile_pack\nproblem_size: {kmax: 64}\nprotocol: {warmup: 9}\n",
    );
    let cfg = load_ok(std::slice::from_ref(&plugin), &f.dir.path().join("none"));
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    let short: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "{}/{}/{}",
                c.precision, c.params["tile_size"], c.params["kmax"]
            )
        })
        .collect();
    // The third sweep duplicates a case of the first: kept once.
    assert_eq!(short, ["fp16/8/32", "fp32/8/32", "fp16/8/16", "fp16/16/16"]);
    assert!(cases.iter().all(|c| c.protocol.warmup == 2));

    let cfg = load_ok(&[plugin], &f.suite());
    let cases = cfg.expand(&tile_pack(), &CliOverrides::default()).unwrap();
    let short: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "{}/{}/{}",
                c.precision, c.params["tile_size"], c.params["kmax"]
            )
        })
        .collect();
    assert_eq!(short, ["fp16/8/64", "fp32/8/64", "fp16/16/64"]);
    assert!(cases.iter().all(|c| c.protocol.warmup == 9));
}

fn poisson_cg() -> KernelInfo {
    kernel(
        "pressure_poisson",
        &[
            ("grid_size", serde_json::json!([32, 32, 32])),
            ("max_iterations", 50.into()),
            ("tolerance", 1.0e-5.into()),
        ],
    )
}

#[test]
fn seed_002_quasim_config_is_one_64_cubed_case() {
    // ../shared/seeds/002 as written: `grid_size: [64, 64, 64]` is one 3-D shape.
    let f = Files::new();
    let plugin = f.write(
        "plugins/poisson/bench.yaml",
        r#"kernel: pressure_poisson
problem_size:
  grid_size: [64, 64, 64]
  max_iterations: 50
  tolerance: 1.0e-5
precisions: [fp32]
backends: [cpu]
tolerances: {rmse: 1.0e-4, relative_error: 1.0e-3}
"#,
    );
    let cfg = load_ok(&[plugin], &f.suite());
    let cases = cfg.expand(&poisson_cg(), &CliOverrides::default()).unwrap();
    assert_eq!(cases.len(), 1, "{:?}", labels(&cases));
    assert_eq!(
        cases[0].params["grid_size"],
        serde_json::json!([64, 64, 64])
    );
}

#[test]
fn a_list_of_shapes_is_a_sweep_of_shapes() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/poisson/bench.yaml",
        "kernel: pressure_poisson\nproblem_size:\n  grid_size: [[32, 32, 32], [64, 64, 32]]\n  max_iterations: [10, 20]\nbackends: [cpu]\nprecisions: [fp32]\n",
    );
    let cfg = load_ok(&[plugin], &f.suite());
    let cases = cfg.expand(&poisson_cg(), &CliOverrides::default()).unwrap();
    let shapes: Vec<_> = cases
        .iter()
        .map(|c| c.params["grid_size"].clone())
        .collect();
    assert_eq!(cases.len(), 4);
    assert!(shapes.contains(&serde_json::json!([64, 64, 32])));
    assert!(shapes.contains(&serde_json::json!([32, 32, 32])));
}

#[test]
fn a_scalar_or_a_bad_dimension_for_a_shape_is_a_located_error() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/poisson/bench.yaml",
        "kernel: pressure_poisson\nproblem_size:\n  grid_size: 64\n",
    );
    let cfg = load_ok(&[plugin], &f.suite());
    let err = cfg
        .expand(&poisson_cg(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("bench.yaml:3:"), "{err}");
    assert!(err.contains("a shape"), "{err}");

    let f = Files::new();
    let plugin = f.write(
        "plugins/poisson/bench.yaml",
        "kernel: pressure_poisson\nproblem_size:\n  grid_size: [[64, 0, 64]]\n",
    );
    let err = load(&[plugin], &f.suite()).unwrap_err().to_string();
    assert!(err.contains("bench.yaml:3:"), "{err}");
    assert!(err.contains("grid_size[0][1]"), "{err}");
    assert!(err.contains("positive integer"), "{err}");
}

#[test]
fn a_list_for_a_scalar_parameter_is_a_located_error() {
    let f = Files::new();
    let plugin = f.write(
        "plugins/tile_ops/bench.yaml",
        "kernel: tile_ops.tile_pack\nproblem_size:\n  tile_size: [[8, 16]]\n",
    );
    let cfg = load_ok(&[plugin], &f.suite());
    let err = cfg
        .expand(&tile_pack(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("bench.yaml:3:"), "{err}");
    assert!(err.contains("an integer"), "{err}");
}
