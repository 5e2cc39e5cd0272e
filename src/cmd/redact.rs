//! `redact`: stream-json in, the same stream-json out with secrets replaced: the engine from the
//! options, the inputs opened, stdout; the run is [`copy`].

use std::io::{self, BufWriter};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::redact::copy::copy;
use boo_normalize::transcript::open;

use crate::cli::RedactCmdArgs;

pub fn run(a: RedactCmdArgs) -> Result<Exit, Error> {
    let engine = a.rules.options().build()?;
    // A transcript stays a transcript (its lines as written, the session's files merged).
    let inputs =
        open::open_inputs(&a.files, a.input_format.format(), open::Lines::AsWritten)?.inputs;
    let stdout = io::stdout();
    let w = BufWriter::with_capacity(128 * 1024, stdout.lock());
    copy(
        &engine,
        inputs,
        w,
        a.line_buffered,
        a.summary,
        &mut io::stderr(),
    )
}
