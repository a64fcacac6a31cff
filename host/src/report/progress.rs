//! [`Progress`]: what a long run shows while it works. On a terminal, a live bar on stderr with
//! one line printed above it per finished case; in CI or when stderr is not a terminal, plain
//! lines only, e.g.
//!
//! ```text
//! [ 3/12] ok      tile_ops.tile_pack/cpu/fp32/kmax=32,tile_size=8 p50 0.1230 ms
//! [ 4/12] skipped tile_ops.tile_pack/cuda/fp16/kmax=32,tile_size=8 (cuda_unavailable: ...)
//! ```
//!
//! With `verbose`, each case's start is shown too (`start`), and finished lines carry the case's
//! wall time.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::fmt::{err, ms};
use crate::model::{CaseKey, CaseResult, CaseStatus};

enum Sink {
    Bar(ProgressBar),
    Lines(Box<dyn Write + Send>),
}

/// Progress of a run of `total` cases. Events: [`Progress::case_started`],
/// [`Progress::case_finished`] (skips included), [`Progress::finish`].
pub struct Progress {
    total: usize,
    done: usize,
    verbose: bool,
    sink: Sink,
    began: Instant,
    case_began: Option<Instant>,
    counts: BTreeMap<CaseStatus, usize>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("total", &self.total)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// A bar when stderr is a terminal and `CI` is not set; plain lines on stderr otherwise.
    pub fn new(total_cases: usize, verbose: bool) -> Progress {
        if std::io::stderr().is_terminal() && !in_ci() {
            let bar = ProgressBar::with_draw_target(
                Some(total_cases as u64),
                ProgressDrawTarget::stderr(),
            );
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(200));
            Self::with_sink(total_cases, verbose, Sink::Bar(bar))
        } else {
            Self::lines(total_cases, verbose, Box::new(std::io::stderr()))
        }
    }

    /// Plain lines into `out` (no bar), whatever the terminal.
    pub fn lines(total_cases: usize, verbose: bool, out: Box<dyn Write + Send>) -> Progress {
        Self::with_sink(total_cases, verbose, Sink::Lines(out))
    }

    fn with_sink(total: usize, verbose: bool, sink: Sink) -> Progress {
        Progress {
            total,
            done: 0,
            verbose,
            sink,
            began: Instant::now(),
            case_began: None,
            counts: BTreeMap::new(),
        }
    }

    pub fn case_started(&mut self, key: &CaseKey) {
        self.case_began = Some(Instant::now());
        let id = key.id();
        match &mut self.sink {
            Sink::Bar(bar) => bar.set_message(id),
            Sink::Lines(_) if self.verbose => {
                let line = format!("{} {:<7} {id}", self.counter(self.done + 1), "start");
                self.emit(&line);
            }
            Sink::Lines(_) => {}
        }
    }

    pub fn case_finished(&mut self, case: &CaseResult) {
        self.done += 1;
        *self.counts.entry(case.status).or_default() += 1;
        let mut line = format!(
            "{} {:<7} {}",
            self.counter(self.done),
            case.status.as_str(),
            case.id
        );
        line.push_str(&outcome(case));
        if self.verbose
            && let Some(t) = self.case_began.take()
        {
            line.push_str(&format!(" [{:.2} s]", t.elapsed().as_secs_f64()));
        }
        self.emit(&line);
        if let Sink::Bar(bar) = &self.sink {
            bar.inc(1);
        }
    }

    /// A GPU left the pool: one line, whatever the verbosity (its queued cases move on).
    pub fn device_out(&mut self, ordinal: u32, reason: &str) {
        self.emit(&format!(
            "GPU {ordinal} taken out of the pool: {reason}; its remaining cases go to the other GPUs"
        ));
    }

    /// Clears the bar and prints one closing line with the counts per status.
    pub fn finish(&mut self) {
        if let Sink::Bar(bar) = &self.sink {
            bar.finish_and_clear();
        }
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(s, n)| format!("{n} {}", s.as_str()))
            .collect();
        let line = format!(
            "{} of {} case(s) in {:.1} s: {}",
            self.done,
            self.total,
            self.began.elapsed().as_secs_f64(),
            if counts.is_empty() {
                "none run".to_string()
            } else {
                counts.join(", ")
            }
        );
        self.emit(&line);
    }

    fn counter(&self, n: usize) -> String {
        let w = self.total.max(1).to_string().len();
        format!("[{n:>w$}/{}]", self.total)
    }

    fn emit(&mut self, line: &str) {
        match &mut self.sink {
            Sink::Bar(bar) => bar.println(line),
            // A closed stderr must not stop a benchmark run; the report files still get written.
            Sink::Lines(out) => {
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
    }
}

/// What a finished line says after the case id.
fn outcome(case: &CaseResult) -> String {
    match case.status {
        CaseStatus::Ok => match case.p50_ms {
            Some(p) => format!(" p50 {} ms", ms(p)),
            None => String::new(),
        },
        CaseStatus::FailedAccuracy => {
            let e = case
                .accuracy
                .as_ref()
                .map(|a| format!("max abs err {}, ", err(a.max_abs_error)))
                .unwrap_or_default();
            format!(" ({e}timing not valid)")
        }
        CaseStatus::Skipped | CaseStatus::Failed => match &case.reason {
            Some(r) => format!(" ({})", r.lines().next().unwrap_or_default()),
            None => String::new(),
        },
    }
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{measured_case, skipped_case};
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Buf {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn plain_lines_for_ci() {
        let buf = Buf::default();
        let mut p = Progress::lines(12, false, Box::new(buf.clone()));
        let ok = measured_case("tile_ops.tile_pack", "cpu", 0.123, 0.01);
        p.case_started(&ok.key);
        p.case_finished(&ok);
        let skip = skipped_case("tile_ops.tile_pack", "cuda", "cuda_unavailable: no libcuda");
        p.case_started(&skip.key);
        p.case_finished(&skip);
        p.finish();
        let text = buf.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("[ 1/12] ok      {} p50 0.1230 ms", ok.id));
        assert_eq!(
            lines[1],
            format!("[ 2/12] skipped {} (cuda_unavailable: no libcuda)", skip.id)
        );
        assert!(lines[2].starts_with("2 of 12 case(s) in "), "{}", lines[2]);
        assert!(lines[2].ends_with(": 1 ok, 1 skipped"), "{}", lines[2]);
        assert_eq!(lines.len(), 3, "no start lines without --verbose");
    }

    #[test]
    fn verbose_shows_starts_and_times() {
        let buf = Buf::default();
        let mut p = Progress::lines(3, true, Box::new(buf.clone()));
        let mut bad = measured_case("nn_ops.gelu", "cpu", 1.0, 0.01);
        bad.status = CaseStatus::FailedAccuracy;
        p.case_started(&bad.key);
        p.case_finished(&bad);
        let text = buf.text();
        assert!(
            text.starts_with(&format!("[1/3] start   {}\n", bad.id)),
            "{text}"
        );
        assert!(
            text.contains("failed_accuracy") && text.contains("timing not valid"),
            "{text}"
        );
        assert!(text.trim_end().ends_with(" s]"), "{text}");
    }
}
