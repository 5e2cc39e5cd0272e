//! The `profile` and `diff` command lines: inputs, the profile file, the report format, the
//! failing severity and the allow list.

use std::path::PathBuf;

use clap::Args;

pub const PROFILE_HELP: &str = "\
Directories are searched recursively for *.ndjson and *.jsonl files. A saved profile given as
an input is merged in. The profile is a stable, sorted JSON document (profile_version 1) meant
to be committed as a baseline. Objects are attributed to the CLI version of the latest init
(claude_code_version), else to a version-named directory (e.g. captures/2.1.45/), else `unknown`.

Examples:
  boo-normalize profile captures/ -o stream-json.profile.json
  boo-normalize profile --by-version fixtures/captured -o by-version.json";

pub const DIFF_HELP: &str = "\
OLD and NEW are each a capture file, a directory of captures, or a saved profile. A directory's
captures are its *.ndjson and *.jsonl files (recursively); other files (profile.json,
summary.json) are not read, and a capture there that holds no stream-json (envelope output) is
skipped with a note. A side with no stream-json object at all (an empty file, envelope output,
an audit log) is refused: exit 2, naming it. Each change names where it was first seen on each
side (FILE:LINE).

Severities: breaking (kind/field/enum value/tool name gone, new JSON type, required field now
optional), additive (new kind/field/value/tool), info (optional field no longer seen, …).
What is compared how: kinds (type/subtype, content blocks, stream events), field paths (present,
required or optional), JSON types, tool names (with renames); enum-like string fields (stop_reason,
status, permissionMode, error, …: short non-id values, at most 16 per field) by value, except that
a value documented for the field (stop reasons, permission modes, API error kinds, service tiers,
task statuses, …) seen or no longer seen is what the sampled runs did, not drift; open lists of
names (capabilities, slash_commands, skills, agents, betas) by name, at info level.
Ids, timestamps, paths, numbers, free text and counts are never compared.

--allow FILE accepts known drift. FILE is JSON: {\"allow\": [RULE, ...]}, a bare [RULE, ...], or
the output of `diff --format json` (its \"changes\" are the rules). A RULE has any of the string
members change, kind, path, value, from (`*` is a wildcard); a change is allowed when all
members a rule gives match it. Allowed changes are counted, not listed, unless -v is given.

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
    /// List the changes --allow accepted one by one (text and markdown show their count
    /// otherwise; JSON always lists them).
    #[arg(short, long)]
    pub verbose: bool,
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

impl DiffArgs {
    /// The library's options for this comparison.
    pub fn options(&self) -> boo_normalize::profile::compare::Options {
        use boo_normalize::profile::compare::Format;
        use boo_normalize::profile::diff::Severity;
        boo_normalize::profile::compare::Options {
            old: self.old.clone(),
            new: self.new.clone(),
            format: match self.format {
                DiffFormat::Text => Format::Text,
                DiffFormat::Json => Format::Json,
                DiffFormat::Markdown => Format::Markdown,
            },
            fail_on: match self.fail_on {
                FailOn::Breaking => Severity::Breaking,
                FailOn::Additive => Severity::Additive,
                FailOn::Info => Severity::Info,
            },
            allow: self.allow.clone(),
            verbose: self.verbose,
        }
    }
}
