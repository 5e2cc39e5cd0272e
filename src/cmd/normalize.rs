//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded.

use std::io;
use std::sync::PoisonError;
use std::time::Instant;

use boo_normalize::capture::file;
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::normalize::EndInfo;
use boo_normalize::sink::named::io_error;
use boo_normalize::transcript::open;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<ExitCode, Error> {
    let mut setup = a.stream.setup()?;
    let prices = a.input.prices()?;
    // Open everything first, so a missing file fails before any output.
    let mut ins = open::open_inputs(&a.files, a.input.format(), open::Lines::StreamJson)?;
    // A transcript has no result line: its run ends without a turn outcome, not in error.
    setup.envelope.allow_no_result |= ins.transcript;
    let inputs = std::mem::take(&mut ins.inputs);
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
                return Err(io_error(e, &input.name));
            }
            break;
        }
    }
    let (mut end, end_at) = (EndInfo::eof(), Instant::now());
    // stdin is known to be a transcript only now that it has been read.
    if ins.any_transcript() {
        p.normalizer_mut().set_allow_no_result(true);
        let by_model = ins
            .usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_model();
        let estimate = prices.estimate(&by_model);
        end.extra
            .extend(estimate.end_members(&prices, prices.prices_any(&by_model)));
    }
    if let Some(r) = &rec {
        let (mono_us, unix_us) = r.time_of(end_at);
        clock.set(Stamp { unix_us, mono_us });
    }
    let code = setup.conclude(&mut p, &mut end, ExitCode::OK, &mut io::stderr());
    let recorded = file::finish(rec, p.normalizer().cli_version(), &end, end_at);
    let code = code?;
    recorded?;
    Ok(code)
}
