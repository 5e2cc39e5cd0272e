//! `diff`: profile both sides, compare, apply the allow list, render, and map drift to the exit
//! status.

use std::fs;
use std::io::{self, Write};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::profile::allow::AllowList;
use boo_normalize::profile::diff::{Severity, diff};
use boo_normalize::profile::input;
use boo_normalize::profile::render::{Report, Side};

use crate::cli::{DiffArgs, DiffFormat, FailOn};

/// Exit status when drift at or above `--fail-on` is found (usage and input errors are `Err`,
/// exit 2 in `main`).
const EXIT_DRIFT: Exit = Exit::FINDINGS;

pub fn run(a: DiffArgs) -> Result<Exit, Error> {
    let allow = match &a.allow {
        Some(path) => {
            let name = path.display().to_string();
            let text = fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
            Some(AllowList::parse(&text).map_err(|e| Error::msg(&name, e))?)
        }
        None => None,
    };
    // Both sides at once, their files spread over the cores together.
    let sides = [std::slice::from_ref(&a.old), std::slice::from_ref(&a.new)];
    let [old, new]: [_; 2] = input::load_sides(&sides, false, &mut io::stderr())?
        .try_into()
        .expect("two sides");
    let mut changes = diff(&old, &new);
    if let Some(al) = &allow {
        al.apply(&mut changes);
    }
    let fail_on = match a.fail_on {
        FailOn::Breaking => Severity::Breaking,
        FailOn::Additive => Severity::Additive,
        FailOn::Info => Severity::Info,
    };
    let report = Report::new(
        Side::of(&a.old.display().to_string(), &old),
        Side::of(&a.new.display().to_string(), &new),
        changes,
        fail_on,
    )
    .list_allowed(a.verbose);
    let text = match a.format {
        DiffFormat::Text => report.text(),
        DiffFormat::Json => report.json(),
        DiffFormat::Markdown => report.markdown(),
    };
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Error::io("stdout", e))?;
    Ok(if report.failed { EXIT_DRIFT } else { Exit::OK })
}
