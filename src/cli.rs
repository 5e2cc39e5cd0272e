//! Command-line surface (clap derive). Validation only: no files are opened here.

mod redact;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

pub use redact::{RedactArgs, RedactCmdArgs, RedactRules};

use clap::{Args, Parser, Subcommand};

pub use crate::replay_cli::ReplayArgs;

const AFTER_HELP: &str = "\
Examples:
  claude -p \"fix the tests\" --output-format stream-json --verbose | boo-normalize
  boo-normalize capture.ndjson | jq -c 'select(.type == \"tool.call\") | {name, input}'
  boo-normalize --strict old-run.ndjson > /dev/null   # exit 1 on unusable lines or unknown types
  boo-normalize schema > envelope-v1.schema.json
  boo-normalize --format sse --audit run.audit.jsonl capture.ndjson   # SSE out, audit appended
  boo-normalize audit verify run.audit.jsonl                          # exit 1: FILE:LINE: reason
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
    #[command(after_help = SCHEMA_HELP)]
    Schema(SchemaArgs),
    /// Replay a capture, audit log or stream-json file: envelope, raw, or as a fake `claude`.
    #[command(after_help = crate::replay_cli::AFTER_HELP)]
    Replay(ReplayArgs),
    /// Run `claude -p` as a supervised child and normalize its output live (Linux).
    #[command(after_help = SPAWN_AFTER_HELP)]
    Spawn(Box<SpawnArgs>),
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_HELP)]
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
    /// Audit log tools.
    #[command(subcommand, after_help = AUDIT_HELP)]
    Audit(AuditCommand),
    /// Copy stream-json with secrets replaced by placeholders (same lines, same shape).
    #[command(after_help = REDACT_HELP)]
    Redact(RedactCmdArgs),
}

const REDACT_HELP: &str = "\
Examples:
  boo-normalize redact run.ndjson > shareable.ndjson
  boo-normalize redact --redact-env DATABASE_URL --summary run.ndjson > shareable.ndjson
  claude -p … --output-format stream-json --verbose | boo-normalize --redact --audit a.jsonl";

const SCHEMA_HELP: &str = "\
Examples:
  boo-normalize schema > envelope-v1.schema.json
  boo-normalize schema --strict | jq '.[\"$defs\"] | keys'";

const COMPLETIONS_HELP: &str = "\
Examples:
  boo-normalize completions bash > ~/.local/share/bash-completion/completions/boo-normalize
  boo-normalize completions zsh > \"${fpath[1]}/_boo-normalize\"
  boo-normalize completions fish > ~/.config/fish/completions/boo-normalize.fish";

const AUDIT_HELP: &str = "\
Examples:
  claude -p … --output-format stream-json --verbose | boo-normalize --audit run.audit.jsonl
  boo-normalize audit verify run.audit.jsonl   # exit 1 and FILE:LINE: reason on tampering
  boo-normalize audit verify --require-complete run.audit.jsonl   # also exit 1 for a killed run";

/// `audit` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check an audit log's hash chain, seq continuity per run and last record; exit 1 naming
    /// the first bad line.
    #[command(after_help = AUDIT_HELP)]
    Verify {
        /// The audit log (`-`: stdin).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Exit 1 when a run has no `run.end` (its writer was killed or is still writing);
        /// without it such runs are listed on stderr and the exit status stays 0.
        #[arg(long)]
        require_complete: bool,
    },
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

/// Envelope options shared by `normalize`, `spawn` and `replay`.
#[derive(Debug, Args, Default, Clone)]
pub struct EnvelopeArgs {
    /// Keep base64 image/document data instead of {media_type, bytes, sha256}.
    #[arg(long)]
    pub keep_blobs: bool,
    /// Write the whole stream, then exit 1 (when it otherwise succeeded) if any line was unusable
    /// or of an unknown type.
    #[arg(long)]
    pub strict: bool,
    /// Flush after every input line (default: flush whenever no input is pending).
    #[arg(long)]
    pub line_buffered: bool,
    /// Cut lines longer than this many bytes (reported as `line_too_long`); default: no limit.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// Accept a stream that ends without a `result` line: no `run.error` (cause `no_result`) before
    /// `run.end`, and no exit status 3 for it.
    #[arg(long)]
    pub allow_no_result: bool,
    /// Parse with serde_json only (the reference parser) instead of simd-json.
    #[arg(long, hide = true)]
    pub reference_parser: bool,
}

impl EnvelopeArgs {
    /// The normalizer options these flags select.
    pub fn options(&self) -> boo_normalize::normalize::Options {
        boo_normalize::normalize::Options {
            keep_blobs: self.keep_blobs,
            reference_parser: self.reference_parser,
            allow_no_result: self.allow_no_result,
            ..Default::default()
        }
    }
}

/// `normalize` options.
#[derive(Debug, Args, Default)]
pub struct NormalizeArgs {
    /// Input files; `-` or none reads stdin. Several inputs are read as one stream.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Envelope options.
    #[command(flatten)]
    pub envelope: EnvelopeArgs,
    /// Also write a capture of the input (each line with its arrival time) to FILE, for
    /// `boo-normalize replay` (created mode 0600; locked while written).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Output options.
    #[command(flatten)]
    pub output: crate::output::OutputArgs,
    /// Redaction.
    #[command(flatten)]
    pub redact: RedactArgs,
}

const SPAWN_AFTER_HELP: &str = "\
Environment: only PATH HOME USER LOGNAME SHELL TERM LANG LC_* TZ TMPDIR, http(s)_proxy and
no_proxy (any case), CLAUDE_* and what --env names reach the child (--inherit-env: all).
ANTHROPIC_* credentials (API_KEY, AUTH_TOKEN, CUSTOM_HEADERS, any *KEY*/*TOKEN*/*SECRET*) are
removed unless --keep-env-key. ANTHROPIC_BASE_URL is not a credential but needs --env.

Stopping (timeouts, SIGINT/SIGTERM/SIGHUP, --enforce): SIGINT to the child's process group,
SIGTERM after --grace, SIGKILL after another --grace; then every remaining descendant
(background processes included, found as a child subreaper) is killed unless
--keep-background.

Exit status: the child's exit code; 128+N when a signal killed it; 124 timeout or idle
timeout; 128+N when boo-normalize got signal N (130 for Ctrl-C); 125 a guard stopped it
(--enforce); 0/1 (the last result's success) when it hung after closing stdout; 127 binary
not found, 126 not executable, 2 usage error.

Examples:
  boo-normalize spawn --prompt 'fix the tests' -- --max-turns 20
  boo-normalize spawn --prompt-file task.md --idle-timeout 5m --allow-tools Read,Grep --enforce";

/// `--idle-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IdleAction {
    /// Stop the child (cause idle_timeout, exit 124).
    Stop,
    /// Emit a `stall` event and go on.
    Warn,
}

/// `--stop-signal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StopSignalArg {
    /// SIGINT, then SIGTERM, then SIGKILL.
    #[value(name = "INT")]
    Int,
    /// SIGTERM, then SIGKILL.
    #[value(name = "TERM")]
    Term,
}

/// `spawn` options.
#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// The prompt: in argv, or on stdin when long (see --prompt-argv-max), starting with `-` or
    /// a single word.
    #[arg(long, value_name = "TEXT", conflicts_with = "prompt_file")]
    pub prompt: Option<String>,
    /// Read the prompt from FILE (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// Prompts longer than this many bytes go to the child's stdin (closed right after).
    #[arg(long, value_name = "BYTES", default_value_t = 10 * 1024)]
    pub prompt_argv_max: usize,
    /// The claude binary; a name without `/` is looked up on PATH. [default: claude]
    #[arg(long, value_name = "PATH", env = "CLAUDE_BIN")]
    pub claude_bin: Option<OsString>,
    /// Do not add --include-partial-messages.
    #[arg(long)]
    pub no_partial: bool,
    /// Pass variable KEY (KEY* for a prefix) to the child, or set it to VALUE. Repeatable.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,
    /// Pass boo-normalize's whole environment (credentials are still removed).
    #[arg(long)]
    pub inherit_env: bool,
    /// Pass ANTHROPIC_API_KEY and the other ANTHROPIC_* credentials to the child.
    #[arg(long, conflicts_with = "refuse_api_key")]
    pub keep_env_key: bool,
    /// Exit with an error (status 2) if an ANTHROPIC_* credential is set.
    #[arg(long)]
    pub refuse_api_key: bool,
    /// Stop the child after this long (30s, 5m, 1500ms).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Stop the child when no stdout line came for this long while no tool call is outstanding
    /// (a quiet running tool pauses the timer; see --tool-timeout).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub idle_timeout: Option<Duration>,
    /// What --idle-timeout does: stop the child, or only warn with a `stall` event (once per
    /// quiet period).
    #[arg(long, value_name = "ACTION", value_enum, default_value = "stop")]
    pub idle_action: IdleAction,
    /// Stop the child when a tool call has had no result for this long (cause killed, reason
    /// tool_timeout, exit 124).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub tool_timeout: Option<Duration>,
    /// Time between SIGINT, SIGTERM and SIGKILL when stopping.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "5s")]
    pub grace: Duration,
    /// The signal a stop begins with: INT (then TERM, then KILL, each after --grace) or TERM
    /// (then KILL after --grace: `--stop-signal TERM --grace 5s` is TERM → 5 s → KILL).
    #[arg(
        long,
        value_name = "SIG",
        value_enum,
        ignore_case = true,
        default_value = "INT"
    )]
    pub stop_signal: StopSignalArg,
    /// While the child is quiet, send the sinks a keep-alive (an SSE `: keep-alive` comment) this
    /// often.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "15s")]
    pub keep_alive: Duration,
    /// Leave processes the run started in the background running after the child ended.
    #[arg(long)]
    pub keep_background: bool,
    /// Emit the child's stderr as `child.stderr` events instead of copying it to stderr.
    #[arg(long)]
    pub stderr_events: bool,
    /// Allowed tools, comma-separated (`mcp__srv__*` for a prefix); other calls are violations.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub allow_tools: Option<Vec<String>>,
    /// More than N tool calls is a violation.
    #[arg(long, value_name = "N")]
    pub max_tool_calls: Option<u64>,
    /// N identical calls in a row (same tool and input, within one agent) is a violation, and so
    /// is every further repeat of the streak (N ≥ 2; 3 catches a doom loop).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
    pub max_repeat_calls: Option<u64>,
    /// More than SIZE of child stdout is a violation (bytes, or 5MB, 500KB, 5MiB, 64KiB, 1GiB;
    /// K/M/G alone are binary, like 5M = 5MiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub max_output_bytes: Option<u64>,
    /// Stop the child on the first policy violation (exit 125).
    #[arg(long)]
    pub enforce: bool,
    /// Also write a capture of the run (argv, stdout and stderr lines with their arrival
    /// times, exit status) to FILE, for `boo-normalize replay` and `replay --as-claude`
    /// (created mode 0600; locked while written).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Envelope options.
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Arguments for claude, after `--`.
    #[arg(last = true, value_name = "CLAUDE_ARGS")]
    pub claude_args: Vec<OsString>,
}

/// Envelope options of `spawn` (the same meaning as `normalize`'s). Output sinks added later
/// (audit log, SSE) belong next to these.
#[derive(Debug, Args, Default, Clone)]
pub struct StreamArgs {
    /// Envelope options.
    #[command(flatten)]
    pub envelope: EnvelopeArgs,
    /// Output options (stdout format, audit log, SSE).
    #[command(flatten)]
    pub output: crate::output::OutputArgs,
    /// Redaction (applied to the child's stdout and stderr before any output or record).
    #[command(flatten)]
    pub redact: RedactArgs,
}

/// Parse a duration: `30s`, `5m`, `1500ms`, `1h 30m` (humantime syntax) or bare seconds (`30`,
/// `0.5`).
fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(Duration::from_secs_f64(secs));
        }
        return Err(format!("{s:?}: not a duration"));
    }
    humantime::parse_duration(t).map_err(|e| format!("{s:?}: {e} (e.g. 30s, 5m, 1500ms)"))
}

/// A byte count: a number with an optional unit (B; KB, MB, GB decimal; KiB, MiB, GiB and K, M, G
/// binary), case-insensitive, with an optional space.
fn size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?}: not a size (e.g. 5000000, 5MB, 5MiB, 64KiB)"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (B, KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let v = n * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("{s:?}: out of range"));
    }
    Ok(v.round() as u64)
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
    crate::replay_cli::parse_as_claude().unwrap_or_else(Cli::parse)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn sizes() {
        let p = super::size;
        assert_eq!(p("5000000"), Ok(5_000_000));
        assert_eq!(p("5MB"), Ok(5_000_000));
        assert_eq!(p("5 mb"), Ok(5_000_000));
        assert_eq!(p("500KB"), Ok(500_000));
        assert_eq!(p("5MiB"), Ok(5 << 20));
        assert_eq!(p("5M"), Ok(5 << 20));
        assert_eq!(p("64KiB"), Ok(64 << 10));
        assert_eq!(p("1.5KB"), Ok(1500));
        assert_eq!(p("1GiB"), Ok(1 << 30));
        assert!(p("5XB").is_err());
        assert!(p("MB").is_err());
        assert!(p("-5").is_err());
    }

    #[test]
    fn durations() {
        use std::time::Duration;
        let p = super::duration;
        assert_eq!(p("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(p("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(p("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(p("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(p("2"), Ok(Duration::from_secs(2)));
        assert_eq!(p("0.25"), Ok(Duration::from_millis(250)));
        assert!(p("-1").is_err());
        assert!(p("soon").is_err());
    }
}
