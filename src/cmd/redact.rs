//! `redact`: stream-json in, the same stream-json out with secrets replaced.

use std::io::{self, BufWriter, Write};

use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::redact::inputs::redact_inputs;
use boo_normalize::transcript::open;

use crate::cli::RedactCmdArgs;

pub fn run(a: RedactCmdArgs) -> Result<ExitCode, Error> {
    let engine = a.rules.options().build()?;
    // A transcript stays a transcript (its lines as written, the session's files merged).
    let inputs =
        open::open_inputs(&a.files, a.input_format.format(), open::Lines::AsWritten)?.inputs;
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
    Ok(ExitCode::OK)
}
