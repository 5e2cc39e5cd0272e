//! `spawn --record`: a driver that writes every child line into the capture before handing it
//! on, and the capture's header (argv, stdin) and end record (exit status, signal).

use std::io;
use std::time::Instant;

use super::procs::{Ended, signal_name};
use super::{Driver, Halt, Outcome, Spec};
use crate::capture::file::{Opened, Recording};
use crate::capture::{End, Header};
use crate::read::Line;

/// Write the opened `--record` file's header, if any, for a run of `spec` (call right before
/// starting it). A failure (a full disk) gives the file's name and the cause.
pub fn start(
    opened: Option<Opened>,
    spec: &Spec,
) -> Result<Option<Recording>, (String, io::Error)> {
    let Some(opened) = opened else {
        return Ok(None);
    };
    let mut header = Header::now("spawn");
    let mut argv = vec![spec.program.to_string_lossy().into_owned()];
    argv.extend(spec.args.iter().map(|a| a.to_string_lossy().into_owned()));
    header.argv = Some(argv);
    header.stdin.clone_from(&spec.stdin);
    opened.start(&header).map(Some)
}

/// A driver that records every line before handing it on.
pub struct Tap<'d> {
    inner: &'d mut dyn Driver,
    rec: Option<&'d mut Recording>,
}

/// `inner`, recorded when recording.
pub fn tap<'d>(rec: &'d mut Option<Recording>, inner: &'d mut dyn Driver) -> Tap<'d> {
    Tap {
        inner,
        rec: rec.as_mut(),
    }
}

impl Tap<'_> {
    /// A failed capture write stops the run like a failed output write (the supervisor
    /// reports it as an output error; [`Recording::finish`] names the file).
    /// After a failure nothing more is recorded (the recorder keeps the cause).
    fn record(&mut self, f: impl FnOnce(&mut Recording) -> io::Result<()>) -> io::Result<()> {
        let Some(r) = self.rec.as_mut() else {
            return Ok(());
        };
        let res = f(r);
        if res.is_err() {
            self.rec = None;
        }
        res
    }
}

impl Driver for Tap<'_> {
    fn line(&mut self, line: &Line<'_>) -> io::Result<Option<Halt>> {
        let recorded = self.record(|r| r.recorder().stdout_framed(line, Instant::now()));
        let stop = self.inner.line(line);
        recorded.and(stop)
    }

    fn stderr(&mut self, line: &[u8], truncated: bool) -> io::Result<()> {
        let recorded = self.record(|r| r.recorder().stderr_line(line, truncated, Instant::now()));
        recorded.and(self.inner.stderr(line, truncated))
    }

    fn idle(&mut self) -> io::Result<()> {
        let recorded = self.record(|r| r.recorder().flush());
        recorded.and(self.inner.idle())
    }

    fn keep_alive(&mut self) -> io::Result<()> {
        self.inner.keep_alive()
    }

    fn ready(&mut self) -> bool {
        self.inner.ready()
    }

    fn tool_running_since(&self) -> Option<Instant> {
        self.inner.tool_running_since()
    }

    fn stall(&mut self, quiet: std::time::Duration) -> io::Result<()> {
        self.inner.stall(quiet)
    }

    fn check_output(&mut self) -> io::Result<()> {
        self.inner.check_output()
    }
}

/// The capture's end record of a child run that ended as `outcome` says: its exit status or
/// signal (the run's `run.end` and the CLI version are filled in when the run concludes).
pub fn end_record(outcome: &Outcome) -> End {
    let (exit_code, signal) = match outcome.ended {
        Some(Ended::Code(c)) => (Some(c), None),
        Some(Ended::Signal(s)) => (None, Some(signal_name(s))),
        None => (None, None),
    };
    End {
        exit_code,
        signal,
        ..End::default()
    }
}
