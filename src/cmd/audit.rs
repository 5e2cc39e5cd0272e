//! `audit verify`: check an audit log and report the first bad line as `FILE:LINE: reason`,
//! and each run without `run.end` as `FILE: run ID: incomplete: no run.end`.

use std::io::{self, BufReader, Write};

use boo_normalize::audit::verify::{Failure, verify};
use boo_normalize::error::{Error, counted, sanitize};
use boo_normalize::exit::Exit;

use crate::cli::AuditCommand;

pub fn run(cmd: AuditCommand) -> Result<Exit, Error> {
    let AuditCommand::Verify {
        file,
        require_complete,
    } = cmd;
    let name = file.display().to_string();
    let result = if name == "-" {
        verify(io::stdin().lock())
    } else {
        let f = boo_normalize::input::open_readable(&file).map_err(|e| Error::io(&name, e))?;
        verify(BufReader::with_capacity(256 * 1024, f))
    };
    match result {
        Ok(s) => {
            // With --require-complete a run without run.end fails the file: never "ok" then.
            let failed = require_complete && !s.incomplete.is_empty();
            let verdict = match failed {
                true => format!(
                    "incomplete: {} without run.end (--require-complete)",
                    counted(s.incomplete.len() as u64, "run")
                ),
                false => "ok".to_owned(),
            };
            let mut out = io::stdout().lock();
            writeln!(
                out,
                "{}: {verdict}: {} in {}, last hash {}",
                sanitize(&name),
                counted(s.records, "record"),
                counted(s.runs, "run"),
                s.head
            )
            .map_err(|e| Error::io("stdout", e))?;
            let mut err = io::stderr().lock();
            for id in &s.incomplete {
                let _ = writeln!(
                    err,
                    "{}: run {}: incomplete: no run.end",
                    sanitize(&name),
                    sanitize(id)
                );
            }
            if failed {
                return Ok(Exit::FINDINGS);
            }
            Ok(Exit::OK)
        }
        Err(Failure::Io(e)) => Err(Error::io(&name, e)),
        Err(Failure::Bad { line, reason }) => Err(Error::msg(name, reason)
            .at(line, None)
            .with_exit(Exit::FINDINGS)),
    }
}
