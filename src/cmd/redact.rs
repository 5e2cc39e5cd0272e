//! `redact`: stream-json in, the same stream-json out with secrets replaced; and the engine
//! setup shared with `--redact` (reading rule files and the environment happens here).

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::sync::Arc;

use boo_normalize::error::{EXIT_OK, Error};
use boo_normalize::read::LineReader;
use boo_normalize::redact::{self, Config, Engine, Key, Redactor};
use boo_normalize::transform::Transformed;

use crate::cli::{RedactCmdArgs, RedactRules};

/// Compile the engine the rule options describe. Errors name the option or rule, never a
/// value.
pub fn engine(r: &RedactRules) -> Result<Arc<Engine>, Error> {
    let ctx = "redact";
    let bad = |e: redact::RuleError| Error::msg(ctx, e.to_string());
    let mut rules = Vec::new();
    for (i, v) in r.redact_literal.iter().enumerate() {
        rules.push(redact::literal(i + 1, v.as_bytes()).map_err(bad)?);
    }
    for name in &r.redact_env {
        let value = std::env::var_os(name);
        let value = value.as_ref().map(|v| v.as_encoded_bytes());
        rules.push(redact::env(name, value).map_err(bad)?);
    }
    for path in &r.redact_rules {
        let name = path.display().to_string();
        let mut text = String::new();
        File::open(path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|e| Error::io(format!("--redact-rules {name}"), e))?;
        rules.extend(redact::parse_file(&name, &text).map_err(bad)?);
    }
    if !(r.redact_entropy.is_finite() && (0.0..=8.0).contains(&r.redact_entropy)) {
        return Err(Error::msg(
            "--redact-entropy",
            "expected bits between 0 and 8",
        ));
    }
    let key = match &r.redact_key {
        Some(k) if !k.is_empty() => Key::from_bytes(k.as_bytes()),
        Some(_) => return Err(Error::msg("--redact-key", "empty key")),
        None => Key::random().map_err(|e| Error::msg(ctx, e))?,
    };
    let cfg = Config {
        rules,
        key,
        entropy_bits: r.redact_entropy,
    };
    Ok(Arc::new(Engine::new(cfg).map_err(bad)?))
}

pub fn run(a: RedactCmdArgs) -> Result<u8, Error> {
    let engine = engine(&a.rules)?;
    let mut red = Redactor::new(engine);
    let files = if a.files.is_empty() {
        vec!["-".into()]
    } else {
        a.files.clone()
    };
    let mut inputs: Vec<(String, Box<dyn Read>)> = Vec::new();
    for f in &files {
        let name = f.display().to_string();
        if name == "-" {
            inputs.push(("stdin".into(), Box::new(io::stdin().lock())));
        } else {
            let file = File::open(f).map_err(|e| Error::io(&name, e))?;
            inputs.push((name, Box::new(file)));
        }
    }
    let stdout = io::stdout();
    let mut w = BufWriter::with_capacity(128 * 1024, stdout.lock());
    let out_err = |e: io::Error| Error::io("stdout", e);
    let mut out = Transformed::default();
    let mut last_unterminated = false;
    for (name, src) in inputs {
        let mut reader = LineReader::new(src);
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
