//! Reading runs back: tell what a file is from its first line (a capture, an audit log, or plain
//! stream-json), then decode each of its lines into an [`Item`]: a stdout line with its time, a
//! stderr line, or the end of the run.
//!
//! | input | stdout lines | times | end |
//! |---|---|---|---|
//! | capture | `out` records | `at_us` (+ the header's start) | the `end` record |
//! | audit log (`--audit`) | the `raw`/`raw_b64` (+ `raw_eol`) of each record that has one | `mono_us`, `ts` | the run's `run.end` record (`cause` and extra members rebuild the same `run.end`); `child.stderr` events are stderr lines |
//! | stream-json | every line | none | end of file |
//!
//! An audit log can hold several runs; one is replayed (see [`Decoder::new`]).

use std::borrow::Cow;

use base64::Engine as _;
use serde::Deserialize;

use crate::audit::read::Record;
use crate::envelope::kind;
use serde_json::value::RawValue;

use super::{End, FORMAT, Header, VERSION, parse_rfc3339_us};
use crate::normalize::EndInfo;

/// What a replay input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A capture (`--record`): starts with a `{"rec":"header","format":"boo-capture",…}` line.
    Capture,
    /// An audit log (`--audit`): records with `seq`, `run_id`, `event` and `hash`.
    Audit,
    /// Anything else: stream-json lines, taken as they are.
    Stream,
}

impl Kind {
    /// Tell the kind from the first non-blank line of a file.
    pub fn detect(first: &[u8]) -> Kind {
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow)]
            rec: Option<Cow<'a, str>>,
            #[serde(borrow)]
            format: Option<Cow<'a, str>>,
            seq: Option<u64>,
            #[serde(borrow)]
            run_id: Option<Cow<'a, str>>,
            #[serde(borrow)]
            event: Option<&'a RawValue>,
            #[serde(borrow)]
            hash: Option<Cow<'a, str>>,
        }
        let Ok(p) = serde_json::from_slice::<Probe<'_>>(first) else {
            return Kind::Stream;
        };
        if p.rec.as_deref() == Some("header") && p.format.as_deref() == Some(FORMAT) {
            Kind::Capture
        } else if p.seq.is_some()
            && p.run_id.is_some()
            && p.hash.is_some()
            && p.event.is_some_and(|e| e.get().starts_with('{'))
        {
            Kind::Audit
        } else {
            Kind::Stream
        }
    }

    /// Whether lines of this kind carry recorded times.
    pub fn timed(self) -> bool {
        self != Kind::Stream
    }
}

/// When something happened in the recorded run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Time {
    /// µs since the run started (`None`: the input has no times).
    pub at_us: Option<u64>,
    /// Wall clock, µs since the Unix epoch, when known.
    pub unix_us: Option<i64>,
}

/// One stdout line of the recorded run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutLine {
    /// The line without its `\n` (a `\r` before it is kept).
    pub bytes: Vec<u8>,
    /// False for a last line without newline.
    pub terminated: bool,
    /// When the recording kept only a prefix (a capture or audit log written with
    /// `--max-line-bytes`): the line's real length.
    pub cut_from: Option<u64>,
    /// When it arrived.
    pub time: Time,
}

/// One decoded input line.
#[derive(Debug, Clone)]
pub enum Item {
    /// A capture's header.
    Header(Box<Header>),
    /// A stdout line.
    Out(OutLine),
    /// A stderr line (`cut`: truncated by the producer).
    Err {
        /// The line without its newline.
        bytes: Vec<u8>,
        /// Truncated by the producer.
        cut: bool,
        /// When it arrived.
        time: Time,
    },
    /// The run ended.
    End(Box<End>, Time),
    /// Nothing to replay (blank line, another run's audit record, a synthesized event).
    Skip,
}

/// `run.end` members the normalizer writes itself (everything else is an extra of the producer).
const RUN_END_OWN: &[&str] = &[
    "v",
    "seq",
    "type",
    "session_id",
    "parent_tool_use_id",
    "line",
    "uuid",
    "ephemeral",
    "cause",
    "terminal_seen",
    "turns",
    "cli_version",
    "agent",
    "usage",
    "cost_usd",
    "api_messages",
    "tool_calls",
    "tool_results",
    "stats",
];

/// Decodes the lines of one input.
#[derive(Debug)]
pub struct Decoder {
    kind: Kind,
    start_unix: Option<i64>,
    /// Audit: the run to replay (`None`: the first one seen).
    run: Option<String>,
    /// Audit: the `run.end` records of the run (one per CLI run of an `acp` session whose CLI
    /// was restarted) that end it: the last one does (see [`Decoder::run_ends`]).
    run_ends: usize,
    /// Audit: those seen so far.
    ends_seen: usize,
    ended: bool,
    result_seen: bool,
    track_results: bool,
    /// Unknown record kinds seen so far, and how many of them were handed out for warnings.
    unknown_recs: Vec<String>,
    unknown_told: usize,
}

impl Decoder {
    /// A decoder for an input of `kind`. For audit logs, `run` picks the run to replay (its
    /// `run_id`); `None` replays the first run in the file.
    pub fn new(kind: Kind, run: Option<String>) -> Self {
        Decoder {
            kind,
            start_unix: None,
            run,
            run_ends: 1,
            ends_seen: 0,
            ended: false,
            result_seen: false,
            track_results: false,
            unknown_recs: Vec::new(),
            unknown_told: 0,
        }
    }

    /// Audit logs: the run has `n` `run.end` records (an `acp` session writes one per CLI
    /// run, and its CLI may have been restarted): the ones before the last are passed over and
    /// the run's lines go on after them; the last one ends the run. Default 1: the first ends it.
    pub fn run_ends(mut self, n: usize) -> Self {
        self.run_ends = n.max(1);
        self
    }

    /// The input's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Audit logs: the run being replayed (once known).
    pub fn run(&self) -> Option<&str> {
        self.run.as_deref()
    }

    /// True once the end of the run was decoded (capture `end`, audit `run.end`).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Watch stream-json lines for `result` (see [`Decoder::result_seen`]; costs a parse of
    /// every line that mentions `"result"`, so only followed inputs do it).
    pub fn track_results(&mut self, yes: bool) {
        self.track_results = yes;
    }

    /// True once a stream-json `result` line went by (stream inputs with
    /// [`Decoder::track_results`] only).
    pub fn result_seen(&self) -> bool {
        self.result_seen
    }

    /// Record kinds skipped because they are unknown (a newer capture version); each is
    /// returned once, for a warning.
    pub fn take_unknown(&mut self) -> Option<String> {
        let k = self.unknown_recs.get(self.unknown_told)?.clone();
        self.unknown_told += 1;
        Some(k)
    }

    /// Decode one line (without its `\n`; `terminated` is false for a last line without one).
    pub fn decode(&mut self, line: &[u8], terminated: bool) -> Result<Item, String> {
        if self.ended {
            return Ok(Item::Skip);
        }
        match self.kind {
            Kind::Stream => {
                if self.track_results
                    && memchr::memmem::find(line, b"\"result\"").is_some()
                    && is_result(line)
                {
                    self.result_seen = true;
                }
                Ok(Item::Out(OutLine {
                    bytes: line.to_vec(),
                    terminated,
                    cut_from: None,
                    time: Time::default(),
                }))
            }
            _ if line.iter().all(u8::is_ascii_whitespace) => Ok(Item::Skip),
            Kind::Capture => self.capture(line),
            Kind::Audit => self.audit(line),
        }
    }

    fn time(&self, at_us: u64) -> Time {
        Time {
            at_us: Some(at_us),
            unix_us: self
                .start_unix
                .map(|s| s.saturating_add(i64::try_from(at_us).unwrap_or(i64::MAX))),
        }
    }

    fn capture(&mut self, line: &[u8]) -> Result<Item, String> {
        let r: CapRec = serde_json::from_slice(line).map_err(|e| format!("not a record: {e}"))?;
        let need_at = || {
            r.at_us
                .ok_or_else(|| format!("`{}` record without at_us", r.rec))
        };
        match r.rec.as_str() {
            "header" => {
                let version = r.version.unwrap_or(0);
                if version > VERSION {
                    return Err(format!(
                        "capture format version {version} is newer than this boo-normalize reads ({VERSION})"
                    ));
                }
                let start = r
                    .start_unix_us
                    .or_else(|| r.start.as_deref().and_then(parse_rfc3339_us));
                self.start_unix = start;
                let stdin = match r.stdin {
                    Some(s) => Some(bytes_of(s, r.stdin_b64)?),
                    None => None,
                };
                Ok(Item::Header(Box::new(Header {
                    run_id: r.run_id.unwrap_or_default(),
                    start_unix_us: start.unwrap_or(0),
                    source: r.source.unwrap_or_default(),
                    argv: r.argv,
                    stdin,
                    cli_version: r.cli_version,
                })))
            }
            "out" => {
                let at = need_at()?;
                let bytes = bytes_of(r.line.ok_or("`out` record without line")?, r.b64)?;
                Ok(Item::Out(OutLine {
                    bytes,
                    terminated: r.nl.unwrap_or(true),
                    cut_from: r.cut_from,
                    time: self.time(at),
                }))
            }
            "err" => {
                let at = need_at()?;
                let bytes = bytes_of(r.line.ok_or("`err` record without line")?, r.b64)?;
                Ok(Item::Err {
                    bytes,
                    cut: r.cut,
                    time: self.time(at),
                })
            }
            "end" => {
                let at = need_at()?;
                self.ended = true;
                let run_end = match r.run_end {
                    Some(m) => end_info(m),
                    None => EndInfo::eof(),
                };
                let end = End {
                    at_us: at,
                    exit_code: r.exit_code,
                    signal: r.signal,
                    cli_version: r.cli_version,
                    run_end,
                };
                Ok(Item::End(Box::new(end), self.time(at)))
            }
            other => {
                let other = crate::error::sanitize(other);
                if !self.unknown_recs.contains(&other) {
                    self.unknown_recs.push(other);
                }
                Ok(Item::Skip)
            }
        }
    }

    fn audit(&mut self, line: &[u8]) -> Result<Item, String> {
        let mut r = Record::parse(line).map_err(|e| format!("not an audit record: {e}"))?;
        match &self.run {
            None => self.run = Some(r.run_id.clone().into_owned()),
            // Another run's record: runs written at once (`acp`'s sessions) interleave, so
            // ours ends at its `run.end` (or the input's end), not where another one begins.
            Some(id) if id != &r.run_id => return Ok(Item::Skip),
            Some(_) => {}
        }
        let time = Time {
            at_us: Some(r.mono_us),
            unix_us: parse_rfc3339_us(&r.ts),
        };
        if self.start_unix.is_none() {
            self.start_unix = time
                .unix_us
                .map(|u| u - i64::try_from(r.mono_us).unwrap_or(0));
        }
        let raw = match (r.raw.take(), r.raw_b64.take()) {
            (Some(s), _) => Some(s.into_owned().into_bytes()),
            (None, Some(b)) => Some(bytes_of(b.into_owned(), true)?),
            (None, None) => None,
        };
        if let Some(mut bytes) = raw {
            let eol = r.raw_eol.as_deref().unwrap_or("\n");
            let terminated = eol.ends_with('\n');
            if eol.starts_with('\r') {
                bytes.push(b'\r');
            }
            return Ok(Item::Out(OutLine {
                bytes,
                terminated,
                cut_from: r.raw_cut_from,
                time,
            }));
        }
        let head = r.head().map_err(|e| e.to_string())?;
        match head.kind.as_deref().unwrap_or_default() {
            kind::RUN_END => {
                self.ends_seen += 1;
                if self.ends_seen < self.run_ends {
                    // A restarted CLI's end: the run goes on with the next one's lines.
                    return Ok(Item::Skip);
                }
                self.ended = true;
                let m: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(r.event.get()).map_err(|e| e.to_string())?;
                let end = End {
                    at_us: r.mono_us,
                    exit_code: m
                        .get("exit_code")
                        .and_then(serde_json::Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok()),
                    signal: m
                        .get("signal")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned),
                    cli_version: r.cli_version.map(Cow::into_owned),
                    run_end: end_info(m),
                };
                Ok(Item::End(Box::new(end), time))
            }
            kind::CHILD_STDERR => {
                #[derive(Deserialize)]
                struct Stderr {
                    text: String,
                    #[serde(default)]
                    truncated: bool,
                }
                let s: Stderr = serde_json::from_str(r.event.get()).map_err(|e| e.to_string())?;
                Ok(Item::Err {
                    bytes: s.text.into_bytes(),
                    cut: s.truncated,
                    time,
                })
            }
            _ => Ok(Item::Skip),
        }
    }
}

/// `run.end`'s cause and the producer's extra members, from a `run_end` object or a `run.end`
/// event.
fn end_info(m: serde_json::Map<String, serde_json::Value>) -> EndInfo {
    let cause = m
        .get("cause")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("eof")
        .to_owned();
    let extra = m
        .into_iter()
        .filter(|(k, _)| !RUN_END_OWN.contains(&k.as_str()))
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    EndInfo { cause, extra }
}

fn bytes_of(s: String, b64: bool) -> Result<Vec<u8>, String> {
    if b64 {
        base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map_err(|e| format!("bad base64: {e}"))
    } else {
        Ok(s.into_bytes())
    }
}

/// A stream-json `{"type":"result",…}` line.
fn is_result(line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<T<'_>>(line).is_ok_and(|t| t.kind.as_deref() == Some("result"))
}

/// Every key of every capture record kind (unknown keys are ignored).
#[derive(Deserialize)]
struct CapRec {
    rec: String,
    at_us: Option<u64>,
    line: Option<String>,
    #[serde(default)]
    b64: bool,
    nl: Option<bool>,
    cut_from: Option<u64>,
    #[serde(default)]
    cut: bool,
    version: Option<u64>,
    run_id: Option<String>,
    start: Option<String>,
    start_unix_us: Option<i64>,
    source: Option<String>,
    argv: Option<Vec<String>>,
    cli_version: Option<String>,
    stdin: Option<String>,
    #[serde(default)]
    stdin_b64: bool,
    exit_code: Option<i32>,
    signal: Option<String>,
    run_end: Option<serde_json::Map<String, serde_json::Value>>,
}

#[cfg(test)]
mod tests;
