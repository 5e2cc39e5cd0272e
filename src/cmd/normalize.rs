//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default).

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::{EXIT_OK, Error};
use boo_normalize::normalize::{EndInfo, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::redact::Redactor;

use crate::cli::NormalizeArgs;
use crate::cmd::record;
use crate::output::io_error;

pub fn run(a: NormalizeArgs) -> Result<u8, Error> {
    let opts = a.envelope.options();
    let engine = if a.redact.enabled() {
        Some(super::redact::engine(&a.redact.rules)?)
    } else {
        None
    };
    let redactor = engine.clone().map(|e| Box::new(Redactor::new(e)));
    let run_id = a.output.run_id();
    let stdout = io::stdout();
    let sinks = a.output.sinks(stdout.lock(), &run_id)?;
    let mut p = Pipeline::new(Normalizer::new(opts), sinks).line_buffered(a.envelope.line_buffered);
    if let Some(r) = redactor {
        p = p.transform(r);
    }
    let files = if a.files.is_empty() {
        vec!["-".into()]
    } else {
        a.files.clone()
    };
    // Open everything first, so a missing file fails before any output.
    let mut inputs: Vec<(String, Box<dyn io::Read>, Readiness)> = Vec::new();
    for f in &files {
        let name = f.display().to_string();
        if name == "-" {
            let ready = Readiness::of_stdin();
            inputs.push(("stdin".into(), Box::new(io::stdin().lock()), ready));
        } else {
            let file = File::open(f).map_err(|e| Error::io(&name, e))?;
            let ready = Readiness::of_file(&file);
            inputs.push((name, Box::new(file), ready));
        }
    }
    let mut rec = record::start_normalize(a.record.as_deref(), Some(&run_id))?;
    if let (Some(r), Some(e)) = (rec.as_mut(), &engine) {
        r.redact(e);
    }
    // While recording, time-stamping sinks (the audit log) take the capture's times, so that a
    // replay of the capture reproduces them byte for byte.
    let clock = ManualClock::default();
    if rec.is_some() {
        p = p.with_clock(Box::new(clock.clone()));
    }
    let mut failed = None;
    for (name, src, ready) in inputs {
        p.set_input_ready(ready.probe());
        let src = record::tee(&mut rec, src, &clock);
        if let Err(e) = p.run(src, a.envelope.max_line_bytes) {
            failed = record::failed(&mut rec, &e).map(|f| (f, true));
            if failed.is_none() {
                let Some(f) = p.take_failure() else {
                    return Err(io_error(e, &name));
                };
                failed = Some(((f.name, f.error), false));
            }
            break;
        }
    }
    if let Some(((name, e), capture)) = failed {
        return Err(sink_failed(p, rec, name, e, capture));
    }
    let (end, end_at) = (EndInfo::eof(), Instant::now());
    if let Some(r) = &rec {
        let (mono_us, unix_us) = r.time_of(end_at);
        clock.set(Stamp { unix_us, mono_us });
    }
    p.finish(&end).map_err(|e| io_error(e, "stdout"))?;
    record::finish_normalize(rec, p.normalizer().cli_version(), &end, end_at)?;
    Ok(super::run_status(
        EXIT_OK,
        p.normalizer(),
        a.envelope.strict,
    ))
}

/// A sink (or the capture when `capture`) failed: every other sink still gets `run.end` with
/// cause `sink_failed`; the error names the file.
fn sink_failed(
    mut p: Pipeline<'_>,
    rec: Option<record::Recording>,
    name: String,
    e: std::io::Error,
    capture: bool,
) -> Error {
    let end = EndInfo::eof().sink_failed(&name, &e);
    let _ = p.finish(&end);
    if !capture {
        let _ = record::finish_normalize(rec, p.normalizer().cli_version(), &end, Instant::now());
    }
    Error::sink(name, e)
}

/// Whether reading an input can block (see [`Pipeline::set_input_ready`]).
enum Readiness {
    /// A regular file: reads never wait.
    #[cfg(unix)]
    Always,
    /// A pipe, terminal or socket: ask `poll` without waiting.
    #[cfg(unix)]
    Poll(OwnedFd),
    /// Unknown: flush whenever the reader runs dry.
    Unknown,
}

impl Readiness {
    #[cfg(unix)]
    fn of_stdin() -> Self {
        Self::of(io::stdin().as_fd())
    }

    #[cfg(unix)]
    fn of_file(f: &File) -> Self {
        Self::of(f.as_fd())
    }

    #[cfg(not(unix))]
    fn of_stdin() -> Self {
        Readiness::Unknown
    }

    #[cfg(not(unix))]
    fn of_file(_: &File) -> Self {
        Readiness::Unknown
    }

    #[cfg(unix)]
    fn of(fd: BorrowedFd<'_>) -> Self {
        let Ok(owned) = fd.try_clone_to_owned() else {
            return Readiness::Unknown;
        };
        let file = File::from(owned);
        match file.metadata() {
            Ok(m) if m.is_file() => Readiness::Always,
            Ok(_) => Readiness::Poll(file.into()),
            Err(_) => Readiness::Unknown,
        }
    }

    fn probe(self) -> Option<Box<dyn FnMut() -> bool>> {
        match self {
            #[cfg(unix)]
            Readiness::Always => Some(Box::new(|| true)),
            #[cfg(unix)]
            Readiness::Poll(fd) => Some(Box::new(move || {
                use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
                poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
            })),
            Readiness::Unknown => None,
        }
    }
}
