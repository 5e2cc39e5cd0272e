//! Ending a run, the same way for every command (`normalize`, `replay`, `spawn`): what the sinks
//! still hold is written, a failed output (a sink, or the `--record` capture) is named in
//! `run.end` on the others, a closed stdout is a quiet end, the capture gets its end record, and
//! the run's verdict (`--strict`, no `result`) becomes the exit status.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

use super::Pipeline;
use super::setup::Setup;
use crate::capture::End;
use crate::capture::file::{self, Recording};
use crate::error::{Error, counted};
use crate::exit::Exit;
use crate::normalize::{EndInfo, Normalizer, Stats};
use crate::sink::named::io_error;

/// How a run ended, as its command knows it, for [`Setup::conclude`].
pub struct Ending {
    /// `run.end`'s cause and extra members (a plain end of input: [`EndInfo::eof`]).
    pub end: EndInfo,
    /// The command's own status (the child's failure, a stop, a signal); [`Exit::OK`] when
    /// it has none, and then the run's verdict decides.
    pub code: Exit,
    /// When the run ended: the capture's end record is dated then.
    pub at: Instant,
    /// The capture (`--record`), if one is written, and its end record so far (the child's exit
    /// status and signal for `spawn`; `cli_version` and `run_end` are filled in here).
    pub capture: Option<(Recording, End)>,
    /// The write error the source stopped on, if it did (`spawn`'s supervisor saw one): a
    /// failed capture write is named as the failed output.
    pub output_error: Option<Arc<io::Error>>,
    /// A closed stdout keeps [`Ending::end`] as it is (`spawn`: the supervisor already said how
    /// the child was stopped) instead of making it cause `output_closed`.
    pub keep_end_on_close: bool,
}

impl Ending {
    /// A plain end of input now, with no capture.
    pub fn eof() -> Self {
        Ending {
            end: EndInfo::eof(),
            code: Exit::OK,
            at: Instant::now(),
            capture: None,
            output_error: None,
            keep_end_on_close: false,
        }
    }

    /// The same ending with the capture `rec` (its end record from `end`).
    pub fn recorded(mut self, rec: Option<Recording>, end: End) -> Self {
        self.capture = rec.map(|r| (r, end));
        self
    }
}

impl Setup {
    /// End the run as `ending` says: when an output failed (a sink, or the capture), the others
    /// get `run.end` with cause `sink_failed` and the error names it (exit 74 for a file); a
    /// closed stdout is a quiet exit 0; otherwise [`status`]. The capture, unless it is what
    /// failed, gets its end record with the `run.end` the sinks got. Notes go to `notes`
    /// (stderr).
    pub fn conclude(
        &self,
        p: &mut Pipeline<'_>,
        ending: Ending,
        notes: &mut dyn Write,
    ) -> Result<Exit, Error> {
        let Ending {
            mut end,
            code,
            at,
            mut capture,
            output_error,
            keep_end_on_close,
        } = ending;
        let capture_failed = output_error
            .as_deref()
            .and_then(|e| capture.as_mut().and_then(|(r, _)| r.failed(e)));
        // What the sinks still hold (the audit log's last batch) is written first, so a
        // failure to write it is named in `run.end` like one mid-run.
        let _ = p.flush();
        let failure = match capture_failed {
            Some(f) => {
                capture = None;
                Some(f)
            }
            None => p.take_failure().map(|f| (f.name, f.error)),
        };
        // A closed stdout is how a reader says it has seen enough, not a failed output.
        let (closed, failure) = match failure {
            Some((name, e)) if name == "stdout" && e.kind() == io::ErrorKind::BrokenPipe => {
                (true, None)
            }
            f => (false, f),
        };
        if closed && !keep_end_on_close {
            end = end.output_closed();
        }
        if let Some((name, e)) = &failure {
            end = end.sink_failed(name, e);
        }
        let finished = p.finish(&end);
        let recorded = capture.map_or(Ok(()), |(r, mut record)| {
            record.cli_version = p.normalizer().cli_version().map(str::to_owned);
            record.run_end = end;
            r.finish(record, at)
        });
        if let Some((name, e)) = failure {
            return Err(Error::sink(name, e));
        }
        finished.map_err(|e| finish_error(p, e))?;
        recorded?;
        if closed {
            // `| head -1`: the reader has what it wanted.
            return Ok(Exit::OK);
        }
        Ok(status(code, p.normalizer(), self.strict, notes))
    }
}

/// The run failed before it could go on (an output could not start, a child could not be
/// started, the capture failed mid-run): every sink still gets `run.end` as `end` says, and the
/// capture, when given (one that has not failed), its end record; the run ends with `err`.
pub fn abandon(
    p: &mut Pipeline<'_>,
    capture: Option<Recording>,
    end: &EndInfo,
    err: Error,
) -> Error {
    let at = Instant::now();
    let _ = p.finish(end);
    let _ = file::finish(capture, p.normalizer().cli_version(), end, at);
    err
}

/// [`abandon`] for a failed output `name` (cause `sink_failed`), ending with that failure.
pub fn output_failed(p: &mut Pipeline<'_>, name: String, cause: io::Error) -> Error {
    let end = EndInfo::eof().sink_failed(&name, &cause);
    abandon(p, None, &end, Error::sink(name, cause))
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
pub fn status(code: Exit, n: &Normalizer, strict: bool, notes: &mut dyn Write) -> Exit {
    let strict = strict && strict_failed(n.stats(), notes);
    if code != Exit::OK {
        return code;
    }
    if n.no_result() {
        let _ = writeln!(
            notes,
            "boo-normalize: no result: the stream ended without a `result` line (run.error written; --allow-no-result accepts this)"
        );
        return Exit::NO_RESULT;
    }
    if strict { Exit::FINDINGS } else { Exit::OK }
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
