//! `stream_event` lines (`--include-partial-messages`): ephemeral deltas and lifecycle events,
//! and tool input assembled from `input_json_delta` fragments.
//!
//! Streams are keyed by `parent_tool_use_id`, so a subagent's stream never mixes with its
//! parent's, and blocks by their `index` within the current message. A tool call is emitted once
//! per id: from the complete `assistant` line when it comes (the CLI writes it before the block's
//! `content_block_stop`), else from the assembled fragments at `message_stop`, at the matching
//! `tool_result`, at `result` or at the end of input. Text and thinking streamed for a message
//! that never got an `assistant` line are emitted from the deltas at `message_stop` too.

use super::calls::{CALL_MAPPED, block_extra_detached, input_digest, write_meaning};
use super::{PendingCall, State, StreamBlock, ToolInfo};
use crate::envelope::kind as ek;
use crate::envelope::{Ctx, Events};
use crate::json::{Out, Parser, Val, get, get_some, get_str};
use simd_json::prelude::*;

impl State {
    pub(super) fn stream_event(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        let Some(e) = get(v, "event").filter(|e| e.as_object().is_some()) else {
            return self.unknown_line(v, ctx, ev, "shape", "stream_event");
        };
        let key = ctx.parent.map(str::to_owned);
        let index = get(e, "index").and_then(|i| i.as_u64());
        match get_str(e, "type").unwrap_or("") {
            "message_start" => {
                let m = get(e, "message");
                let id = m.and_then(|m| get_str(m, "id"));
                let model = m.and_then(|m| get_str(m, "model"));
                // A new message on this stream: anything left of the previous one is flushed.
                self.flush_stream(&key, ev, "a new message started first");
                let s = self.streams.entry(key.clone()).or_default();
                s.message_id = id.map(str::to_owned);
                s.model = model.map(str::to_owned);
                if ctx.parent.is_none() {
                    match id {
                        Some(id) => self.note_main_message(id),
                        None => self.note_main_message(&super::usage::anonymous_key(ctx.line)),
                    }
                }
                if let (Some(id), Some(u)) = (
                    id,
                    m.and_then(|m| get_some(m, "usage"))
                        .filter(|u| u.as_object().is_some()),
                ) {
                    self.note_usage(ev, ctx, id, model, u, false);
                    self.note_message(ev, ctx, id, m.expect("usage came from it"));
                }
                let o = ev.begin_ephemeral(ek::MESSAGE_START, ctx);
                o.key("message_id");
                o.opt_str(id);
                o.key("model");
                o.opt_str(model);
                ev.end();
            }
            "content_block_start" => {
                let cb = get(e, "content_block");
                let bt = cb.and_then(|c| get_str(c, "type")).unwrap_or("");
                let s = self.streams.entry(key.clone()).or_default();
                let block = match bt {
                    "text" => StreamBlock::Text(String::new()),
                    "thinking" => {
                        let sig = cb.and_then(|c| get_str(c, "signature")).unwrap_or("");
                        StreamBlock::Thinking(String::new(), sig.to_owned())
                    }
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let c = cb.expect("type came from it");
                        StreamBlock::Tool(PendingCall {
                            id: get_str(c, "id").map(str::to_owned),
                            name: get_str(c, "name").map(str::to_owned),
                            json: String::new(),
                            complete: false,
                            parent: key.clone(),
                            session: ctx.session_id.map(str::to_owned),
                            message_id: s.message_id.clone(),
                            server: bt != "tool_use",
                            block_extra: block_extra_detached(c, CALL_MAPPED, &ev.out, ctx.raw),
                        })
                    }
                    _ => StreamBlock::Other,
                };
                let (tid, tname) = match &block {
                    StreamBlock::Tool(c) => (c.id.clone(), c.name.clone()),
                    _ => (None, None),
                };
                if let Some(i) = index {
                    s.blocks.insert(i, block);
                }
                let o = ev.begin_ephemeral(ek::BLOCK_START, ctx);
                o.key("index");
                opt_u64(o, index);
                o.key("block_type");
                o.str(bt);
                o.key("tool_use_id");
                o.opt_str(tid.as_deref());
                o.key("name");
                o.opt_str(tname.as_deref());
                ev.end();
            }
            "content_block_delta" => self.delta(e, index, key, ctx, ev),
            "content_block_stop" => {
                if let Some(s) = self.streams.get_mut(&key)
                    && let Some(StreamBlock::Tool(c)) = index.and_then(|i| s.blocks.get_mut(&i))
                {
                    c.complete = true;
                }
                let o = ev.begin_ephemeral(ek::BLOCK_STOP, ctx);
                o.key("index");
                opt_u64(o, index);
                ev.end();
            }
            "message_delta" => {
                let d = get(e, "delta");
                let id = self.streams.get(&key).and_then(|s| s.message_id.clone());
                // Without a message_start (no id on the stream) the delta ends the message whose
                // record is pending on this stream: an assistant line's without an id.
                let record = id.clone().or_else(|| {
                    self.usage
                        .get(&key)
                        .map(|p| p.message_id.clone())
                        .filter(|r| super::usage::is_anonymous(r))
                });
                if let (Some(r), Some(u)) = (
                    record.as_deref(),
                    get_some(e, "usage").filter(|u| u.as_object().is_some()),
                ) {
                    self.note_usage(ev, ctx, r, None, u, true);
                }
                if let Some(r) = record.as_deref() {
                    if let Some(d) = d {
                        self.note_message(ev, ctx, r, d);
                    }
                    self.note_message(ev, ctx, r, e);
                }
                if ctx.parent.is_none() {
                    match record.as_deref() {
                        Some(r) => self.note_main_message(r),
                        None => self.note_main_message(&super::usage::anonymous_key(ctx.line)),
                    }
                    if let Some(r) = d.and_then(|d| get_some(d, "stop_reason")) {
                        self.note_stop_reason(r);
                    }
                }
                let o = ev.begin_ephemeral(ek::MESSAGE_DELTA, ctx);
                o.key("message_id");
                o.opt_str(id.as_deref());
                o.key("stop_reason");
                o.opt_value(d.and_then(|d| get(d, "stop_reason")));
                o.key("usage");
                o.opt_value(get(e, "usage"));
                ev.end();
            }
            "message_stop" => {
                let id = self.streams.get(&key).and_then(|s| s.message_id.clone());
                // The CLI's own message_stop for a message it gave up on names the blocks it
                // abandoned: kept on the event and in the message's record. CLI 2.1.332 writes
                // it beside `event` on the line (`{api_message_id, from_block_index}`), the
                // CLI's wire schema inside the event; the event's wins.
                let abandoned = get(e, "abandoned_blocks").or_else(|| get(v, "abandoned_blocks"));
                if let Some(id) = id.as_deref() {
                    self.note_message(ev, ctx, id, e);
                    if let Some(a) = abandoned {
                        self.note_abandoned(ev, ctx, id, a);
                    }
                }
                let o = ev.begin_ephemeral(ek::MESSAGE_STOP, ctx);
                o.key("message_id");
                o.opt_str(id.as_deref());
                if let Some(a) = abandoned {
                    o.key("abandoned_blocks");
                    o.value(a);
                }
                ev.end();
                let why = if abandoned.is_some() {
                    "the CLI abandoned the message (abandoned_blocks on its message_stop) before the block stop"
                } else {
                    "message_stop came before the block stop"
                };
                self.flush_stream(&key, ev, why);
                self.flush_usage(&key, ev);
            }
            "ping" => {
                ev.begin_ephemeral(ek::STREAM_PING, ctx);
                ev.end();
            }
            "error" => {
                let o = ev.begin(ek::STREAM_ERROR, ctx);
                o.key("error");
                o.opt_value(get(e, "error"));
                ev.end();
            }
            t => {
                let name = format!("stream_event.{t}");
                self.unknown_line(v, ctx, ev, "stream_event", &name);
            }
        }
    }

    fn delta(
        &mut self,
        e: Val<'_, '_>,
        index: Option<u64>,
        key: Option<String>,
        ctx: &Ctx<'_>,
        ev: &mut Events,
    ) {
        let d = get(e, "delta");
        let dt = d.and_then(|d| get_str(d, "type")).unwrap_or("");
        let s = self.streams.entry(key).or_default();
        let block = index.and_then(|i| s.blocks.get_mut(&i));
        let message_id = s.message_id.as_deref();
        match (dt, block) {
            // Kept for the thinking event assembled from deltas; the delta itself is block.delta.
            ("signature_delta", Some(StreamBlock::Thinking(_, sig))) => {
                sig.push_str(d.and_then(|d| get_str(d, "signature")).unwrap_or(""));
                block_delta(ev, ctx, index, d);
            }
            ("text_delta", b) => {
                let text = d.and_then(|d| get_str(d, "text")).unwrap_or("");
                if let Some(StreamBlock::Text(acc)) = b {
                    acc.push_str(text);
                }
                let o = ev.begin_ephemeral(ek::TEXT_DELTA, ctx);
                o.key("message_id");
                o.opt_str(message_id);
                o.key("index");
                opt_u64(o, index);
                o.key("text");
                o.str(text);
                ev.end();
            }
            ("thinking_delta", b) => {
                let text = d.and_then(|d| get_str(d, "thinking")).unwrap_or("");
                if let Some(StreamBlock::Thinking(acc, _)) = b {
                    acc.push_str(text);
                }
                let o = ev.begin_ephemeral(ek::THINKING_DELTA, ctx);
                o.key("message_id");
                o.opt_str(message_id);
                o.key("index");
                opt_u64(o, index);
                o.key("thinking");
                o.str(text);
                ev.end();
            }
            ("input_json_delta", b) => {
                let part = d.and_then(|d| get_str(d, "partial_json")).unwrap_or("");
                let (id, name) = match b {
                    Some(StreamBlock::Tool(c)) => {
                        c.json.push_str(part);
                        (c.id.as_deref(), c.name.as_deref())
                    }
                    _ => (None, None),
                };
                let o = ev.begin_ephemeral(ek::TOOL_INPUT_DELTA, ctx);
                o.key("tool_use_id");
                o.opt_str(id);
                o.key("name");
                o.opt_str(name);
                o.key("index");
                opt_u64(o, index);
                o.key("partial_json");
                o.str(part);
                ev.end();
            }
            _ => block_delta(ev, ctx, index, d),
        }
    }

    /// The assistant line carried call `id`: drop its pending delta state.
    pub(super) fn forget_pending_call(&mut self, parent: Option<&str>, id: &str) {
        let key = parent.map(str::to_owned);
        if let Some(s) = self.streams.get_mut(&key) {
            s.blocks
                .retain(|_, b| !matches!(b, StreamBlock::Tool(c) if c.id.as_deref() == Some(id)));
        }
    }

    /// Emit the pending delta-assembled call with this id, wherever it is streamed.
    pub(super) fn flush_call_by_id(&mut self, id: &str, ev: &mut Events) {
        let mut found = None;
        for s in self.streams.values_mut() {
            let idx = s
                .blocks
                .iter()
                .find(|(_, b)| matches!(b, StreamBlock::Tool(c) if c.id.as_deref() == Some(id)))
                .map(|(i, _)| *i);
            if let Some(i) = idx {
                if let Some(StreamBlock::Tool(c)) = s.blocks.remove(&i) {
                    found = Some(c);
                }
                break;
            }
        }
        if let Some(c) = found {
            self.emit_assembled(c, ev, "the tool result came before the block stop");
        }
    }

    /// Emit what is left of one stream's current message from its deltas.
    pub(super) fn flush_stream(&mut self, key: &Option<String>, ev: &mut Events, why: &str) {
        let Some(s) = self.streams.get_mut(key) else {
            return;
        };
        let blocks = std::mem::take(&mut s.blocks);
        let message_id = s.message_id.clone();
        let model = s.model.clone();
        // Text/thinking only when no assistant line carried this message.
        let from_deltas = message_id
            .as_deref()
            .is_none_or(|id| !self.assistant_seen.contains(id));
        for (_, b) in blocks {
            let mut signature = String::new();
            let (kind, field, text) = match b {
                StreamBlock::Tool(c) => {
                    self.emit_assembled(c, ev, why);
                    continue;
                }
                StreamBlock::Text(t) => (ek::TEXT, "text", t),
                StreamBlock::Thinking(t, sig) => {
                    signature = sig;
                    (ek::THINKING, "thinking", t)
                }
                StreamBlock::Other => continue,
            };
            if !from_deltas || text.is_empty() {
                continue;
            }
            if let Some(id) = &message_id {
                self.text_from_deltas.insert(id.clone());
            }
            let ctx = Ctx {
                session_id: self.session.as_deref(),
                parent: key.as_deref(),
                line: None,
                uuid: None,
                ..Default::default()
            };
            let o = ev.begin(kind, &ctx);
            o.key("message_id");
            o.opt_str(message_id.as_deref());
            if kind == ek::TEXT {
                o.key("model");
                o.opt_str(model.as_deref());
            }
            o.key(field);
            o.str(&text);
            if kind == ek::THINKING {
                o.key("redacted");
                o.bool(false);
            }
            o.key("source");
            o.str("deltas");
            if !signature.is_empty() {
                o.key("block_extra");
                o.raw(b"{\"signature\":");
                o.str(&signature);
                o.raw(b"}");
            }
            ev.end();
        }
    }

    /// `tool.call` from assembled fragments (once per id; a call without id is never paired).
    fn emit_assembled(&mut self, c: PendingCall, ev: &mut Events, why: &str) {
        if c.id.as_deref().is_some_and(|id| {
            self.tools
                .get(id)
                .is_some_and(|t| t.call_emitted && t.scope == self.scope)
        }) {
            return;
        }
        // An empty input stream means a tool without arguments when the block stopped; a block
        // that never stopped and streamed no fragment has an input never seen, not an empty one.
        let unseen = c.json.trim().is_empty() && !c.complete;
        let text = if c.json.trim().is_empty() {
            "{}"
        } else {
            c.json.as_str()
        };
        let mut parser = Parser::default();
        let parsed = if unseen {
            Err(NO_FRAGMENT.to_owned())
        } else {
            parser.parse(text.as_bytes()).map_err(|e| e.message)
        };
        let meaning = crate::tool::meaning(
            self.opts.dialect,
            c.name.as_deref(),
            parsed.as_ref().ok().map(|p| p.tape.as_value()),
        );
        if let Some(id) = &c.id {
            let input = parsed.as_ref().ok().map(|p| p.tape.as_value());
            self.tools.insert(
                id.clone(),
                ToolInfo {
                    name: c.name.clone(),
                    call_emitted: true,
                    scope: self.scope,
                    input: input_digest(input, None, &Out::default(), b""),
                    kind: meaning.kind,
                },
            );
        }
        let ctx = Ctx {
            session_id: c.session.as_deref().or(self.session.as_deref()),
            parent: c.parent.as_deref(),
            ..Default::default()
        };
        let o = ev.begin(ek::TOOL_CALL, &ctx);
        o.key("tool_use_id");
        o.opt_str(c.id.as_deref());
        o.key("name");
        o.opt_str(c.name.as_deref());
        o.key("input");
        match &parsed {
            Ok(p) => o.value(p.tape.as_value()),
            Err(_) => o.raw(b"null"),
        }
        o.key("input_error");
        match &parsed {
            Ok(_) => o.raw(b"null"),
            Err(e) => {
                let state = if c.complete { "complete" } else { "incomplete" };
                o.str(&format!("{state} input did not parse ({e}): {why}"));
            }
        }
        o.key("message_id");
        o.opt_str(c.message_id.as_deref());
        o.key("subagent");
        o.bool(meaning.kind == crate::tool::Kind::Subagent);
        write_meaning(o, &meaning, None);
        o.key("server");
        o.bool(c.server);
        o.key("source");
        o.str("deltas");
        if let Some(x) = &c.block_extra {
            o.key("block_extra");
            o.raw(x);
        }
        if parsed.is_err() {
            o.key("partial_json");
            o.str(&c.json);
        }
        if c.id.is_none() || c.name.is_none() {
            let missing: Vec<&str> = [("id", c.id.is_none()), ("name", c.name.is_none())]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(k, _)| *k)
                .collect();
            o.key("violation");
            o.str(&format!(
                "the source broke the schema: the tool_use block's content_block_start has no {}",
                missing.join(" and no ")
            ));
        }
        ev.end();
    }
}

/// Why a call whose block started but streamed no fragment and never stopped has no input.
const NO_FRAGMENT: &str = "no input fragment was streamed";

/// `block.delta`: a delta of another kind, raw.
fn block_delta(ev: &mut Events, ctx: &Ctx<'_>, index: Option<u64>, d: Option<Val<'_, '_>>) {
    let o = ev.begin_ephemeral(ek::BLOCK_DELTA, ctx);
    o.key("index");
    opt_u64(o, index);
    o.key("delta");
    o.opt_value(d);
    ev.end();
}

fn opt_u64(o: &mut Out, n: Option<u64>) {
    match n {
        Some(n) => o.u64(n),
        None => o.raw(b"null"),
    }
}
