//! `apex-host merge DIR… --output-dir DIR [--compare FILE]`: the reports of the shards of one
//! plan (`run --partition`) as one report, written like a run's (every file, atomically, under
//! the output folder's lock) and gated like a run's.

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use super::failure::{Failure, exit_code_of, internal};
use crate::compare::Baseline;
use crate::merge::{Shard, merge};
use crate::model::STATUS_INCOMPLETE;
use crate::report::{self, RunWriter, paths};

#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The report folders of the shards (each the `--output-dir` of one `apex-host run`).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the merged report is written.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub output_dir: PathBuf,
    /// Gate the merged report against this baseline file, as `run --compare FILE` does.
    #[arg(long, value_name = "FILE")]
    pub compare: Option<PathBuf>,
    /// Exit at once (code 75) when another apex-host holds the output directory.
    #[arg(long)]
    pub no_wait: bool,
    #[command(flatten)]
    pub anchors: super::anchor_opts::AnchorOpts,
}

pub fn exec(args: &MergeArgs) -> i32 {
    exit_code_of(run(args))
}

fn run(args: &MergeArgs) -> Result<i32, Failure> {
    let out = std::path::absolute(&args.output_dir).unwrap_or(args.output_dir.clone());
    let mut shards = Vec::with_capacity(args.dirs.len());
    for dir in &args.dirs {
        if std::path::absolute(dir).is_ok_and(|d| d == out) {
            return Err((
                ApexExitCode::USAGE,
                format!(
                    "--output-dir `{}` is one of the shards; write the merged report to a folder of its own",
                    args.output_dir.display()
                ),
            ));
        }
        let summary = super::report::load_summary(&dir.join(paths::SUMMARY_JSON))
            .map_err(|e| (ApexExitCode::USAGE, e.to_string()))?;
        shards.push(Shard {
            dir: dir.display().to_string(),
            summary,
        });
    }
    let anchors = args.anchors.load()?;
    let mut summary =
        merge(shards).map_err(|e| (ApexExitCode::USAGE, format!("cannot merge: {e}")))?;
    super::anchor_opts::apply(&mut summary, anchors.as_ref());
    let baseline = args
        .compare
        .as_ref()
        .map(|p| Baseline::load(p))
        .transpose()
        .map_err(|e| (ApexExitCode::CONFIG_ERROR, e.to_string()))?;
    // The kernel manifest is the same on every shard of a plan; the first one's is kept.
    let manifest = std::fs::read_to_string(args.dirs[0].join(paths::MANIFEST_JSON))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);

    let _lock = super::lock::lock_output_dir(&args.output_dir, "merge", args.no_wait, || false)
        .map_err(|e| (super::lock::exit_code(&e), e.to_string()))?;
    let run_id = format!(
        "merge-{}-{}",
        jiff::Timestamp::now().as_second(),
        std::process::id()
    );
    let mut writer = RunWriter::begin(&args.output_dir, &run_id).map_err(internal)?;
    for case in summary.benchmarks.values() {
        writer.record(case).map_err(internal)?;
    }
    let gate = baseline
        .as_ref()
        .map(|b| super::gate::run_gate(b, &summary, &args.output_dir))
        .transpose()?;
    writer.set_regressions_markdown(gate.as_ref().map(|g| g.markdown.clone()));
    let mut written = writer
        .finish(&summary, &manifest, &summary.environment)
        .map_err(internal)?;
    written.push(
        report::html::write_report(
            &args.output_dir,
            &summary,
            gate.as_ref()
                .map(|g| report::html::GateView::of(&g.comparison))
                .as_ref(),
            None,
        )
        .map_err(internal)?,
    );
    let seed = summary
        .config
        .get("seed")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    super::replay::write_replay_manifest(&args.output_dir, seed, &summary, &written)?;
    report::print_final(
        &summary,
        &args.output_dir,
        gate.as_ref().map(|g| g.markdown.as_str()),
    );
    Ok(match summary.status.as_str() {
        _ if gate.as_ref().is_some_and(|g| g.failed) => ApexExitCode::GATE_FAILED,
        STATUS_INCOMPLETE | "failed" => ApexExitCode::CASES_FAILED,
        "empty" => ApexExitCode::NOTHING_RAN,
        _ => ApexExitCode::OK,
    })
}
