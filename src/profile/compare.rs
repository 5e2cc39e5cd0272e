//! The `diff` run (also what `probe --baseline` ends with): profile both sides, compare them,
//! apply the allow list, render the report and say whether drift at or above the threshold was
//! found.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use super::allow::AllowList;
use super::diff::{Severity, diff};
use super::input;
use super::render::{Report, Side};
use crate::error::Error;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Readable text.
    Text,
    /// A JSON document (usable as an allow file).
    Json,
    /// GitHub-flavoured markdown.
    Markdown,
}

/// What to compare and how to report it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The old side (a capture, a directory of them, or a saved profile).
    pub old: PathBuf,
    /// The new side.
    pub new: PathBuf,
    /// How the report is written.
    pub format: Format,
    /// The least severity that fails.
    pub fail_on: Severity,
    /// An allow-list file.
    pub allow: Option<PathBuf>,
    /// List the allowed changes too.
    pub verbose: bool,
}

/// Compare the sides of `o`, write the report to `out` (notes on reading the inputs to `err`),
/// and say whether drift at `o.fail_on` or above was found.
pub fn compare(o: &Options, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool, Error> {
    let allow = match &o.allow {
        Some(path) => {
            let name = path.display().to_string();
            let text = fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
            Some(AllowList::parse(&text).map_err(|e| Error::msg(&name, e))?)
        }
        None => None,
    };
    // Both sides at once, their files spread over the cores together.
    let sides = [std::slice::from_ref(&o.old), std::slice::from_ref(&o.new)];
    let [old, new]: [_; 2] = input::load_sides(&sides, false, err)?
        .try_into()
        .expect("two sides");
    let mut changes = diff(&old, &new);
    if let Some(al) = &allow {
        al.apply(&mut changes);
    }
    let report = Report::new(
        Side::of(&o.old.display().to_string(), &old),
        Side::of(&o.new.display().to_string(), &new),
        changes,
        o.fail_on,
    )
    .list_allowed(o.verbose);
    let text = match o.format {
        Format::Text => report.text(),
        Format::Json => report.json(),
        Format::Markdown => report.markdown(),
    };
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("stdout", e))?;
    Ok(report.failed)
}
