//! The command line (clap derive), one file per subcommand's arguments; this file holds the
//! top level, the small subcommands and [`parse`]; [`man`] renders the man pages and completion
//! scripts from them. Validation and the library's options only: no files are opened here.

pub mod acp;
mod drift;
mod input;
pub mod man;
mod normalize;
mod output;
mod probe;
mod redact;
mod replay;
mod report;
mod sessions;
mod spawn;
mod units;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use acp::AcpArgs;
pub use drift::{DiffArgs, ProfileArgs};
pub use input::InputArgs;
pub use normalize::NormalizeArgs;
pub use probe::ProbeArgs;
pub use redact::RedactCmdArgs;
pub use replay::ReplayArgs;
pub use report::ReportArgs;
pub use sessions::{SessionsArgs, SessionsFormat};
pub use spawn::SpawnArgs;

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
  boo-normalize sessions                        # Claude Code's saved sessions (~/.claude/projects)
  boo-normalize 3f2a9c1e                        # one of them, by id or its start (docs/transcripts.md)

Exit status: 0 success (also when the reader closes the pipe early), 1 --strict found
diagnostics or unknown events, 2 usage or I/O error or no stream-json line at all (stderr says
what the input is), 3 no `result` line (run.error written;
--allow-no-result: 0), 74 an output file (--audit, --record, …) failed mid-run, 128+N
SIGINT, SIGTERM or SIGHUP (N) stopped it (130, 143, 129; run.end cause interrupted written).";

const GENERATE_MAN_HELP: &str = "\
Examples:
  boo-normalize generate-man ~/.local/share/man/man1   # then: man boo-normalize
  boo-normalize generate-man man                       # a checkout's man/ (a test checks it)";

/// Normalize the JSON streams of coding-agent CLIs (Claude Code, Codex, Gemini CLI, …) into one
/// stable, versioned envelope (NDJSON).
#[derive(Debug, Parser)]
#[command(
    name = "boo-normalize",
    version,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true
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
    #[command(after_help = replay::AFTER_HELP)]
    Replay(ReplayArgs),
    /// Claude Code as an Agent Client Protocol agent on stdin/stdout, one supervised `claude`
    /// per session (Linux).
    #[command(after_help = acp::ACP_AFTER_HELP)]
    Acp(Box<AcpArgs>),
    /// Run `claude -p` as a supervised child and normalize its output live (Linux).
    #[command(after_help = spawn::SPAWN_AFTER_HELP)]
    Spawn(Box<SpawnArgs>),
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell.
        shell: Shell,
    },
    /// Write the man pages into DIR (used to keep man/ in sync).
    #[command(after_help = GENERATE_MAN_HELP)]
    GenerateMan {
        /// Output directory.
        dir: PathBuf,
    },
    /// Infer a shape profile of raw stream-json (a baseline for `diff`).
    #[command(after_help = drift::PROFILE_HELP)]
    Profile(ProfileArgs),
    /// Compare two captures, capture directories or profiles and report format drift.
    #[command(after_help = drift::DIFF_HELP)]
    Diff(DiffArgs),
    /// Run an agent CLI (claude, codex, gemini, qwen, opencode, copilot) against a built-in loopback API with scripted scenarios (no API key)
    /// and keep its output, for `diff` (Linux).
    #[command(after_help = probe::PROBE_HELP)]
    Probe(Box<ProbeArgs>),
    /// Audit log tools.
    #[command(subcommand, after_help = AUDIT_HELP)]
    Audit(AuditCommand),
    /// Copy stream-json with secrets replaced by placeholders (same lines, same shape).
    #[command(after_help = REDACT_HELP)]
    Redact(RedactCmdArgs),
    /// Write a run (stream-json, capture or audit log) as one self-contained HTML report.
    #[command(after_help = report::AFTER_HELP)]
    Report(ReportArgs),
    /// List Claude Code sessions (~/.claude/projects): time, size, tokens, estimated cost.
    #[command(after_help = sessions::SESSIONS_HELP)]
    Sessions(SessionsArgs),
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

/// `schema` options.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The strict variant: no members or event types beyond those documented.
    #[arg(long)]
    pub strict: bool,
}

/// Refuse a file argument that does not exist but is close to a subcommand's name (a mistyped
/// `boo-normalize difff` is read as a file name): say which subcommand was meant.
pub fn no_mistyped_subcommand(files: &[PathBuf]) -> Result<(), boo_normalize::error::Error> {
    for f in files {
        if !f.exists()
            && let Some(sub) = similar_subcommand(f.as_os_str())
        {
            return Err(boo_normalize::error::Error::msg(
                f.display().to_string(),
                format!(
                    "no such file or directory; did you mean the subcommand `boo-normalize {sub}`? (`boo-normalize help` lists them)"
                ),
            ));
        }
    }
    Ok(())
}

/// A usage error's text with what the user most likely meant instead of clap's tip to pass an
/// option as a value: a mistyped subcommand before an option (`reprot run.ndjson -o x.html`
/// reads `reprot` as a file and `-o` as unknown), or a format given as a flag (`--pretty` for
/// `--format pretty`).
fn with_hint(text: &str, e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return text.to_owned();
    }
    let unknown = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let first = args
        .get(1)
        .filter(|a| !a.to_string_lossy().starts_with('-') && !std::path::Path::new(a).exists());
    let hint = if let Some(sub) = first.and_then(|a| similar_subcommand(a)) {
        format!(
            "did you mean the subcommand `boo-normalize {sub}`? (`{}` is not a file)",
            first.expect("some").to_string_lossy()
        )
    } else if let Some(f) = unknown
        .strip_prefix("--")
        .filter(|f| ["envelope", "audit", "sse", "otlp", "pretty"].contains(f))
    {
        format!("the output format is an option's value: `--format {f}`")
    } else {
        return text.to_owned();
    };
    // Replace clap's tip ("to pass it as a value", a similar option of the wrong command),
    // which is not what was meant here.
    let mut out = String::new();
    let mut replaced = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("tip: ") && !replaced {
            out.push_str(&format!("  tip: {hint}\n"));
            replaced = true;
        } else {
            out.push_str(line);
        }
    }
    if !replaced {
        out = format!("{}\n\n  tip: {hint}\n", out.trim_end());
    }
    out
}

/// The subcommand a file argument that does not exist was probably meant to be (`difff`,
/// `profiel`, `replya`): a bare word within two edits of a subcommand's name (one for short
/// names), or its prefix.
pub fn similar_subcommand(arg: &std::ffi::OsStr) -> Option<String> {
    use clap::CommandFactory;
    let arg = arg.to_str()?;
    if arg.len() < 3 || arg.contains(['/', '.', '\\']) {
        return None;
    }
    let arg = arg.to_ascii_lowercase();
    let cmd = Cli::command();
    let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
    let best = names
        .iter()
        .map(|n| (edits(&arg, n), *n))
        .min()
        .filter(|(d, n)| *d <= if n.len() <= 4 { 1 } else { 2 })
        .map(|(_, n)| n);
    let prefix = || names.iter().find(|n| n.starts_with(&arg)).copied();
    best.or_else(prefix).map(str::to_owned)
}

/// Levenshtein distance (with adjacent transpositions counted as one edit).
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Parse the process arguments (exits on `--help`, `--version` and usage errors). An
/// `--as-claude` command line (`replay … --as-claude …`, or this binary called as `claude`) is
/// split first: everything after `--as-claude` belongs to the imitated `claude`.
pub fn parse() -> Cli {
    parse_from(std::env::args_os().collect())
}

fn parse_from(args: Vec<std::ffi::OsString>) -> Cli {
    let Some(split) = replay::split_as_claude(&args) else {
        let parsed = Cli::try_parse_from(&args);
        return or_exit(parsed, &args);
    };
    let mut cli = or_exit(Cli::try_parse_from(split.head), &args);
    if let Some(Command::Replay(r)) = &mut cli.command {
        r.as_claude_file = split.file;
        r.claude_args = split.claude_args;
    }
    cli
}

/// The parsed command line, or exit: a usage error (exit 2) reads `boo-normalize: cause` like
/// every other error, then clap's tip and usage lines; `--help` and `--version` write their
/// text on stdout (exit 0), where a failed write is an I/O error on stdout like any other
/// command's (`boo-normalize: stdout: cause`, exit 2; a reader that closed the pipe early:
/// exit 0, quietly).
fn or_exit(parsed: Result<Cli, clap::Error>, args: &[std::ffi::OsString]) -> Cli {
    use std::io::Write;
    let e = match parsed {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `boo-normalize audit`: the help on stderr, exit 2.
        e.exit();
    }
    if e.use_stderr() {
        let text = e.render().to_string();
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        let text = with_hint(text, &e, args);
        let _ = write!(std::io::stderr(), "boo-normalize: {text}");
        std::process::exit(e.exit_code());
    }
    let written = e.print().and_then(|()| std::io::stdout().flush());
    match written {
        Ok(()) => std::process::exit(e.exit_code()),
        Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(w) => {
            let _ = writeln!(std::io::stderr(), "boo-normalize: stdout: {w}");
            std::process::exit(i32::from(boo_normalize::exit::Exit::ERROR.code()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use boo_normalize::replay::Speed;
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn mistyped_subcommands_are_recognised() {
        let s = |a: &str| similar_subcommand(std::ffi::OsStr::new(a));
        assert_eq!(s("difff").as_deref(), Some("diff"));
        assert_eq!(s("profiel").as_deref(), Some("profile"));
        assert_eq!(s("replya").as_deref(), Some("replay"));
        assert_eq!(s("spwan").as_deref(), Some("spawn"));
        assert_eq!(s("generate").as_deref(), Some("generate-man"));
        assert_eq!(s("run.ndjson"), None);
        assert_eq!(s("capture"), None);
        assert_eq!(s("xyz"), None);
    }

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn split(args: Vec<OsString>) -> Option<Cli> {
        replay::split_as_claude(&args).map(|_| parse_from(args))
    }

    fn replay(cli: Option<Cli>) -> ReplayArgs {
        match cli.expect("an --as-claude command line").command {
            Some(Command::Replay(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn everything_after_as_claude_is_claudes() {
        let r = replay(split(os(&[
            "boo-normalize",
            "replay",
            "--speed",
            "max",
            "--as-claude=cap.jsonl",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            "3",
            "--",
            "do it",
        ])));
        assert!(r.as_claude);
        assert_eq!(r.speed, Some(Speed::Max));
        assert_eq!(r.as_claude_file, Some(PathBuf::from("cap.jsonl")));
        assert_eq!(r.claude_args.len(), 8);
        let r = replay(split(os(&[
            "x",
            "replay",
            "--as-claude",
            "cap.jsonl",
            "-p",
        ])));
        assert_eq!(r.as_claude_file, None);
        assert_eq!(r.claude_args, os(&["cap.jsonl", "-p"]));
        let r = replay(split(os(&["/usr/local/bin/claude", "-p", "hi"])));
        assert!(r.as_claude);
        assert_eq!(r.claude_args, os(&["-p", "hi"]));
        assert!(split(os(&["x", "replay", "cap.jsonl"])).is_none());
        assert!(split(os(&["x", "replay", "--", "--as-claude"])).is_none());
        assert!(split(os(&["x", "normalize", "--as-claude"])).is_none());
    }
}
