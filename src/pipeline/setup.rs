//! Assembling a command's pipeline in one place: envelope options, the sinks its output settings
//! name, an optional redaction engine, the clock, the resume point; and ending the run the same
//! way for every command (a failed sink named in `run.end` on the others, the `--strict` and
//! no-result verdicts).

use std::io::{self, Write};
use std::sync::Arc;

use super::Pipeline;
use crate::clock::Clock;
use crate::error::{Error, counted};
use crate::exit::ExitCode;
use crate::normalize::{EndInfo, Normalizer, Options, Stats};
use crate::redact::{Engine, Redactor};
use crate::sink::named::io_error;
use crate::sink::registry::Outputs;

/// Everything a command decides about its pipeline.
#[derive(Clone, Default)]
pub struct Setup {
    /// Normalizer options.
    pub envelope: Options,
    /// Flush after every input line.
    pub line_buffered: bool,
    /// Cut lines longer than this (`line_too_long`).
    pub max_line: Option<usize>,
    /// `--strict`: exit 1 when lines were unusable or of unknown types.
    pub strict: bool,
    /// Where the events go.
    pub outputs: Outputs,
    /// Resume after this event (`--last-event-id`): see [`Pipeline::start_after`].
    pub resume: Option<u64>,
    /// The run id of audit records and the trace.
    pub run_id: String,
    /// The first event's `seq` (0, or where a continued run goes on).
    pub first_seq: u64,
    /// Redaction of every input line, before anything is written or recorded.
    pub redact: Option<Arc<Engine>>,
}

impl Setup {
    /// Open the sinks (stdout's first, writing to `stdout`) and build the pipeline; `clock`
    /// replaces the system clock (replays, recordings); `hide_until`: no sink sees the events
    /// with `seq <= hide_until` (`replay --from-seq`).
    pub fn pipeline<'a, W: Write + 'a>(
        &self,
        stdout: W,
        clock: Option<Box<dyn Clock + 'a>>,
        hide_until: Option<u64>,
    ) -> Result<Pipeline<'a>, Error> {
        let sinks = self.outputs.sinks(stdout, &self.run_id)?;
        let mut p = Pipeline::new(Normalizer::new(self.envelope.clone()), sinks)
            .first_seq(self.first_seq)
            .line_buffered(self.line_buffered)
            .resume_after(hide_until)
            .start_after(self.resume);
        if let Some(r) = self.redactor() {
            p = p.transform(r);
        }
        if let Some(c) = clock {
            p = p.with_clock(c);
        }
        Ok(p)
    }

    /// A fresh redactor of this run's engine (its own state, the same key), if redacting.
    pub fn redactor(&self) -> Option<Box<Redactor>> {
        self.redact.clone().map(|e| Box::new(Redactor::new(e)))
    }

    /// End the run as `end` says, with the command's own status `code`: when a sink failed, the
    /// others get `run.end` with cause `sink_failed` (`end` is updated to say so, for the
    /// capture) and the error names that sink (exit 74); a closed stdout gives cause
    /// `output_closed` and a quiet exit 0;
    /// otherwise [`status`]. Notes go to
    /// `notes` (stderr).
    pub fn conclude(
        &self,
        p: &mut Pipeline<'_>,
        end: &mut EndInfo,
        code: ExitCode,
        notes: &mut dyn Write,
    ) -> Result<ExitCode, Error> {
        // What the sinks still hold (the audit log's last batch) is written first, so a
        // failure to write it is named in `run.end` like one mid-run; an error is kept as the
        // pipeline's failure.
        let _ = p.flush();
        if let Some(f) = p.take_failure() {
            // A closed stdout is how a reader says it has seen enough, not a failed file.
            *end = if f.is_closed_stdout() {
                end.clone().output_closed()
            } else {
                end.clone().sink_failed(&f.name, &f.error)
            };
            let _ = p.finish(end);
            return Err(Error::sink(f.name, f.error));
        }
        p.finish(end).map_err(|e| finish_error(p, e))?;
        Ok(status(code, p.normalizer(), self.strict, notes))
    }
}

/// The error of a failed [`Pipeline::finish`]: the sink that failed, when one did (exit 74 for a
/// file), else stdout's.
pub fn finish_error(p: &mut Pipeline<'_>, e: io::Error) -> Error {
    match p.take_failure() {
        Some(f) => Error::sink(f.name, f.error),
        None => io_error(e, "stdout"),
    }
}

/// The exit status of a run whose own status is `code`: that status when it is not 0 (the
/// child's failure, a stop, a signal say more); else 3 when the stream had no `result` (and
/// `--allow-no-result` was not given), else 1 for `--strict` findings, else 0. Each verdict
/// says why in one line on `notes`.
pub fn status(code: ExitCode, n: &Normalizer, strict: bool, notes: &mut dyn Write) -> ExitCode {
    let strict = strict && strict_failed(n.stats(), notes);
    if code != ExitCode::OK {
        return code;
    }
    if n.no_result() {
        let _ = writeln!(
            notes,
            "boo-normalize: no result: the stream ended without a `result` line (run.error written; --allow-no-result accepts this)"
        );
        return ExitCode::NO_RESULT;
    }
    if strict {
        ExitCode::FINDINGS
    } else {
        ExitCode::OK
    }
}

/// `--strict`: true (after a summary on `notes`) when the run had unusable lines or unknown
/// events.
fn strict_failed(s: &Stats, notes: &mut dyn Write) -> bool {
    if s.diagnostics == 0 && s.unknown == 0 {
        return false;
    }
    let _ = writeln!(
        notes,
        "boo-normalize: strict: {} of {} unusable, {}",
        s.diagnostics,
        counted(s.lines, "line"),
        counted(s.unknown, "unknown event")
    );
    true
}
