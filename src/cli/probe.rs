//! The `probe` command line: the CLI to probe, the output directory, which scenarios and modes,
//! the per-run timeout, and the optional diff against a baseline.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::drift::{DiffFormat, FailOn};
use super::units;

pub const PROBE_HELP: &str = "\
Runs the claude CLI given by --bin (--claude-bin) against a Messages API that boo-normalize serves
itself on 127.0.0.1 (an ephemeral port), with scripted scenarios: no API key, no network
beyond loopback, the same output shapes on every run. Each scenario runs with a fresh HOME and
working directory, a dummy key, and auto-updates, telemetry and non-essential traffic off, in
each mode (stream: --output-format stream-json --verbose; partial: plus
--include-partial-messages). DIR gets <scenario>.<mode>.ndjson (the CLI's stdout, verbatim),
<scenario>.<mode>.stderr.txt, profile.json and summary.json; a table goes to stderr.
`boo-normalize diff OLD_DIR NEW_DIR` compares two probe directories; --baseline does it here.
--agent codex|gemini|qwen|opencode|copilot probes that CLI instead (--bin PATH), against a
stand-in of its own model API (OpenAI Responses, Gemini, OpenAI Chat Completions) built into
the same server, configured through its own config files and environment in the isolated
HOME, with its telemetry and update checks off, in its JSON mode (codex, opencode, copilot:
json; gemini: stream; qwen: stream, partial) and with scenarios in its own tools.
Scenario format and CI recipe: docs/probe.md.

Examples:
  boo-normalize probe --claude-bin \"$(command -v claude)\" --out probe/
  boo-normalize probe --claude-bin ./node_modules/.bin/claude --out new/ --baseline baseline/
  boo-normalize probe --claude-bin claude --out o/ --scenario bash --scenario subagent --modes stream
  boo-normalize probe --claude-bin claude --out o/ --scenario-file my-scenarios.json
  boo-normalize probe --agent codex --bin ./node_modules/.bin/codex --out codex-probe/
  boo-normalize probe --list

Exit status: 0 every run passed (and no drift at or above --fail-on with --baseline); 1 drift
found; 2 usage or I/O error; 4 a scenario failed (the CLI crashed, hung, printed non-JSON or
answered unexpectedly; the error and summary.json name it); 126 the CLI is not executable;
127 it was not found; 128+N boo-normalize got signal N.";

/// `probe` options.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The agent CLI to probe: claude (default), codex, gemini, qwen, opencode or copilot.
    #[arg(long, value_name = "NAME", default_value = "claude",
          value_parser = ["claude", "codex", "gemini", "qwen", "opencode", "copilot"])]
    pub agent: String,
    /// The CLI to probe (a path, or a name looked up in PATH); --claude-bin is the same.
    #[arg(long = "bin", visible_alias = "claude-bin", value_name = "PATH",
          required_unless_present_any = ["list", "serve_only"])]
    pub claude_bin: Option<PathBuf>,
    /// Directory for the captures, profile.json and summary.json (created if missing).
    #[arg(long, value_name = "DIR", required_unless_present_any = ["list", "serve_only"])]
    pub out: Option<PathBuf>,
    /// Run only this scenario (repeatable; built-in or from --scenario-file).
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
    /// Output modes, comma-separated (default: every mode of the agent; claude and qwen:
    /// stream,partial; gemini: stream; codex, opencode, copilot: json).
    #[arg(long, value_name = "MODES", value_delimiter = ',',
          value_parser = ["stream", "partial", "json"])]
    pub modes: Vec<String>,
    /// Scenarios of your own (JSON; see docs/probe.md); without --scenario only these run.
    #[arg(long, value_name = "FILE")]
    pub scenario_file: Vec<PathBuf>,
    /// Go on after a failed scenario (exit 4 at the end).
    #[arg(long)]
    pub keep_going: bool,
    /// Longest one run may take; the CLI is then stopped (a failure).
    #[arg(long, value_name = "DURATION", default_value = "90s", value_parser = units::duration)]
    pub timeout: Duration,
    /// Afterwards, diff DIR against this baseline (a probe directory, captures or a profile).
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: exit 1 on drift of this severity or a more severe one.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOn::Breaking)]
    pub fail_on: FailOn,
    /// With --baseline: accepted changes (as `diff --allow`).
    #[arg(long, value_name = "FILE")]
    pub allow: Option<PathBuf>,
    /// With --baseline: the report's format (on stdout).
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub diff_format: DiffFormat,
    /// List the built-in scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Serve one scenario's script on 127.0.0.1 until killed (prints `PORT=<n>`; for tests).
    #[arg(long, value_name = "SCRIPT", hide = true)]
    pub serve_only: Option<PathBuf>,
    /// With --serve-only: write the port here too (atomically).
    #[arg(long, value_name = "FILE", hide = true, requires = "serve_only")]
    pub port_file: Option<PathBuf>,
    /// With --serve-only: append one JSON line per request here.
    #[arg(long, value_name = "FILE", hide = true, requires = "serve_only")]
    pub log: Option<PathBuf>,
    /// With --serve-only: write --agent's configuration for the served API into DIR (its HOME)
    /// and its environment into DIR/agent.env.
    #[arg(long, value_name = "DIR", hide = true, requires = "serve_only")]
    pub agent_home: Option<PathBuf>,
}
