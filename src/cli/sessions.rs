//! `sessions` arguments: where the transcripts are, filters, the output format and the price
//! table.

use std::path::PathBuf;

use clap::Args;

pub const SESSIONS_HELP: &str = "\
Examples:
  boo-normalize sessions                              # ~/.claude/projects, oldest first
  boo-normalize sessions --since 2026-11-01 --project my-app
  boo-normalize sessions --format json | jq '.sessions[] | select(.tool_calls > 10) | .id'
  boo-normalize normalize 3f2a9c1e                    # one session (id or its start) as envelope
  boo-normalize sessions --prices my-prices.json      # your own price table

Costs are estimates: each API message's usage once, times a dated list-price table (see
docs/transcripts.md); a model the table does not know shows `?`.

Exit status: 0 success (also with no sessions), 2 usage or I/O error.";

/// `sessions` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SessionsFormat {
    /// Aligned columns and a total line.
    #[default]
    Table,
    /// One JSON document: sessions, total, price table.
    Json,
}

/// `sessions` options.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Where the transcripts are: a `projects` directory (default `$CLAUDE_CONFIG_DIR/projects`,
    /// else `~/.claude/projects`) or one project's directory.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only sessions whose working directory contains TEXT (matched on the project directory's
    /// name, which spells every character but letters and digits `-`; other projects are not read).
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// Only sessions active at or after this time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, UTC).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only sessions started before this time (a date: before the end of that day).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: SessionsFormat,
    /// Price table (JSON) for the cost estimate; its models replace the built-in table's.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
}
