//! How a spawned run ended: the `run.end` members and boo-normalize's exit status.
//!
//! # Exit status of `spawn`
//!
//! | `run.end.cause` | meaning | exit status |
//! |---|---|---|
//! | `exit` | the child exited by itself | the child's exit code |
//! | `signal` | a signal boo-normalize did not send killed the child | 128 + N (137 for SIGKILL) |
//! | `timeout` | `--timeout` passed; the child was stopped | 124 (as coreutils `timeout`) |
//! | `idle_timeout` | no stdout line for `--idle-timeout`; the child was stopped | 124 |
//! | `interrupted` | boo-normalize got SIGINT, SIGTERM or SIGHUP and stopped the child | 128 + that signal (130, 143, 129) |
//! | `killed`, `reason: "policy"` | a guard fired with `--enforce` | 125 |
//! | `killed`, `reason: "stdout_closed"` | the child closed stdout but did not exit within `--grace` (the hang after `result`) | 0 if the last `result` was a success, else 1 (what the child would have returned) |
//!
//! | `killed`, `reason: "supervisor_killed"` | the process the caller started was killed (see [`super::guardian`]) | (nobody waits for it) |
//! | `sink_failed` | writing a file sink failed (`sink`, `error`); the child was stopped | 74 (2 when it was stdout) |
//!
//! Failing to start: 127 when the binary is not found, 126 when it cannot be executed (`run.end`
//! with cause `spawn_failed` is still written to every sink), 2 for usage errors (as every
//! subcommand). `--strict` turns an otherwise successful (0) run with
//! unusable lines or unknown events into 1. A closed stdout (`| head -1`) stops the child and
//! exits 0, as `normalize` does.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::normalize::EndInfo;

use super::procs::{Ended, signal_name};
use crate::exit::Exit;

/// Why the run ended (`run.end.cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The child exited by itself.
    Exit,
    /// A signal from elsewhere killed the child.
    Signal,
    /// `--timeout`.
    Timeout,
    /// `--idle-timeout`.
    IdleTimeout,
    /// boo-normalize was asked to stop (this signal number).
    Interrupted(i32),
    /// boo-normalize stopped the child for this reason (`policy`, `tool_timeout`,
    /// `stdout_closed`, `output_closed`).
    Killed(&'static str),
}

impl Cause {
    /// The `run.end.cause` string.
    pub fn as_str(&self) -> &'static str {
        match self {
            Cause::Exit => "exit",
            Cause::Signal => "signal",
            Cause::Timeout => "timeout",
            Cause::IdleTimeout => "idle_timeout",
            Cause::Interrupted(_) => "interrupted",
            Cause::Killed(_) => "killed",
        }
    }
}

/// The end of a spawned run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Why it ended.
    pub cause: Cause,
    /// The child's status; `None` if it could not be reaped (it survived SIGKILL + grace).
    pub ended: Option<Ended>,
    /// Signals sent to the child's process group, in order.
    pub signals_sent: Vec<&'static str>,
    /// Descendants still running after the child ended that were killed.
    pub descendants_killed: usize,
    /// Descendants left running (`--keep-background`).
    pub background_left: usize,
    /// Wall-clock time from start to the end of cleanup.
    pub elapsed: Duration,
    /// The first output error (the reason for `killed`/`output_closed`), if any.
    pub output_error: Option<Arc<io::Error>>,
    /// Child stderr lines dropped to keep memory bounded (they came faster than they could be
    /// passed on).
    pub stderr_dropped: u64,
}

impl Outcome {
    /// The `run.end` members for this outcome.
    pub fn end_info(&self) -> EndInfo {
        let mut extra: Vec<(String, String)> = Vec::new();
        let (code, sig) = match self.ended {
            Some(Ended::Code(c)) => (c.to_string(), "null".to_owned()),
            Some(Ended::Signal(s)) => ("null".to_owned(), json_str(&signal_name(s))),
            None => ("null".to_owned(), "null".to_owned()),
        };
        extra.push(("exit_code".into(), code));
        extra.push(("signal".into(), sig));
        match self.cause {
            Cause::Killed(r) => extra.push(("reason".into(), json_str(r))),
            Cause::Interrupted(s) => extra.push(("reason".into(), json_str(&signal_name(s)))),
            _ => {}
        }
        let sent: Vec<String> = self.signals_sent.iter().map(|s| json_str(s)).collect();
        extra.push(("signals_sent".into(), format!("[{}]", sent.join(","))));
        extra.push((
            "descendants_killed".into(),
            self.descendants_killed.to_string(),
        ));
        if self.background_left > 0 {
            extra.push(("background_left".into(), self.background_left.to_string()));
        }
        extra.push(("elapsed_ms".into(), self.elapsed.as_millis().to_string()));
        if self.stderr_dropped > 0 {
            extra.push(("stderr_dropped".into(), self.stderr_dropped.to_string()));
        }
        EndInfo {
            cause: self.cause.as_str().into(),
            extra,
        }
    }

    /// boo-normalize's exit status (see the module docs). `last_turn_ok` is whether the last
    /// `result` was a success (`None`: there was none).
    pub fn exit_status(&self, last_turn_ok: Option<bool>) -> Exit {
        match self.cause {
            Cause::Exit | Cause::Signal => match self.ended {
                Some(Ended::Code(c)) => Exit::child((c & 0xff) as u8),
                Some(Ended::Signal(s)) => Exit::signal(s),
                None => Exit::FINDINGS,
            },
            Cause::Timeout | Cause::IdleTimeout => Exit::TIMEOUT,
            Cause::Interrupted(s) => Exit::signal(s),
            Cause::Killed("policy") => Exit::POLICY,
            Cause::Killed("tool_timeout") => Exit::TIMEOUT,
            Cause::Killed(_) if last_turn_ok == Some(true) => Exit::OK,
            Cause::Killed(_) => Exit::FINDINGS,
        }
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(cause: Cause, ended: Option<Ended>) -> Outcome {
        Outcome {
            cause,
            ended,
            signals_sent: vec!["SIGINT"],
            descendants_killed: 2,
            background_left: 0,
            elapsed: Duration::from_millis(1500),
            output_error: None,
            stderr_dropped: 0,
        }
    }

    #[test]
    fn exit_mapping() {
        assert_eq!(
            out(Cause::Exit, Some(Ended::Code(3)))
                .exit_status(None)
                .code(),
            3
        );
        assert_eq!(
            out(Cause::Signal, Some(Ended::Signal(9)))
                .exit_status(None)
                .code(),
            137
        );
        assert_eq!(
            out(Cause::Timeout, Some(Ended::Code(0)))
                .exit_status(None)
                .code(),
            124
        );
        assert_eq!(out(Cause::IdleTimeout, None).exit_status(None).code(), 124);
        assert_eq!(
            out(Cause::Interrupted(2), None).exit_status(None).code(),
            130
        );
        assert_eq!(
            out(Cause::Interrupted(15), None).exit_status(None).code(),
            143
        );
        assert_eq!(
            out(Cause::Killed("policy"), None).exit_status(None).code(),
            125
        );
        let hang = out(Cause::Killed("stdout_closed"), Some(Ended::Signal(2)));
        assert_eq!(hang.exit_status(Some(true)).code(), 0);
        assert_eq!(hang.exit_status(Some(false)).code(), 1);
        assert_eq!(hang.exit_status(None).code(), 1);
    }

    #[test]
    fn end_members() {
        let e = out(Cause::Interrupted(2), Some(Ended::Signal(15))).end_info();
        assert_eq!(e.cause, "interrupted");
        let get = |k: &str| e.extra.iter().find(|(n, _)| n == k).map(|x| x.1.clone());
        assert_eq!(get("exit_code").as_deref(), Some("null"));
        assert_eq!(get("signal").as_deref(), Some("\"SIGTERM\""));
        assert_eq!(get("reason").as_deref(), Some("\"SIGINT\""));
        assert_eq!(get("signals_sent").as_deref(), Some("[\"SIGINT\"]"));
        assert_eq!(get("elapsed_ms").as_deref(), Some("1500"));
        assert_eq!(get("background_left"), None);
    }
}
