//! Replaying recorded runs: captures, audit logs or plain stream-json files fed back, with their
//! recorded timing, to a [`Player`] — the envelope pipeline ([`play::Envelope`]), the raw
//! stream-json ([`play::Raw`]), or a stand-in for the `claude` binary ([`play::Claude`]).
//!
//! # Timing
//!
//! With [`Speed::Factor`]`(n)`, each line leaves at its recorded offset divided by `n`, measured
//! from when the replay started; inputs without times (plain stream-json) go as fast as
//! [`Speed::Max`]. Several inputs play one after another on one timeline (the second starts
//! where the first ended). While waiting, the player is flushed first, then poked every
//! `keepalive` interval ([`Player::idle`]: SSE keep-alive comments).
//!
//! # Resuming
//!
//! A player that is still skipping events ([`Player::skipping`], e.g. `--from-seq`) gets its
//! lines without waiting; the timeline restarts at the first line it emits, so a resumed timed
//! replay continues in real time from the resume point.
//!
//! # Following (`--follow`)
//!
//! A followed input is read like `tail -f`: at its end the replay waits (polling every
//! [`Follow::poll`]) for more. It stops when the run is over:
//! - a capture: at its `end` record;
//! - an audit log: at the followed run's `run.end` record, or when a record of another run
//!   appears;
//! - plain stream-json: once a `{"type":"result"}` line has been read and the file has then
//!   not grown for [`Follow::idle`] (a background subagent can add a second `result` before
//!   that). A partial last line still pending then is taken as a last line without newline;
//! - a capture or an audit log whose writer is gone: at the end of the data, when no process
//!   holds the writer's lock (see [`crate::files`]; `--audit` and `--record` hold it for the
//!   whole run and the kernel drops it when the writer dies, `kill -9` included). What the
//!   writer wrote is played first; [`Outcome::cut`] is then `writer_vanished`. A file written
//!   without the lock (`--format audit > FILE`) therefore cannot be followed.
//!
//! A follower that gets SIGINT, SIGTERM or SIGHUP (once [`crate::interrupt::install`]ed, as
//! `replay --follow` does) stops reading: [`Outcome::interrupted`] names the signal, and the
//! replayed run ends with `run.end` (`interrupted`) like an interrupted `normalize`.
//!
//! A capture or audit run that ends without its end record (`end`, `run.end`) sets
//! [`Outcome::cut`] to `recording_cut`.
//!
//! # Determinism
//!
//! Nothing here reads the clock except for pacing: the [`Stamp`]s handed to players come from
//! the input (capture: header start + `at_us`; audit: `ts`/`mono_us`; stream-json: zero), and
//! the run id from [`Replay::run_id`], so the same input and options give the same bytes.

pub mod exit;
pub mod feed;
mod input;
mod pace;
pub mod play;
pub mod progress;
pub mod to_envelope;

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::audit::read::runs as audit_runs;
use crate::capture::decode::{Decoder, Kind, OutLine};
use crate::capture::{End, Header};
use crate::error::Error;
use crate::normalize::EndInfo;
use feed::{Got, LineFeed};
use input::{Input, State};
use pace::Pacer;

/// How fast to replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// As fast as possible, ignoring recorded times.
    Max,
    /// Recorded times divided by this factor (`1`: real time).
    Factor(f64),
}

impl FromStr for Speed {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("max") {
            return Ok(Speed::Max);
        }
        match s.trim_end_matches(['x', 'X']).parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 => Ok(Speed::Factor(f)),
            _ => Err(format!(
                "`{s}` is not a speed: use `max` or a positive factor (1 = real time)"
            )),
        }
    }
}

/// `--follow` settings.
#[derive(Debug, Clone, Copy)]
pub struct Follow {
    /// How often to look for new data at the end of the file.
    pub poll: Duration,
    /// Plain stream-json: how long the file must stay unchanged after a `result` line.
    pub idle: Duration,
}

impl Default for Follow {
    fn default() -> Self {
        Follow {
            poll: Duration::from_millis(50),
            idle: Duration::from_secs(2),
        }
    }
}

/// Replay settings.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Pacing.
    pub speed: Speed,
    /// Follow a growing input (one input only).
    pub follow: Option<Follow>,
    /// Audit logs: the run to replay (`None`: the last run in the file when the replay starts).
    pub audit_run: Option<String>,
    /// While waiting, call [`Player::idle`] this often.
    pub keepalive: Option<Duration>,
    /// Show a progress bar on stderr (the caller checks for a terminal).
    pub progress: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            speed: Speed::Max,
            follow: None,
            audit_run: None,
            keepalive: Some(Duration::from_secs(15)),
            progress: false,
        }
    }
}

/// A recorded instant for sinks that write times (the audit log). Same fields as the audit
/// sink's `clock::Stamp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Wall clock, µs since the Unix epoch (0 when the input has no times).
    pub unix_us: i64,
    /// µs since the replayed run started.
    pub mono_us: u64,
}

/// What a replay feeds.
pub trait Player {
    /// A capture's header (each input that has one).
    fn header(&mut self, _h: &Header) -> io::Result<()> {
        Ok(())
    }
    /// A stdout line of the recorded run, at its time.
    fn out(&mut self, line: &OutLine, at: Stamp) -> io::Result<()>;
    /// A stderr line of the recorded run.
    fn err(&mut self, _bytes: &[u8], _cut: bool, _at: Stamp) -> io::Result<()> {
        Ok(())
    }
    /// The replay is about to wait: make what was written visible.
    fn pause(&mut self) -> io::Result<()>;
    /// Still waiting (every `keepalive`): write a keep-alive if the output has one.
    fn idle(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// True while nothing is being emitted yet (resuming): lines are not paced.
    fn skipping(&self) -> bool {
        false
    }
    /// Something the user should know (default: a warning on stderr).
    fn warn(&mut self, msg: &str) {
        eprintln!("boo-normalize: warning: {}", crate::error::sanitize(msg));
    }
}

/// How the replayed run ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The last input's end (capture `end`, audit `run.end`); `None` when it had none.
    pub end: Option<End>,
    /// When it ended.
    pub end_stamp: Stamp,
    /// Why a capture or audit run ended without its end record: `recording_cut` (the file
    /// ends there) or `writer_vanished` (followed, and its writer is gone).
    pub cut: Option<&'static str>,
    /// Following: the signal (SIGINT, SIGTERM, SIGHUP) that ended the wait for more (see
    /// [`crate::interrupt`]).
    pub interrupted: Option<i32>,
}

impl Outcome {
    /// The `run.end` the replayed run gets: the recorded one, else one whose cause says why
    /// the recording was cut, else a plain end of input.
    pub fn run_end(&self) -> EndInfo {
        #[cfg(unix)]
        if let Some(sig) = self.interrupted {
            return EndInfo::interrupted(&crate::interrupt::signal_name(sig));
        }
        match (&self.end, self.cut) {
            (Some(e), _) => e.run_end.clone(),
            (None, Some(cut)) => EndInfo {
                cause: cut.into(),
                extra: Vec::new(),
            },
            (None, None) => EndInfo::eof(),
        }
    }
}

/// Opened inputs, ready to play.
pub struct Replay {
    inputs: Vec<Input>,
    opts: ReplayOptions,
    run_id: String,
    header: Option<Header>,
}

impl Replay {
    /// Open every input (`-`: stdin) and read its first line, so kinds, the run id and errors
    /// are known before anything is written.
    pub fn open(files: &[PathBuf], opts: ReplayOptions) -> Result<Replay, Error> {
        if opts.follow.is_some() && files.len() != 1 {
            return Err(Error::msg("--follow", "follows exactly one file"));
        }
        if opts.follow.is_some() && files.iter().any(|f| f.as_os_str() == "-") {
            return Err(Error::msg("--follow", "cannot follow stdin"));
        }
        let mut inputs = Vec::new();
        for (f, opened) in files.iter().zip(crate::input::open_all(files)?) {
            let crate::input::Input {
                name, reader, size, ..
            } = opened;
            let path = (f.as_os_str() != "-").then(|| f.clone());
            let feed = LineFeed::new(Box::new(BufReader::with_capacity(256 * 1024, reader)) as _);
            let probe = path
                .as_ref()
                .filter(|_| opts.follow.is_some())
                .and_then(|p| File::open(p).ok());
            inputs.push(Input {
                name,
                path,
                feed,
                size,
                first: None,
                decoder: None,
                probe,
            });
        }
        let mut r = Replay {
            inputs,
            run_id: String::new(),
            header: None,
            opts,
        };
        for i in 0..r.inputs.len() {
            r.start_input(i)?;
        }
        let (id, header) = match r.inputs.first() {
            Some(inp) => inp.identity(),
            None => (None, None),
        };
        r.run_id = id.unwrap_or_else(|| derived_run_id(b""));
        r.header = header;
        Ok(r)
    }

    /// Read the first line of input `i` and set up its decoder (not when following an empty
    /// file: that happens once its first line arrives).
    fn start_input(&mut self, i: usize) -> Result<(), Error> {
        let follow = self.opts.follow.is_some();
        let inp = &mut self.inputs[i];
        let got = inp.feed.next(follow).map_err(|e| Error::io(&inp.name, e))?;
        if let Got::Line(l, t) = got {
            inp.first = Some((l.to_vec(), t));
        }
        if let Some((l, _)) = &inp.first {
            let kind = Kind::detect(l);
            let mut dec = Decoder::new(kind, self.opts.audit_run.clone());
            if kind == Kind::Audit {
                let (run, ends) =
                    audit_run_ends(inp.path.as_ref(), l, self.opts.audit_run.as_deref());
                dec = Decoder::new(kind, run).run_ends(ends);
            }
            inp.decoder = Some(dec);
        }
        Ok(())
    }

    /// The run id: the capture's, the replayed audit run's, or for stream-json one derived from
    /// its first line (a UUIDv8-shaped SHA-256 prefix), so it is the same every time.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The first input's capture header, if it is a capture.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The first input's kind (`None`: following an empty file).
    pub fn kind(&self) -> Option<Kind> {
        self.inputs
            .first()
            .and_then(|i| i.decoder.as_ref())
            .map(Decoder::kind)
    }

    /// The recorded Claude Code version: the capture header's, else the end record's or the last
    /// `system/init` line's.
    pub fn cli_version(self) -> Result<Option<String>, Error> {
        if let Some(v) = self.header().and_then(|h| h.cli_version.clone()) {
            return Ok(Some(v));
        }
        struct Probe(Option<String>);
        impl Player for Probe {
            fn out(&mut self, o: &OutLine, _: Stamp) -> io::Result<()> {
                if memchr::memmem::find(&o.bytes, b"claude_code_version").is_some()
                    && let Ok(v) = crate::json::depth::from_slice::<serde_json::Value>(&o.bytes)
                    && let Some(s) = v.get("claude_code_version").and_then(|s| s.as_str())
                {
                    self.0 = Some(s.to_owned());
                }
                Ok(())
            }
            fn pause(&mut self) -> io::Result<()> {
                Ok(())
            }
            fn warn(&mut self, _: &str) {}
        }
        let mut probe = Probe(None);
        let outcome = self.play(&mut probe)?;
        Ok(outcome.end.and_then(|e| e.cli_version).or(probe.0))
    }

    /// Feed everything to `player`, paced.
    pub fn play(mut self, player: &mut dyn Player) -> Result<Outcome, Error> {
        let total: Option<u64> = self.inputs.iter().map(|i| i.size).sum();
        let show = self.opts.progress && self.opts.follow.is_none();
        let mut st = State {
            pacer: Pacer::new(self.opts.speed, self.opts.keepalive),
            base: 0,
            last: 0,
            outcome: Outcome::default(),
            progress: progress::Progress::new(show, total),
            done_bytes: 0,
            writer_gone: false,
        };
        for inp in &mut self.inputs {
            st.input(inp, &self.opts, player)?;
            st.base = st.last;
            st.done_bytes += inp.feed.consumed();
        }
        st.progress.finish();
        let last = self.inputs.last().and_then(|i| i.decoder.as_ref());
        if st.outcome.interrupted.is_none() && last.is_some_and(|d| d.kind().timed() && !d.ended())
        {
            st.outcome.cut = Some(if st.writer_gone {
                "writer_vanished"
            } else {
                "recording_cut"
            });
        }
        Ok(st.outcome)
    }
}

/// An error while feeding the player is an output error (of stdout, or of a named sink file).
fn out_err(e: io::Error) -> Error {
    crate::sink::named::output_error(e, "stdout")
}

/// The audit run to replay (`wanted`, else the log's last run) and how many `run.end` records
/// it has so far (an `acp` session has one per CLI run: its CLI may have been restarted), from
/// reading the file once more; for stdin, `wanted` or the first line's run, and 1.
fn audit_run_ends(
    path: Option<&PathBuf>,
    first: &[u8],
    wanted: Option<&str>,
) -> (Option<String>, usize) {
    use crate::envelope::kind::RUN_END;
    let Some(f) = path.and_then(|p| File::open(p).ok()) else {
        let run = wanted.map(str::to_owned);
        return (
            run.or_else(|| audit_runs(std::iter::once(first.to_vec())).pop()),
            1,
        );
    };
    let mut ends: std::collections::HashMap<String, usize> = Default::default();
    let lines = BufReader::new(f).split(b'\n').map_while(Result::ok);
    let runs = audit_runs(lines.inspect(|l| {
        if memchr::memmem::find(l, RUN_END.as_bytes()).is_some()
            && let Ok(r) = crate::audit::read::Record::parse(l)
            && r.head().is_ok_and(|h| h.kind.as_deref() == Some(RUN_END))
        {
            *ends.entry(r.run_id.into_owned()).or_default() += 1;
        }
    }));
    let run = wanted.map(str::to_owned).or_else(|| runs.last().cloned());
    let n = run.as_ref().and_then(|r| ends.get(r)).copied().unwrap_or(1);
    (run, n)
}

/// A stable run id for an input without one: SHA-256 of `first`, shaped as a UUIDv8.
pub fn derived_run_id(first: &[u8]) -> String {
    let d = Sha256::digest(first);
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

#[cfg(test)]
mod tests;
