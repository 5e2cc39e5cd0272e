//! `normalize`: files or stdin through the pipeline to the output sinks (envelope NDJSON on
//! stdout by default), optionally recorded ([`inputs::normalize`]).

use std::io;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::pipeline::inputs;
use boo_normalize::transcript::open;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<Exit, Error> {
    crate::cli::no_mistyped_subcommand(&a.files)?;
    let mut setup = a.stream.plan()?.open()?;
    setup.input_format = a.input.format();
    let prices = a.input.prices()?;
    // SIGINT, SIGTERM and SIGHUP end the run with run.end (`interrupted`) on every sink.
    #[cfg(unix)]
    boo_normalize::interrupt::install().map_err(|e| Error::io("signals", e))?;
    // Open everything first, so a missing file fails before any output.
    let ins = open::open_inputs(&a.files, a.input.format(), open::Lines::StreamJson)?;
    let out = io::stdout().lock();
    inputs::normalize(
        setup,
        ins,
        a.record.as_deref(),
        &prices,
        out,
        &mut io::stderr(),
    )
}
