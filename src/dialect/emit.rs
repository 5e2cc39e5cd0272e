//! Writing a dialect's lines as stream-json: [`Emit`] accounts for each input line exactly once
//! (its first output line stands for it; later ones are synthesized lines of the same number
//! with no bytes of their own) and builds the stream-json lines every reader writes (an init, an
//! assistant message, a tool result, a result, the partial-message events of delta text).
//!
//! Lines are written straight into the stage's buffer with the normalizer's JSON writer
//! ([`Out`]): values of the input line are copied from its tape ([`Json`] for [`Val`]), the
//! rest written as it is built, in the member order of Claude Code's own lines. Nothing is built
//! as a `serde_json::Value` first.

use crate::json::{Out, Val};
use crate::read::Line;
use crate::transform::{Origin, Transformed};

/// The line type the normalizer turns into `skipped` with the line's `reason` (a dialect line
/// that says nothing the envelope shows, such as Codex's `turn.started`).
pub const SKIP_TYPE: &str = "boo-normalize.skip";

/// A JSON value a reader hands to [`Emit`]: a value of the input line ([`Val`]), a string, a
/// number, `null` for `None`, or one written by a closure ([`With`], [`Raw`]).
pub trait Json {
    /// Write the value.
    fn write(&self, o: &mut Out);
}

impl Json for Val<'_, '_> {
    fn write(&self, o: &mut Out) {
        o.value(*self);
    }
}

impl Json for str {
    fn write(&self, o: &mut Out) {
        o.str(self);
    }
}

impl Json for String {
    fn write(&self, o: &mut Out) {
        o.str(self);
    }
}

impl Json for u64 {
    fn write(&self, o: &mut Out) {
        o.u64(*self);
    }
}

impl Json for i64 {
    fn write(&self, o: &mut Out) {
        o.static_node(&simd_json::StaticNode::I64(*self));
    }
}

impl Json for f64 {
    /// As serde_json writes an `f64` (`0.0`, `1.5`; `null` when not finite).
    fn write(&self, o: &mut Out) {
        if self.is_finite() {
            let mut b = ryu::Buffer::new();
            o.raw(b.format_finite(*self).as_bytes());
        } else {
            o.raw(b"null");
        }
    }
}

impl Json for bool {
    fn write(&self, o: &mut Out) {
        o.bool(*self);
    }
}

impl<T: Json + ?Sized> Json for &T {
    fn write(&self, o: &mut Out) {
        (**self).write(o);
    }
}

impl<T: Json> Json for Option<T> {
    fn write(&self, o: &mut Out) {
        match self {
            Some(v) => v.write(o),
            None => o.raw(b"null"),
        }
    }
}

/// A value written by a closure.
pub struct With<F>(pub F);

impl<F: Fn(&mut Out)> Json for With<F> {
    fn write(&self, o: &mut Out) {
        (self.0)(o);
    }
}

/// Raw JSON, written as it is.
pub struct Raw<'a>(pub &'a [u8]);

impl Json for Raw<'_> {
    fn write(&self, o: &mut Out) {
        o.raw(self.0);
    }
}

/// An object being written member by member (see [`obj`]).
pub struct Obj<'o> {
    o: &'o mut Out,
    first: bool,
    /// A `timestamp` member was written.
    stamped: bool,
}

impl Obj<'_> {
    /// Member `k` (a name that needs no escape) with value `v`.
    pub fn m(&mut self, k: &str, v: impl Json) -> &mut Self {
        self.key(k);
        v.write(self.o);
        self
    }

    /// The key of the next member; its value is written to [`Obj::out`] next.
    pub fn key(&mut self, k: &str) {
        self.stamped |= k == "timestamp";
        if self.first {
            self.first = false;
            self.o.str(k);
            self.o.raw(b":");
        } else {
            self.o.key(k);
        }
    }

    /// Where the value of the member whose [`Obj::key`] was just written goes.
    pub fn out(&mut self) -> &mut Out {
        self.o
    }
}

/// Write an object whose members `f` writes.
pub fn obj(o: &mut Out, f: impl FnOnce(&mut Obj<'_>)) {
    o.raw(b"{");
    let mut w = Obj {
        o,
        first: true,
        stamped: false,
    };
    f(&mut w);
    o.raw(b"}");
}

/// An object value whose members a closure writes.
pub struct ObjWith<F>(pub F);

impl<F: Fn(&mut Obj<'_>)> Json for ObjWith<F> {
    fn write(&self, o: &mut Out) {
        obj(o, |w| (self.0)(w));
    }
}

/// The members of object `v` as serde_json's map (`preserve_order`) holds them: a key written
/// twice keeps its first place and its last value; then each of `remove` taken out as that
/// map's `remove` does (the last member moves into its place). The readers' lines keep the
/// member order they had when they were built from such maps.
pub fn members_removing<'t, 'i>(v: Val<'t, 'i>, remove: &[&str]) -> Vec<(&'i str, Val<'t, 'i>)> {
    let mut m: Vec<(&'i str, Val<'t, 'i>)> = Vec::new();
    if let Some(o) = v.as_object() {
        for (k, x) in o.iter() {
            match m.iter_mut().find(|(j, _)| *j == k) {
                Some(slot) => slot.1 = x,
                None => m.push((k, x)),
            }
        }
    }
    for r in remove {
        if let Some(i) = m.iter().position(|(k, _)| k == r) {
            m.swap_remove(i);
        }
    }
    m
}

/// Where a reader writes the stream-json lines of one input line.
pub struct Emit<'a> {
    out: &'a mut Transformed,
    origin: Option<Origin>,
    /// The input line has its output line.
    main: bool,
    violations: &'a mut Vec<(usize, String)>,
    pending_violation: Option<String>,
    /// The input line's time (RFC 3339), written as `timestamp` on each line made of it.
    stamp: Option<String>,
}

impl<'a> Emit<'a> {
    pub(super) fn new(
        out: &'a mut Transformed,
        line: Option<&Line<'_>>,
        violations: &'a mut Vec<(usize, String)>,
    ) -> Self {
        Emit {
            out,
            origin: line.map(Origin::of),
            main: false,
            violations,
            pending_violation: None,
            stamp: None,
        }
    }

    /// The input line's time, as an RFC 3339 string: every line written for it (but a
    /// `skipped` one) gets it as `timestamp`, as Claude Code's lines carry theirs.
    pub(super) fn stamp(&mut self, at: Option<String>) {
        self.stamp = at;
    }

    /// Every line written from now on is synthesized (end of input).
    pub(super) fn main_done(&mut self) {
        self.main = true;
    }

    /// Mark the next line written as breaking its dialect's schema: `why` names the missing
    /// field (`the thread.started line has no "thread_id"`).
    pub fn violation(&mut self, why: impl Into<String>) {
        self.pending_violation = Some(why.into());
    }

    /// Write one stream-json line, an object whose members `f` writes (the first line stands
    /// for the input line).
    pub fn line(&mut self, f: impl FnOnce(&mut Obj<'_>)) {
        self.write_line(true, f);
    }

    /// [`Emit::line`], with the input line's `timestamp` when `stamped` and the line has none.
    fn write_line(&mut self, stamped: bool, f: impl FnOnce(&mut Obj<'_>)) {
        let mut o = Out::from_buf(std::mem::take(self.out.buf()));
        let stamp = self.stamp.as_deref().filter(|_| stamped);
        obj(&mut o, |w| {
            f(w);
            if let Some(t) = stamp
                && !w.stamped
            {
                w.m("timestamp", t);
            }
        });
        *self.out.buf() = o.buf;
        if let Some(w) = self.pending_violation.take() {
            self.violations.push((self.out.len(), w));
        }
        let origin = if self.main {
            self.origin.map(|o| Origin { raw_len: 0, ..o })
        } else {
            self.main = true;
            None
        };
        self.out.end_line(origin);
    }

    /// Pass the input line on as it is (the first output line only).
    pub fn keep(&mut self) {
        if self.main {
            return;
        }
        if let Some(w) = self.pending_violation.take() {
            self.violations.push((self.out.len(), w));
        }
        self.main = true;
        self.out.keep_line();
    }

    /// The input line makes no event of its own: `skipped` with `reason`.
    pub fn skip(&mut self, reason: &str) {
        self.write_line(false, |w| {
            w.m("type", SKIP_TYPE).m("reason", reason);
        });
    }

    /// `skipped` with `reason` when nothing was written for the input line yet.
    pub fn skip_unless_written(&mut self, reason: &str) {
        if !self.main {
            self.skip(reason);
        }
    }

    /// The input line, if nothing was written for it, is skipped as consumed.
    pub(super) fn finish_line(&mut self) {
        if !self.main {
            self.skip("consumed by the dialect reader without an event of its own");
        }
    }

    /// `system/init` of `agent_version` (when the stream says it) with the members `members`
    /// writes (session id, model, cwd, …: stream-json names).
    pub fn init(&mut self, agent_version: Option<&str>, members: impl FnOnce(&mut Obj<'_>)) {
        self.line(|w| {
            w.m("type", "system")
                .m("subtype", "init")
                .m("agent_version", agent_version);
            members(w);
        });
    }

    /// An assistant line of message `id` with the content blocks `content` (an array; `usage`
    /// and `stop_reason` when the message is over and its usage known).
    pub fn assistant(
        &mut self,
        session: Option<&str>,
        id: &str,
        model: Option<&str>,
        content: &dyn Json,
        usage: Option<&dyn Json>,
    ) {
        self.line(|w| {
            w.m("type", "assistant");
            w.m(
                "message",
                ObjWith(|m: &mut Obj<'_>| {
                    m.m("id", id)
                        .m("type", "message")
                        .m("role", "assistant")
                        .m("model", model)
                        .m("content", content);
                    if let Some(u) = usage {
                        m.m("usage", u).m("stop_reason", "end_turn");
                    }
                }),
            );
            w.m("parent_tool_use_id", Raw(b"null"))
                .m("session_id", session);
        });
    }

    /// A user line with the prompt `text`.
    pub fn user_text(&mut self, session: Option<&str>, text: &str) {
        let block = ObjWith(|b: &mut Obj<'_>| {
            b.m("type", "text").m("text", text);
        });
        self.user(session, &block, None);
    }

    /// A user line with one content block, and its `tool_use_result`.
    fn user(&mut self, session: Option<&str>, block: &dyn Json, structured: Option<&dyn Json>) {
        self.line(|w| {
            w.m("type", "user");
            w.m(
                "message",
                ObjWith(|m: &mut Obj<'_>| {
                    m.m("role", "user").m(
                        "content",
                        With(|o: &mut Out| {
                            o.raw(b"[");
                            block.write(o);
                            o.raw(b"]");
                        }),
                    );
                }),
            );
            w.m("parent_tool_use_id", Raw(b"null"))
                .m("session_id", session);
            if let Some(s) = structured {
                w.m("tool_use_result", s);
            }
        });
    }

    /// A user line with the result of call `id`: `content` (a string or content blocks), the
    /// CLI's `is_error`, `structured` details (exit code, status, …) as `tool_use_result`.
    pub fn tool_result(
        &mut self,
        session: Option<&str>,
        id: &str,
        content: &dyn Json,
        is_error: bool,
        structured: Option<&dyn Json>,
    ) {
        let block = ObjWith(|b: &mut Obj<'_>| {
            b.m("type", "tool_result")
                .m("tool_use_id", id)
                .m("content", content)
                .m("is_error", is_error);
        });
        self.user(session, &block, structured);
    }

    /// A tool call (an assistant line of message `message` with one `tool_use` block).
    pub fn tool_use(
        &mut self,
        session: Option<&str>,
        message: &str,
        id: &str,
        name: &str,
        input: &dyn Json,
    ) {
        let block = ObjWith(|b: &mut Obj<'_>| {
            b.m("type", "tool_use")
                .m("id", id)
                .m("name", name)
                .m("input", input);
        });
        self.assistant(session, message, None, &Blocks(&[&block]), None);
    }

    /// A `stream_event` line holding `event`.
    pub fn stream_event(&mut self, session: Option<&str>, event: &dyn Json) {
        self.line(|w| {
            w.m("type", "stream_event")
                .m("event", event)
                .m("parent_tool_use_id", Raw(b"null"))
                .m("session_id", session);
        });
    }

    /// A `result` line: the turn's outcome, with the CLI's own members that `members` writes
    /// (`usage`, `duration_ms`, `result`, `num_turns`, `total_cost_usd` only where the CLI
    /// reports one).
    pub fn result(
        &mut self,
        session: Option<&str>,
        is_error: bool,
        subtype: &str,
        members: impl FnOnce(&mut Obj<'_>),
    ) {
        self.line(|w| {
            w.m("type", "result")
                .m("subtype", subtype)
                .m("is_error", is_error);
            members(w);
            w.m("session_id", session);
        });
    }

    /// A system line of `subtype` (a mapped one: `informational`, `api_retry`, …) with the
    /// members `members` writes.
    pub fn system(
        &mut self,
        session: Option<&str>,
        subtype: &str,
        members: impl FnOnce(&mut Obj<'_>),
    ) {
        self.line(|w| {
            w.m("type", "system")
                .m("subtype", subtype)
                .m("session_id", session);
            members(w);
        });
    }
}

/// An array of content blocks.
pub struct Blocks<'a>(pub &'a [&'a dyn Json]);

impl Json for Blocks<'_> {
    fn write(&self, o: &mut Out) {
        o.raw(b"[");
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                o.raw(b",");
            }
            b.write(o);
        }
        o.raw(b"]");
    }
}

/// One text block (`text`, or `thinking` when `thinking`), as an array of content blocks.
pub struct TextBlock<'a> {
    /// The text.
    pub text: &'a str,
    /// It is reasoning (a `thinking` block).
    pub thinking: bool,
}

impl Json for TextBlock<'_> {
    fn write(&self, o: &mut Out) {
        let (kind, key) = match self.thinking {
            true => ("thinking", "thinking"),
            false => ("text", "text"),
        };
        o.raw(b"[");
        obj(o, |b| {
            b.m("type", kind).m(key, self.text);
        });
        o.raw(b"]");
    }
}

/// Delta text of a dialect that streams assistant text in pieces, written as the partial-message
/// events of stream-json (so the envelope has live `text.delta` events and one `text` per
/// message, assembled once: never doubled).
#[derive(Debug, Default)]
pub struct DeltaText {
    /// The open message's id.
    open: Option<String>,
    /// Messages opened so far (for ids).
    count: u64,
    /// The kind of the open block (`text` or `thinking`).
    block: &'static str,
}

impl DeltaText {
    /// Write one piece of text (`thinking` when it is reasoning), opening a message (id made
    /// from `prefix`) or a block when none is open.
    pub fn piece(
        &mut self,
        e: &mut Emit<'_>,
        session: Option<&str>,
        prefix: &str,
        model: Option<&str>,
        text: &str,
        thinking: bool,
    ) {
        let block = if thinking { "thinking" } else { "text" };
        if self.open.is_some() && self.block != block {
            // One block per message: a new kind of text starts a new message.
            self.close(e, session);
        }
        if self.open.is_none() {
            self.count += 1;
            let id = format!("{prefix}-{}", self.count);
            e.stream_event(
                session,
                &ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "message_start").m(
                        "message",
                        ObjWith(|m: &mut Obj<'_>| {
                            m.m("id", id.as_str())
                                .m("type", "message")
                                .m("role", "assistant")
                                .m("model", model)
                                .m("content", Raw(b"[]"));
                        }),
                    );
                }),
            );
            e.stream_event(
                session,
                &ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "content_block_start").m("index", 0u64).m(
                        "content_block",
                        ObjWith(|b: &mut Obj<'_>| {
                            b.m("type", block).m(block, "");
                        }),
                    );
                }),
            );
            self.open = Some(id);
            self.block = block;
        }
        let delta = if thinking {
            "thinking_delta"
        } else {
            "text_delta"
        };
        e.stream_event(
            session,
            &ObjWith(|w: &mut Obj<'_>| {
                w.m("type", "content_block_delta").m("index", 0u64).m(
                    "delta",
                    ObjWith(|d: &mut Obj<'_>| {
                        d.m("type", delta).m(block, text);
                    }),
                );
            }),
        );
    }

    /// Whether a message is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// End the open message, if any (its text is written once, from the pieces).
    pub fn close(&mut self, e: &mut Emit<'_>, session: Option<&str>) {
        if self.open.take().is_some() {
            e.stream_event(
                session,
                &ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "content_block_stop").m("index", 0u64);
                }),
            );
            e.stream_event(
                session,
                &ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "message_stop");
                }),
            );
        }
    }
}
