//! What an input is, told from its first bytes: stream-json, one of boo-normalize's own outputs
//! (envelope, audit log, capture, profile, SSE, OTLP), a Claude Code session transcript, other
//! JSON, text, binary data or nothing; and the message a command prints when it was given
//! something other than stream-json (see `docs/input-detection.md`).
//!
//! The rule: look at the first [`HEAD_BYTES`] bytes, at most [`HEAD_LINES`] non-blank lines.
//! Any line that is a stream-json object, or a line of another agent's stream
//! ([`crate::dialect::recognise`]), makes the input stream-json; otherwise the first line
//! of a recognised format names it; otherwise it is other JSON, text or binary data. Commands
//! only ask when they read no stream-json line at all, so the detector costs nothing on normal
//! input beyond keeping a copy of the first bytes ([`Head`]).

use std::fmt;
use std::io::{self, Read};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// Bytes of an input's beginning that are kept and examined.
pub const HEAD_BYTES: usize = 64 << 10;

use crate::dialect::{HEAD_LINES, STREAM_JSON_TYPES};

/// What an input looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Claude Code `stream-json` (at least one line).
    StreamJson,
    /// boo-normalize's envelope output (`{"v":1,"seq":…,"type":"session.init",…}`).
    Envelope,
    /// A boo-normalize audit log (`--audit`: `seq`, `run_id`, `event`, `hash` per record).
    AuditLog,
    /// A boo-normalize capture (`--record`: `{"rec":"header","format":"boo-capture",…}`).
    Capture,
    /// A Claude Code session transcript (`~/.claude/projects/…/*.jsonl`: `sessionId`,
    /// `parentUuid`, `isSidechain`).
    Transcript,
    /// A boo-normalize profile document (`profile`; pretty-printed JSON).
    Profile,
    /// boo-normalize's Server-Sent Events output (`--format sse`).
    Sse,
    /// OTLP/JSON traces (`--format otlp`).
    Otlp,
    /// Stream-json lines but for a number beyond a double's range (`1e400`), each a
    /// `number_out_of_range` diagnostic.
    OutOfRange,
    /// JSON lines, none of a known format.
    OtherJson,
    /// One JSON array of stream-json objects (`claude -p --output-format json --verbose`).
    JsonArray,
    /// JSON spread over several lines (pretty-printed).
    MultiLineJson,
    /// gzip-compressed data.
    Gzip,
    /// UTF-16 text (a byte order mark, or NUL bytes between ASCII characters).
    Utf16,
    /// Text that is not JSON.
    Text,
    /// Binary data (NUL bytes or invalid UTF-8).
    Binary,
    /// Only blank lines.
    Blank,
    /// No bytes at all.
    Empty,
}

impl Kind {
    /// What the input is, as a phrase.
    pub fn what(self) -> &'static str {
        match self {
            Kind::StreamJson => "stream-json",
            Kind::Envelope => "this is boo-normalize envelope output (already normalized)",
            Kind::AuditLog => "this is a boo-normalize audit log (--audit)",
            Kind::Capture => "this is a boo-normalize capture (--record)",
            Kind::Transcript => {
                "this looks like a Claude Code session transcript (~/.claude/projects/*/*.jsonl), not `claude -p` output"
            }
            Kind::Profile => "this is a boo-normalize profile document",
            Kind::Sse => "this is boo-normalize SSE output (--format sse)",
            Kind::Otlp => "this is OTLP/JSON trace output (--format otlp)",
            Kind::OutOfRange => {
                "JSON with a number beyond a double's range (such as 1e400, which JSON.parse reads as Infinity and no JSON output can carry): a `number_out_of_range` diagnostic"
            }
            Kind::OtherJson => {
                "JSON without a stream-json `type` (system, assistant, user, result, stream_event)"
            }
            Kind::JsonArray => {
                "one JSON array of stream-json objects (what `claude -p --output-format json --verbose` writes)"
            }
            Kind::MultiLineJson => {
                "JSON spread over several lines (pretty-printed), not one object per line"
            }
            Kind::Gzip => "gzip-compressed data",
            Kind::Utf16 => "UTF-16 text, not UTF-8",
            Kind::Text => "text, not JSON",
            Kind::Binary => "binary data, not text",
            Kind::Blank => "only blank lines",
            Kind::Empty => "empty",
        }
    }

    /// What to do instead, for an input called `name` (`stdin` or a path).
    pub fn todo(self, name: &str) -> String {
        let file = if name == "stdin" { "FILE" } else { name };
        match self {
            Kind::StreamJson => String::new(),
            Kind::Envelope | Kind::Sse | Kind::Otlp => {
                "normalize the stream-json it was made from (`claude -p … --output-format stream-json --verbose`)".into()
            }
            Kind::AuditLog => {
                format!("use `boo-normalize replay {file}` or `boo-normalize audit verify {file}`")
            }
            Kind::Capture => format!("use `boo-normalize replay {file}`"),
            Kind::Transcript => {
                "boo-normalize reads what `claude -p --output-format stream-json --verbose` writes on stdout".into()
            }
            Kind::Profile => format!("use it as a side of `boo-normalize diff {file} NEW`"),
            Kind::OtherJson | Kind::Blank | Kind::Binary => {
                "give the stream-json (NDJSON) that `claude -p --output-format stream-json --verbose` writes".into()
            }
            Kind::Text => {
                "`claude -p` writes stream-json only with `--output-format stream-json --verbose`".into()
            }
            Kind::JsonArray => format!(
                "use `--output-format stream-json --verbose`, or split it: `jq -c '.[]' {file} | boo-normalize`"
            ),
            Kind::MultiLineJson => format!("put one object per line: `jq -c . {file} | boo-normalize`"),
            Kind::Gzip => format!("decompress it: `gzip -dc {file} | boo-normalize`"),
            Kind::Utf16 => {
                format!("convert it: `iconv -f UTF-16 -t UTF-8 {file} | boo-normalize`")
            }
            Kind::OutOfRange => {
                "the writer must keep numbers within a double's range (±1.8e308)".into()
            }
            Kind::Empty if name == "stdin" => {
                "no bytes were read: the writer closed stdin without writing anything (did `claude` fail to start? its stderr says why)".into()
            }
                Kind::Empty => "the file holds no bytes".into(),
        }
    }

    /// Whether this names one of the formats that are never stream-json (boo-normalize's own
    /// outputs, a session transcript): a file of such a kind is refused without reading further.
    pub fn is_other_format(self) -> bool {
        matches!(
            self,
            Kind::Envelope
                | Kind::AuditLog
                | Kind::Capture
                | Kind::Transcript
                | Kind::Profile
                | Kind::Sse
                | Kind::Otlp
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::StreamJson => "stream-json",
            Kind::Envelope => "envelope",
            Kind::AuditLog => "audit log",
            Kind::Capture => "capture",
            Kind::Transcript => "session transcript",
            Kind::Profile => "profile",
            Kind::Sse => "SSE",
            Kind::Otlp => "OTLP",
            Kind::OutOfRange => "number out of range",
            Kind::OtherJson => "other JSON",
            Kind::JsonArray => "JSON array",
            Kind::MultiLineJson => "multi-line JSON",
            Kind::Gzip => "gzip",
            Kind::Utf16 => "UTF-16",
            Kind::Text => "text",
            Kind::Binary => "binary",
            Kind::Blank => "blank",
            Kind::Empty => "empty",
        })
    }
}

/// What the beginning of an input (`head`, at most [`HEAD_BYTES`] are looked at) is; see the
/// module docs for the rule.
pub fn sniff(head: &[u8]) -> Kind {
    let head = &head[..head.len().min(HEAD_BYTES)];
    if head.is_empty() {
        return Kind::Empty;
    }
    let first = head.iter().position(|b| !b.is_ascii_whitespace());
    let Some(first) = first else {
        return Kind::Blank;
    };
    // A pretty-printed document: its first line is `{` alone.
    if head[first] == b'{' && memchr::memmem::find(head, b"\"profile_version\"").is_some() {
        return Kind::Profile;
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Kind::Gzip;
    }
    // UTF-16 without a byte order mark: ASCII characters with a NUL byte after (LE) or before
    // (BE) each.
    let utf16 = |h: &[u8], nul: usize| {
        h.len() >= 8
            && h[..8]
                .chunks(2)
                .all(|c| c[nul] == 0 && c[1 - nul].is_ascii() && c[1 - nul] != 0)
    };
    let after_bom = |h: &[u8], nul: usize| h.len() >= 4 && h[2 + nul] == 0 && h[3 - nul] != 0;
    if (head.starts_with(&[0xff, 0xfe]) && after_bom(head, 1))
        || (head.starts_with(&[0xfe, 0xff]) && after_bom(head, 0))
        || utf16(head, 1)
        || utf16(head, 0)
    {
        return Kind::Utf16;
    }
    let first_line = head[first..]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if matches!(first_line, b"{" | b"[" | b"[{") {
        return Kind::MultiLineJson;
    }
    let (mut named, mut json, mut binary) = (None, false, false);
    let pieces = head.split(|&b| b == b'\n');
    let count = pieces.clone().count();
    let mut seen = 0;
    for (i, raw) in pieces.enumerate() {
        let line = raw.trim_ascii();
        if line.is_empty() {
            continue;
        }
        seen += 1;
        if seen > HEAD_LINES {
            break;
        }
        // The last piece of a full head may be a line cut short: judged only if it parses,
        // or by its first member when that is a stream-json `type` (an init line that lists
        // many tools can be longer than the head).
        let last_cut = i + 1 == count && head.len() == HEAD_BYTES;
        if last_cut && cut_line_is_stream_json(line) {
            return Kind::StreamJson;
        }
        if last_cut && line.first() == Some(&b'[') && cut_line_is_stream_json(&line[1..]) {
            named.get_or_insert(Kind::JsonArray);
            continue;
        }
        match line_kind(line) {
            Kind::StreamJson => return Kind::StreamJson,
            Kind::OtherJson => json = true,
            Kind::Binary if !last_cut => binary = true,
            Kind::Text | Kind::Binary => {}
            k => {
                named.get_or_insert(k);
            }
        }
    }
    match named {
        Some(k) => k,
        None if json => Kind::OtherJson,
        None if binary => Kind::Binary,
        None => Kind::Text,
    }
}

/// Whether a line cut short by the head's end begins `{"type":"T"` (spaces allowed) with T a
/// stream-json type (every line the CLI writes puts `type` first).
fn cut_line_is_stream_json(line: &[u8]) -> bool {
    let mut rest = line;
    for token in [&b"{"[..], b"\"type\"", b":", b"\""] {
        match rest.trim_ascii_start().strip_prefix(token) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    let Some(end) = memchr::memchr(b'"', rest) else {
        return false;
    };
    std::str::from_utf8(&rest[..end]).is_ok_and(|t| STREAM_JSON_TYPES.contains(&t))
}

/// The kind of one non-blank line (trimmed).
fn line_kind(line: &[u8]) -> Kind {
    if line.contains(&0) {
        return Kind::Binary;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Kind::Binary;
    };
    let sse = ["data: ", "event: ", "id: ", "retry: "];
    if sse.iter().any(|p| text.starts_with(p)) {
        return Kind::Sse;
    }
    if !text.starts_with(['{', '[', '"']) && !text.starts_with(|c: char| c.is_ascii_digit()) {
        return Kind::Text;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => object_kind(&o, line),
        Ok(Value::Array(a))
            if a.iter().any(|e| {
                e.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| STREAM_JSON_TYPES.contains(&t))
            }) =>
        {
            Kind::JsonArray
        }
        Ok(_) => Kind::OtherJson,
        // JSON but for a number no double holds: what the line is apart from that number.
        Err(e) if crate::json::range::only_out_of_range(line, &e.to_string()) => {
            match crate::json::range::huge_numbers_zeroed(line).map(|z| line_kind(&z)) {
                Some(Kind::StreamJson) => Kind::OutOfRange,
                Some(k) => k,
                None => Kind::Text,
            }
        }
        Err(_) => Kind::Text,
    }
}

/// The kind of one line (`line`) that is a JSON object (`o`).
fn object_kind(o: &serde_json::Map<String, Value>, line: &[u8]) -> Kind {
    let has = |k: &str| o.contains_key(k);
    let str_of = |k: &str| o.get(k).and_then(Value::as_str);
    if has("resourceSpans") || has("resourceLogs") || has("resourceMetrics") {
        return Kind::Otlp;
    }
    if str_of("rec").is_some() && (str_of("format") == Some("boo-capture") || has("at_us")) {
        return Kind::Capture;
    }
    if has("run_id") && o.get("event").is_some_and(Value::is_object) && has("hash") {
        return Kind::AuditLog;
    }
    if o.get("v").and_then(Value::as_u64) == Some(1)
        && o.get("seq").is_some_and(Value::is_u64)
        && str_of("type").is_some()
    {
        return Kind::Envelope;
    }
    // Another agent's stream (see crate::dialect) is read like stream-json.
    if crate::dialect::line_dialect(line).is_some_and(|d| d != crate::dialect::Dialect::Claude) {
        return Kind::StreamJson;
    }
    let marks = crate::transcript::detect::Marks {
        kind: str_of("type"),
        session_snake: has("session_id"),
        session_camel: has("sessionId"),
        parent_uuid: has("parentUuid"),
        is_sidechain: has("isSidechain"),
        leaf_uuid: has("leafUuid"),
        seq: has("seq"),
    };
    if crate::transcript::detect::transcript_line(&marks) == Some(true) {
        return Kind::Transcript;
    }
    match str_of("type") {
        Some(t) if STREAM_JSON_TYPES.contains(&t) => Kind::StreamJson,
        _ => Kind::OtherJson,
    }
}

/// The message for an input called `name` that held `lines` lines, none of them stream-json,
/// whose beginning is `kind` (without the `boo-normalize: ` prefix): `NAME: ` and [`reason`].
pub fn message(name: &str, kind: Kind, lines: u64) -> String {
    format!("{name}: {}", reason(name, kind, lines))
}

/// [`message`] without the name in front: how many lines were read, what they are, what to do.
pub fn reason(name: &str, kind: Kind, lines: u64) -> String {
    let none = match (kind, lines) {
        (Kind::Empty, _) => return format!("{}; {}", kind.what(), kind.todo(name)),
        (Kind::OutOfRange, 1) => "its one line is not usable stream-json".to_owned(),
        (Kind::OutOfRange, n) => format!("none of {n} lines is usable stream-json"),
        (_, 1) => "its one line is not stream-json".to_owned(),
        (_, n) => format!("none of {n} lines is stream-json"),
    };
    format!("{none}: {}; {}", kind.what(), kind.todo(name))
}

/// The verdict on one input that is done: `None` when it held a stream-json line (`stream_json`
/// of its `lines` were) or its beginning `head` looks like stream-json (lines cut by
/// `--max-line-bytes`); else what it is and the message to print (see [`message`]).
pub fn check(name: &str, head: &[u8], lines: u64, stream_json: u64) -> Option<(Kind, String)> {
    if stream_json > 0 {
        return None;
    }
    let kind = if lines == 0 { Kind::Empty } else { sniff(head) };
    (kind != Kind::StreamJson).then(|| (kind, message(name, kind, lines)))
}

/// The verdict on an input from its beginning alone (`head`, as [`Head`] keeps it): `None` when
/// it looks like stream-json, else what it is and the reason ([`reason`]; "none of the first N
/// lines" when the head is full).
pub fn check_head(name: &str, head: &[u8]) -> Option<(Kind, String)> {
    let kind = sniff(head);
    if kind == Kind::StreamJson {
        return None;
    }
    let full = head.len() >= HEAD_BYTES;
    let mut lines = memchr::memchr_iter(b'\n', head).count() as u64;
    if !full && !head.is_empty() && !head.ends_with(b"\n") {
        lines += 1;
    }
    let why = match (full, lines) {
        // One line longer than the head: say so rather than "none of the first 0 lines".
        (true, 0) => format!(
            "its first line (longer than {} KiB) is not stream-json: {}; {}",
            HEAD_BYTES >> 10,
            kind.what(),
            kind.todo(name)
        ),
        (true, _) => reason(name, kind, lines).replacen("none of ", "none of the first ", 1),
        (false, _) => reason(name, kind, lines),
    };
    Some((kind, why))
}

/// A reader that keeps a copy of the first [`HEAD_BYTES`] bytes read through it, for [`sniff`]
/// once the input is done (one copy of 64 KiB per input; nothing after that).
pub struct Head<'a, R> {
    inner: R,
    head: &'a mut Vec<u8>,
}

impl<'a, R> Head<'a, R> {
    /// Read `inner`, keeping its first bytes in `head` (cleared first).
    pub fn new(inner: R, head: &'a mut Vec<u8>) -> Self {
        head.clear();
        Head { inner, head }
    }
}

impl<R: Read> Read for Head<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = HEAD_BYTES - self.head.len();
        if room > 0 {
            self.head.extend_from_slice(&buf[..n.min(room)]);
        }
        Ok(n)
    }
}

/// [`Head`] for a reader that must be `Send` and `'static` (it may be read on another thread):
/// the copy is shared, to be looked at once the input is done.
pub struct SharedHead<R> {
    inner: R,
    head: Arc<Mutex<Vec<u8>>>,
    full: bool,
}

impl<R> SharedHead<R> {
    /// Read `inner`, keeping its first bytes in `head`.
    pub fn new(inner: R, head: Arc<Mutex<Vec<u8>>>) -> Self {
        SharedHead {
            inner,
            head,
            full: false,
        }
    }
}

impl<R: Read> Read for SharedHead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.full
            && let Ok(mut head) = self.head.lock()
        {
            let room = HEAD_BYTES - head.len();
            head.extend_from_slice(&buf[..n.min(room)]);
            self.full = head.len() >= HEAD_BYTES;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
