//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded.

use std::io;
use std::time::Instant;

use boo_normalize::capture::file;
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::input;
use boo_normalize::normalize::EndInfo;
use boo_normalize::sink::named::io_error;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<ExitCode, Error> {
    let setup = a.stream.setup()?;
    // Open everything first, so a missing file fails before any output.
    let inputs = input::open_all(&a.files)?;
    let opened = file::open(a.record.as_deref())?;
    // While recording, time-stamping sinks (the audit log) take the capture's times, so that a
    // replay of the capture reproduces them byte for byte.
    let clock = ManualClock::default();
    let recorded_time = opened.is_some().then(|| Box::new(clock.clone()) as _);
    let mut p = setup.pipeline(io::stdout().lock(), recorded_time, None)?;
    // The capture's header is its first write: a full disk fails it like any later record.
    let mut rec = match file::start(opened, Some(&setup.run_id)) {
        Ok(r) => r,
        Err((name, cause)) => {
            let _ = p.finish(&EndInfo::eof().sink_failed(&name, &cause));
            return Err(Error::sink(name, cause));
        }
    };
    if let (Some(r), Some(e)) = (rec.as_mut(), &setup.redact) {
        r.redact(e);
    }
    let mut end = EndInfo::eof();
    let mut unread = None;
    for mut input in inputs {
        p.set_input_ready(input.ready_probe());
        let src = file::tee(&mut rec, input.reader, &clock);
        if let Err(e) = p.run(src, setup.max_line) {
            if let Some((name, cause)) = file::failed(&mut rec, &e) {
                // The capture failed: the sinks still end with run.end naming it.
                let _ = p.finish(&EndInfo::eof().sink_failed(&name, &cause));
                return Err(Error::sink(name, cause));
            }
            if p.failure().is_none() {
                // Reading an input failed (an I/O error mid-file): the run still ends with
                // run.end naming it, in every sink and the capture, and then exits 2.
                end = end.input_failed(&input.name, &e);
                unread = Some(io_error(e, &input.name));
            }
            break;
        }
    }
    let end_at = Instant::now();
    if let Some(r) = &rec {
        let (mono_us, unix_us) = r.time_of(end_at);
        clock.set(Stamp { unix_us, mono_us });
    }
    // After a failed input, its error is the one message (not also "no result").
    let mut notes: Box<dyn io::Write> = match unread {
        Some(_) => Box::new(io::sink()),
        None => Box::new(io::stderr()),
    };
    let code = setup.conclude(&mut p, &mut end, ExitCode::OK, &mut notes);
    let recorded = file::finish(rec, p.normalizer().cli_version(), &end, end_at);
    let code = code?;
    recorded?;
    match unread {
        Some(e) => Err(e),
        None => Ok(code),
    }
}
