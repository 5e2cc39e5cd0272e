//! The one processing loop: framed lines → normalizer → every sink, with the flush policy.
//!
//! Output is block-buffered while input is arriving faster than it is processed, and flushed
//! whenever the reader has no complete line buffered (the next read could block), so a consumer
//! behind a slow producer sees each event as soon as its line arrives. `line_buffered` flushes
//! after every input line instead.
//!
//! A sink whose write fails is taken out of the run: the error is kept ([`Pipeline::failure`]),
//! the other sinks keep getting every event (so they can still be given `run.end`, see
//! [`EndInfo::sink_failed`]), and the call that hit the failure returns the error so the caller
//! can stop its source.

pub mod conclude;
pub mod inputs;
pub mod setup;

use std::io::{self, Read};

use crate::clock::{Clock, Stamp, SystemClock};
use crate::dialect::{Choice, Dialect, Stage};
use crate::envelope::Events;
use crate::json::fields::Index;
use crate::normalize::{EndInfo, Normalizer, Stats};
use crate::read::{Line, LineReader};
use crate::sink::named::NamedError;
use crate::sink::{EventCtx, Sink};
use crate::transform::{LineTransform, Origin, Transformed};

/// Normalizer plus sinks.
pub struct Pipeline<'a> {
    normalizer: Normalizer,
    events: Events,
    sinks: Vec<Box<dyn Sink + 'a>>,
    /// Per sink: it failed and gets nothing more.
    dead: Vec<bool>,
    failure: Option<SinkFailure>,
    line_buffered: bool,
    lines: u64,
    clock: Box<dyn Clock + 'a>,
    resume_after: Option<u64>,
    start_after: Option<u64>,
    transform: Option<Box<dyn LineTransform + 'a>>,
    transformed: Transformed,
    /// How each input's dialect is chosen (`None`: every line is stream-json as it is).
    choice: Option<Choice>,
    /// The current input's dialect reader, until the input is known to be stream-json.
    dialect: Option<Stage>,
    dialect_out: Transformed,
    last_line: u64,
    input_ready: Option<Box<dyn FnMut() -> bool + 'a>>,
    /// The members of the event being handed out, for the sinks that read them.
    index: Index,
}

impl<'a> Pipeline<'a> {
    /// A pipeline writing to `sinks` (every sink sees every event with the same `seq`).
    pub fn new(normalizer: Normalizer, sinks: Vec<Box<dyn Sink + 'a>>) -> Self {
        Pipeline {
            normalizer,
            events: Events::default(),
            dead: vec![false; sinks.len()],
            failure: None,
            sinks,
            line_buffered: false,
            lines: 0,
            clock: Box::new(SystemClock::new()),
            resume_after: None,
            start_after: None,
            transform: None,
            transformed: Transformed::default(),
            choice: Some(Choice::Auto),
            dialect: Some(Stage::new(Choice::Auto)),
            dialect_out: Transformed::default(),
            last_line: 0,
            input_ready: None,
            index: Index::default(),
        }
    }

    /// How [`Pipeline::run`] tells whether more input can be read without waiting: `ready()`
    /// returns true when a read would not block (a regular file, a pipe with data in it). Output
    /// is flushed whenever the reader has no whole line left *and* the input is not ready, so
    /// events of a slow producer go out at once while a fast one's stay block-buffered (and the
    /// audit sink keeps hashing on its helper thread). Without a probe (the default), output is
    /// flushed whenever the reader has no whole line left.
    pub fn set_input_ready(&mut self, ready: Option<Box<dyn FnMut() -> bool + 'a>>) {
        self.input_ready = ready;
    }

    /// Rewrite every input line with `t` before normalizing it (redaction): the normalizer and
    /// every sink, audit raw lines included, see only the rewritten bytes.
    pub fn transform(mut self, t: Box<dyn LineTransform + 'a>) -> Self {
        self.transform = Some(t);
        self
    }

    /// How each input's dialect is chosen ([`crate::dialect`]): from its lines (the default),
    /// as given, or `None` to read every line as Claude stream-json.
    pub fn dialect(mut self, choice: Option<Choice>) -> Self {
        self.choice = choice;
        self.dialect = choice.map(Stage::new);
        self
    }

    /// The dialect of the input being read, once known (`None`: stream-json as it is, or not
    /// yet known).
    pub fn input_dialect(&self) -> Option<Dialect> {
        self.dialect.as_ref().and_then(Stage::dialect)
    }

    /// Read times from `clock` instead of the system clock (replays, tests).
    pub fn with_clock(mut self, clock: Box<dyn Clock + 'a>) -> Self {
        self.clock = clock;
        self
    }

    /// Number events from `first` instead of 0 (a run continued by a new process).
    pub fn first_seq(mut self, first: u64) -> Self {
        self.events = Events::starting_at(first);
        self
    }

    /// Flush after every input line.
    pub fn line_buffered(mut self, yes: bool) -> Self {
        self.line_buffered = yes;
        self
    }

    /// Hide the events with `seq <= n` from every sink (every line is still normalized, so
    /// the state at that point is the same as in the full run). `replay --from-seq`.
    pub fn resume_after(mut self, n: Option<u64>) -> Self {
        self.resume_after = n;
        self
    }

    /// Resume after event `n` (a reconnecting `EventSource`'s `Last-Event-ID`): sinks write only
    /// the events with `seq > n`; those that [keep state](Sink::keeps_history) also get the
    /// earlier ones, marked [`EventCtx::before_resume`].
    pub fn start_after(mut self, n: Option<u64>) -> Self {
        self.start_after = n;
        self
    }

    /// Whether the next event still comes before the resume point (either kind): replays skip
    /// the pacing of those lines.
    pub fn resuming(&self) -> bool {
        let n = self.next_seq();
        self.resume_after.is_some_and(|r| n <= r) || self.start_after.is_some_and(|s| n <= s)
    }

    /// The `seq` the next event gets.
    pub fn next_seq(&self) -> u64 {
        self.events.next_seq()
    }

    /// Statistics so far.
    pub fn stats(&self) -> &Stats {
        self.normalizer.stats()
    }

    /// The normalizer (for the CLI version, terminal state, …).
    pub fn normalizer(&self) -> &Normalizer {
        &self.normalizer
    }

    /// The normalizer, to change what it accepts as the input turns out (see
    /// [`Normalizer::set_allow_no_result`]).
    pub fn normalizer_mut(&mut self) -> &mut Normalizer {
        &mut self.normalizer
    }

    /// The first sink that failed, if any (it has been taken out of the run).
    pub fn failure(&self) -> Option<&SinkFailure> {
        self.failure.as_ref()
    }

    /// Take the first failure out (a later failure of another sink takes its place).
    pub fn take_failure(&mut self) -> Option<SinkFailure> {
        self.failure.take()
    }

    /// Call `f` on every live sink; a sink that fails is taken out (see the module docs). Returns
    /// the first error of this call, after every other sink had its turn.
    fn each_sink(&mut self, mut f: impl FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
        let mut res = Ok(());
        for (s, dead) in self.sinks.iter_mut().zip(&mut self.dead) {
            if *dead {
                continue;
            }
            if let Err(e) = f(s.as_mut()) {
                *dead = true;
                let again = dup(&e);
                if self.failure.is_none() {
                    self.failure = Some(SinkFailure::of(e));
                }
                if res.is_ok() {
                    res = Err(again);
                }
            }
        }
        res
    }

    /// Read every line of `src`. Line numbers continue across calls, as if the inputs were
    /// concatenated (each input's end also ends its last line).
    pub fn run<R: Read>(&mut self, src: R, max_line: Option<usize>) -> io::Result<()> {
        // Each input's dialect is its own.
        if self.choice.is_some() && self.dialect.as_ref().is_none_or(|d| d.dialect().is_some()) {
            self.finish_dialect()?;
            self.dialect = self.choice.map(Stage::new);
        }
        let mut reader = LineReader::new(src).with_max_line(max_line);
        loop {
            if !reader.has_buffered_line() && !self.input_ready.as_mut().is_some_and(|r| r()) {
                self.flush()?;
            }
            let Some(line) = reader.next_line()? else {
                break;
            };
            let line = Line {
                number: line.number + self.lines,
                ..line
            };
            self.push_line(&line)?;
        }
        self.lines += reader.lines_read();
        Ok(())
    }

    /// Normalize one line and hand its events to every sink.
    pub fn push_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.push_line_with(line, |_, _| {})
    }

    /// Like [`push_line`](Self::push_line), but `inspect` sees the line's events first (they
    /// start at index `first` of `events.metas`) and may append events of its own (e.g. the
    /// guards' `policy.violation`), which the sinks then get in the same batch.
    pub fn push_line_with(
        &mut self,
        line: &Line<'_>,
        inspect: impl FnMut(&mut Events, usize),
    ) -> io::Result<()> {
        self.last_line = line.number;
        // A byte order mark before the JSON (Windows editors write one) is dropped, and said so.
        let unmarked;
        let line = match line.bytes.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => {
                self.normalizer.bom_dropped(line.number);
                unmarked = Line {
                    bytes: rest,
                    ..*line
                };
                &unmarked
            }
            None => line,
        };
        let mut inspect = inspect;
        match self.dialect.as_mut() {
            Some(stage) => {
                let mut out = std::mem::take(&mut self.dialect_out);
                out.clear();
                stage.line(line, &mut out);
                let res = self.push_dialect_lines(line, &out, &mut inspect);
                self.dialect_out = out;
                res?;
            }
            None => self.push_read(line, None, &mut inspect)?,
        }
        if self.line_buffered {
            self.flush()?;
        }
        Ok(())
    }

    /// The stream-json lines the dialect stage made of input line `orig` (in `out`), through the
    /// rest of the pipeline; the stage is dropped once the input is stream-json as it is.
    fn push_dialect_lines(
        &mut self,
        orig: &Line<'_>,
        out: &Transformed,
        inspect: &mut impl FnMut(&mut Events, usize),
    ) -> io::Result<()> {
        let Some(stage) = self.dialect.as_ref() else {
            return Ok(());
        };
        let agent = stage
            .dialect()
            .filter(|d| *d != Dialect::Claude)
            .map(Dialect::agent);
        if agent.is_some() && self.normalizer.agent() != agent {
            self.normalizer.set_agent(agent);
            if let Some(d) = stage.dialect() {
                self.normalizer.set_tool_dialect(d.tools());
            }
        }
        let violations: Vec<(usize, String)> = (0..out.len())
            .filter_map(|i| stage.violation(i).map(|w| (i, w.to_owned())))
            .collect();
        if stage.passes_through() {
            self.dialect = None;
        }
        for i in 0..out.len() {
            let (bytes, _, origin) = out.get(i, orig.bytes);
            let from = origin.unwrap_or_else(|| Origin::of(orig));
            let l = from.line(bytes);
            if let Some((_, w)) = violations.iter().find(|(j, _)| *j == i) {
                self.events.set_line_violation(from.number, w.clone());
            }
            // The events' input line, as the audit log records it, is the line as read.
            self.push_read(&l, Some(orig.bytes), inspect)?;
        }
        Ok(())
    }

    /// The end of an input read by a dialect reader: what it still holds.
    fn finish_dialect(&mut self) -> io::Result<()> {
        let Some(stage) = self.dialect.as_mut() else {
            return Ok(());
        };
        let mut out = std::mem::take(&mut self.dialect_out);
        out.clear();
        let last = Line {
            bytes: b"",
            number: self.last_line,
            raw_len: 0,
            terminated: true,
            oversized: None,
            cr: false,
        };
        stage.finish(&last, &mut out);
        let res = self.push_dialect_lines(&last, &out, &mut |_: &mut Events, _| {});
        self.dialect_out = out;
        res
    }

    /// A stream-json line (as read, or made by the dialect stage from the input line `read`)
    /// through the line transform, if any, and the normalizer. The sinks get `read` as the
    /// events' raw line (`None`: `line` itself); with a transform, its output line (redaction:
    /// the raw line must not hold what it took out).
    fn push_read(
        &mut self,
        line: &Line<'_>,
        read: Option<&[u8]>,
        inspect: &mut impl FnMut(&mut Events, usize),
    ) -> io::Result<()> {
        if self.transform.is_some() {
            let t = self.transform.as_mut().expect("checked");
            self.transformed.clear();
            t.line(line, &mut self.transformed);
            self.push_transformed(line, inspect)
        } else {
            self.push_one(line, read, inspect)
        }
    }

    /// Normalize one (possibly rewritten) line, let `inspect` see its events, hand them out.
    fn push_one(
        &mut self,
        line: &Line<'_>,
        read: Option<&[u8]>,
        mut inspect: impl FnMut(&mut Events, usize),
    ) -> io::Result<()> {
        let first = self.events.len();
        self.normalizer.push_line(line, &mut self.events);
        let added = self.events.len();
        inspect(&mut self.events, first);
        self.normalizer.count_events(&self.events, added);
        let stamp = self.stamp();
        self.drain(Some(line), read, stamp)
    }

    /// Normalize the transform's output for `orig`: usually one rewritten line, sometimes
    /// preceded by lines the transform releases (held-back delta text), which get `raw_len` 0 so
    /// `stats.lines` still counts input lines.
    fn push_transformed(
        &mut self,
        orig: &Line<'_>,
        mut inspect: impl FnMut(&mut Events, usize),
    ) -> io::Result<()> {
        let out = std::mem::take(&mut self.transformed);
        let mut res = Ok(());
        for i in 0..out.len() {
            let (bytes, members, origin) = out.get(i, orig.bytes);
            let from = origin.unwrap_or_else(|| Origin::of(orig));
            let l = from.line(bytes);
            self.events.set_line_members(from.number, members);
            res = self.push_one(&l, None, &mut inspect);
            self.events.set_line_members(from.number, b"");
            if res.is_err() {
                break;
            }
        }
        self.transformed = out;
        res
    }

    /// The clock's reading, when some sink uses it (reading it costs a syscall per line).
    fn stamp(&mut self) -> Stamp {
        if self.sinks.iter().any(|s| s.wants_time()) {
            self.clock.now()
        } else {
            Stamp::default()
        }
    }

    /// Hand the events written so far to every sink: those of `line` get `read` (else the
    /// line's bytes) as their raw input line.
    fn drain(
        &mut self,
        line: Option<&Line<'_>>,
        read: Option<&[u8]>,
        stamp: Stamp,
    ) -> io::Result<()> {
        let cli_version = self.normalizer.cli_version();
        let mut res = Ok(());
        for m in &self.events.metas {
            if self.resume_after.is_some_and(|n| m.seq <= n) {
                continue;
            }
            let raw = match (line, m.line) {
                (Some(l), Some(n)) if l.number == n => Some(read.unwrap_or(l.bytes)),
                _ => None,
            };
            let before_resume = self.start_after.is_some_and(|n| m.seq <= n);
            // Index the event's members once, if a sink that gets it reads them.
            let structured = self.sinks.iter().zip(&self.dead).any(|(s, dead)| {
                !*dead && (!before_resume || s.keeps_history()) && s.wants_fields(m)
            });
            let bytes = self.events.bytes(m);
            let fields = (structured && self.events.index(m, &mut self.index))
                .then(|| self.index.view(bytes));
            let ctx = EventCtx {
                raw,
                line,
                stamp,
                cli_version,
                before_resume,
                fields,
            };
            for (s, dead) in self.sinks.iter_mut().zip(&mut self.dead) {
                if *dead || (before_resume && !s.keeps_history()) {
                    continue;
                }
                if let Err(e) = s.event(&self.events, m, &ctx) {
                    *dead = true;
                    if res.is_ok() {
                        res = Err(dup(&e));
                    }
                    if self.failure.is_none() {
                        self.failure = Some(SinkFailure::of(e));
                    }
                }
            }
        }
        self.events.clear();
        res
    }

    /// Append synthesized events that come from no input line (e.g. `child.stderr`) and hand
    /// them to every sink. `f` gets the normalizer for context such as the session id.
    pub fn emit(&mut self, f: impl FnOnce(&mut Events, &Normalizer)) -> io::Result<()> {
        let first = self.events.len();
        f(&mut self.events, &self.normalizer);
        self.normalizer.count_events(&self.events, first);
        let stamp = self.stamp();
        self.drain(None, None, stamp)?;
        if self.line_buffered {
            self.flush()?;
        }
        Ok(())
    }

    /// Flush every sink.
    pub fn flush(&mut self) -> io::Result<()> {
        self.each_sink(|s| s.flush())
    }

    /// The source is idle: let every sink write its keep-alive (SSE comments), and flush.
    pub fn idle(&mut self) -> io::Result<()> {
        self.each_sink(|s| s.idle())?;
        self.flush()
    }

    /// Write `run.end` (and whatever was pending) and finish every sink. After a sink failed,
    /// the others still get it: pass [`EndInfo::sink_failed`] so `run.end` names the sink.
    pub fn finish(&mut self, end: &EndInfo) -> io::Result<()> {
        let mut released = self.finish_dialect();
        if let Some(t) = self.transform.as_mut() {
            self.transformed.clear();
            t.finish(&mut self.transformed);
            let last = Line {
                bytes: b"",
                number: self.last_line,
                raw_len: 0,
                terminated: true,
                oversized: None,
                cr: false,
            };
            released = released.and(self.push_transformed(&last, |_, _| {}));
        }
        // Whatever the input left pending first, then the sinks' end hooks, then run.end.
        let stamp = self.stamp();
        let first = self.events.len();
        self.normalizer.flush_pending(&mut self.events);
        self.normalizer.count_events(&self.events, first);
        let pending = self.drain(None, None, stamp);
        let mut end = end.clone();
        let mut extra = Vec::new();
        let cause = end.cause.clone();
        let members = self.each_sink(|s| {
            extra.extend(s.end_members(&cause, stamp)?);
            Ok(())
        });
        end.extra.extend(extra);
        self.normalizer.finish(&end, &mut self.events);
        let drained = self.drain(None, None, stamp);
        let finished = self.each_sink(|s| s.finish());
        released
            .and(pending)
            .and(members)
            .and(drained)
            .and(finished)
    }
}

/// A sink that failed: the file it writes (`stdout` for the first sink unless it is named) and
/// the error.
#[derive(Debug)]
pub struct SinkFailure {
    /// The file's name as given on the command line, or `stdout`.
    pub name: String,
    /// What went wrong (the OS error, without the name).
    pub error: io::Error,
}

impl SinkFailure {
    fn of(e: io::Error) -> Self {
        if e.get_ref().is_some_and(|r| r.is::<NamedError>()) {
            let n = e
                .into_inner()
                .expect("checked above")
                .downcast::<NamedError>()
                .expect("checked above");
            return SinkFailure {
                name: n.name,
                error: n.err,
            };
        }
        SinkFailure {
            name: "stdout".into(),
            error: e,
        }
    }

    /// True when stdout was closed by its reader (`| head -1`): a normal way to stop.
    pub fn is_closed_stdout(&self) -> bool {
        self.name == "stdout" && self.error.kind() == io::ErrorKind::BrokenPipe
    }
}

/// An equal error (same OS error number, or same kind and message); the original is kept in
/// [`SinkFailure`].
fn dup(e: &io::Error) -> io::Error {
    if let Some(n) = e.get_ref().and_then(|r| r.downcast_ref::<NamedError>()) {
        return io::Error::other(NamedError {
            name: n.name.clone(),
            err: dup(&n.err),
        });
    }
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}
