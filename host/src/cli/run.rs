//! `apex-host run`: discover → config → facts → plan → one worker per case → stats → reports
//! (→ gate). Results stream to `<output-dir>/.partial/<run-id>/` as cases finish; the final
//! report replaces the previous one only when the run completes.
//!
//! The output directory is locked ([`crate::report::OutputLock`]) from before the partial folder
//! is created to after the last file is written; a second run into it waits (or, with
//! `--no-wait`, exits 75).
//! The first Ctrl-C (or SIGTERM) stops the schedule and kills the running worker; the cases that
//! finished are written as a report of status `interrupted` and the run exits 130. A second one
//! exits at once (`crate::interrupt`).

use std::path::PathBuf;

use apex_plugin_api::{Backend, Precision};

use super::anchor_opts::{self, AnchorOpts};
use super::devices::{self, DeviceSelection};
use super::discovery_opts::DiscoveryOpts;
use super::engine_opts::{self, EngineOpts};
use super::exit_codes::ApexExitCode;
use super::failure::{Failure, exit_code_of, internal};
use super::shard;
use crate::config::CliOverrides;
use crate::measure::{AssembleContext, ScheduleContext, ScheduleEvent, run_plan};
use crate::model::{
    CaseKey, CaseResult, CaseStatus, RunSummary, STATUS_INTERRUPTED, SUITE_NAME,
    SUMMARY_SCHEMA_VERSION,
};
use crate::plan::{Filter, PartitionSpec, PlanIdentity};
use crate::report::term::errln;
use crate::report::{self, Progress, RunWriter};

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Backends to run (comma-separated) [default: every backend each kernel declares].
    #[arg(long, value_delimiter = ',', value_parser = parse_backend)]
    pub backends: Option<Vec<Backend>>,
    /// Precisions to run (comma-separated) [default: from config, else every declared one].
    #[arg(long, value_delimiter = ',', value_parser = parse_precision)]
    pub precision: Option<Vec<Precision>>,
    /// Exactly N samples per mode (fixed stopping rule) [default: adaptive, from config].
    #[arg(long, value_name = "N")]
    pub iters: Option<u64>,
    /// Warm-up calls before sampling [default: from config].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Where reports are written.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub output_dir: PathBuf,
    /// Exit at once (code 75) when another apex-host holds the output directory, instead of
    /// waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Seeds every input and the bootstrap.
    #[arg(long, default_value_t = 123)]
    pub seed: u64,
    /// Keep only cases whose kernel id or case id matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub filter: Vec<String>,
    /// A short protocol for smoke runs and CI (fewer samples, shorter time caps).
    #[arg(long)]
    pub quick: bool,
    /// CUDA cases also time a batch on one buffer set, whose data can stay in L2 between calls
    /// (nvbench's hot batch): timing mode `batch_hot`. The headline `batch` stays DRAM-cold.
    #[arg(long)]
    pub l2_hot: bool,
    /// Per-case wall-clock limit in seconds; a worker past it is killed [default: from config].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Export every raw sample into the reports.
    #[arg(long)]
    pub save_samples: bool,
    /// Start a worker process for every CUDA case, as for CPU cases [default: consecutive CUDA
    /// cases of one plugin share a worker until one of them does not pass].
    #[arg(long)]
    pub worker_per_case: bool,
    /// Gate the run against this baseline file; `auto` picks `baselines/gpu-<class>.json` for
    /// this machine's GPU (`baselines/cpu.json` for a CPU-only run) and says which. With
    /// --filter, --backends or --precision, the baseline's metrics of the cases they leave out
    /// are counted, not checked.
    #[arg(long, value_name = "FILE", conflicts_with = "compare_to")]
    pub compare: Option<PathBuf>,
    /// Gate the run against the baseline at REF (`git show REF:<baseline>`), where the baseline is
    /// `--baseline-path` [default: baselines/cpu.json].
    #[arg(long, value_name = "REF")]
    pub compare_to: Option<String>,
    /// The baseline's path inside the repository, for --compare-to.
    #[arg(long, value_name = "PATH", default_value = "baselines/cpu.json")]
    pub baseline_path: PathBuf,
    /// Also write the results in these formats (repeatable or comma-separated): `csv`
    /// (results.csv), `junit` (junit.xml), `bmf` (bmf.json, Bencher), `github-action-benchmark`
    /// (github-action-benchmark.json), and the seeds' formats: `apex-x-gpu` (perf_gpu.json and
    /// perf_gpu.md), `apex-x-cpu` (perf_cpu.json), `quasim` (quasim.json), `comprehensive`
    /// (comprehensive.json).
    #[arg(long = "format", value_name = "FORMAT", value_delimiter = ',', value_parser = crate::report::exports::Format::parse)]
    pub formats: Vec<crate::report::exports::Format>,
    /// Append this run to a history folder (trend across runs).
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0, conflicts_with = "devices")]
    pub device: u32,
    /// Run CUDA cases on several GPUs at once, one case per GPU at a time: `all`, or ordinals
    /// (`0,1`). CPU cases run before the GPU cases, never beside them.
    #[arg(long, value_name = "all|N,N,…", value_parser = devices::parse_devices)]
    pub devices: Option<DeviceSelection>,
    /// Run only this machine's shard of the plan: `hash:M/N` (stable when cases are added),
    /// `slice:M/N` (round robin in plan order) or `auto` (from Slurm, Kubernetes, Bazel,
    /// Buildkite or APEX_SHARD_INDEX/APEX_SHARD_COUNT). `apex-host merge` joins the shards.
    #[arg(long, value_name = "SPEC", env = "APEX_PARTITION", value_parser = shard::parse_partition)]
    pub partition: Option<PartitionSpec>,
    /// The number of shards, for `--partition auto` inside a Kubernetes Indexed Job (the Job's
    /// `completions`).
    #[arg(long, value_name = "N")]
    pub partition_total: Option<u32>,
    /// Print each case's details as it finishes.
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    pub anchors: AnchorOpts,
    #[command(flatten)]
    pub engines: EngineOpts,
    #[command(flatten)]
    pub discovery: DiscoveryOpts,
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    Backend::parse(s)
        .ok_or_else(|| format!("unknown backend `{s}` (expected one of: cpu, cuda, trt)"))
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s)
        .ok_or_else(|| format!("unknown precision `{s}` (expected one of: fp32, fp16, bf16, fp8)"))
}

pub fn exec(args: &RunArgs) -> i32 {
    exit_code_of(run(args))
}

fn run(args: &RunArgs) -> Result<i32, Failure> {
    let interrupt = crate::interrupt::install().map_err(internal)?;
    // First: a malformed anchor file fails at once, before discovery builds anything.
    let anchors = args.anchors.load()?;
    let engine_layer = args.engines.layer().map_err(|e| (ApexExitCode::USAGE, e))?;
    let opts = args.discovery.resolve();
    let registry = crate::discovery::discover(&opts);
    let config_error = |e: crate::config::ConfigErrors| {
        (
            ApexExitCode::CONFIG_ERROR,
            format!("invalid configuration:\n{e}"),
        )
    };
    let mut config = crate::config::load(
        &registry.bench_files(),
        &args.discovery.suite_dir(opts.root.as_deref()),
    )
    .map_err(config_error)?;
    if let Some(text) = &engine_layer {
        config
            .add_command_line_layer(engine_opts::LAYER_NAME, text)
            .map_err(config_error)?;
    }
    let kernels: Vec<_> = registry.kernels().cloned().collect();
    config.check(&kernels).map_err(config_error)?;
    let facts = crate::facts::gather();
    let overrides = CliOverrides {
        backends: args.backends.clone(),
        precisions: args.precision.clone(),
        iters: args.iters,
        warmup: args.warmup,
        timeout_s: args.timeout,
        quick: args.quick,
        l2_hot: args.l2_hot,
    };
    let filter = Filter::new(&args.filter).map_err(|e| {
        (
            ApexExitCode::USAGE,
            format!("--filter: {e} (hint: globs look like `tile_ops.*`)"),
        )
    })?;
    let mut plan = crate::plan::build(&registry, &config, &overrides, &filter, &facts)
        .map_err(config_error)?;
    if plan.cases.is_empty() && !args.filter.is_empty() {
        notice(&no_match(&args.filter, &registry));
    }
    let identity = PlanIdentity::of(plan.cases.iter().map(|c| c.key.id()).collect());
    let partition = args
        .partition
        .as_ref()
        .map(|spec| shard::apply(spec, args.partition_total, &mut plan))
        .transpose()?;
    let ordinals = devices::ordinals(args.device, args.devices.as_ref(), &facts)?;

    if cfg!(debug_assertions) {
        notice(
            "apex-host is a debug build, and so are the plugins it builds and loads (target/debug): their timings test the tool, they are not the kernels' (hint: `cargo run --release -p apex-host -- run …`)",
        );
    }
    let mut baseline = super::gate::load_baseline(args, opts.root.as_deref(), &facts)?;
    if let (Some(b), Some(p)) = (baseline.as_mut(), &partition) {
        shard::keep_shard_metrics(b, &identity, &plan);
        notice(&format!(
            "--partition {}: the gate checks this shard's {} case(s); gate the merged report for the whole plan",
            p.label(),
            plan.cases.len()
        ));
    }
    if interrupt.is_requested() {
        return Err((
            ApexExitCode::INTERRUPTED,
            "interrupted before any case ran; nothing was written".into(),
        ));
    }
    // Held until this function returns, after the last file of the run is written.
    let _lock = super::lock::lock_output_dir(&args.output_dir, "run", args.no_wait, || {
        interrupt.is_requested()
    })
    .map_err(|e| (super::lock::exit_code(&e), e.to_string()))?;

    let run_id = format!(
        "{}-{}",
        jiff::Timestamp::now().as_second(),
        std::process::id()
    );
    let mut writer = RunWriter::begin(&args.output_dir, &run_id).map_err(internal)?;
    let exe = std::env::current_exe()
        .map_err(|e| internal(format!("cannot locate apex-host itself: {e}")))?;
    let contexts = devices::calibrate(&exe, &plan, &ordinals, writer.partial_dir(), interrupt);
    let ctx = AssembleContext {
        seed: args.seed,
        save_samples: args.save_samples,
        bandwidth: None,
        l2_line_gbps: None,
    };
    let slots = devices::slots(&contexts, ctx);

    let mut progress = Progress::new(plan.cases.len(), args.verbose);
    let scratch = writer.partial_dir().to_path_buf();
    let schedule = ScheduleContext {
        exe: &exe,
        scratch: &scratch,
        seed: args.seed,
        assemble: ctx,
        devices: slots.clone(),
        interrupt,
        session_workers: !args.worker_per_case,
    };
    let measuring_since = std::time::Instant::now();
    let ran = run_plan(&plan, &schedule, |event| {
        match event {
            ScheduleEvent::Started(key) => progress.case_started(key),
            ScheduleEvent::Finished(result) => {
                writer.record(result)?;
                progress.case_finished(result);
            }
            ScheduleEvent::DeviceOut { ordinal, reason } => progress.device_out(ordinal, reason),
        }
        Ok::<(), report::WriteError>(())
    })
    .map_err(internal)?;
    let wall_s = measuring_since.elapsed().as_secs_f64();
    progress.finish();
    let interrupted = ran.interrupted();
    if interrupted && ran.results.is_empty() {
        writer.discard().map_err(internal)?;
        return Err((
            ApexExitCode::INTERRUPTED,
            format!(
                "interrupted before any case finished; `{}` is unchanged",
                args.output_dir.display()
            ),
        ));
    }
    if interrupted {
        notice(&format!(
            "interrupted: writing the report of the {} finished case(s); {} did not run \
             (Ctrl-C again exits at once and leaves the finished ones in `{}`)",
            ran.results.len(),
            ran.not_run.len(),
            writer
                .partial_dir()
                .join(report::paths::CASES_JSONL)
                .display()
        ));
    }

    let first = contexts.first();
    let env = report::env::collect(serde_json::json!({
        "facts": facts,
        "cuda_device": first.map_or(serde_json::Value::Null, |d| d.info.clone()),
        "copy_bandwidth_gbps": first.and_then(|d| d.copy_bandwidth_gbps),
        "add_line_gbps": first.and_then(|d| d.add_line_gbps),
        "read_line_gbps": first.and_then(|d| d.read_line_gbps),
        "l2_line_gbps": first.and_then(|d| d.l2_line_gbps),
        "cuda_devices": devices::env_entries(&contexts, &slots, &ran.devices_out),
        "plugins": registry.plugins.iter().map(|p| serde_json::json!({"name": p.name, "version": p.version})).collect::<Vec<_>>(),
    }));
    let mut summary = summarize(args, &env, ran.results, &ran.not_run);
    let suite_files: Vec<PathBuf> = config.files().iter().map(|f| f.path.clone()).collect();
    summary.plan = Some(shard::plan_record(
        &summary.config,
        &suite_files,
        identity,
        partition.as_ref(),
        plan.cases.len(),
    ));
    summary.time_accounting = Some(crate::model::TimeAccounting::of(
        wall_s,
        summary.benchmarks.values(),
    ));
    anchor_opts::apply(&mut summary, anchors.as_ref());
    // An interrupted run lacks cases the baseline asks for: gating it would only report them
    // missing, and its partial figures do not belong in the history.
    let gate = match &baseline {
        Some(b) if !interrupted => Some(super::gate::run_gate(b, &summary, &args.output_dir)?),
        Some(_) => {
            notice("the regression gate was skipped: the run was interrupted");
            None
        }
        None => None,
    };
    writer.set_regressions_markdown(gate.as_ref().map(|g| g.markdown.clone()));
    let mut written = writer
        .finish(&summary, &registry.manifest(), &env)
        .map_err(internal)?;
    let history = args.history.as_ref().filter(|_| !interrupted);
    if let Some(dir) = history {
        crate::compare::history::append(dir, &summary).map_err(internal)?;
    }
    written.push(
        report::html::write_report(
            &args.output_dir,
            &summary,
            gate.as_ref()
                .map(|g| report::html::GateView::of(&g.comparison))
                .as_ref(),
            history.map(PathBuf::as_path),
        )
        .map_err(internal)?,
    );
    written.extend(
        report::exports::write_exports(
            &args.output_dir,
            &args.formats,
            &summary,
            gate.as_ref().map(|g| &g.comparison),
        )
        .map_err(internal)?,
    );
    super::replay::write_replay_manifest(&args.output_dir, args.seed, &summary, &written)?;
    report::print_final(
        &summary,
        &args.output_dir,
        gate.as_ref().map(|g| g.markdown.as_str()),
    );

    Ok(match summary.status.as_str() {
        STATUS_INTERRUPTED => ApexExitCode::INTERRUPTED,
        _ if gate.as_ref().is_some_and(|g| g.failed) => ApexExitCode::GATE_FAILED,
        "failed" => ApexExitCode::CASES_FAILED,
        "empty" => ApexExitCode::NOTHING_RAN,
        _ => ApexExitCode::OK,
    })
}

/// Why a run with `--filter` planned nothing, and what the globs could have matched.
fn no_match(globs: &[String], registry: &crate::discovery::Registry) -> String {
    let kernels: Vec<&str> = registry.kernels().map(|k| k.id.as_str()).collect();
    let quoted: Vec<String> = globs.iter().map(|g| format!("'{g}'")).collect();
    // A glob's literal stem (`tile_op` of `tile_op.*`) is what a typo is made of.
    let stem = globs[0].trim_end_matches(['*', '.', '?']);
    format!(
        "--filter {}: no case matches (hint: a glob matches a kernel id, `tile_ops.*`, or a whole case id, `*/cuda/fp16/*`; {})",
        quoted.join(" "),
        crate::config::suggest::hint_for(stem, &kernels, "kernels")
    )
}

fn notice(message: &str) {
    errln!("{message}");
}

/// The run's summary: `results` are the finished cases; `not_run` (an interrupted run's
/// unfinished cases) makes the status `interrupted` and is counted as `not_run`.
fn summarize(
    args: &RunArgs,
    env: &serde_json::Value,
    results: Vec<CaseResult>,
    not_run: &[CaseKey],
) -> RunSummary {
    let status = if not_run.is_empty() {
        RunSummary::status_of(&results)
    } else {
        STATUS_INTERRUPTED
    }
    .to_string();
    let mut counts = std::collections::BTreeMap::new();
    for s in [
        CaseStatus::Ok,
        CaseStatus::Skipped,
        CaseStatus::Failed,
        CaseStatus::FailedAccuracy,
    ] {
        counts.insert(
            s.as_str().to_string(),
            results.iter().filter(|r| r.status == s).count(),
        );
    }
    // `total` is every case of the plan, finished or not.
    counts.insert("total".into(), results.len() + not_run.len());
    if !not_run.is_empty() {
        counts.insert("not_run".into(), not_run.len());
    }
    RunSummary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        suite: SUITE_NAME.into(),
        timestamp_utc: report::env::timestamp_utc(),
        environment: env.clone(),
        config: serde_json::json!({
            "backends": args.backends.as_ref().map(|b| b.iter().map(|x| x.as_str()).collect::<Vec<_>>()),
            "precisions": args.precision.as_ref().map(|p| p.iter().map(|x| x.as_str()).collect::<Vec<_>>()),
            "iters": args.iters,
            "warmup": args.warmup,
            "seed": args.seed,
            "filter": args.filter,
            "quick": args.quick,
            "timeout_s": args.timeout,
            "save_samples": args.save_samples,
            "device": args.device,
            "devices": args.devices.as_ref().map(DeviceSelection::to_json),
        }),
        status,
        counts,
        benchmarks: results.into_iter().map(|r| (r.id.clone(), r)).collect(),
        time_accounting: None,
        plan: None,
        anchors: None,
    }
}
