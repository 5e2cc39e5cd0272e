//! Command-line surface (clap derive). Validation only: no files are opened here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  claude -p \"fix the tests\" --output-format stream-json --verbose | boo-normalize
  boo-normalize capture.ndjson | jq -c 'select(.type == \"tool.call\") | {name, input}'
  boo-normalize --strict old-run.ndjson > /dev/null   # exit 1 on unusable lines or unknown types
  boo-normalize schema > envelope-v1.schema.json

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
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: Shell,
    },
    /// Write the man pages into DIR (used to keep man/ in sync).
    #[command(hide = true)]
    GenerateMan {
        /// Output directory.
        dir: PathBuf,
    },
    /// Infer a shape profile of raw stream-json (a baseline for `diff`).
    #[command(after_help = PROFILE_HELP)]
    Profile(ProfileArgs),
    /// Compare two captures, capture directories or profiles and report format drift.
    #[command(after_help = DIFF_HELP)]
    Diff(DiffArgs),
}

/// Shells with completion scripts.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    /// bash
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
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
}

/// `schema` options.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The strict variant: no members or event types beyond those documented.
    #[arg(long)]
    pub strict: bool,
}

const PROFILE_HELP: &str = "\
Directories are searched recursively for *.ndjson and *.jsonl files. A saved profile given as
an input is merged in. The profile is a stable, sorted JSON document (profile_version 1) meant
to be committed as a baseline. Objects are attributed to the CLI version of the latest init
(claude_code_version), else to a version-named directory (e.g. captures/2.1.45/), else `unknown`.

Examples:
  boo-normalize profile captures/ -o stream-json.profile.json
  boo-normalize profile --by-version fixtures/captured -o by-version.json";

const DIFF_HELP: &str = "\
OLD and NEW are each a capture file, a directory of captures, or a saved profile.

Severities: breaking (kind/field/enum value/tool name gone, new JSON type, required field now
optional), additive (new kind/field/value/tool), info (optional field no longer seen, …).
Ids, timestamps, paths, numbers, free text and counts are never compared.

--allow FILE accepts known drift. FILE is JSON: {\"allow\": [RULE, ...]}, a bare [RULE, ...], or
the output of `diff --format json` (its \"changes\" are the rules). A RULE has any of the string
members change, kind, path, value, from (`*` is a wildcard); a change is allowed when all
members a rule gives match it.

Examples:
  boo-normalize diff baseline.profile.json captures/ --format markdown >> \"$GITHUB_STEP_SUMMARY\"
  boo-normalize diff old/ new/ --format json > accepted.json   # then: --allow accepted.json

Exit status: 0 no drift at or above --fail-on, 1 drift found, 2 usage or input error.";

/// `profile` options.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Captures (stream-json), directories of captures, or saved profiles; `-` reads stdin.
    #[arg(value_name = "FILE|DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the profile here instead of stdout.
    #[arg(short, long, value_name = "PROFILE.json")]
    pub output: Option<PathBuf>,
    /// Also keep one profile per CLI version (`by_version`).
    #[arg(long)]
    pub by_version: bool,
}

/// `diff` options.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline: a capture, a directory of captures, or a saved profile.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// What to check against the baseline (same forms as OLD).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Report format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// Exit 1 when a change of this severity or a more severe one is found.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOn::Breaking)]
    pub fail_on: FailOn,
    /// Accepted changes (see below).
    #[arg(long, value_name = "FILE")]
    pub allow: Option<PathBuf>,
}

/// `diff --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// Readable text.
    Text,
    /// A JSON document (usable as an `--allow` file).
    Json,
    /// GitHub-flavoured markdown (CI summary, PR comment).
    Markdown,
}

/// `diff --fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Only breaking changes fail.
    Breaking,
    /// Breaking or additive changes fail.
    Additive,
    /// Any change fails.
    Info,
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
