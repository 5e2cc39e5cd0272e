//! `normalize`: files or stdin through the pipeline to envelope NDJSON on stdout.

use std::fs::File;
use std::io::{self, Write};

use boo_normalize::error::{EXIT_OK, EXIT_STRICT, Error};
use boo_normalize::normalize::{EndInfo, Normalizer, Options};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::redact::Redactor;
use boo_normalize::sink::Ndjson;

use crate::cli::NormalizeArgs;

pub fn run(a: NormalizeArgs) -> Result<u8, Error> {
    let opts = Options {
        keep_blobs: a.keep_blobs,
        reference_parser: a.reference_parser,
    };
    let redactor = if a.redact.enabled() {
        let engine = super::redact::engine(&a.redact.rules)?;
        Some(Box::new(Redactor::new(engine)))
    } else {
        None
    };
    let stdout = io::stdout();
    let sink = Ndjson::new(stdout.lock());
    let mut p =
        Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]).line_buffered(a.line_buffered);
    if let Some(r) = redactor {
        p = p.transform(r);
    }
    let files = if a.files.is_empty() {
        vec!["-".into()]
    } else {
        a.files.clone()
    };
    // Open everything first, so a missing file fails before any output.
    let mut inputs: Vec<(String, Box<dyn io::Read>)> = Vec::new();
    for f in &files {
        let name = f.display().to_string();
        if name == "-" {
            inputs.push(("stdin".into(), Box::new(io::stdin().lock())));
        } else {
            let file = File::open(f).map_err(|e| Error::io(&name, e))?;
            inputs.push((name, Box::new(file)));
        }
    }
    for (name, src) in inputs {
        p.run(src, a.max_line_bytes).map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Error::io("stdout", e)
            } else {
                Error::io(&name, e)
            }
        })?;
    }
    p.finish(&EndInfo::eof())
        .map_err(|e| Error::io("stdout", e))?;
    if a.strict {
        let s = p.stats();
        if s.diagnostics > 0 || s.unknown > 0 {
            let _ = writeln!(
                io::stderr(),
                "boo-normalize: strict: {} of {} lines unusable, {} unknown events",
                s.diagnostics,
                s.lines,
                s.unknown
            );
            return Ok(EXIT_STRICT);
        }
    }
    Ok(EXIT_OK)
}
