//! Streams of fragments: text cut into `text_delta`/`thinking_delta` pieces, and tool input JSON
//! cut into `input_json_delta` pieces. Each piece releases the text that is decided and holds
//! back the shortest suffix that could still be (the start of) a secret.
//!
//! The decision is the engine's: a position is held when its anchored automaton is still
//! alive at the end of what has arrived (`sk-an`, `-----BEGIN RSA PRIVATE KEY-----` and the body
//! after it, `password = "hun`). Ordinary prose is released as it comes; a word that is a prefix
//! of a detector keyword waits for its next character. What is released is exactly what a scan
//! of the whole text would produce, so the complete `assistant` line gets the same placeholders.
//!
//! Below them is the state a redactor keeps across lines: one [`Stream`] per content block being
//! streamed (its `deltas` code feeds it) and the lines held back for the streams ([`Held`]; the
//! `hold` code queues and releases them).

use std::collections::VecDeque;

use super::engine::{Engine, Hit, KindId, Scratch};
use super::lex::escape_into;
use crate::transform::{Origin, Transformed};

/// Shared search state handed to streams.
pub(crate) struct Ctx<'e> {
    pub engine: &'e Engine,
    pub sc: &'e mut Scratch,
    pub hits: &'e mut Vec<Hit>,
    /// Kinds of the placeholders written (for marks).
    pub kinds: &'e mut Vec<KindId>,
}

/// Write `text[from..to]` with `hits` (sorted, inside the range) replaced by placeholders.
pub(crate) fn splice(cx: &mut Ctx<'_>, text: &[u8], from: usize, to: usize, out: &mut Vec<u8>) {
    let mut at = from;
    for h in cx.hits.iter() {
        out.extend_from_slice(&text[at..h.start]);
        cx.engine.placeholder(h.kind, &text[h.start..h.end], out);
        cx.kinds.push(h.kind);
        at = h.end;
    }
    out.extend_from_slice(&text[at..to]);
}

/// Decoded text arriving in pieces.
#[derive(Debug, Default)]
pub(crate) struct TextStream {
    /// Held text, after `start` bytes of released left context.
    buf: Vec<u8>,
    start: usize,
}

impl TextStream {
    /// Add `data`; append the redacted text that is now decided to `out` (decoded, not
    /// escaped). With `eof`, everything is released.
    pub fn push(&mut self, cx: &mut Ctx<'_>, data: &[u8], eof: bool, out: &mut Vec<u8>) {
        self.buf.extend_from_slice(data);
        cx.hits.clear();
        let d = cx.engine.scan(cx.sc, &self.buf, self.start, eof, cx.hits);
        splice(cx, &self.buf, self.start, d, out);
        self.start = d;
        if eof {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 1 {
            // Keep one released byte: the left context of `\b`.
            self.buf.drain(..self.start - 1);
            self.start = 1;
        }
    }

    /// Bytes held back.
    pub fn held(&self) -> usize {
        self.buf.len() - self.start
    }
}

/// Tool input JSON arriving in pieces: structure passes through, string contents go through a
/// [`TextStream`] each (a value under a secret-looking member name is held whole, like the
/// complete line's key rule needs).
#[derive(Debug, Default)]
pub(crate) struct JsonStream {
    /// Raw bytes of an escape cut by the end of a piece.
    pend: Vec<u8>,
    in_str: bool,
    is_key: bool,
    whole: bool,
    /// Open containers, `true` for objects.
    stack: Vec<bool>,
    expect_key: bool,
    /// Decoded name of the current member.
    key: Vec<u8>,
    text: TextStream,
    held: Vec<u8>,
    seg: Vec<u8>,
    dec: Vec<u8>,
}

impl JsonStream {
    /// Add a piece of JSON text; append the JSON text that is now decided to `out`.
    pub fn push(&mut self, cx: &mut Ctx<'_>, piece: &[u8], eof: bool, out: &mut Vec<u8>) {
        let mut data = std::mem::take(&mut self.pend);
        data.extend_from_slice(piece);
        let mut i = 0;
        while i < data.len() {
            let c = data[i];
            if !self.in_str {
                match c {
                    b'"' => {
                        self.in_str = true;
                        self.is_key = self.expect_key && self.stack.last() == Some(&true);
                        self.whole = !self.is_key
                            && self.stack.last() == Some(&true)
                            && cx.engine.is_secret_key(cx.sc, &self.key);
                        if self.is_key {
                            self.key.clear();
                        }
                    }
                    b'{' => {
                        self.stack.push(true);
                        self.expect_key = true;
                    }
                    b'[' => {
                        self.stack.push(false);
                        self.expect_key = false;
                    }
                    b'}' | b']' => {
                        self.stack.pop();
                        self.expect_key = false;
                    }
                    b',' => {
                        self.expect_key = self.stack.last() == Some(&true);
                        if self.expect_key {
                            self.key.clear();
                        }
                    }
                    _ => {}
                }
                out.push(c);
                i += 1;
                continue;
            }
            match c {
                b'"' => {
                    self.end_string(cx, out);
                    out.push(b'"');
                    i += 1;
                }
                b'\\' => {
                    let n = escape_len(&data[i..]);
                    if i + n > data.len() && !eof {
                        self.pend.extend_from_slice(&data[i..]);
                        break;
                    }
                    let end = (i + n).min(data.len());
                    super::lex::decode(&data[i..end], &mut self.dec, None);
                    self.seg.extend_from_slice(&self.dec);
                    i = end;
                }
                _ => {
                    let run = memchr::memchr2(b'"', b'\\', &data[i..]).unwrap_or(data.len() - i);
                    self.seg.extend_from_slice(&data[i..i + run]);
                    i += run;
                }
            }
        }
        if self.in_str {
            if eof {
                self.end_string(cx, out);
            } else {
                self.feed(cx, false, out);
            }
        }
        if eof {
            *self = JsonStream::default();
        }
    }

    fn feed(&mut self, cx: &mut Ctx<'_>, eof: bool, out: &mut Vec<u8>) {
        if self.is_key {
            self.key.extend_from_slice(&self.seg);
        }
        if self.whole {
            self.held.extend_from_slice(&self.seg);
        } else {
            let mut dec = std::mem::take(&mut self.dec);
            dec.clear();
            self.text.push(cx, &self.seg, eof, &mut dec);
            escape_into(out, &dec);
            self.dec = dec;
        }
        self.seg.clear();
    }

    fn end_string(&mut self, cx: &mut Ctx<'_>, out: &mut Vec<u8>) {
        self.feed(cx, true, out);
        if self.whole {
            cx.hits.clear();
            let key = std::mem::take(&mut self.key);
            cx.engine
                .scan_value(cx.sc, Some(&key), &self.held, false, cx.hits);
            self.key = key;
            let mut dec = std::mem::take(&mut self.dec);
            dec.clear();
            let held = std::mem::take(&mut self.held);
            splice(cx, &held, 0, held.len(), &mut dec);
            escape_into(out, &dec);
            self.dec = dec;
            self.held = held;
            self.held.clear();
        }
        self.in_str = false;
        self.whole = false;
        if self.is_key {
            self.expect_key = false;
        }
    }

    /// Bytes held back.
    pub fn held(&self) -> usize {
        self.pend.len() + self.text.held() + self.held.len()
    }
}

/// Length of the escape at the start of `b` (which starts with a backslash), including a
/// following low surrogate escape when `b` holds a high one.
fn escape_len(b: &[u8]) -> usize {
    if b.get(1) != Some(&b'u') {
        return 2;
    }
    let hi = b
        .get(2..6)
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| u16::from_str_radix(h, 16).ok());
    match hi {
        Some(u) if (0xD800..0xDC00).contains(&u) => {
            // Need the next 6 bytes to know whether a low surrogate follows.
            if b.len() >= 8 && !(b[6] == b'\\' && b[7] == b'u') {
                6
            } else {
                12
            }
        }
        _ => 6,
    }
}

/// Which member of a delta carries a block's fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Text,
    Thinking,
    Json,
}

impl Field {
    pub(super) fn delta_type(self) -> &'static str {
        match self {
            Field::Text => "text_delta",
            Field::Thinking => "thinking_delta",
            Field::Json => "input_json_delta",
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Field::Text => "text",
            Field::Thinking => "thinking",
            Field::Json => "partial_json",
        }
    }
}

/// One content block being streamed.
pub(super) struct Stream {
    /// Raw `parent_tool_use_id` string contents (`None` for null/absent).
    pub(super) parent: Option<Vec<u8>>,
    pub(super) index: u64,
    pub(super) field: Field,
    /// The JSON Pointer of the fragment in its lines (for marks).
    pub(super) path: &'static str,
    /// Tells this stream's held lines apart (see [`super::hold`]).
    pub(super) serial: u64,
    pub(super) text: TextStream,
    pub(super) json: JsonStream,
    /// The redacted text decided since the stream's oldest held line (decoded), and the kinds
    /// of the placeholders in it.
    pub(super) group: Vec<u8>,
    pub(super) group_kinds: Vec<KindId>,
}

/// A line waiting in the queue (see `super::hold`).
pub(super) struct Held {
    pub(super) origin: Origin,
    /// The input line.
    pub(super) bytes: Vec<u8>,
    pub(super) cut: bool,
    pub(super) state: State,
}

/// Where a held line stands.
pub(super) enum State {
    /// Decided: line 0 of the transform output, for input `bytes`.
    Done(Transformed),
    /// A delta of the stream with this serial; its fragment literal's content is `frag`.
    /// `scan`: the rest of the line may hold a secret (a detector literal outside the
    /// fragment, or an escape that could hide one), so it is scanned when the line comes out.
    Delta {
        serial: u64,
        frag: (usize, usize),
        scan: bool,
    },
}

/// The queue of held lines, oldest first.
pub(super) type Queue = VecDeque<Held>;
