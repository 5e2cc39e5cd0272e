//! `normalize`'s run: its opened inputs one after another through a setup's pipeline, teed
//! into the `--record` capture, each one sniffed (input that held no stream-json is named, and
//! is a usage error), a transcript's cost estimated into `run.end`; an input that fails to read
//! mid-way still ends the run with `run.end` naming it.

use std::io::{self, Write};
use std::path::Path;
use std::sync::PoisonError;

use super::Pipeline;
use super::conclude::{Ending, output_failed};
use super::setup::Setup;
use crate::capture::End;
use crate::capture::file::{self, Recording};
use crate::clock::{ManualClock, Stamp};
use crate::error::Error;
use crate::exit::Exit;
use crate::sink::named::io_error;
use crate::sniff;
use crate::transcript::open::Opened;
use crate::transcript::prices::Prices;

/// Normalize `ins` through `setup`'s pipeline, envelope to `out` and notes to `notes`;
/// `record`: also write a capture there. The run's exit status, or the error that ended it
/// (its `run.end` already written).
pub fn normalize<W: Write>(
    mut setup: Setup,
    mut ins: Opened,
    record: Option<&Path>,
    prices: &Prices,
    out: W,
    notes: &mut dyn Write,
) -> Result<Exit, Error> {
    // A transcript has no result line: its run ends without a turn outcome, not in error.
    setup.envelope.allow_no_result |= ins.transcript;
    let inputs = std::mem::take(&mut ins.inputs);
    let opened = file::open(record)?;
    // While recording, time-stamping sinks (the audit log) take the capture's times, so that a
    // replay of the capture reproduces them byte for byte.
    let clock = ManualClock::default();
    let recorded_time = opened.is_some().then(|| Box::new(clock.clone()) as _);
    let mut p = setup.pipeline(out, recorded_time, None)?;
    // The capture's header is its first write: a full disk fails it like any later record.
    let mut rec = file::start(opened, Some(&setup.run_id))
        .map_err(|(name, cause)| output_failed(&mut p, name, cause))?;
    if let (Some(r), Some(e)) = (rec.as_mut(), &setup.redact) {
        r.redact(e);
    }
    let (wrong, mut unread) = read_all(&mut p, &setup, inputs, &mut rec, &clock, notes)?;
    let mut ending = Ending::eof().recorded(rec, End::default());
    if let Some((name, e)) = &unread {
        ending.end = ending.end.input_failed(name, e);
    }
    // Input with no stream-json line is a usage error (exit 2); an empty one is only a missing
    // result (exit 3).
    if wrong {
        ending.code = Exit::ERROR;
    }
    // A caught signal (SIGINT, SIGTERM, SIGHUP) cut the reading short: every sink still ends
    // with run.end (`interrupted`, the signal's name), and the exit status is 128 + N.
    #[cfg(unix)]
    if let Some(sig) = unread
        .as_ref()
        .and_then(|(_, e)| crate::interrupt::stopped_by(e))
    {
        unread = None;
        ending.end = crate::normalize::EndInfo::interrupted(&crate::interrupt::signal_name(sig));
        ending.code = Exit::signal(sig);
    }
    // stdin is known to be a transcript only now that it has been read.
    if ins.any_transcript() {
        p.normalizer_mut().set_allow_no_result(true);
        ending.end.extra.extend(cost_estimate(&ins, prices));
    }
    if let Some((r, _)) = &ending.capture {
        let (mono_us, unix_us) = r.time_of(ending.at);
        clock.set(Stamp { unix_us, mono_us });
    }
    // After a failed input, its error is the one message (not also "no result").
    let code = match unread {
        Some(_) => setup.conclude(&mut p, ending, &mut io::sink())?,
        None => setup.conclude(&mut p, ending, notes)?,
    };
    match unread {
        Some((name, e)) => Err(io_error(e, &name)),
        None => Ok(code),
    }
}

/// Run every input through `p` (teed into `rec`), saying on `notes` what an input is that held
/// no stream-json: whether one held something else, and the input that failed to read (its
/// name and error), if one did; the error that ends the run at once (a failed capture).
fn read_all(
    p: &mut Pipeline<'_>,
    setup: &Setup,
    inputs: Vec<crate::input::Input>,
    rec: &mut Option<Recording>,
    clock: &ManualClock,
    notes: &mut dyn Write,
) -> Result<(bool, Option<(String, io::Error)>), Error> {
    // Each input's first bytes, to say what it is when it held no stream-json (see sniff).
    let (mut head, mut wrong) = (Vec::new(), false);
    for mut input in inputs {
        p.set_input_ready(input.ready_probe());
        let before = (p.stats().lines, p.stats().stream_json_lines);
        let src = sniff::Head::new(file::tee(rec, input.reader, clock), &mut head);
        let ran = p.run(src, setup.max_line);
        let (lines, json) = (
            p.stats().lines - before.0,
            p.stats().stream_json_lines - before.1,
        );
        if ran.is_ok()
            && let Some((kind, msg)) = sniff::check(&input.name, &head, lines, json)
        {
            let _ = writeln!(notes, "boo-normalize: {msg}");
            wrong |= kind != sniff::Kind::Empty;
        }
        if let Err(e) = ran {
            if let Some((name, cause)) = file::failed(rec, &e) {
                return Err(output_failed(p, name, cause));
            }
            if p.failure().is_none() {
                // Reading an input failed (an I/O error mid-file): the run still ends with
                // run.end naming it, in every sink and the capture, and then exits 2.
                return Ok((wrong, Some((input.name.clone(), e))));
            }
            break;
        }
    }
    Ok((wrong, None))
}

/// The `run.end` members of the transcripts' cost, estimated from the usage they counted.
fn cost_estimate(ins: &Opened, prices: &Prices) -> Vec<(String, String)> {
    let by_model = ins
        .usage
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .by_model();
    let estimate = prices.estimate(&by_model);
    estimate.end_members(prices, prices.prices_any(&by_model))
}
