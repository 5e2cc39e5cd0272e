//! The `report` command line: inputs, the output file, redaction, the audit run and the fixed
//! generation time for reproducible output.

use std::path::PathBuf;

use clap::Args;

use super::redact::RedactArgs;

pub const AFTER_HELP: &str = "\
Inputs: stream-json, a capture (--record FILE) or an audit log (--audit FILE), detected from the
first line as `replay` does; several FILEs are one run. The report is one HTML file with its CSS
and JavaScript inline and a Content-Security-Policy that loads nothing: it opens from file://,
reads without JavaScript, and keeps full tool output compressed behind \"show full body\".

Examples:
  claude -p \"fix the tests\" --output-format stream-json --verbose > run.ndjson
  boo-normalize report run.ndjson -o run.html
  boo-normalize report run.ndjson > run.html          # stdout when redirected
  boo-normalize report --redact run.capture.jsonl -o shareable.html
  boo-normalize report run.audit.jsonl --run RUN_ID -o - | gzip > run.html.gz
  SOURCE_DATE_EPOCH=0 boo-normalize report run.ndjson -o snapshot.html   # same bytes every time

Exit status: 0 written, 2 usage or I/O error.";

/// `report` options.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Stream-json files, captures or audit logs; `-` or none reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Where to write the HTML; `-` writes to stdout. Default: stdout when it is redirected or
    /// piped, else `report.html` in the current directory.
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    pub output: Option<PathBuf>,
    /// Audit logs: the run to draw (its run_id). Default: the last run in the file.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// The "generated" time in the footer, as Unix seconds (default: SOURCE_DATE_EPOCH, else
    /// now). The same input and time give the same bytes.
    #[arg(long, value_name = "UNIX_SECONDS", env = "SOURCE_DATE_EPOCH")]
    pub now: Option<i64>,
    /// Redaction.
    #[command(flatten)]
    pub redact: RedactArgs,
}
