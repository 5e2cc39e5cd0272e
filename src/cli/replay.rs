//! The `replay` command line: its options, and the `--as-claude` argument split (everything
//! after `--as-claude` belongs to the `claude` command line being imitated, so clap never sees
//! it). Also the multi-call name: a link named `claude` to this binary runs `replay --as-claude`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use boo_normalize::error::Error;
use boo_normalize::replay::Speed;
use boo_normalize::replay::to_envelope::ToEnvelope;

use super::normalize::StreamArgs;
use super::units::duration;

pub const AFTER_HELP: &str = "\
Inputs: a capture (normalize --record FILE), an audit log (--audit FILE), or plain stream-json;
the kind is detected from the first line. Several FILEs play one after another as one run.

Examples:
  boo-normalize --record run.capture.jsonl < run.ndjson > run.envelope.ndjson
  boo-normalize replay --speed max run.capture.jsonl | diff - run.envelope.ndjson
  boo-normalize replay --raw --speed 2 run.capture.jsonl | my-consumer
  boo-normalize replay --follow --last-event-id 41 live.capture.jsonl

As a stand-in for claude (for another program's tests): everything after --as-claude is
claude's command line and is ignored; the capture comes from --as-claude=FILE, else
$BOO_REPLAY_CAPTURE, else the first argument after --as-claude. stdin is read and discarded;
the recorded stdout and stderr are written with their timing (--speed before --as-claude, or
$BOO_REPLAY_SPEED), then it exits with the recorded status or dies by the recorded signal.
`--version` prints the recorded CLI version. A shim for CLAUDE_BIN or PATH:
  #!/bin/sh
  exec boo-normalize replay --as-claude=/path/to/run.capture.jsonl \"$@\"
(or a symlink named `claude` to boo-normalize, with BOO_REPLAY_CAPTURE set). Under
`boo-normalize spawn --claude-bin SHIM`, spawn's environment allowlist drops BOO_REPLAY_*:
put the capture in the shim (--as-claude=FILE) or add `--env BOO_REPLAY_CAPTURE`.

Exit status: 0 (1 with --strict and diagnostics), 2 on errors, 3 no `result` line was recorded
(run.error; --allow-no-result: 0) or --follow's writer vanished, 74 an output file failed
mid-run, 128+N --follow stopped by SIGINT, SIGTERM or SIGHUP (run.end cause interrupted);
--as-claude: the recorded one.";

/// `replay` options.
#[derive(Debug, Args, Default)]
pub struct ReplayArgs {
    /// Captures, audit logs or stream-json files; `-` reads stdin.
    #[arg(value_name = "FILE", required_unless_present = "as_claude")]
    pub files: Vec<PathBuf>,
    /// Pacing: `1` the recorded timing, `N` N times faster, `max` as fast as possible.
    /// Default: 1 (stream-json has no times and always plays at max; --follow defaults to max).
    #[arg(long, value_name = "1|N|max", env = "BOO_REPLAY_SPEED")]
    pub speed: Option<Speed>,
    /// Write the original stream-json bytes instead of the envelope (timed by --speed).
    #[arg(long)]
    pub raw: bool,
    /// Resume: start at the event with this seq (earlier lines are still normalized, unseen).
    #[arg(long, value_name = "SEQ", conflicts_with_all = ["raw", "last_event_id"])]
    pub from_seq: Option<u64>,
    /// Keep reading FILE as it grows (like `tail -f`) until its run ends: a capture's end
    /// record, an audit run's run.end, or for stream-json a `result` line followed by
    /// --follow-idle without new data. A capture or audit log whose writer is gone (its lock is
    /// free) ends after the data left with run.end cause writer_vanished and exit status 3.
    #[arg(long)]
    pub follow: bool,
    /// With --follow on stream-json: how long the file must stay unchanged after a `result`.
    #[arg(long, value_name = "DUR", default_value = "2s", value_parser = duration)]
    pub follow_idle: Duration,
    /// Audit logs: the run to replay (its run_id). Default: the last run in the file. A run
    /// with several run.end (an `acp` session whose CLI was restarted) plays to the last one.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Recorded stderr lines become `child.stderr` events (as with `spawn --stderr-events`).
    #[arg(long, conflicts_with = "raw")]
    pub stderr_events: bool,
    /// Time-stamping sinks get a new run id and the current time instead of the recorded ones.
    #[arg(long)]
    pub fresh_ids: bool,
    /// Never show the progress bar (shown on a terminal stderr, stdout redirected, after 1 s).
    #[arg(long)]
    pub no_progress: bool,
    /// Behave like the `claude` binary (see below); must come after replay's own options.
    #[arg(long)]
    pub as_claude: bool,
    /// `--as-claude=FILE`.
    #[arg(skip)]
    pub as_claude_file: Option<PathBuf>,
    /// Arguments after `--as-claude` (claude's command line).
    #[arg(skip)]
    pub claude_args: Vec<OsString>,
    /// Envelope, output and redaction options (timed and followed replays always flush per
    /// line; redaction not with --raw or --as-claude, which re-emit the recorded bytes).
    #[command(flatten)]
    pub stream: StreamArgs,
}

impl ReplayArgs {
    /// The pacing: `--speed`, else as fast as possible when following, else real time.
    pub fn pacing(&self) -> Speed {
        self.speed.unwrap_or(if self.follow {
            Speed::Max
        } else {
            Speed::Factor(1.0)
        })
    }

    /// How the replay plays into the pipeline (not `--raw` or `--as-claude`).
    pub fn to_envelope(&self) -> ToEnvelope {
        ToEnvelope {
            from_seq: self.from_seq,
            fresh_ids: self.fresh_ids,
            run_id_given: self.stream.output.run_id.is_some(),
            follow: self.follow,
            speed: self.pacing(),
            stderr_events: self.stderr_events,
            name: self
                .files
                .first()
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
        }
    }

    /// Where `--as-claude` takes its capture from: `--as-claude=FILE`, a FILE before
    /// `--as-claude`, `$BOO_REPLAY_CAPTURE`, or the first argument after `--as-claude` (then
    /// not claude's).
    pub fn as_claude_capture(&mut self) -> Result<PathBuf, Error> {
        if let Some(f) = self.as_claude_file.take() {
            return Ok(f);
        }
        if let [f] = self.files.as_slice() {
            return Ok(f.clone());
        }
        if !self.files.is_empty() {
            return Err(Error::msg("--as-claude", "replays exactly one capture"));
        }
        if let Some(f) = std::env::var_os("BOO_REPLAY_CAPTURE").filter(|f| !f.is_empty()) {
            return Ok(f.into());
        }
        match self.claude_args.first() {
            Some(f) if !f.to_string_lossy().starts_with('-') => {
                Ok(self.claude_args.remove(0).into())
            }
            _ => Err(Error::msg(
                "--as-claude",
                "no capture: pass --as-claude=FILE or set BOO_REPLAY_CAPTURE",
            )),
        }
    }

    /// Whether claude's command line (before its `--`) asks for `--version`.
    pub fn asks_version(&self) -> bool {
        let claude_opts = self.claude_args.iter().take_while(|x| *x != "--");
        claude_opts
            .into_iter()
            .any(|x| x == "--version" || x == "-v")
    }
}

/// An `--as-claude` command line, split: what clap parses (`head`, ending in `--as-claude`),
/// the capture given as `--as-claude=FILE`, and claude's own arguments.
pub struct AsClaude {
    /// The arguments for clap.
    pub head: Vec<OsString>,
    /// `--as-claude=FILE`.
    pub file: Option<PathBuf>,
    /// Everything after `--as-claude`.
    pub claude_args: Vec<OsString>,
}

/// The split of `args` when it is an `--as-claude` command line (`replay … --as-claude …`, or
/// this binary called as `claude`); `None` otherwise.
pub fn split_as_claude(args: &[OsString]) -> Option<AsClaude> {
    let called_claude = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|n| n == "claude");
    if called_claude {
        return Some(AsClaude {
            head: ["boo-normalize", "replay", "--as-claude"]
                .map(OsString::from)
                .to_vec(),
            file: None,
            claude_args: args[1..].to_vec(),
        });
    }
    if args.get(1).is_none_or(|a| a != "replay") {
        return None;
    }
    let i = args
        .iter()
        .take_while(|a| *a != "--")
        .position(|a| a == "--as-claude" || a.to_string_lossy().starts_with("--as-claude="))?;
    let file = args[i]
        .to_str()
        .and_then(|a| a.strip_prefix("--as-claude="))
        .map(PathBuf::from);
    let mut head = args[..i].to_vec();
    head.push("--as-claude".into());
    Some(AsClaude {
        head,
        file,
        claude_args: args[i + 1..].to_vec(),
    })
}
