//! The `acp` command line: the CLI binary and its environment, stopping, the guards, the
//! outputs besides the ACP connection, redaction, and claude's own arguments.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use boo_normalize::spawn::Limits;
use boo_normalize::spawn::env::EnvPolicy;

use super::redact::RedactArgs;
use super::spawn::GuardArgs;
use super::units::duration;

pub const ACP_AFTER_HELP: &str = "\
Speaks the Agent Client Protocol (v1: JSON-RPC, one message per line) on stdin and stdout,
nothing else on stdout; logs go to stderr. Each session runs one long-lived `claude
--input-format stream-json --output-format stream-json --permission-prompt-tool stdio` in its
own process group; when the client closes stdin, or on SIGINT/SIGTERM/SIGHUP, every session's
CLI and the processes it started are stopped (SIGTERM, SIGKILL after --grace); if acp itself is
killed (SIGKILL) its guardian kills them.

Environment: as `spawn` (PATH, HOME, CLAUDE_*, …) plus the provider variables the agent
server's configuration gives it (ANTHROPIC_*, credentials included, AWS_*, CLOUD_ML_*,
VERTEX_*, GOOGLE_*, GCLOUD_*), named on stderr; --no-provider-env passes them only as `spawn`
does (--env NAME, --keep-env-key).

Zed (settings.json): {\"agent_servers\": {\"Claude Code (boo-normalize)\": {\"type\":
\"custom\", \"command\": \"boo-normalize\", \"args\": [\"acp\"], \"env\": {}}}}

Exit status: 0 when the client closed stdin; 128+N when acp got signal N (143 SIGTERM); 2
usage error.

Examples:
  boo-normalize acp
  boo-normalize acp --audit ~/.local/state/claude-acp.audit.jsonl --redact -- --model sonnet";

/// `acp` options.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The claude binary; a name without `/` is looked up on PATH. [default: claude]
    #[arg(long, value_name = "PATH", env = "CLAUDE_BIN")]
    pub claude_bin: Option<OsString>,
    /// Pass variable KEY (KEY* for a prefix) to claude, or set it to VALUE. Repeatable.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,
    /// Pass the whole environment.
    #[arg(long)]
    pub inherit_env: bool,
    /// Do not pass the provider variables (ANTHROPIC_*, AWS_*, …) by default: only what
    /// --env names, credentials only with --keep-env-key (as `spawn`).
    #[arg(long)]
    pub no_provider_env: bool,
    /// With --no-provider-env: pass the ANTHROPIC_* credentials too.
    #[arg(long, requires = "no_provider_env")]
    pub keep_env_key: bool,
    /// Time between SIGTERM and SIGKILL when a session's CLI is stopped.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "3s")]
    pub grace: Duration,
    /// Stop a session's CLI when a tool call has had no result for this long.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub tool_timeout: Option<Duration>,
    /// How long a cancelled prompt waits for the CLI to confirm the interrupt before it
    /// returns `cancelled` anyway.
    #[arg(long, value_name = "DUR", value_parser = duration, default_value = "1500ms")]
    pub cancel_wait: Duration,
    /// Also write every session's run to this hash-chained audit log (one run id per session).
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Also write every session's envelope (NDJSON) to FILE.
    #[arg(long, value_name = "FILE")]
    pub envelope: Option<PathBuf>,
    /// Also export OTLP traces (one per prompt) to this OTLP/HTTP endpoint.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// Guards over every session's run.
    #[command(flatten)]
    pub guards: GuardArgs,
    /// Redaction (applied to the CLI's output before any output: the ACP updates included).
    #[command(flatten)]
    pub redact: RedactArgs,
    /// Arguments for claude, after `--`.
    #[arg(last = true, value_name = "CLAUDE_ARGS")]
    pub claude_args: Vec<OsString>,
}

/// Provider variables passed by default.
pub const PROVIDER_VARS: &[&str] = &[
    "ANTHROPIC_*",
    "AWS_*",
    "CLOUD_ML_*",
    "VERTEX_*",
    "GOOGLE_*",
    "GCLOUD_*",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
];

impl AcpArgs {
    /// The CLI's environment policy.
    pub fn env_policy(&self) -> EnvPolicy {
        let mut extra = self.env.clone();
        if !self.no_provider_env {
            extra.extend(PROVIDER_VARS.iter().map(|s| s.to_string()));
        }
        EnvPolicy {
            inherit: self.inherit_env,
            keep_credentials: !self.no_provider_env || self.keep_env_key,
            extra,
        }
    }

    /// Per-session limits.
    pub fn limits(&self) -> Limits {
        Limits {
            tool_timeout: self.tool_timeout,
            grace: self.grace,
            stop_signal: boo_normalize::spawn::StopSignal::Term,
            own_only: true,
            ..Limits::default()
        }
    }
}
