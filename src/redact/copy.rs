//! The `redact` command's run: every input redacted to one writer ([`redact_inputs`]), then the
//! `--summary` line and, for each input that is not stream-json, what it is (the copy is written
//! either way: redaction works on any JSON).

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use super::engine::Engine;
use super::parallel::{Summary, redact_inputs};
use crate::error::Error;
use crate::exit::Exit;
use crate::input::Input;
use crate::sniff;

/// Redact `inputs` with `engine` to `w`; with `summary`, say on `err` what was redacted (by
/// kind) and the most delta text held back; say on `err` what each input is when it does not
/// look like stream-json. The exit status: a usage error when an input is neither stream-json,
/// a session transcript nor empty.
pub fn copy<W: Write>(
    engine: &Arc<Engine>,
    mut inputs: Vec<Input>,
    w: W,
    line_buffered: bool,
    summary: bool,
    err: &mut dyn Write,
) -> Result<Exit, Error> {
    // Each input's first bytes, to say what it is when it does not look like stream-json.
    let heads: Vec<(String, Arc<Mutex<Vec<u8>>>)> = inputs
        .iter_mut()
        .map(|i| {
            let head = Arc::default();
            let r = std::mem::replace(&mut i.reader, Box::new(io::empty()));
            i.reader = Box::new(sniff::SharedHead::new(r, Arc::clone(&head)));
            (i.name.clone(), head)
        })
        .collect();
    let s = redact_inputs(engine, inputs, w, line_buffered)?;
    if summary {
        let _ = writeln!(err, "{}", summary_line(&s));
    }
    // Input that is not stream-json is still a usage error, as for every command that reads
    // stream-json (empty input only gets the note).
    let mut code = Exit::OK;
    for (name, head) in heads {
        let head = head.lock().map(|h| h.clone()).unwrap_or_default();
        // A session transcript is redacted as written: no hint for it.
        if let Some((kind, why)) = sniff::check_head(&name, &head)
            && kind != sniff::Kind::Transcript
        {
            let _ = writeln!(err, "boo-normalize: {name}: {why}");
            if kind != sniff::Kind::Empty {
                code = Exit::ERROR;
            }
        }
    }
    Ok(code)
}

/// `--summary`'s line: `boo-normalize: redact: N redacted: kind n, …; delta text held back at
/// most B bytes`.
pub fn summary_line(s: &Summary) -> String {
    let total: u64 = s.counts.values().sum();
    let list: Vec<String> = s.counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "boo-normalize: redact: {total} redacted{}{}; delta text held back at most {} bytes",
        if list.is_empty() { "" } else { ": " },
        list.join(", "),
        s.max_held
    )
}
