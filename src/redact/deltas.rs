//! `stream_event` lines: which block a delta belongs to, feeding its fragment to the block's
//! stream ([`super::stream`]), and releasing what a stream still holds in a synthesized
//! `content_block_delta` line before the block's `content_block_stop` (or `message_stop`, a
//! new `message_start`, or the end of input).

use super::lex::{Lexer, Str, Tok, decode, escape_into};
use super::line::Redactor;
use super::stream::{Ctx, JsonStream, TextStream};
use crate::transform::Transformed;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Text,
    Thinking,
    Json,
}

impl Field {
    fn delta_type(self) -> &'static str {
        match self {
            Field::Text => "text_delta",
            Field::Thinking => "thinking_delta",
            Field::Json => "input_json_delta",
        }
    }

    fn name(self) -> &'static str {
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
    parent: Option<Vec<u8>>,
    index: u64,
    field: Field,
    session_raw: Vec<u8>,
    parent_raw: Vec<u8>,
    text: TextStream,
    json: JsonStream,
}

/// What a `stream_event` line says about its stream.
#[derive(Default)]
pub(super) struct Info {
    event: Option<(usize, usize)>,
    index: Option<u64>,
    delta: Option<(usize, usize)>,
    frag: Option<(Field, Str)>,
    parent: Option<(usize, usize)>,
    parent_raw: Option<(usize, usize)>,
    session_raw: Option<(usize, usize)>,
}

impl Redactor {
    /// Read what a `stream_event` line is about. `None` if it is not JSON.
    fn info(&mut self, b: &[u8]) -> Option<Info> {
        let mut lx = Lexer::new(b, &mut self.stack)?;
        let mut i = Info::default();
        let mut is_stream = false;
        loop {
            let t = lx.next_tok().ok()?;
            let Some(t) = t else { break };
            let (st, en) = match t {
                Tok::Str(s) if s.key => continue,
                Tok::Str(s) => (s.start, s.end),
                Tok::Scalar(a, z) => (a, z),
            };
            let raw = match t {
                Tok::Str(_) => (st - 1, (en + 1).min(b.len())),
                Tok::Scalar(..) => (st, en),
            };
            if lx.at(&[b"type"]) {
                is_stream = &b[st..en] == b"stream_event";
            } else if lx.at(&[b"parent_tool_use_id"]) {
                i.parent_raw = Some(raw);
                if let Tok::Str(_) = t {
                    i.parent = Some((st, en));
                }
            } else if lx.at(&[b"session_id"]) {
                i.session_raw = Some(raw);
            } else if lx.at(&[b"event", b"type"]) {
                i.event = Some((st, en));
            } else if lx.at(&[b"event", b"index"]) {
                i.index = std::str::from_utf8(&b[st..en]).ok()?.parse().ok();
            } else if lx.at(&[b"event", b"delta", b"type"]) {
                i.delta = Some((st, en));
            } else if let Tok::Str(s) = t {
                for f in [Field::Text, Field::Thinking, Field::Json] {
                    if lx.at(&[b"event", b"delta", f.name().as_bytes()]) {
                        i.frag = Some((f, s));
                    }
                }
            }
        }
        is_stream.then_some(i)
    }

    fn find(&self, parent: Option<&[u8]>, index: Option<u64>) -> Option<usize> {
        self.streams
            .iter()
            .position(|s| s.parent.as_deref() == parent && index.is_none_or(|i| s.index == i))
    }

    /// Handle a `stream_event` line; false if it is not one (or not JSON).
    pub(super) fn stream_line(&mut self, b: &[u8], cut: bool, out: &mut Transformed) -> bool {
        let Some(i) = self.info(b) else { return false };
        let parent = i.parent.map(|(s, e)| &b[s..e]);
        let event = i.event.map_or(&b""[..], |(s, e)| &b[s..e]);
        match event {
            b"content_block_delta" => {
                let delta = i.delta.map(|(s, e)| &b[s..e]);
                let (Some((field, frag)), Some(index)) = (i.frag, i.index) else {
                    self.plain(b, cut, None, out);
                    return true;
                };
                if delta != Some(field.delta_type().as_bytes()) || !frag.terminated {
                    self.plain(b, cut, None, out);
                    return true;
                }
                let at = match self.find(parent, Some(index)) {
                    Some(at) if self.streams[at].field == field => at,
                    other => {
                        if let Some(at) = other {
                            self.release(at, out);
                        }
                        let raw = |r: Option<(usize, usize)>| {
                            r.map_or(b"null".to_vec(), |(s, e)| b[s..e].to_vec())
                        };
                        self.streams.push(Stream {
                            parent: parent.map(<[u8]>::to_vec),
                            index,
                            field,
                            session_raw: raw(i.session_raw),
                            parent_raw: raw(i.parent_raw),
                            text: TextStream::default(),
                            json: JsonStream::default(),
                        });
                        self.streams.len() - 1
                    }
                };
                let raw = &b[frag.start..frag.end];
                let mut piece = std::mem::take(&mut self.frag);
                if frag.escaped {
                    decode(raw, &mut piece, None);
                } else {
                    piece.clear();
                    piece.extend_from_slice(raw);
                }
                self.feed(at, &piece, false);
                self.frag = piece;
                self.path.clear();
                self.path.push_str("/event/delta/");
                self.path.push_str(field.name());
                let kinds = std::mem::take(&mut self.kinds);
                for k in &kinds {
                    self.mark(*k);
                }
                self.kinds = kinds;
                self.kinds.clear();
                self.plain(b, cut, Some(frag.start), out);
            }
            b"content_block_stop" => {
                if let Some(at) = self.find(parent, i.index) {
                    self.release(at, out);
                }
                self.plain(b, cut, None, out);
            }
            b"message_start" | b"message_stop" => {
                while let Some(at) = self.find(parent, None) {
                    self.release(at, out);
                }
                self.plain(b, cut, None, out);
            }
            _ => self.plain(b, cut, None, out),
        }
        true
    }

    /// Feed decoded `piece` to stream `at`; leaves the new JSON string literal in `self.lit`
    /// and the placeholder kinds in `self.kinds`.
    fn feed(&mut self, at: usize, piece: &[u8], eof: bool) {
        let st = &mut self.streams[at];
        let mut cx = Ctx {
            engine: &self.engine,
            sc: &mut self.sc,
            hits: &mut self.hits,
            kinds: &mut self.kinds,
        };
        self.lit.clear();
        self.lit.push(b'"');
        self.dec.clear();
        match st.field {
            Field::Json => st.json.push(&mut cx, piece, eof, &mut self.dec),
            _ => st.text.push(&mut cx, piece, eof, &mut self.dec),
        }
        escape_into(&mut self.lit, &self.dec);
        self.lit.push(b'"');
        let held = st.json.held() + st.text.held();
        self.held_max = self.held_max.max(held);
    }

    /// Release stream `at`: a synthesized delta line with what it still holds.
    pub(super) fn release(&mut self, at: usize, out: &mut Transformed) {
        self.feed(at, b"", true);
        let st = self.streams.remove(at);
        if self.lit.len() <= 2 && self.kinds.is_empty() {
            return;
        }
        let o = out.buf();
        o.extend_from_slice(
            br#"{"type":"stream_event","event":{"type":"content_block_delta","index":"#,
        );
        o.extend_from_slice(itoa::Buffer::new().format(st.index).as_bytes());
        o.extend_from_slice(br#","delta":{"type":""#);
        o.extend_from_slice(st.field.delta_type().as_bytes());
        o.extend_from_slice(br#"",""#);
        o.extend_from_slice(st.field.name().as_bytes());
        o.extend_from_slice(b"\":");
        o.extend_from_slice(&self.lit);
        o.extend_from_slice(br#"}},"session_id":"#);
        o.extend_from_slice(&st.session_raw);
        o.extend_from_slice(br#","parent_tool_use_id":"#);
        o.extend_from_slice(&st.parent_raw);
        o.push(b'}');
        self.path.clear();
        self.path.push_str("/event/delta/");
        self.path.push_str(st.field.name());
        let kinds = std::mem::take(&mut self.kinds);
        for k in &kinds {
            self.mark(*k);
        }
        self.kinds = kinds;
        self.kinds.clear();
        self.end_line(out, true);
    }
}
