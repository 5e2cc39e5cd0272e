//! `diff`: the comparison ([`compare`]) written to stdout, drift at or above `--fail-on` mapped
//! to the exit status.

use std::io;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::profile::compare::compare;

use crate::cli::DiffArgs;

/// Exit status when drift at or above `--fail-on` is found (usage and input errors are `Err`,
/// exit 2 in `main`).
pub const EXIT_DRIFT: Exit = Exit::FINDINGS;

pub fn run(a: DiffArgs) -> Result<Exit, Error> {
    let failed = compare(&a.options(), &mut io::stdout().lock(), &mut io::stderr())?;
    Ok(if failed { EXIT_DRIFT } else { Exit::OK })
}
