//! Per-message usage: noted from assistant lines, `message_start` and `message_delta`, emitted
//! once per API message when it is over (final or marked provisional), and counted in the run's
//! totals; the main thread's last `stop_reason` for `turn.end`.

use super::write::joined;
use super::{PendingUsage, State, Tokens};
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::{Out, Val, get, get_str};
use simd_json::prelude::*;

/// The start of the key of a message without an id (a control character no API id has).
const ANONYMOUS: &str = "\u{1}";

/// The key of the per-message record of a message without an id, on input line `line`.
pub(super) fn anonymous_key(line: Option<u64>) -> String {
    format!("{ANONYMOUS}line {}", line.unwrap_or(0))
}

/// Whether `key` is the key of a message without an id (see [`anonymous_key`]).
pub(super) fn is_anonymous(key: &str) -> bool {
    key.starts_with(ANONYMOUS)
}

/// A subagent's latest message seen on an assistant line (see
/// [`State::note_subagent_message`]).
#[derive(Debug, Default)]
pub(super) struct SubagentTail {
    /// Its id, or [`anonymous_key`].
    message_id: String,
    model: Option<String>,
    /// One of its blocks is a tool use.
    asks_tools: bool,
}

/// The main thread's latest API message in the current turn.
#[derive(Debug, Default)]
pub(super) struct LastMessage {
    /// Its id, or [`anonymous_key`] for a message without one.
    key: String,
    /// The `stop_reason` one of its own lines carried (raw JSON; the last non-null wins).
    stop_reason: Option<Vec<u8>>,
}

impl State {
    /// Emit the pending usage of the stream keyed by `parent`, if any.
    pub(super) fn flush_usage(&mut self, parent: &Option<String>, ev: &mut Events) {
        let Some(u) = self.usage.remove(parent) else {
            return;
        };
        let session = u.session.clone().or_else(|| self.session.clone());
        let ctx = Ctx {
            session_id: session.as_deref(),
            parent: u.parent.as_deref(),
            line: u.line,
            uuid: None,
            ..Default::default()
        };
        self.emit_usage(&u, &ctx, ev);
    }

    /// Count message `u` in the run's totals and write its `usage` event with `ctx`, unless
    /// that message was emitted already.
    fn emit_usage(&mut self, u: &PendingUsage, ctx: &Ctx<'_>, ev: &mut Events) {
        if !self.usage_done.insert(u.message_id.clone()) {
            return;
        }
        let t = Tokens::of_fields(&u.fields);
        self.totals.api_messages += 1;
        if u.parent.is_none() {
            self.totals.add_main(t, u.final_seen);
        } else {
            self.totals.add_settled(t, u.final_seen);
        }
        let o = ev.begin(kind::USAGE, ctx);
        o.key("message_id");
        if is_anonymous(&u.message_id) {
            o.raw(b"null");
        } else {
            o.str(&u.message_id);
        }
        o.key("model");
        o.opt_str(u.model.as_deref());
        o.key("usage");
        write_fields(o, &u.fields);
        o.key("provisional");
        o.bool(!u.final_seen);
        for (k, v) in [
            ("stop_reason", &u.stop_reason),
            ("stop_sequence", &u.stop_sequence),
        ] {
            o.key(k);
            o.raw(v.as_deref().unwrap_or(b"null"));
        }
        if !u.extra.is_empty() {
            o.key("extra");
            write_fields(o, &u.extra);
        }
        ev.end();
    }

    /// An assistant line of message `key` on subagent stream `parent` was read; `asks_tools`:
    /// it holds a tool use block. Whether the subagent's latest message asked for tools tells
    /// whether its final message (which asks for none) was written (see
    /// [`State::subagent_final_usage`]).
    pub(super) fn note_subagent_message(
        &mut self,
        parent: &str,
        key: &str,
        model: Option<&str>,
        asks_tools: bool,
    ) {
        let tail = self.sub_tail.entry(parent.to_owned()).or_default();
        if tail.message_id != key {
            tail.message_id.clear();
            tail.message_id.push_str(key);
            tail.asks_tools = false;
        }
        if model.is_some() {
            tail.model = model.map(str::to_owned);
        }
        tail.asks_tools |= asks_tools;
    }

    /// The result of subagent call `call_id` came, with the CLI's account `structured`
    /// (`tool_use_result`). A foreground subagent's final message (the one that asks for no
    /// tool) has no assistant line in CLI 2.0.x to 2.1.3xx: its usage is only the account's
    /// `usage` (with `agentId`, `totalTokens`). It is counted here, once, as a message of the
    /// subagent (a `usage` event of this line, `message_id` null), unless the subagent's latest
    /// message seen on an assistant line asked for no tool: then that line was its final message
    /// (CLI 2.1.332 writes it when it forwards a nested subagent's lines) and is counted already.
    /// Not in a session transcript, whose subagents' messages are in files of their own.
    pub(super) fn subagent_final_usage(
        &mut self,
        ev: &mut Events,
        ctx: &Ctx<'_>,
        call_id: &str,
        structured: Val<'_, '_>,
    ) {
        let tail = self.sub_tail.remove(call_id);
        // A session transcript's subagent messages are in the subagent's own transcript file,
        // final one included, read with the session (one accounting with `sessions`).
        if ctx.src.is_some_and(|v| get(v, "isSidechain").is_some()) {
            return;
        }
        let Some(u) = get(structured, "usage").filter(|u| u.as_object().is_some()) else {
            return;
        };
        if tail.as_ref().is_some_and(|t| !t.asks_tools) {
            return;
        }
        let model = get_str(structured, "resolvedModel")
            .map(str::to_owned)
            .or_else(|| tail.and_then(|t| t.model));
        let mut p = PendingUsage {
            message_id: format!("{ANONYMOUS}tool_use_result {call_id}"),
            model,
            line: ctx.line,
            session: ctx.session_id.map(str::to_owned),
            parent: Some(call_id.to_owned()),
            final_seen: true,
            ..Default::default()
        };
        merge_fields(&mut p.fields, u, ctx, &ev.out);
        // Like every `usage` event: the line's number, not its facts (see docs/envelope.md).
        let ctx = Ctx {
            parent: Some(call_id),
            uuid: None,
            src: None,
            ..*ctx
        };
        self.emit_usage(&p, &ctx, ev);
    }

    /// Whether usage of the message on stream `parent` may still get larger counts from later
    /// lines of the same message: a session transcript writes a message's lines as its blocks
    /// end, after the results of its earlier tool calls (25 output tokens on a message's first
    /// line, 173 on its last, in a real session), so a tool result does not end its count; the
    /// message's next line, the next message or the end of the input does. One accounting with
    /// `sessions` ([`crate::transcript::usage`]): each message's last (final) usage.
    pub(super) fn usage_awaits_lines(&self, parent: &Option<String>) -> bool {
        self.usage.get(parent).is_some_and(|u| u.from_transcript)
    }

    /// Whether usage of the message on stream `parent` may still get its final counts from a
    /// `message_delta` that has not arrived: the message is being streamed (partial messages) and
    /// its `message_delta` has not come yet. Such usage is not emitted at a tool result; it waits
    /// for the `message_delta`/`message_stop`, the end of the turn or the next message.
    pub(super) fn usage_awaits_delta(&self, parent: &Option<String>) -> bool {
        let Some(u) = self.usage.get(parent) else {
            return false;
        };
        !u.final_seen
            && self
                .streams
                .get(parent)
                .and_then(|s| s.message_id.as_deref())
                == Some(u.message_id.as_str())
    }

    /// A line of main-thread message `key` (its id, or [`anonymous_key`]) is read: it is the
    /// turn's latest message from now on, with no `stop_reason` of its own until one of its lines
    /// carries one. An earlier message's `stop_reason` never stands for a later message's.
    pub(super) fn note_main_message(&mut self, key: &str) {
        if self.last_message.as_ref().is_some_and(|m| m.key == key) {
            return;
        }
        let mut m = self.last_message.take().unwrap_or_default();
        m.key.clear();
        m.key.push_str(key);
        m.stop_reason = None;
        self.last_message = Some(m);
    }

    /// The latest main-thread message (see [`State::note_main_message`]) carried `stop_reason` `r`.
    pub(super) fn note_stop_reason(&mut self, r: Val<'_, '_>) {
        let m = self.last_message.get_or_insert_with(LastMessage::default);
        let mut o = Out::from_buf(m.stop_reason.take().unwrap_or_default());
        o.buf.clear();
        o.value(r);
        m.stop_reason = Some(o.buf);
    }

    /// The turn is over: the `stop_reason` its latest main-thread message carried (raw JSON),
    /// if that message carried one.
    pub(super) fn take_last_stop_reason(&mut self) -> Option<Vec<u8>> {
        self.last_message.take().and_then(|m| m.stop_reason)
    }

    /// Record `usage` of message `message_id` (last write wins per key; emitted once later).
    /// A different message on the same stream means the previous one is over: its usage is
    /// emitted first.
    pub(super) fn note_usage(
        &mut self,
        ev: &mut Events,
        ctx: &Ctx<'_>,
        message_id: &str,
        model: Option<&str>,
        u: Val<'_, '_>,
        is_final: bool,
    ) {
        if self.usage_done.contains(message_id) {
            return;
        }
        let key = ctx.parent.map(str::to_owned);
        let same = self
            .usage
            .get(&key)
            .is_some_and(|p| p.message_id == message_id);
        if !same {
            self.flush_usage(&key, ev);
            self.usage.insert(
                key.clone(),
                PendingUsage {
                    message_id: message_id.to_owned(),
                    session: ctx.session_id.map(str::to_owned),
                    parent: key.clone(),
                    ..Default::default()
                },
            );
        }
        let p = self.usage.get_mut(&key).expect("inserted above");
        p.from_transcript |= ctx.src.is_some_and(|v| get(v, "isSidechain").is_some());
        if model.is_some() {
            p.model = model.map(str::to_owned);
        }
        p.line = ctx.line;
        p.final_seen |= is_final;
        merge_fields(&mut p.fields, u, ctx, &ev.out);
    }
}

/// Write `fields` as a JSON object.
fn write_fields(o: &mut Out, fields: &[(String, Vec<u8>)]) {
    joined(o, (b"{", b"}"), fields, |o, (k, raw)| {
        o.str(k);
        o.raw(b":");
        o.raw(raw);
    });
}

/// Members of a message (or of a `message_delta`'s `delta` and event) that the per-message record
/// does not keep under `extra`: they are mapped elsewhere, or named in the record.
const MESSAGE_MAPPED: &[&str] = &[
    "id",
    "type",
    "role",
    "model",
    "content",
    "usage",
    "stop_reason",
    "stop_sequence",
    "delta",
];

/// The raw JSON of `x`, unless it is null.
fn raw_some(x: Option<Val<'_, '_>>) -> Option<Vec<u8>> {
    let x = x.filter(|x| !x.is_null())?;
    let mut o = Out::default();
    o.value(x);
    Some(o.buf)
}

impl State {
    /// Record the message-level members of `m` (an assistant line's `message`, a
    /// `message_start`'s `message`, a `message_delta`'s `delta` or the event itself) in the
    /// pending record of message `message_id` on stream `parent`: `stop_reason` and
    /// `stop_sequence` when not null, the others under `extra` (last write wins).
    pub(super) fn note_message(
        &mut self,
        ev: &Events,
        ctx: &Ctx<'_>,
        message_id: &str,
        m: Val<'_, '_>,
    ) {
        let Some(p) = self.pending_of(ctx, message_id) else {
            return;
        };
        if let Some(r) = raw_some(get(m, "stop_reason")) {
            p.stop_reason = Some(r);
        }
        if let Some(r) = raw_some(get(m, "stop_sequence")) {
            p.stop_sequence = Some(r);
        }
        let Some(obj) = m.as_object() else { return };
        for (k, x) in obj.iter() {
            if MESSAGE_MAPPED.contains(&k) {
                continue;
            }
            merge_one(&mut p.extra, k, x, ctx, &ev.out);
        }
    }

    /// The CLI abandoned blocks of message `message_id` (`abandoned_blocks` of its own
    /// `message_stop`): kept in the message's record, under `extra`.
    pub(super) fn note_abandoned(
        &mut self,
        ev: &Events,
        ctx: &Ctx<'_>,
        message_id: &str,
        a: Val<'_, '_>,
    ) {
        if let Some(p) = self.pending_of(ctx, message_id) {
            merge_one(&mut p.extra, "abandoned_blocks", a, ctx, &ev.out);
        }
    }

    /// The pending record of message `message_id` on the stream of `ctx`, if that is the
    /// message pending there.
    fn pending_of(&mut self, ctx: &Ctx<'_>, message_id: &str) -> Option<&mut PendingUsage> {
        let key = ctx.parent.map(str::to_owned);
        self.usage
            .get_mut(&key)
            .filter(|p| p.message_id == message_id)
    }

    /// A synthetic user line names message `id` as refused (`refused_message_id`): its
    /// pending record gets `stop_reason` `refusal` unless one came.
    pub(super) fn note_refusal(&mut self, parent: &Option<String>, id: &str) {
        self.stop_reason_unless_set(parent, Some(id), b"\"refusal\"");
    }

    /// A synthetic user line is the CLI's output-limit prompt (see [`says_output_limit`]): the
    /// message that ran before it on stream `parent` was cut by `max_tokens`; its pending record
    /// says so unless a `stop_reason` came.
    pub(super) fn note_output_limit(&mut self, parent: &Option<String>) {
        self.stop_reason_unless_set(parent, None, b"\"max_tokens\"");
    }

    /// The pending record on stream `parent` (when `id` is given, only if it is that message's)
    /// takes `stop_reason` `raw` unless one came.
    fn stop_reason_unless_set(&mut self, parent: &Option<String>, id: Option<&str>, raw: &[u8]) {
        if let Some(p) = self.usage.get_mut(parent)
            && id.is_none_or(|id| p.message_id == id)
            && p.stop_reason.is_none()
        {
            p.stop_reason = Some(raw.to_vec());
        }
    }

    /// The turn's result line ends the main thread's last message: when no `stop_reason` came for
    /// it (CLI 2.1.x without partial messages), the result's is that message's.
    /// Only that message's: a pending record of an earlier message (the last one had no usage)
    /// keeps its own.
    pub(super) fn stop_reason_from_result(&mut self, r: Option<Val<'_, '_>>) {
        let last = self.last_message.as_ref().map(|m| m.key.as_str());
        if let Some(p) = self.usage.get_mut(&None)
            && p.stop_reason.is_none()
            && last == Some(p.message_id.as_str())
        {
            p.stop_reason = raw_some(r);
        }
    }
}

/// Set member `k` of `fields` to `x` (an existing slot reuses its buffer).
fn merge_one(
    fields: &mut Vec<(String, Vec<u8>)>,
    k: &str,
    x: Val<'_, '_>,
    ctx: &Ctx<'_>,
    holes: &Out,
) {
    let found = <[_]>::iter(fields).position(|(fk, _)| fk == k);
    let i = match found {
        Some(i) => i,
        None => {
            fields.push((k.to_owned(), Vec::new()));
            fields.len() - 1
        }
    };
    let mut o = Out::from_buf(std::mem::take(&mut fields[i].1));
    o.buf.clear();
    match ctx.spans.canonical(x) {
        Some(b) => o.raw(b),
        None => o.value_detached(x, holes, ctx.raw),
    }
    fields[i].1 = o.buf;
}

/// Overlay the members of object `u` onto `fields` (existing slots reuse their buffers).
fn merge_fields(fields: &mut Vec<(String, Vec<u8>)>, u: Val<'_, '_>, ctx: &Ctx<'_>, holes: &Out) {
    let Some(obj) = u.as_object() else { return };
    for (k, x) in obj.iter() {
        merge_one(fields, k, x, ctx, holes);
    }
}

/// How the CLI's prompts after a reply cut by the output limit begin (CLI 2.1.x: "Output token
/// limit hit. Resume directly …", "Output token limit hit again. …", "Your response was cut off
/// because it exceeded the output token limit. …", "[Your previous response reached the output
/// limit with no visible output. …]"). The CLI recognises its own prompts by their text too.
const OUTPUT_LIMIT_PROMPTS: &[&str] = &[
    "Output token limit hit",
    "Your response was cut off because it exceeded the output token limit",
    "[Your previous response reached the output limit",
];

/// Whether `text` (of a synthetic user line) is the CLI's prompt after an output-limit cut.
pub(super) fn says_output_limit(text: &str) -> bool {
    OUTPUT_LIMIT_PROMPTS.iter().any(|p| text.starts_with(p))
}
