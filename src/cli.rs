//! Command-line surface (clap derive). Validation only: no files are opened here.

mod redact;

use std::path::PathBuf;

pub use redact::{RedactArgs, RedactCmdArgs, RedactRules};

use clap::{Args, Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  claude -p \"fix the tests\" --output-format stream-json --verbose | boo-normalize
  boo-normalize capture.ndjson | jq -c 'select(.type == \"tool.call\") | {name, input}'
  boo-normalize --strict old-run.ndjson > /dev/null   # exit 1 on unusable lines or unknown types
  boo-normalize schema > envelope-v1.schema.json
  claude -p \"…\" --output-format stream-json --verbose | boo-normalize --redact
  boo-normalize redact --redact-env DB_URL run.ndjson > shareable.ndjson

Exit status: 0 success (also when the reader closes the pipe early), 1 --strict found
diagnostics or unknown events, 2 usage or I/O error.";

/// Normalize Claude Code stream-json into a stable, versioned envelope (NDJSON).
#[derive(Debug, Parser)]
#[command(
    name = "boo-normalize",
    version,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// Subcommand; `normalize` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the default `normalize` subcommand.
    #[command(flatten)]
    pub normalize: NormalizeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read stream-json (files, or stdin) and write envelope v1 NDJSON (the default).
    #[command(after_help = AFTER_HELP)]
    Normalize(NormalizeArgs),
    /// Print the JSON Schema (draft 2020-12) of envelope v1.
    Schema(SchemaArgs),
    /// Copy stream-json with secrets replaced by placeholders (same lines, same shape).
    Redact(RedactCmdArgs),
}

/// `normalize` options.
#[derive(Debug, Args, Default)]
pub struct NormalizeArgs {
    /// Input files; `-` or none reads stdin. Several inputs are read as one stream.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Keep base64 image/document data instead of {media_type, bytes, sha256}.
    #[arg(long)]
    pub keep_blobs: bool,
    /// Finish the stream, then exit 1 if any line was unusable or of an unknown type.
    #[arg(long)]
    pub strict: bool,
    /// Flush after every input line (default: flush whenever the input has nothing buffered).
    #[arg(long)]
    pub line_buffered: bool,
    /// Cut lines longer than this many bytes (reported as `line_too_long`); default: no limit.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// Parse with serde_json only (the reference parser) instead of simd-json.
    #[arg(long, hide = true)]
    pub reference_parser: bool,
    /// Redaction.
    #[command(flatten)]
    pub redact: RedactArgs,
}

/// `schema` options.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The strict variant: no members or event types beyond those documented.
    #[arg(long)]
    pub strict: bool,
}

/// Parse the process arguments (exits on `--help`, `--version` and usage errors).
pub fn parse() -> Cli {
    Cli::parse()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }
}
