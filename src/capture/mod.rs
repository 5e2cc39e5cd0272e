//! Capture files: a plain JSONL record of one run (what `claude` wrote to stdout and stderr, when,
//! and how it ended), written by `--record` and read back by `replay`.
//!
//! # Capture format, version 1
//!
//! One JSON object per line. Every record has `rec` (its kind) first; keys are written in the
//! order shown. Times are `at_us`: microseconds since the run started (the header's `start`),
//! measured when the line *arrived* (the read that completed it), never decreasing.
//!
//! | `rec` | keys | meaning |
//! |---|---|---|
//! | `header` | `format` (`"boo-capture"`), `version` (`1`), `run_id`, `start` (RFC 3339 UTC, µs), `start_unix_us`, `source` (`"normalize"`, `"spawn"`, …), `argv` (array of strings, or `null` when the producer's command line is unknown), `cli_version` (string \| null); optional `stdin` (what was written to the child's stdin, e.g. a long prompt) with `stdin_b64: true` when it is base64 | always the first line |
//! | `out` | `at_us`, `line`; optional `b64: true`, `nl: false`, `cut_from` | one stdout line. `line` is the line's bytes without the `\n` (a `\r` before it is kept). Invalid UTF-8 is stored base64 (standard, padded) with `b64: true`. `nl: false`: the stream ended without a final newline. `cut_from`: the producer kept only a prefix of a longer line (`spawn --max-line-bytes`); its real length |
//! | `err` | `at_us`, `line`; optional `b64: true`, `cut: true` | one stderr line (without its newline); `cut`: the producer truncated it |
//! | `end` | `at_us`, `exit_code` (int \| null), `signal` (e.g. `"SIGTERM"`, or null), `cli_version` (string \| null), `run_end` (object: `cause` plus the extra members the producer wrote into `run.end`, verbatim) | the run is over; always the last line |
//!
//! Concatenating the `out` lines, each followed by `\n` unless `nl` is `false`, gives the
//! producer's stdout byte for byte. A capture without an `end` record was cut short (the recorder
//! was killed); `replay` treats its end of file as the end of the run (`cause: "eof"`).
//! Readers ignore keys they do not know, and skip records of a kind they do not know (with a
//! warning), so later versions can add both; a change that breaks old readers bumps `version`.
//!
//! ```text
//! {"rec":"header","format":"boo-capture","version":1,"run_id":"019a9c3e-…","start":"2025-11-22T15:32:00.123456Z","start_unix_us":1763825520123456,"source":"spawn","argv":["claude","-p","--output-format","stream-json","--verbose","--","fix the tests"],"cli_version":null}
//! {"rec":"out","at_us":812345,"line":"{\"type\":\"system\",\"subtype\":\"init\",…}"}
//! {"rec":"err","at_us":901000,"line":"warning: …"}
//! {"rec":"out","at_us":5120034,"line":"{\"type\":\"result\",…}"}
//! {"rec":"end","at_us":5180200,"exit_code":0,"signal":null,"cli_version":"2.0.76","run_end":{"cause":"exit","exit_code":0,"signal":null}}
//! ```

pub mod decode;
pub mod file;
pub mod record;

use base64::Engine as _;

use crate::json::Out;
use crate::normalize::EndInfo;

/// The header's `format`.
pub const FORMAT: &str = "boo-capture";
/// The header's `version`.
pub const VERSION: u64 = 1;

/// The first record of a capture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// Identifies the run (a UUIDv7 by default).
    pub run_id: String,
    /// When the run started: µs since the Unix epoch (UTC).
    pub start_unix_us: i64,
    /// What recorded it: `normalize`, `spawn`.
    pub source: String,
    /// The producer's command line (program first, prompt included), when known.
    pub argv: Option<Vec<String>>,
    /// Bytes written to the producer's stdin (a prompt too long for argv), when any.
    pub stdin: Option<Vec<u8>>,
    /// Claude Code's version, when known before the run started.
    pub cli_version: Option<String>,
}

impl Header {
    /// A header for a run starting now: a fresh UUIDv7 run id and the current time.
    pub fn now(source: &str) -> Self {
        Header {
            run_id: uuid::Uuid::now_v7().to_string(),
            start_unix_us: unix_now_us(),
            source: source.to_owned(),
            ..Default::default()
        }
    }

    /// The `start` key: RFC 3339 UTC with six fractional digits.
    pub fn start_rfc3339(&self) -> String {
        rfc3339_us(self.start_unix_us)
    }

    /// Serialize (one line, with its newline).
    pub fn write(&self, o: &mut Out) {
        o.raw(b"{\"rec\":\"header\",\"format\":");
        o.str(FORMAT);
        o.key("version");
        o.u64(VERSION);
        o.key("run_id");
        o.str(&self.run_id);
        o.key("start");
        o.str(&self.start_rfc3339());
        o.key("start_unix_us");
        i64_out(o, self.start_unix_us);
        o.key("source");
        o.str(&self.source);
        o.key("argv");
        match &self.argv {
            None => o.raw(b"null"),
            Some(v) => {
                o.raw(b"[");
                for (i, a) in v.iter().enumerate() {
                    if i > 0 {
                        o.raw(b",");
                    }
                    o.str(a);
                }
                o.raw(b"]");
            }
        }
        o.key("cli_version");
        o.opt_str(self.cli_version.as_deref());
        if let Some(s) = &self.stdin {
            bytes_field(o, "stdin", "stdin_b64", s);
        }
        o.raw(b"}\n");
    }
}

/// The last record of a capture. The default is a plain end of input (`cause: "eof"`).
#[derive(Debug, Clone)]
pub struct End {
    /// µs since the start.
    pub at_us: u64,
    /// The producer's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the producer (`SIGTERM`, …), when one did.
    pub signal: Option<String>,
    /// Claude Code's version (from `system/init`), when seen.
    pub cli_version: Option<String>,
    /// What the live run wrote into `run.end` (`cause` and its extra members), so a replay
    /// writes the same `run.end`.
    pub run_end: EndInfo,
}

impl Default for End {
    fn default() -> Self {
        End {
            at_us: 0,
            exit_code: None,
            signal: None,
            cli_version: None,
            run_end: EndInfo::eof(),
        }
    }
}

impl End {
    /// Serialize (one line, with its newline).
    pub fn write(&self, o: &mut Out) {
        o.raw(b"{\"rec\":\"end\",\"at_us\":");
        o.u64(self.at_us);
        o.key("exit_code");
        match self.exit_code {
            Some(c) => i64_out(o, i64::from(c)),
            None => o.raw(b"null"),
        }
        o.key("signal");
        o.opt_str(self.signal.as_deref());
        o.key("cli_version");
        o.opt_str(self.cli_version.as_deref());
        o.raw(b",\"run_end\":{\"cause\":");
        o.str(&self.run_end.cause);
        for (k, raw) in &self.run_end.extra {
            o.key(k);
            o.raw(raw.as_bytes());
        }
        o.raw(b"}}\n");
    }
}

/// Serialize an `out` record (`cut_from`: the real length of a line kept only in part).
pub fn write_out(o: &mut Out, at_us: u64, line: &[u8], terminated: bool, cut_from: Option<u64>) {
    o.raw(b"{\"rec\":\"out\",\"at_us\":");
    o.u64(at_us);
    bytes_field(o, "line", "b64", line);
    if !terminated {
        o.raw(b",\"nl\":false");
    }
    if let Some(n) = cut_from {
        o.key("cut_from");
        o.u64(n);
    }
    o.raw(b"}\n");
}

/// Serialize an `err` record.
pub fn write_err(o: &mut Out, at_us: u64, line: &[u8], cut: bool) {
    o.raw(b"{\"rec\":\"err\",\"at_us\":");
    o.u64(at_us);
    bytes_field(o, "line", "b64", line);
    if cut {
        o.raw(b",\"cut\":true");
    }
    o.raw(b"}\n");
}

/// `"key":"text"`, or `"key":"base64","flag":true` when `bytes` is not UTF-8.
fn bytes_field(o: &mut Out, key: &str, flag: &str, bytes: &[u8]) {
    o.key(key);
    match std::str::from_utf8(bytes) {
        Ok(s) => o.str(s),
        Err(_) => {
            o.str(&base64::engine::general_purpose::STANDARD.encode(bytes));
            o.key(flag);
            o.raw(b"true");
        }
    }
}

fn i64_out(o: &mut Out, n: i64) {
    let mut b = itoa::Buffer::new();
    o.raw(b.format(n).as_bytes());
}

/// Now, in µs since the Unix epoch.
pub fn unix_now_us() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// RFC 3339 UTC with six fractional digits (instants before 1970 print as the epoch).
pub fn rfc3339_us(unix_us: i64) -> String {
    let us = u64::try_from(unix_us).unwrap_or(0);
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_micros(us);
    humantime::format_rfc3339_micros(t).to_string()
}

/// Parse RFC 3339 back into µs since the epoch.
pub fn parse_rfc3339_us(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_micros()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_one_json_line_each() {
        let mut o = Out::default();
        let h = Header {
            run_id: "r1".into(),
            start_unix_us: 1_763_825_520_123_456,
            source: "normalize".into(),
            argv: Some(vec!["claude".into(), "-p".into(), "hi \"x\"".into()]),
            stdin: Some(vec![0xff, 0x00]),
            cli_version: None,
        };
        h.write(&mut o);
        write_out(&mut o, 5, b"{\"a\":1}\r", true, None);
        write_out(&mut o, 6, &[0xc3, 0x28], false, Some(10));
        write_err(&mut o, 7, b"warn\x1b[1m", true);
        End {
            at_us: 9,
            exit_code: Some(-1),
            signal: None,
            cli_version: Some("2.0.1".into()),
            run_end: EndInfo {
                cause: "exit".into(),
                extra: vec![("exit_code".into(), "1".into())],
            },
        }
        .write(&mut o);
        let text = String::from_utf8(o.buf).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0]["start"], "2025-11-22T15:32:00.123456Z");
        assert_eq!(lines[0]["argv"][2], "hi \"x\"");
        assert_eq!(lines[0]["stdin"], "/wA=");
        assert_eq!(lines[0]["stdin_b64"], true);
        assert_eq!(lines[1]["line"], "{\"a\":1}\r");
        assert_eq!(lines[2]["b64"], true);
        assert_eq!(lines[2]["nl"], false);
        assert_eq!(lines[2]["cut_from"], 10);
        assert_eq!(lines[3]["cut"], true);
        assert_eq!(lines[4]["run_end"]["exit_code"], 1);
        assert_eq!(lines[4]["exit_code"], -1);
        assert_eq!(
            parse_rfc3339_us("2025-11-22T15:32:00.123456Z"),
            Some(1_763_825_520_123_456)
        );
    }
}
