//! `redact`: stream-json in, the same stream-json out with secrets replaced.

use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::redact::parallel::redact_inputs;
use boo_normalize::sniff;
use boo_normalize::transcript::open;

use crate::cli::RedactCmdArgs;

pub fn run(a: RedactCmdArgs) -> Result<Exit, Error> {
    let engine = a.rules.options().build()?;
    // A transcript stays a transcript (its lines as written, the session's files merged).
    let mut inputs =
        open::open_inputs(&a.files, a.input_format.format(), open::Lines::AsWritten)?.inputs;
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
    let stdout = io::stdout();
    let w = BufWriter::with_capacity(128 * 1024, stdout.lock());
    let s = redact_inputs(&engine, inputs, w, a.line_buffered)?;
    if a.summary {
        let total: u64 = s.counts.values().sum();
        let list: Vec<String> = s.counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            io::stderr(),
            "boo-normalize: redact: {total} redacted{}{}; delta text held back at most {} bytes",
            if list.is_empty() { "" } else { ": " },
            list.join(", "),
            s.max_held
        );
    }
    // The copy is written either way (redaction works on any JSON); input that is not
    // stream-json is still a usage error, as for every command that reads stream-json (empty
    // input only gets the note).
    let mut code = Exit::OK;
    for (name, head) in heads {
        let head = head.lock().map(|h| h.clone()).unwrap_or_default();
        // A session transcript is redacted as written: no hint for it.
        if let Some((kind, why)) = sniff::check_head(&name, &head)
            && kind != sniff::Kind::Transcript
        {
            let _ = writeln!(io::stderr(), "boo-normalize: {name}: {why}");
            if kind != sniff::Kind::Empty {
                code = Exit::ERROR;
            }
        }
    }
    Ok(code)
}
