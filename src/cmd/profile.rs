//! `profile`: captures (files, directories, stdin) or saved profiles → one profile document.

use std::fs;
use std::io::{self, Write};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::profile::input;

use crate::cli::ProfileArgs;

pub fn run(a: ProfileArgs) -> Result<Exit, Error> {
    let p = input::load(&a.inputs, a.by_version, &mut io::stderr())?;
    let doc = p.to_json();
    match &a.output {
        Some(path) => fs::write(path, doc).map_err(|e| Error::io(path.display().to_string(), e))?,
        None => io::stdout()
            .lock()
            .write_all(doc.as_bytes())
            .map_err(|e| Error::io("stdout", e))?,
    }
    Ok(Exit::OK)
}
