//! The child's command line: which `claude` binary, which flags, and where the prompt goes.
//!
//! `-p --output-format stream-json --verbose --include-partial-messages` are added in front of
//! the user's arguments unless those already contain them (`--no-partial` drops the last one).
//! The prompt goes last, after `--`, unless it is better sent on stdin: longer than the argv
//! limit (10 KB by default), not UTF-8, starting with `-` (an option), a single bare word (the
//! CLI would run a subcommand of that name: `doctor`, `update`, …), or the user's arguments
//! already contain `--`.
//!
//! Another agent (`--agent`, [`crate::agent`]) gets its JSON-mode flags in front of the user's
//! arguments (`exec --json`, `--output-format stream-json`, `run --format json`, …; Qwen Code's
//! `--include-partial-messages` unless `--no-partial`) and its prompt where it takes one: `-p
//! TEXT` (`--prompt=TEXT` when it starts with `-`) or the last argument. A prompt that cannot go
//! there (too long, not UTF-8, a NUL; for a last argument also one starting with `-`, and for
//! Codex a single bare word, which would name a subcommand of `codex exec`) goes on stdin where
//! the CLI reads one (Codex with `-` as the prompt); Copilot CLI reads none, so
//! [`check_prompt`] refuses such a prompt for it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::agent::{Agent, PromptArg, PromptStdin};

/// Default longest prompt passed in argv (bytes); longer ones go to stdin.
pub const DEFAULT_ARGV_MAX: usize = 10 * 1024;

/// What went wrong finding the binary.
#[derive(Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// No such file (exit 127, like a shell).
    NotFound(String),
    /// Exists but cannot be executed (exit 126).
    NotExecutable(String),
}

fn executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The binary to run: `explicit` (`--claude-bin` or `$CLAUDE_BIN`) if given, else `claude`;
/// a name without `/` is looked up in `path` (the `PATH` value).
pub fn resolve_program(
    explicit: Option<&OsStr>,
    path: Option<&OsStr>,
) -> Result<PathBuf, ResolveError> {
    resolve_agent(Agent::Claude, explicit, path)
}

/// `agent`'s binary: `explicit` (`--bin`) if given, else its usual name
/// ([`Agent::binary`]); a name without `/` is looked up in `path` (the `PATH` value).
pub fn resolve_agent(
    agent: Agent,
    explicit: Option<&OsStr>,
    path: Option<&OsStr>,
) -> Result<PathBuf, ResolveError> {
    let name = explicit.unwrap_or(OsStr::new(agent.binary()));
    let shown = name.to_string_lossy().into_owned();
    if name.as_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        if !p.exists() {
            return Err(ResolveError::NotFound(format!("{shown}: no such file")));
        }
        if !executable(&p) {
            return Err(ResolveError::NotExecutable(format!(
                "{shown}: not an executable file"
            )));
        }
        return Ok(p);
    }
    let mut seen = None;
    for dir in std::env::split_paths(path.unwrap_or_default()) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(name);
        if executable(&cand) {
            return Ok(cand);
        }
        if cand.exists() && seen.is_none() {
            seen = Some(cand);
        }
    }
    match seen {
        Some(p) => Err(ResolveError::NotExecutable(format!(
            "{}: not an executable file",
            p.display()
        ))),
        None if agent == Agent::Claude => Err(ResolveError::NotFound(format!(
            "{shown}: not found on PATH (use --claude-bin PATH or set CLAUDE_BIN)"
        ))),
        None => Err(ResolveError::NotFound(format!(
            "{shown}: not found on PATH (use --bin PATH)"
        ))),
    }
}

/// How the prompt and flags are placed.
#[derive(Debug, Clone)]
pub struct ArgvOptions {
    /// Add `--include-partial-messages` (unless given).
    pub partial: bool,
    /// Longest prompt passed in argv.
    pub argv_max: usize,
    /// `--allow-tools`: the built-in tools it names are passed as claude's own `--tools` (the only
    /// built-ins offered to the model), unless the user gave `--tools`. Other agents get no flag
    /// of it (the guard checks their calls).
    pub allow_tools: Option<Vec<String>>,
    /// The agent whose command line it is.
    pub agent: Agent,
}

impl Default for ArgvOptions {
    fn default() -> Self {
        ArgvOptions {
            partial: true,
            argv_max: DEFAULT_ARGV_MAX,
            allow_tools: None,
            agent: Agent::Claude,
        }
    }
}

/// The child's arguments and what to write to its stdin (then closed); `None`: `/dev/null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Arguments after the program name.
    pub args: Vec<OsString>,
    /// The prompt, when it goes through stdin.
    pub stdin: Option<Vec<u8>>,
}

/// Whether `prompt` can safely be the last argument (after `--`).
fn argv_safe(prompt: &[u8], max: usize) -> bool {
    let bare_word = prompt
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    prompt.len() <= max
        && !prompt.is_empty()
        && std::str::from_utf8(prompt).is_ok()
        && !prompt.starts_with(b"-")
        && !bare_word
        && !prompt.contains(&0)
}

/// The run's prompt: `text` (`--prompt`), or the file `file` (`--prompt-file`; `-`: `stdin`);
/// none only when the claude arguments `claude_args` continue a session or read their input
/// from stdin ([`continues_a_session`]), else an error that says how to give one.
pub fn prompt(
    text: Option<&str>,
    file: Option<&Path>,
    claude_args: &[OsString],
    stdin: &mut dyn std::io::Read,
) -> Result<Option<Vec<u8>>, crate::error::Error> {
    prompt_for(Agent::Claude, text, file, claude_args, stdin)
}

/// [`prompt`] for `agent`, whose arguments `args` may continue a session in its own words
/// ([`Agent::continues`]).
pub fn prompt_for(
    agent: Agent,
    text: Option<&str>,
    file: Option<&Path>,
    claude_args: &[OsString],
    stdin: &mut dyn std::io::Read,
) -> Result<Option<Vec<u8>>, crate::error::Error> {
    use crate::error::Error;
    let prompt = match (text, file) {
        (Some(p), _) => Some(p.as_bytes().to_vec()),
        (None, None) => None,
        (None, Some(f)) if f.as_os_str() == "-" => {
            let mut buf = Vec::new();
            stdin
                .read_to_end(&mut buf)
                .map_err(|e| Error::io("stdin", e))?;
            Some(buf)
        }
        (None, Some(f)) => {
            Some(std::fs::read(f).map_err(|e| Error::io(f.display().to_string(), e))?)
        }
    };
    let continues = claude_args
        .iter()
        .filter_map(|a| a.to_str())
        .any(|a| agent.continues(a));
    if prompt.is_none() && !continues {
        let how = match agent {
            Agent::Claude | Agent::Qwen | Agent::Copilot => "--resume ID / --continue",
            Agent::Codex => "resume --last",
            Agent::Gemini => "--resume latest",
            Agent::Opencode => "--continue / --session ID",
        };
        return Err(Error::msg(
            "spawn",
            format!("no prompt: give --prompt TEXT or --prompt-file FILE (or {how} after --)"),
        ));
    }
    Ok(prompt)
}

/// The longest prompt a command-line argument holds (Linux's `MAX_ARG_STRLEN`, less one).
const ARG_MAX_ONE: usize = 128 * 1024 - 1;

/// Whether `agent` can take `prompt` at all: an error for a prompt that fits neither its command
/// line nor its stdin (Copilot CLI reads no prompt on stdin: one longer than an argument can be,
/// not UTF-8 or with a NUL).
pub fn check_prompt(agent: Agent, prompt: Option<&[u8]>) -> Result<(), String> {
    let Some(p) = prompt else { return Ok(()) };
    if agent.prompt_stdin() != PromptStdin::No {
        return Ok(());
    }
    if p.len() > ARG_MAX_ONE || p.contains(&0) || std::str::from_utf8(p).is_err() {
        return Err(format!(
            "{} takes its prompt only as an argument: at most {} bytes of UTF-8 without NUL",
            agent.name(),
            ARG_MAX_ONE
        ));
    }
    Ok(())
}

/// Whether the claude arguments resume or continue a session, or take their input from stdin
/// (`--input-format stream-json`): then no prompt is needed.
pub fn continues_a_session(args: &[OsString]) -> bool {
    args.iter().filter_map(|a| a.to_str()).any(|a| {
        matches!(
            a,
            "--resume" | "-r" | "--continue" | "-c" | "--input-format"
        ) || a.starts_with("--resume=")
            || a.starts_with("--input-format=")
    })
}

/// Build the child's arguments from the user's `user` arguments and an optional prompt.
pub fn build(user: &[OsString], prompt: Option<&[u8]>, opts: &ArgvOptions) -> Invocation {
    if opts.agent != Agent::Claude {
        return build_other(opts.agent, user, prompt, opts);
    }
    let mut print = false;
    let mut format = false;
    let mut verbose = false;
    let mut partial = false;
    let mut tools = false;
    let mut dashdash = false;
    for a in user {
        let b = a.as_bytes();
        match b {
            b"--" => {
                dashdash = true;
                break;
            }
            b"-p" | b"--print" => print = true,
            b"--verbose" => verbose = true,
            b"--include-partial-messages" => partial = true,
            _ if b == b"--tools" || b.starts_with(b"--tools=") => tools = true,
            _ if b == b"--output-format" || b.starts_with(b"--output-format=") => format = true,
            _ => {}
        }
    }
    let mut args: Vec<OsString> = Vec::with_capacity(user.len() + 8);
    if !print {
        args.push("-p".into());
    }
    if !format {
        args.push("--output-format".into());
        args.push("stream-json".into());
    }
    if !verbose {
        args.push("--verbose".into());
    }
    if opts.partial && !partial {
        args.push("--include-partial-messages".into());
    }
    // The allowlist is load-bearing: a built-in tool it does not name is never offered (claude's
    // `--tools`, CLI 2.0.x and later). MCP tools (`mcp__…`) and prefixes cannot be expressed
    // there; the stream check (and `--enforce`) remains their guard.
    if let (Some(list), false) = (&opts.allow_tools, tools) {
        let builtin: Vec<&str> = list
            .iter()
            .map(String::as_str)
            .filter(|t| !t.starts_with("mcp__") && !t.ends_with('*') && !t.is_empty())
            .collect();
        args.push("--tools".into());
        args.push(builtin.join(",").into());
    }
    args.extend(user.iter().cloned());
    let mut stdin = None;
    if let Some(p) = prompt {
        if !dashdash && argv_safe(p, opts.argv_max) {
            args.push("--".into());
            args.push(OsStr::from_bytes(p).to_owned());
        } else {
            stdin = Some(p.to_vec());
        }
    }
    Invocation { args, stdin }
}

/// [`build`] for an agent other than Claude: its JSON-mode flags, the user's arguments and the
/// prompt where it takes one (see the module docs).
fn build_other(
    agent: Agent,
    user: &[OsString],
    prompt: Option<&[u8]>,
    opts: &ArgvOptions,
) -> Invocation {
    let dashdash = user.iter().any(|a| a == "--");
    let mut head: Vec<OsString> = Vec::new();
    let mut tail: Vec<OsString> = Vec::new();
    let mut stdin = None;
    if let Some(p) = prompt {
        let text = std::str::from_utf8(p).ok().filter(|t| !t.contains('\0'));
        let fits = |t: &&str| !t.is_empty() && t.len() <= opts.argv_max;
        let bare_word = |t: &str| {
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        match (agent.prompt_arg(), text) {
            // Copilot CLI reads no prompt on stdin: any text goes in argv ([`check_prompt`]).
            (PromptArg::Flag, Some(t)) if fits(&t) || agent.prompt_stdin() == PromptStdin::No => {
                if t.starts_with('-') {
                    head.push(format!("--prompt={t}").into());
                } else {
                    head.extend(["-p".into(), t.into()]);
                }
            }
            (PromptArg::Last, Some(t))
                if fits(&t)
                    && !t.starts_with('-')
                    && !dashdash
                    && (agent != Agent::Codex || !bare_word(t)) =>
            {
                tail.push(t.into());
            }
            _ => {
                stdin = Some(p.to_vec());
                if agent.prompt_stdin() == PromptStdin::Dash {
                    tail.push("-".into());
                }
            }
        }
    }
    head.extend(agent.json_args().iter().map(OsString::from));
    if let Some(flag) = agent.partial_flag()
        && opts.partial
        && !user.iter().any(|a| a == flag)
    {
        head.push(flag.into());
    }
    head.extend(user.iter().cloned());
    head.extend(tail);
    Invocation { args: head, stdin }
}

#[cfg(test)]
mod agent_tests {
    use super::*;

    fn args(agent: Agent, user: &[&str], prompt: &[u8]) -> (String, Option<Vec<u8>>) {
        let user: Vec<OsString> = user.iter().map(OsString::from).collect();
        let opts = ArgvOptions {
            agent,
            ..Default::default()
        };
        let inv = build(&user, Some(prompt), &opts);
        let a: Vec<String> = inv
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (a.join(" "), inv.stdin)
    }

    #[test]
    fn each_agent_gets_its_json_mode_and_its_prompt_where_it_takes_it() {
        let x = |a, u: &[&str], p: &str| args(a, u, p.as_bytes());
        assert_eq!(
            x(Agent::Codex, &["-s", "read-only"], "fix it"),
            ("exec --json -s read-only fix it".into(), None)
        );
        assert_eq!(
            x(Agent::Gemini, &["--yolo"], "fix it"),
            ("-p fix it --output-format stream-json --yolo".into(), None)
        );
        assert_eq!(
            x(Agent::Qwen, &[], "fix it"),
            (
                "-p fix it --output-format stream-json --include-partial-messages".into(),
                None
            )
        );
        assert_eq!(
            x(Agent::Opencode, &[], "fix it"),
            ("run --format json fix it".into(), None)
        );
        assert_eq!(
            x(Agent::Copilot, &["--allow-all-tools"], "-x is a flag?"),
            (
                "--prompt=-x is a flag? --output-format json --allow-all-tools".into(),
                None
            )
        );
        // What cannot go in argv goes on stdin, where each reads it.
        assert_eq!(
            x(Agent::Codex, &[], "review"),
            ("exec --json -".into(), Some(b"review".to_vec()))
        );
        assert_eq!(
            x(Agent::Opencode, &[], "-rf"),
            ("run --format json".into(), Some(b"-rf".to_vec()))
        );
        let big = "a ".repeat(DEFAULT_ARGV_MAX);
        assert_eq!(
            x(Agent::Gemini, &[], &big),
            (
                "--output-format stream-json".into(),
                Some(big.as_bytes().to_vec())
            )
        );
        let (a, stdin) = x(Agent::Copilot, &[], &big);
        assert!(a.starts_with("-p a a ") && stdin.is_none());
        assert!(check_prompt(Agent::Copilot, Some(b"nul \0")).is_err());
        assert!(check_prompt(Agent::Codex, Some(b"nul \0")).is_ok());
        assert!(check_prompt(Agent::Copilot, Some(big.as_bytes())).is_ok());
    }

    #[test]
    fn each_agent_binary_has_its_own_default_and_hint() {
        let dir = tempfile::tempdir().unwrap();
        let e = resolve_agent(Agent::Codex, None, Some(dir.path().as_os_str())).unwrap_err();
        assert_eq!(
            e,
            ResolveError::NotFound("codex: not found on PATH (use --bin PATH)".into())
        );
    }
}

#[cfg(test)]
mod allow_tests {
    use super::*;

    fn args(user: &[&str], allow: Option<&[&str]>) -> Vec<String> {
        let user: Vec<OsString> = user.iter().map(OsString::from).collect();
        let opts = ArgvOptions {
            allow_tools: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        build(&user, None, &opts)
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn allow_tools_become_claudes_own_tools_list() {
        let a = args(&[], Some(&["Read", "Grep", "mcp__gh__*", "Glob"]));
        let i = a.iter().position(|x| x == "--tools").unwrap();
        assert_eq!(a[i + 1], "Read,Grep,Glob");
        // Only MCP tools allowed: no built-in is offered.
        let a = args(&[], Some(&["mcp__gh__*"]));
        let i = a.iter().position(|x| x == "--tools").unwrap();
        assert_eq!(a[i + 1], "");
        // The user's own --tools wins; without --allow-tools nothing is added.
        let a = args(&["--tools", "Bash"], Some(&["Read"]));
        assert_eq!(a.iter().filter(|x| *x == "--tools").count(), 1);
        assert!(!args(&[], None).contains(&"--tools".to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn injects_missing_flags_only() {
        let inv = build(&[], Some(b"say hi"), &ArgvOptions::default());
        assert_eq!(
            inv.args,
            os(&[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
                "--",
                "say hi"
            ])
        );
        assert_eq!(inv.stdin, None);
        let user = os(&["--print", "--output-format=stream-json", "--max-turns", "3"]);
        let opts = ArgvOptions {
            partial: false,
            ..Default::default()
        };
        let inv = build(&user, None, &opts);
        assert_eq!(
            inv.args,
            os(&[
                "--verbose",
                "--print",
                "--output-format=stream-json",
                "--max-turns",
                "3"
            ])
        );
    }

    #[test]
    fn risky_prompts_go_to_stdin() {
        let o = ArgvOptions::default();
        let big = vec![b'a'; DEFAULT_ARGV_MAX + 1];
        for p in [
            &big[..],
            b"doctor",
            b"-rf now",
            b"bad \xff utf8",
            b"nul \0 inside",
        ] {
            let inv = build(&[], Some(p), &o);
            assert_eq!(
                inv.stdin.as_deref(),
                Some(p),
                "{:?}",
                String::from_utf8_lossy(p)
            );
            assert!(!inv.args.iter().any(|a| a == "--"));
        }
        let inv = build(&os(&["--", "x"]), Some(b"two words"), &o);
        assert_eq!(inv.stdin.as_deref(), Some(&b"two words"[..]));
        let ok = vec![b'a'; DEFAULT_ARGV_MAX - 2];
        let mut ok = ok;
        ok.extend_from_slice(b" b");
        assert_eq!(build(&[], Some(&ok), &o).stdin, None);
    }

    #[test]
    fn resolves_binaries() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("claude");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        assert_eq!(
            resolve_program(None, Some(dir.path().as_os_str())),
            Err(ResolveError::NotExecutable(format!(
                "{}: not an executable file",
                exe.display()
            )))
        );
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent".as_ref(), dir.path()]).unwrap();
        assert_eq!(resolve_program(None, Some(&path)).unwrap(), exe);
        assert_eq!(resolve_program(Some(exe.as_os_str()), None).unwrap(), exe);
        assert!(matches!(
            resolve_program(Some(plain.as_os_str()), None),
            Err(ResolveError::NotExecutable(_))
        ));
        assert!(matches!(
            resolve_program(Some(OsStr::new("nope-xyz")), Some(&path)),
            Err(ResolveError::NotFound(_))
        ));
        assert!(matches!(
            resolve_program(Some(OsStr::new("/no/such/claude")), None),
            Err(ResolveError::NotFound(_))
        ));
    }
}
