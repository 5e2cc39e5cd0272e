//! Delta lines (Claude's `stream_event` lines and other agents' streamed pieces): which block a delta belongs to, feeding its fragment to the block's
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

/// A piece of another agent's streamed text or tool input ([`foreign`]).
pub(super) struct Foreign {
    /// Tells the agent's streams apart (never a Claude `parent_tool_use_id`: it starts with NUL).
    key: Vec<u8>,
    field: Field,
    frag: Str,
    /// The fragment's JSON Pointer, for marks.
    path: &'static str,
}

/// What a line is to the delta code.
pub(super) enum Line {
    /// A Claude `stream_event` line.
    Claude(Info),
    /// A delta line of another agent.
    Foreign(Foreign),
    /// Any other JSON line.
    Other,
}

/// Another agent's delta lines: Gemini CLI's `message` with `delta: true` (`content`), Copilot
/// CLI's `assistant.message_delta` / `assistant.reasoning_delta` (`data.deltaContent`, one
/// stream per message or reasoning id) and `assistant.tool_call_delta` (`data.inputDelta`, tool
/// input JSON, per call id), Cursor's text pieces (an `assistant` line with `timestamp_ms` and
/// no `model_call_id`, one text block) and `thinking` `delta`s (`text`).
#[derive(Default)]
struct Marks {
    kind: Option<(usize, usize)>,
    subtype: Option<(usize, usize)>,
    role: Option<(usize, usize)>,
    delta_true: bool,
    content: Option<Str>,
    id: Option<(usize, usize)>,
    delta_content: Option<Str>,
    input_delta: Option<Str>,
    text: Option<Str>,
    block_text: Option<Str>,
    blocks: u32,
    timestamp_ms: bool,
    model_call_id: bool,
}

/// Whether line `b` may be another agent's delta line (see [`Marks`]), from its first member
/// (these CLIs write `type` first) and, for two of them, one more search: cheap on Claude's
/// lines, which never start with these types but for `assistant`.
pub(super) fn foreign_hint(b: &[u8]) -> bool {
    let Some(t) = b.strip_prefix(b"{\"type\":\"") else {
        return false;
    };
    let has = |needle: &[u8]| memchr::memmem::find(b, needle).is_some();
    if t.starts_with(b"assistant.") {
        [
            &b"message_delta\""[..],
            b"reasoning_delta\"",
            b"tool_call_delta\"",
        ]
        .iter()
        .any(|d| t[10..].starts_with(d))
    } else if t.starts_with(b"message\"") {
        has(b"\"delta\":true")
    } else if t.starts_with(b"assistant\"") || t.starts_with(b"thinking\"") {
        // Cursor writes `timestamp_ms` last, and its pieces are short; Claude Code's long
        // assistant lines are not searched whole.
        let tail = &b[b.len().saturating_sub(48)..];
        memchr::memmem::find(tail, b"\"timestamp_ms\"").is_some()
            || (b.len() < 8192 && has(b"\"timestamp_ms\""))
    } else {
        false
    }
}

fn foreign(b: &[u8], m: Marks) -> Option<Foreign> {
    let kind = &b[m.kind?.0..m.kind?.1];
    let span = |x: Option<(usize, usize)>| x.map(|(s, e)| &b[s..e]);
    let key = |tag: &[u8], id: &[u8]| [b"\0", tag, id].concat();
    let one = |field, frag: Option<Str>, key: Vec<u8>, path| {
        frag.filter(|f| f.terminated).map(|frag| Foreign {
            key,
            field,
            frag,
            path,
        })
    };
    match kind {
        b"message" if m.delta_true && span(m.role) == Some(b"assistant") => {
            one(Field::Text, m.content, key(b"gemini", b""), "/content")
        }
        b"assistant.message_delta" => one(
            Field::Text,
            m.delta_content,
            key(b"copilot.message:", span(m.id).unwrap_or_default()),
            "/data/deltaContent",
        ),
        b"assistant.reasoning_delta" => one(
            Field::Thinking,
            m.delta_content,
            key(b"copilot.reasoning:", span(m.id).unwrap_or_default()),
            "/data/deltaContent",
        ),
        b"assistant.tool_call_delta" => one(
            Field::Json,
            m.input_delta,
            key(b"copilot.tool:", span(m.id).unwrap_or_default()),
            "/data/inputDelta",
        ),
        b"assistant" if m.timestamp_ms && !m.model_call_id && m.blocks == 1 => one(
            Field::Text,
            m.block_text,
            key(b"cursor.text", b""),
            "/message/content/0/text",
        ),
        b"thinking" if span(m.subtype) == Some(b"delta") => one(
            Field::Thinking,
            m.text,
            key(b"cursor.thinking", b""),
            "/text",
        ),
        _ => None,
    }
}

impl Redactor {
    /// Read what a line is to the delta code. `None` if it is not JSON.
    fn info(&mut self, b: &[u8]) -> Option<Line> {
        let mut lx = Lexer::new(b, &mut self.stack)?;
        let mut i = Info::default();
        let mut m = Marks::default();
        // A Claude line names its type first: the other agents' marks are not looked for then.
        let mut claude = false;
        loop {
            let t = lx.next_tok().ok()?;
            let Some(t) = t else { break };
            let (st, en) = match t {
                Tok::Str(s) if s.key => continue,
                Tok::Str(s) => (s.start, s.end),
                Tok::Scalar(a, z) => (a, z),
            };
            if lx.at(&[b"type"]) {
                m.kind = Some((st, en));
                claude = &b[st..en] == b"stream_event";
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
                if claude {
                    continue;
                }
                if lx.at(&[b"subtype"]) {
                    m.subtype = Some((st, en));
                } else if lx.at(&[b"role"]) {
                    m.role = Some((st, en));
                } else if lx.at(&[b"content"]) {
                    m.content = Some(s);
                } else if lx.at(&[b"text"]) {
                    m.text = Some(s);
                } else if lx.at(&[b"data", b"deltaContent"]) {
                    m.delta_content = Some(s);
                } else if lx.at(&[b"data", b"inputDelta"]) {
                    m.input_delta = Some(s);
                } else if lx.at(&[b"data", b"messageId"])
                    || lx.at(&[b"data", b"reasoningId"])
                    || lx.at(&[b"data", b"toolCallId"])
                {
                    m.id = Some((st, en));
                } else if lx.at_indexed(&[
                    (Some(b"message"), 0),
                    (Some(b"content"), 0),
                    (None, 0),
                    (Some(b"text"), 0),
                ]) {
                    m.block_text = Some(s);
                }
            } else if claude {
                continue;
            } else if lx.at(&[b"delta"]) {
                m.delta_true = &b[st..en] == b"true";
            } else if lx.at(&[b"timestamp_ms"]) {
                m.timestamp_ms = true;
            }
            if lx.at(&[b"model_call_id"]) {
                m.model_call_id = true;
            }
            if let Some(n) = lx.index_under(&[b"message", b"content"]) {
                m.blocks = m.blocks.max(n + 1);
            }
        }
        if m.kind.is_some_and(|(s, e)| &b[s..e] == b"stream_event") {
            return Some(Line::Claude(i));
        }
        Some(match foreign(b, m) {
            Some(f) => Line::Foreign(f),
            None => Line::Other,
        })
    }

    fn find(&self, parent: Option<&[u8]>, index: Option<u64>) -> Option<usize> {
        self.streams
            .iter()
            .position(|s| s.parent.as_deref() == parent && index.is_none_or(|i| s.index == i))
    }

    /// Handle a line that may be a delta (`origin` says which); false if it is not one (or not
    /// JSON). A delta line is queued until its stream decides it; other lines are redacted into
    /// `one` (a line for `b` itself) after releasing the streams they end: a Claude
    /// `content_block_stop`, `message_stop` or `message_start` ends its block's or message's
    /// streams; any line that is not another agent's delta ends that agent's streams.
    pub(super) fn stream_line(
        &mut self,
        b: &[u8],
        cut: bool,
        origin: Origin,
        one: &mut Transformed,
    ) -> Option<bool> {
        let i = match self.info(b)? {
            Line::Claude(i) => i,
            Line::Foreign(f) => {
                let key = Some(&f.key[..]);
                self.delta(b, cut, origin, key, 0, f.field, f.frag, f.path);
                return Some(true);
            }
            Line::Other => {
                self.release_foreign();
                self.plain(b, cut, None, one);
                return Some(false);
            }
        };
        self.release_foreign();
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
                let path = match field {
                    Field::Text => "/event/delta/text",
                    Field::Thinking => "/event/delta/thinking",
                    Field::Json => "/event/delta/partial_json",
                };
                self.delta(b, cut, origin, parent, index, field, frag, path);
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

    /// Queue delta line `b` of the stream (`parent`, `index`, `field`), feeding its fragment.
    #[allow(clippy::too_many_arguments)]
    fn delta(
        &mut self,
        b: &[u8],
        cut: bool,
        origin: Origin,
        parent: Option<&[u8]>,
        index: u64,
        field: Field,
        frag: Str,
        path: &'static str,
    ) {
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
                    path,
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
    }

    /// Whether another agent's stream is open (every line must then be looked at, to end it).
    pub(super) fn foreign_open(&self) -> bool {
        self.streams
            .iter()
            .any(|s| s.parent.as_deref().is_some_and(|p| p.first() == Some(&0)))
    }

    /// End every stream of another agent.
    fn release_foreign(&mut self) {
        while let Some(at) = self
            .streams
            .iter()
            .position(|s| s.parent.as_deref().is_some_and(|p| p.first() == Some(&0)))
        {
            self.release(at);
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

    /// The JSON Pointer of the fragment a stream's lines carry, for their `redactions` path.
    pub(super) fn mark_path(&self, at: usize) -> &'static str {
        self.streams[at].path
    }
}
