//! `report`: the run drawn as one self-contained HTML file.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use boo_normalize::error::{Error, sanitize};
use boo_normalize::exit::Exit;
use boo_normalize::report::{ReportOptions, render};

use crate::cli::ReportArgs;

pub fn run(a: ReportArgs) -> Result<Exit, Error> {
    let files = if a.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        a.files
    };
    // Session transcripts (files, ids, directories) are drawn from the stream-json they map to.
    let mapped = boo_normalize::transcript::open::as_stream_json_file(&files)?;
    let files = match &mapped {
        Some(tmp) => vec![tmp.path().to_owned()],
        None => files,
    };
    let now_us = match a.now {
        Some(s) => s.saturating_mul(1_000_000),
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64),
    };
    let opts = ReportOptions {
        redact: a.redact.options().map(|r| r.build()).transpose()?,
        audit_run: a.run,
        generated_us: now_us,
        tool_version: env!("CARGO_PKG_VERSION"),
    };
    let page = render(&files, &opts)?;
    let output = a.output.unwrap_or_else(|| {
        if io::stdout().is_terminal() {
            PathBuf::from("report.html")
        } else {
            PathBuf::from("-")
        }
    });
    if output.as_os_str() == "-" {
        let mut out = io::stdout().lock();
        return match out.write_all(page.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => Ok(Exit::OK),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Exit::OK),
            Err(e) => Err(Error::io("stdout", e)),
        };
    }
    let name = output.display().to_string();
    std::fs::write(&output, page.as_bytes()).map_err(|e| Error::io(&name, e))?;
    if io::stderr().is_terminal() {
        let _ = writeln!(
            io::stderr(),
            "boo-normalize: report: wrote {} ({} bytes)",
            sanitize(&name),
            page.len()
        );
    }
    Ok(Exit::OK)
}
