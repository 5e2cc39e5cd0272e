//! The supervisor: feeds the child's output to a [`Driver`], enforces the timeouts, forwards
//! interrupts with the SIGINT → SIGTERM → SIGKILL escalation, and cleans up every descendant.
//!
//! Timeline of a stop (timeout, idle timeout, a signal to boo-normalize, a guard with
//! `--enforce`, or a child that closed stdout and did not exit within `grace`):
//!
//! 1. SIGINT to the child's process group (claude cleans up on an interrupt);
//! 2. after `grace`: SIGTERM to the group; 3. after another `grace`: SIGKILL to the group
//!    (with [`StopSignal::Term`] the escalation starts at step 2: SIGTERM, then SIGKILL);
//! 4. once the child is reaped (or SIGKILL + `grace` passed): every remaining descendant gets
//!    SIGTERM, then SIGKILL after at most `grace`, and is reaped (skipped with
//!    `keep_background`). The same cleanup runs when the child exits by itself.
//!
//! A second interrupt during a stop moves to the next step at once. A driver may also ask for a
//! kill ([`Halt::Kill`]: a guard that saw a disallowed tool call begin): SIGKILL to the group at
//! once, then step 4. Step 4 itself is [`super::cleanup`].

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use signal_hook::consts::SIGCHLD;

use crate::read::Line;

use super::child::{Batch, Msg, Running, Spec, start};
pub use super::cleanup::{cleanup, cleanup_own};
use super::outcome::{Cause, Outcome};
use super::procs::{self, Ended};

/// Timeouts and cleanup policy.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Longest time without a stdout line while no tool call is outstanding (a running tool may
    /// be quiet for long: the idle timer is paused until its result).
    pub idle_timeout: Option<Duration>,
    /// Only report an idle timeout (a `stall` event, once per quiet period) instead of stopping.
    pub idle_warn_only: bool,
    /// Longest time a tool call may stay without its result.
    pub tool_timeout: Option<Duration>,
    /// Time between escalation steps.
    pub grace: Duration,
    /// The first signal of a stop.
    pub stop_signal: StopSignal,
    /// Leave descendants running after the child ended.
    pub keep_background: bool,
    /// Quiet time after which the sinks get a keep-alive.
    pub keep_alive: Duration,
    /// Clean up only this child's processes (its process group and the descendants it had
    /// while it ran), not every descendant of boo-normalize: several children supervised side
    /// by side (`acp`'s sessions). Orphans that left both are then the caller's to clean up
    /// ([`cleanup`] once every child is gone).
    pub own_only: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: None,
            idle_timeout: None,
            idle_warn_only: false,
            tool_timeout: None,
            grace: Duration::from_secs(5),
            stop_signal: StopSignal::Int,
            keep_background: false,
            keep_alive: KEEP_ALIVE_EVERY,
            own_only: false,
        }
    }
}

/// A driver's request to end the run early; the reason becomes `Cause::Killed(reason)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// The stop sequence (`--stop-signal`, `--grace`).
    Stop(&'static str),
    /// SIGKILL to the child's process group at once (also in the middle of a stop sequence).
    Kill(&'static str),
}

/// What the supervisor feeds. Errors are output errors: the child is then stopped
/// (`killed`/`output_closed`) and the first error is kept in [`Outcome::output_error`]; the
/// driver keeps getting lines until the child is gone (its other outputs still want them).
pub trait Driver {
    /// One stdout line. `Some(halt)` asks to stop or kill the child.
    fn line(&mut self, line: &Line<'_>) -> io::Result<Option<Halt>>;
    /// One stderr line (without newline); `truncated` when it was cut.
    fn stderr(&mut self, line: &[u8], truncated: bool) -> io::Result<()>;
    /// Nothing is pending: a good moment to flush.
    fn idle(&mut self) -> io::Result<()>;
    /// Whether the driver can take more stdout lines now. While false, the child's stdout waits
    /// (backpressure: at most the batches in flight are held) and timers and signals go on.
    fn ready(&mut self) -> bool {
        true
    }
    /// Since when the oldest tool call without a result has been running (`None`: none is).
    fn tool_running_since(&self) -> Option<Instant> {
        None
    }
    /// The idle timeout passed in warn-only mode: report a stall (quiet for `quiet`).
    fn stall(&mut self, _quiet: Duration) -> io::Result<()> {
        Ok(())
    }
    /// The child has been quiet for `--keep-alive`: let the sinks say the stream is alive
    /// (an SSE `: keep-alive` comment).
    fn keep_alive(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Asked every turn of the loop (at least every [`TICK`]): an error when the output is no
    /// longer wanted although nothing was written (stdout's reader went away: `| head -1`
    /// exited while the child is quiet). The child is then stopped (`killed`/`output_closed`).
    fn check_output(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Default quiet time before the sinks get a keep-alive.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// Longest sleep between checks of the child's status.
const TICK: Duration = Duration::from_millis(200);

/// How often held stdout batches are offered again while the output is backed up.
const HELD_POLL: Duration = Duration::from_millis(20);

/// With [`Limits::own_only`]: how often the child's descendants are looked up in `/proc` (a
/// scan reads every process's `stat`), when nothing is waiting on the channel; while lines keep
/// coming, at least every [`TICK`]. Never between a line and the next one already queued: the
/// scan was once made after every message, and each line of a burst (the first text of a
/// prompt: `message_start`, `content_block_start`, then the delta) waited for the scans of the
/// lines before it.
const SCAN_EVERY: Duration = Duration::from_millis(100);

struct Stop {
    cause: Cause,
    /// Signals sent so far (0 = none yet).
    step: usize,
    next: Instant,
}

/// The signal a stop begins with (`--stop-signal`); SIGKILL follows after `grace` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopSignal {
    /// SIGINT, then SIGTERM, then SIGKILL (claude handles an interrupt like Ctrl-C).
    #[default]
    Int,
    /// SIGTERM, then SIGKILL (a GUI session manager's TERM → 5 s → KILL).
    Term,
}

impl StopSignal {
    fn steps(self) -> &'static [Signal] {
        match self {
            StopSignal::Int => &[Signal::SIGINT, Signal::SIGTERM, Signal::SIGKILL],
            StopSignal::Term => &[Signal::SIGTERM, Signal::SIGKILL],
        }
    }
}

struct Sup<'d> {
    run: Running,
    limits: Limits,
    driver: &'d mut dyn Driver,
    start: Instant,
    last_line: Instant,
    last_keep_alive: Instant,
    stdout_open: bool,
    /// The stderr thread has not yet sent [`Msg::StderrEnd`].
    stderr_open: bool,
    stdout_closed_at: Option<Instant>,
    ended: Option<Ended>,
    ended_at: Option<Instant>,
    gave_up: bool,
    /// Descendants killed by the cleanup that ran once the child was gone.
    cleaned: Option<usize>,
    stop: Option<Stop>,
    sent: Vec<&'static str>,
    output_error: Option<io::Error>,
    dirty: bool,
    hurry: bool,
    /// Stdout batches taken from the channel while the driver was not ready (their credits
    /// are not returned yet, so the reader stops).
    held: VecDeque<Batch>,
    /// With [`Limits::own_only`]: the child's descendants seen while it ran.
    own: std::collections::HashSet<i32>,
    /// When they were last looked up (see [`SCAN_EVERY`]).
    scanned: Option<Instant>,
}

/// Why [`supervise`] failed.
#[derive(Debug)]
pub enum RunError {
    /// The child could not be started.
    Start(io::Error),
}

/// Run `spec` under `limits`, feeding `driver`, until the child and its descendants are gone.
/// The caller should have made the process a subreaper first ([`procs::become_subreaper`]).
pub fn supervise(
    spec: &Spec,
    limits: &Limits,
    driver: &mut dyn Driver,
) -> Result<Outcome, RunError> {
    let run = start(spec).map_err(RunError::Start)?;
    let now = Instant::now();
    let mut s = Sup {
        run,
        limits: limits.clone(),
        driver,
        start: now,
        last_line: now,
        last_keep_alive: now,
        stdout_open: true,
        stderr_open: true,
        stdout_closed_at: None,
        ended: None,
        ended_at: None,
        gave_up: false,
        cleaned: None,
        stop: None,
        sent: Vec::new(),
        output_error: None,
        dirty: false,
        hurry: false,
        held: VecDeque::new(),
        own: Default::default(),
        scanned: None,
    };
    s.main_loop();
    s.run.close_signals();
    let (descendants_killed, background_left) = if s.limits.keep_background {
        procs::reap_orphans(None);
        let left = procs::descendants()
            .iter()
            .filter(|p| p.state != 'Z')
            .count();
        (0, left)
    } else {
        // A second pass catches what was forked during the first.
        (s.cleaned.unwrap_or(0) + s.cleanup(), 0)
    };
    s.drain_rest();
    let cause = match (&s.stop, s.ended) {
        (Some(st), _) => st.cause,
        (None, Some(Ended::Signal(_))) => Cause::Signal,
        (None, _) => Cause::Exit,
    };
    Ok(Outcome {
        cause,
        ended: s.ended,
        signals_sent: s.sent,
        descendants_killed,
        background_left,
        elapsed: s.start.elapsed(),
        output_error: s.output_error.take().map(Arc::new),
        stderr_dropped: s.run.stderr_dropped(),
    })
}

impl Sup<'_> {
    fn main_loop(&mut self) {
        loop {
            let now = Instant::now();
            if self.ended.is_some() || self.gave_up {
                // After the child: cleanup unblocks a pipe that a descendant still holds.
                let ended_at = *self.ended_at.get_or_insert(now);
                let pipes_open = self.stdout_open || self.stderr_open;
                if !pipes_open || self.hurry || now >= ended_at + self.limits.grace {
                    return;
                }
                if !self.limits.keep_background && self.cleaned.is_none() {
                    // Then wait (at most `grace` from now) for EOF and the last lines.
                    self.cleaned = Some(self.cleanup());
                    self.ended_at = Some(Instant::now());
                }
            } else {
                self.check_deadlines(now);
            }
            // Once the child is gone what is left is bounded (the pipe): take it all.
            self.release_held(self.ended.is_some() || self.gave_up);
            let mut wait = self.next_deadline(now).saturating_duration_since(now);
            if !self.held.is_empty() {
                // Look again soon whether the output drained.
                wait = wait.min(HELD_POLL);
            }
            let msg = match self.run.rx.try_recv() {
                Ok(m) => Some(m),
                Err(_) => {
                    // Nothing queued: the moment for the lookup of the child's descendants.
                    self.note_own(SCAN_EVERY);
                    self.idle();
                    match self.run.rx.recv_timeout(wait) {
                        Ok(m) => Some(m),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => {
                            std::thread::sleep(wait);
                            None
                        }
                    }
                }
            };
            if let Some(m) = msg {
                self.handle(m);
            } else {
                self.keep_alive_if_quiet();
            }
            // Lines without a pause: still look now and then.
            self.note_own(TICK);
            self.poll_child();
            self.check_output();
        }
    }

    fn next_deadline(&self, now: Instant) -> Instant {
        let mut d = now + TICK;
        let mut consider = |t: Instant| d = d.min(t);
        if let Some(ended_at) = self.ended_at {
            consider(ended_at + self.limits.grace);
            return d;
        }
        if let Some(st) = &self.stop {
            consider(st.next);
        } else {
            if let Some(t) = self.limits.timeout {
                consider(self.start + t);
            }
            match self.driver.tool_running_since() {
                Some(since) => {
                    if let Some(t) = self.limits.tool_timeout {
                        consider(since + t);
                    }
                }
                None => {
                    if let (Some(t), true) = (self.limits.idle_timeout, self.stdout_open) {
                        consider(self.last_line + t);
                    }
                }
            }
            if let Some(c) = self.stdout_closed_at {
                consider(c + self.limits.grace);
            }
        }
        d
    }

    fn check_deadlines(&mut self, now: Instant) {
        if self.stop.is_none() {
            let l = &self.limits;
            let tool = self.driver.tool_running_since();
            if l.timeout.is_some_and(|t| now >= self.start + t) {
                self.begin_stop(Cause::Timeout);
            } else if let (Some(since), Some(t)) = (tool, l.tool_timeout)
                && now >= since + t
            {
                self.begin_stop(Cause::Killed("tool_timeout"));
            } else if tool.is_some() {
                // A tool is running: quiet is expected, the idle timer counts from its result.
                self.last_line = now;
            } else if self.stdout_open && l.idle_timeout.is_some_and(|t| now >= self.last_line + t)
            {
                if l.idle_warn_only {
                    let quiet = now - self.last_line;
                    self.last_line = now;
                    if let Err(e) = self.driver.stall(quiet) {
                        self.output_failed(e);
                    }
                } else {
                    self.begin_stop(Cause::IdleTimeout);
                }
            } else if self
                .stdout_closed_at
                .is_some_and(|c| now >= c + self.limits.grace)
            {
                self.begin_stop(Cause::Killed("stdout_closed"));
            }
        }
        if self.stop.as_ref().is_some_and(|st| now >= st.next) {
            self.escalate();
        }
    }

    fn begin_stop(&mut self, cause: Cause) {
        if self.stop.is_some() || self.ended.is_some() {
            return;
        }
        self.stop = Some(Stop {
            cause,
            step: 0,
            next: Instant::now(),
        });
        self.escalate();
    }

    /// SIGKILL now: a new stop that skips to its last step, or a stop under way that jumps there
    /// (keeping its cause).
    fn kill_now(&mut self, cause: Cause) {
        if self.ended.is_some() {
            return;
        }
        let last = self.limits.stop_signal.steps().len() - 1;
        match self.stop.as_mut() {
            Some(st) if st.step > last => return,
            Some(st) => st.step = last,
            None => {
                self.stop = Some(Stop {
                    cause,
                    step: last,
                    next: Instant::now(),
                })
            }
        }
        self.escalate();
    }

    /// Send the next signal of the escalation (or give up after SIGKILL + grace).
    fn escalate(&mut self) {
        let Some(st) = self.stop.as_mut() else { return };
        if self.ended.is_some() {
            return;
        }
        let steps = self.limits.stop_signal.steps();
        if st.step >= steps.len() {
            self.gave_up = true;
            return;
        }
        let sig = steps[st.step];
        st.step += 1;
        st.next = Instant::now() + self.limits.grace;
        procs::signal_group(self.run.pid, sig);
        self.sent.push(sig.as_str());
    }

    /// Kill and reap what is left of the run: every descendant, or (with
    /// [`Limits::own_only`]) this child's own.
    fn cleanup(&mut self) -> usize {
        if self.limits.own_only {
            cleanup_own(self.run.pid, &mut self.own, self.limits.grace)
        } else {
            cleanup(self.limits.grace)
        }
    }

    /// With [`Limits::own_only`], while the child runs and when the last lookup is at least
    /// `every` old: note the child's descendants. Ancestry is lost once the child is gone (its
    /// children go to the subreaper), so they are noted while it runs.
    fn note_own(&mut self, every: Duration) {
        if !self.limits.own_only
            || self.ended.is_some()
            || self.scanned.is_some_and(|t| t.elapsed() < every)
        {
            return;
        }
        let all = procs::scan();
        self.own.extend(
            procs::descendants_in(&all, self.run.pid)
                .iter()
                .map(|p| p.pid),
        );
        self.scanned = Some(Instant::now());
    }

    fn poll_child(&mut self) {
        if self.ended.is_some() {
            return;
        }
        match procs::try_reap(self.run.pid) {
            Ok(Some(e)) => {
                self.ended = Some(e);
                self.ended_at = Some(Instant::now());
            }
            Ok(None) => {}
            Err(_) => {
                // Not our child any more (someone else reaped it): treat as gone.
                self.gave_up = true;
            }
        }
    }

    /// A keep-alive for the sinks when neither a line nor a keep-alive went out for a while.
    fn keep_alive_if_quiet(&mut self) {
        let quiet_since = self.last_line.max(self.last_keep_alive);
        if quiet_since.elapsed() >= self.limits.keep_alive {
            self.last_keep_alive = Instant::now();
            if let Err(e) = self.driver.keep_alive() {
                self.output_failed(e);
            }
        }
    }

    fn idle(&mut self) {
        if self.dirty {
            self.dirty = false;
            if let Err(e) = self.driver.idle() {
                self.output_failed(e);
            }
        }
    }

    /// While the child runs and no output failed: whether the output went away unwritten.
    fn check_output(&mut self) {
        if self.output_error.is_some() || self.ended.is_some() || self.gave_up {
            return;
        }
        if let Err(e) = self.driver.check_output() {
            self.output_failed(e);
        }
    }

    fn output_failed(&mut self, e: io::Error) {
        if self.output_error.is_none() {
            self.output_error = Some(e);
        }
        self.begin_stop(Cause::Killed("output_closed"));
    }

    fn handle(&mut self, m: Msg) {
        match m {
            Msg::Lines(batch) => {
                self.last_line = Instant::now();
                self.held.push_back(batch);
                self.release_held(false);
            }
            Msg::StdoutEnd(_) => {
                self.stdout_open = false;
                if self.ended.is_none() {
                    self.stdout_closed_at = Some(Instant::now());
                }
            }
            Msg::StderrEnd => self.stderr_open = false,
            Msg::Stderr(line, truncated) => {
                self.run.stderr_taken(&line);
                self.dirty = true;
                if let Err(e) = self.driver.stderr(&line, truncated) {
                    self.output_failed(e);
                }
            }
            Msg::Signal(SIGCHLD) => {
                self.poll_child();
                if !self.limits.own_only {
                    procs::reap_orphans(Some(self.run.pid));
                }
            }
            Msg::Signal(sig) => {
                if self.ended.is_some() || self.gave_up {
                    self.hurry = true;
                } else if self.stop.is_some() {
                    self.escalate();
                } else {
                    self.begin_stop(Cause::Interrupted(sig));
                }
            }
        }
    }

    /// Hand held stdout batches to the driver while it is ready (`all`: regardless; at the end,
    /// so the audit log gets every line even when stdout is not read).
    fn release_held(&mut self, all: bool) {
        while !self.held.is_empty() && (all || self.driver.ready()) {
            let batch = self.held.pop_front().expect("not empty");
            let _ = self.run.credit.try_send(());
            for i in 0..batch.len() {
                self.dirty = true;
                match self.driver.line(&batch.line(i)) {
                    Ok(Some(Halt::Stop(reason))) => self.begin_stop(Cause::Killed(reason)),
                    Ok(Some(Halt::Kill(reason))) => self.kill_now(Cause::Killed(reason)),
                    Ok(None) => {}
                    Err(e) => self.output_failed(e),
                }
            }
        }
    }

    /// After cleanup: whatever is still queued (the last lines of a pipe that closed late).
    fn drain_rest(&mut self) {
        self.release_held(true);
        while let Ok(m) = self.run.rx.try_recv() {
            if !matches!(m, Msg::Signal(_)) {
                self.handle(m);
            }
        }
        self.idle();
    }
}
