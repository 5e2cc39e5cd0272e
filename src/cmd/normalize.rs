//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded.

use std::io::{self, Write};
use std::sync::PoisonError;

use boo_normalize::capture::{End, file};
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::pipeline::conclude::{Ending, output_failed};
use boo_normalize::sink::named::io_error;
use boo_normalize::sniff;
use boo_normalize::transcript::open;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<Exit, Error> {
    crate::cli::no_mistyped_subcommand(&a.files)?;
    let mut setup = a.stream.plan()?.open()?;
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
    let mut rec = file::start(opened, Some(&setup.run_id))
        .map_err(|(name, cause)| output_failed(&mut p, name, cause))?;
    if let (Some(r), Some(e)) = (rec.as_mut(), &setup.redact) {
        r.redact(e);
    }
    // Each input's first bytes, to say what it is when it held no stream-json (see sniff).
    let (mut head, mut wrong) = (Vec::new(), false);
    let mut unread = None;
    for mut input in inputs {
        p.set_input_ready(input.ready_probe());
        let before = (p.stats().lines, p.stats().stream_json_lines);
        let src = sniff::Head::new(file::tee(&mut rec, input.reader, &clock), &mut head);
        let ran = p.run(src, setup.max_line);
        let (lines, json) = (
            p.stats().lines - before.0,
            p.stats().stream_json_lines - before.1,
        );
        if ran.is_ok()
            && let Some((kind, msg)) = sniff::check(&input.name, &head, lines, json)
        {
            let _ = writeln!(io::stderr(), "boo-normalize: {msg}");
            wrong |= kind != sniff::Kind::Empty;
        }
        if let Err(e) = ran {
            if let Some((name, cause)) = file::failed(&mut rec, &e) {
                return Err(output_failed(&mut p, name, cause));
            }
            if p.failure().is_none() {
                // Reading an input failed (an I/O error mid-file): the run still ends with
                // run.end naming it, in every sink and the capture, and then exits 2.
                unread = Some((input.name.clone(), e));
            }
            break;
        }
    }
    let mut ending = Ending::eof().recorded(rec, End::default());
    if let Some((name, e)) = &unread {
        ending.end = ending.end.input_failed(name, e);
    }
    // Input with no stream-json line is a usage error (exit 2); an empty one is only a missing
    // result (exit 3).
    if wrong {
        ending.code = Exit::ERROR;
    }
    // stdin is known to be a transcript only now that it has been read.
    if ins.any_transcript() {
        p.normalizer_mut().set_allow_no_result(true);
        let by_model = ins
            .usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_model();
        let estimate = prices.estimate(&by_model);
        ending
            .end
            .extra
            .extend(estimate.end_members(&prices, prices.prices_any(&by_model)));
    }
    if let Some((r, _)) = &ending.capture {
        let (mono_us, unix_us) = r.time_of(ending.at);
        clock.set(Stamp { unix_us, mono_us });
    }
    // After a failed input, its error is the one message (not also "no result").
    let mut notes: Box<dyn Write> = match unread {
        Some(_) => Box::new(io::sink()),
        None => Box::new(io::stderr()),
    };
    let code = setup.conclude(&mut p, ending, &mut notes)?;
    match unread {
        Some((name, e)) => Err(io_error(e, &name)),
        None => Ok(code),
    }
}
