//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded.

use std::io::{self, Write};
use std::time::Instant;

use boo_normalize::capture::file;
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::input;
use boo_normalize::normalize::EndInfo;
use boo_normalize::sink::named::io_error;
use boo_normalize::sniff;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<ExitCode, Error> {
    // A mistyped subcommand (`boo-normalize difff`) is read as a file name: say which was meant.
    for f in &a.files {
        if !f.exists()
            && let Some(sub) = crate::cli::similar_subcommand(f.as_os_str())
        {
            let name = f.display().to_string();
            return Err(Error::msg(
                &name,
                format!(
                    "no such file or directory; did you mean the subcommand `boo-normalize {sub}`? (`boo-normalize help` lists them)"
                ),
            ));
        }
    }
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
    // Each input's first bytes, to say what it is when it held no stream-json (see sniff).
    let (mut head, mut wrong) = (Vec::new(), false);
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
    if let Some(r) = &rec {
        let (mono_us, unix_us) = r.time_of(end_at);
        clock.set(Stamp { unix_us, mono_us });
    }
    // Input with no stream-json line is a usage error (exit 2); an empty one is only a missing
    // result (exit 3).
    let own = if wrong { ExitCode::ERROR } else { ExitCode::OK };
    let code = setup.conclude(&mut p, &mut end, own, &mut io::stderr());
    let recorded = file::finish(rec, p.normalizer().cli_version(), &end, end_at);
    let code = code?;
    recorded?;
    Ok(code)
}
