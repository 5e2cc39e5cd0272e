//! The `spawn` command line: the child's prompt, binary and environment, the stop sequence and
//! timers, the guards, and the envelope/output/redaction options it shares with `normalize`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use boo_normalize::agent::Agent;
use boo_normalize::spawn::command::ArgvOptions;
use boo_normalize::spawn::env::EnvPolicy;
use boo_normalize::spawn::guard::GuardConfig;
use boo_normalize::spawn::worker::Run;
use boo_normalize::spawn::{Limits, StopSignal};

use super::normalize::StreamArgs;
use super::units::{duration, size, size_usize};

pub const SPAWN_AFTER_HELP: &str = "\
Environment: only PATH HOME USER LOGNAME SHELL TERM LANG LC_* TZ TMPDIR, http(s)_proxy and
no_proxy (any case), CLAUDE_* and what --env names reach the child (--inherit-env: all).
ANTHROPIC_* credentials (API_KEY, AUTH_TOKEN, CUSTOM_HEADERS, any *KEY*/*TOKEN*/*SECRET*) are
removed unless --keep-env-key. ANTHROPIC_BASE_URL is not a credential but needs --env.

Other agents (--agent): spawn adds the CLI's JSON mode (codex: exec --json; gemini, qwen: -p
PROMPT --output-format stream-json, qwen also --include-partial-messages; opencode: run
--format json; copilot: -p PROMPT --output-format json) and reads its stream with that
agent's reader. Approval flags are yours to pass after -- (codex: -s workspace-write or
--skip-git-repo-check; gemini, qwen: --yolo; copilot: --allow-all-tools). Their own prefix
replaces CLAUDE_* (CODEX_* GEMINI_* QWEN_* OPENCODE_* COPILOT_*); their keys are the
credentials (codex: OPENAI_API_KEY CODEX_API_KEY; gemini: GEMINI_API_KEY GOOGLE_API_KEY;
qwen: OPENAI_API_KEY DASHSCOPE_API_KEY; opencode: each provider's *_API_KEY; copilot:
COPILOT_PROVIDER_API_KEY GH_TOKEN GITHUB_TOKEN COPILOT_GITHUB_TOKEN); base URLs
(OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, COPILOT_PROVIDER_BASE_URL) need --env.
--allow-tools also takes a kind (execute, read, edit, search, fetch, …) or a Claude tool name
(Bash, Read, Edit, …) for the agent's tools of that kind.

Stopping (timeouts, SIGINT/SIGTERM/SIGHUP, --enforce): SIGINT to the child's process group,
SIGTERM after --grace, SIGKILL after another --grace (--stop-signal TERM starts at SIGTERM); a
tool outside --allow-tools with --enforce: SIGKILL at once. Then every remaining descendant
(background processes included, found as a child subreaper) is killed unless
--keep-background.

Exit status: the child's exit code; 128+N when a signal killed it; 124 timeout or idle
timeout; 128+N when boo-normalize got signal N (130 for Ctrl-C); 125 a guard stopped it
(--enforce); 0/1 (the last result's success) when it hung after closing stdout; 3 it exited
0 without a `result` line (run.error; --allow-no-result: 0); 0 when boo-normalize's own stdout
was closed (| head -1); 1 --strict found diagnostics; 74 an output file failed mid-run; 127
binary not found, 126 not executable, 2 usage error.

Examples:
  boo-normalize spawn --prompt 'fix the tests' -- --max-turns 20
  boo-normalize spawn --prompt-file task.md --idle-timeout 5m --allow-tools Read,Grep --enforce
  boo-normalize spawn --agent codex --keep-env-key --prompt 'fix the tests' -- -s workspace-write
  boo-normalize spawn --agent gemini --keep-env-key --allow-tools Read,Bash --prompt 'why?' -- --yolo";

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
    /// The agent CLI to run: claude (default), codex, gemini, qwen, opencode or copilot.
    #[arg(long, value_name = "NAME", default_value = "claude",
          value_parser = ["claude", "codex", "gemini", "qwen", "opencode", "copilot"])]
    pub agent: String,
    /// The prompt: in argv, or on stdin when long (see --prompt-argv-max), starting with `-` or
    /// a single word.
    #[arg(long, value_name = "TEXT", conflicts_with = "prompt_file")]
    #[arg(allow_hyphen_values = true)]
    pub prompt: Option<String>,
    /// Read the prompt from FILE (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// Prompts longer than SIZE (bytes, or 10KB, 10KiB) go to the child's stdin (closed right
    /// after).
    #[arg(long, value_name = "SIZE", value_parser = size_usize, default_value = "10KiB")]
    pub prompt_argv_max: usize,
    /// The agent's binary; a name without `/` is looked up on PATH. [default: the agent's name;
    /// for claude, $CLAUDE_BIN if set]
    #[arg(long = "bin", visible_alias = "claude-bin", value_name = "PATH")]
    pub claude_bin: Option<OsString>,
    /// Do not add --include-partial-messages (claude, qwen).
    #[arg(long)]
    pub no_partial: bool,
    /// Pass variable KEY (KEY* for a prefix) to the child, or set it to VALUE. Repeatable.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,
    /// Pass boo-normalize's whole environment (credentials are still removed).
    #[arg(long)]
    pub inherit_env: bool,
    /// Pass ANTHROPIC_API_KEY and the other ANTHROPIC_* credentials (another agent's: its own)
    /// to the child.
    #[arg(long, conflicts_with = "refuse_api_key")]
    pub keep_env_key: bool,
    /// Exit with an error (status 2) if an ANTHROPIC_* credential (another agent's: its own) is
    /// set.
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
    /// Also write a capture of the run (argv, stdout and stderr lines with their arrival
    /// times, exit status) to FILE, for `boo-normalize replay` and `replay --as-claude`
    /// (created mode 0600; locked while written).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Guards over the run (their own heading; the envelope options after them have theirs).
    #[command(flatten)]
    pub guards: GuardArgs,
    /// Envelope options.
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Arguments for the agent, after `--`.
    #[arg(last = true, value_name = "AGENT_ARGS")]
    pub claude_args: Vec<OsString>,
}

impl SpawnArgs {
    /// The agent (`--agent`).
    pub fn agent(&self) -> Agent {
        Agent::parse(&self.agent).unwrap_or_default()
    }

    /// The child's environment as the command line set it (validated by the caller).
    pub fn env_policy(&self) -> EnvPolicy {
        EnvPolicy {
            inherit: self.inherit_env,
            keep_credentials: self.keep_env_key,
            extra: self.env.clone(),
        }
    }

    /// The run as the library takes it, with the prompt read and the guards and environment
    /// validated.
    pub fn run(&self, prompt: Option<Vec<u8>>, guards: GuardConfig, policy: EnvPolicy) -> Run {
        let agent = self.agent();
        // $CLAUDE_BIN names claude's binary only.
        let bin = self.claude_bin.clone().or_else(|| {
            (agent == Agent::Claude)
                .then(|| std::env::var_os("CLAUDE_BIN"))
                .flatten()
                .filter(|b| !b.is_empty())
        });
        Run {
            agent,
            claude_bin: bin,
            claude_args: self.claude_args.clone(),
            prompt,
            argv: ArgvOptions {
                partial: !self.no_partial,
                argv_max: self.prompt_argv_max,
                allow_tools: self.guards.allow_tools.clone(),
                agent,
            },
            policy,
            guards,
            limits: self.limits(),
            record: self.record.clone(),
            stderr_events: self.stderr_events,
        }
    }

    /// The child's limits as the command line set them.
    fn limits(&self) -> Limits {
        Limits {
            timeout: self.timeout,
            idle_timeout: self.idle_timeout,
            idle_warn_only: self.idle_action == IdleAction::Warn,
            tool_timeout: self.tool_timeout,
            grace: self.grace,
            stop_signal: match self.stop_signal {
                StopSignalArg::Int => StopSignal::Int,
                StopSignalArg::Term => StopSignal::Term,
            },
            keep_background: self.keep_background,
            keep_alive: self.keep_alive,
            own_only: false,
        }
    }
}

/// The guards: policy checks over the run's events, reported as `policy.violation` (and a stop
/// with `--enforce`). A new guard is a field here and a rule in the library's `spawn::guard`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Guards")]
pub struct GuardArgs {
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
    /// Stop the child on the first policy violation (exit 125); a tool outside --allow-tools
    /// SIGKILLs its process group at once, as the call begins.
    #[arg(long)]
    pub enforce: bool,
}

impl GuardArgs {
    /// The library's guard configuration.
    pub fn config(&self) -> GuardConfig {
        GuardConfig {
            allow_tools: self.allow_tools.clone(),
            max_tool_calls: self.max_tool_calls,
            max_repeat_calls: self.max_repeat_calls,
            max_output_bytes: self.max_output_bytes,
            enforce: self.enforce,
            agent: Agent::Claude,
        }
    }
}
