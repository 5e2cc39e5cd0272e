//! `audit verify`: open the log (a file or stdin) and report on it
//! ([`boo_normalize::audit::verify::report`]): the first bad line as `FILE:LINE: reason`, each
//! run without `run.end` as `FILE: run ID: incomplete: no run.end`.

use std::io::{self, BufReader};

use boo_normalize::audit::verify::report;
use boo_normalize::error::Error;
use boo_normalize::exit::Exit;

use crate::cli::AuditCommand;

pub fn run(cmd: AuditCommand) -> Result<Exit, Error> {
    let AuditCommand::Verify {
        file,
        require_complete,
    } = cmd;
    let name = file.display().to_string();
    let (mut out, mut err) = (io::stdout().lock(), io::stderr().lock());
    if name == "-" {
        return report(
            &name,
            io::stdin().lock(),
            require_complete,
            &mut out,
            &mut err,
        );
    }
    let f = boo_normalize::input::open_readable(&file).map_err(|e| Error::io(&name, e))?;
    let r = BufReader::with_capacity(256 * 1024, f);
    report(&name, r, require_complete, &mut out, &mut err)
}
