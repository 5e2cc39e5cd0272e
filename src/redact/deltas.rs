//! `stream_event` lines: which block a delta belongs to, feeding its fragment to the block's
//! stream ([`super::fragments`]), and ending the stream at the block's `content_block_stop` (or
//! `message_stop`, a new `message_start`, or the end of input), which decides every line it
//! still holds (see [`super::hold`]).

use super::fragments::{Ctx, Field, JsonStream, Stream, TextStream};
use super::lex::{Lexer, Str, Tok, decode};
use super::line::Redactor;
use crate::transform::{Origin, Transformed};

/// What a `stream_event` line says about its stream.
#[derive(Default)]
pub(super) struct Info {
    event: Option<(usize, usize)>,
    index: Option<u64>,
    delta: Option<(usize, usize)>,
    frag: Option<(Field, Str)>,
    parent: Option<(usize, usize)>,
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
            if lx.at(&[b"type"]) {
                is_stream = &b[st..en] == b"stream_event";
            } else if lx.at(&[b"parent_tool_use_id"]) {
                if let Tok::Str(_) = t {
                    i.parent = Some((st, en));
                }
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

    /// Handle a `stream_event` line (`origin` says which); false if it is not one (or not JSON).
    /// A delta line is queued until its stream decides it; other stream lines are redacted
    /// into `one` (a line for `b` itself) after releasing the streams they end.
    pub(super) fn stream_line(
        &mut self,
        b: &[u8],
        cut: bool,
        origin: Origin,
        one: &mut Transformed,
    ) -> Option<bool> {
        let i = self.info(b)?;
        let parent = i.parent.map(|(s, e)| &b[s..e]);
        let event = i.event.map_or(&b""[..], |(s, e)| &b[s..e]);
        match event {
            b"content_block_delta" => {
                let delta = i.delta.map(|(s, e)| &b[s..e]);
                let (Some((field, frag)), Some(index)) = (i.frag, i.index) else {
                    self.plain(b, cut, None, one);
                    return Some(false);
                };
                if delta != Some(field.delta_type().as_bytes()) || !frag.terminated {
                    self.plain(b, cut, None, one);
                    return Some(false);
                }
                let at = match self.find(parent, Some(index)) {
                    Some(at) if self.streams[at].field == field => at,
                    other => {
                        if let Some(at) = other {
                            self.release(at);
                        }
                        self.next_serial += 1;
                        self.streams.push(Stream {
                            parent: parent.map(<[u8]>::to_vec),
                            index,
                            field,
                            serial: self.next_serial,
                            text: TextStream::default(),
                            json: JsonStream::default(),
                            group: Vec::new(),
                            group_kinds: Vec::new(),
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
                // The line is JSON: it ends a private key block, as every JSON line does.
                self.pem_open = false;
                let serial = self.streams[at].serial;
                self.hold_delta(b, cut, origin, serial, (frag.start, frag.end));
                let st = &self.streams[at];
                if st.json.held() + st.text.held() == 0 {
                    self.decide(at);
                }
                Some(true)
            }
            b"content_block_stop" => {
                if let Some(at) = self.find(parent, i.index) {
                    self.release(at);
                }
                self.plain(b, cut, None, one);
                Some(false)
            }
            b"message_start" | b"message_stop" => {
                while let Some(at) = self.find(parent, None) {
                    self.release(at);
                }
                self.plain(b, cut, None, one);
                Some(false)
            }
            _ => {
                self.plain(b, cut, None, one);
                Some(false)
            }
        }
    }

    /// Feed decoded `piece` to stream `at`: what is now decided joins the stream's group
    /// (placeholders included, their kinds in `group_kinds`).
    fn feed(&mut self, at: usize, piece: &[u8], eof: bool) {
        let st = &mut self.streams[at];
        let mut cx = Ctx {
            engine: &self.engine,
            sc: super::line::scratch(&mut self.sc, &self.engine),
            hits: &mut self.hits,
            kinds: &mut st.group_kinds,
        };
        match st.field {
            Field::Json => st.json.push(&mut cx, piece, eof, &mut st.group),
            _ => st.text.push(&mut cx, piece, eof, &mut st.group),
        }
        let held = st.json.held() + st.text.held();
        self.held_max = self.held_max.max(held);
    }

    /// Release stream `at` (its block ended): everything it holds is decided now.
    pub(super) fn release(&mut self, at: usize) {
        self.feed(at, b"", true);
        self.decide(at);
        self.streams.remove(at);
    }

    /// The delta field a stream's lines carry, for their `redactions` path.
    pub(super) fn field_name(&self, at: usize) -> &'static str {
        self.streams[at].field.name()
    }
}
