//! `redact`: stream-json in, the same stream-json out with secrets replaced.

use std::io::{self, BufWriter, Write};

use boo_normalize::error::{EXIT_OK, Error};
use boo_normalize::input;
use boo_normalize::read::LineReader;
use boo_normalize::redact::Redactor;
use boo_normalize::transform::Transformed;

use crate::cli::RedactCmdArgs;

pub fn run(a: RedactCmdArgs) -> Result<u8, Error> {
    let mut red = Redactor::new(a.rules.engine()?);
    let inputs = input::open_all(&a.files)?;
    let stdout = io::stdout();
    let mut w = BufWriter::with_capacity(128 * 1024, stdout.lock());
    let out_err = |e: io::Error| Error::io("stdout", e);
    let mut out = Transformed::default();
    let mut last_unterminated = false;
    for input::Input { name, reader, .. } in inputs {
        let mut reader = LineReader::new(reader);
        loop {
            if !reader.has_buffered_line() {
                w.flush().map_err(out_err)?;
            }
            let Some(line) = reader.next_line().map_err(|e| Error::io(&name, e))? else {
                break;
            };
            if last_unterminated {
                // The previous input ended without a newline: keep lines apart.
                w.write_all(b"\n").map_err(out_err)?;
            }
            out.clear();
            red.push(line.bytes, false, &mut out);
            write_lines(&mut w, &out, line.bytes, line.terminated).map_err(out_err)?;
            last_unterminated = !line.terminated;
            if a.line_buffered {
                w.flush().map_err(out_err)?;
            }
        }
    }
    out.clear();
    red.flush(&mut out);
    if !out.is_empty() && last_unterminated {
        w.write_all(b"\n").map_err(out_err)?;
    }
    write_lines(&mut w, &out, b"", true).map_err(out_err)?;
    w.flush().map_err(out_err)?;
    if a.summary {
        let counts = red.counts();
        let total: u64 = counts.values().sum();
        let list: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            io::stderr(),
            "boo-normalize: redact: {total} redacted{}{}; delta text held back at most {} bytes",
            if list.is_empty() { "" } else { ": " },
            list.join(", "),
            red.max_held()
        );
    }
    Ok(EXIT_OK)
}

fn write_lines(
    w: &mut impl Write,
    out: &Transformed,
    input: &[u8],
    terminated: bool,
) -> io::Result<()> {
    for i in 0..out.len() {
        let (bytes, _, _) = out.get(i, input);
        w.write_all(bytes)?;
        if terminated || i + 1 < out.len() {
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}
