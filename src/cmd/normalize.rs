//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded.

use std::io;

use boo_normalize::capture::{End, file};
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::input;
use boo_normalize::pipeline::conclude::{Ending, output_failed};
use boo_normalize::sink::named::io_error;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<ExitCode, Error> {
    let setup = a.stream.plan()?.open()?;
    // Open everything first, so a missing file fails before any output.
    let inputs = input::open_all(&a.files)?;
    let opened = file::open(a.record.as_deref())?;
    // While recording, time-stamping sinks (the audit log) take the capture's times, so that a
    // replay of the capture reproduces them byte for byte.
    let clock = ManualClock::default();
    let recorded_time = opened.is_some().then(|| Box::new(clock.clone()) as _);
    let mut p = setup.pipeline(io::stdout().lock(), recorded_time, None)?;
    // The capture's header is its first write: a full disk fails it like any later record.
    let mut rec = file::start(opened, Some(&setup.run_id))
        .map_err(|(name, cause)| output_failed(&mut p, name, cause))?;
    if let (Some(r), Some(e)) = (rec.as_mut(), &setup.redact) {
        r.redact(e);
    }
    for mut input in inputs {
        p.set_input_ready(input.ready_probe());
        let src = file::tee(&mut rec, input.reader, &clock);
        if let Err(e) = p.run(src, setup.max_line) {
            if let Some((name, cause)) = file::failed(&mut rec, &e) {
                return Err(output_failed(&mut p, name, cause));
            }
            if p.failure().is_none() {
                return Err(io_error(e, &input.name));
            }
            break;
        }
    }
    let ending = Ending::eof().recorded(rec, End::default());
    if let Some((r, _)) = &ending.capture {
        let (mono_us, unix_us) = r.time_of(ending.at);
        clock.set(Stamp { unix_us, mono_us });
    }
    setup.conclude(&mut p, ending, &mut io::stderr())
}
