//! `assistant` and `user` lines: content blocks to `text`, `thinking`, `tool.call`,
//! `tool.result`, `user.text`, and per-message `usage`.

use super::State;
use super::calls::{
    RESULT_MAPPED, ResultFacts, TEXT_MAPPED, THINKING_MAPPED, Want, violations, write_block_extra,
    write_result_meaning, write_violation,
};
use super::write::promote;
use crate::envelope::{Ctx, Events, kind};
use crate::json::{Val, get, get_some, get_str, str_of};
use simd_json::prelude::*;

impl State {
    pub(super) fn assistant(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        let Some(msg) = get(v, "message").filter(|m| m.as_object().is_some()) else {
            return self.unknown_line(v, ctx, ev, "shape", "assistant");
        };
        let message_id = get_str(msg, "id");
        let model = get_str(msg, "model");
        // An assistant line's usage is final when the line carries the message's stop_reason
        // (1.0.x, 2.0.x); CLI 2.1.x writes stop_reason null and the usage of message_start
        // (output_tokens 1), whose final counts come only in a message_delta (partial messages)
        // and in the result line.
        let stop_reason = get_some(msg, "stop_reason");
        // A usage that is not an object is kept raw under the line's extra.message instead.
        let usage = get_some(msg, "usage").filter(|u| u.as_object().is_some());
        if let Some(u) = usage {
            // A message without an id (hand-made streams, SDK test data) is a message of its
            // own: its record is keyed by its line and written with message_id null.
            let anonymous;
            let id = match message_id {
                Some(id) => id,
                None => {
                    anonymous = super::usage::anonymous_key(ctx.line);
                    &anonymous
                }
            };
            self.note_usage(ev, ctx, id, model, u, stop_reason.is_some());
            self.note_message(ev, ctx, id, msg);
        }
        if let Some(p) = ctx.parent {
            let asks_tools = get(msg, "content")
                .and_then(|c| c.as_array())
                .is_some_and(|bs| bs.iter().any(|b| is_tool_use(get_str(b, "type"))));
            match message_id {
                Some(id) => self.note_subagent_message(p, id, model, asks_tools),
                None => {
                    let key = super::usage::anonymous_key(ctx.line);
                    self.note_subagent_message(p, &key, model, asks_tools);
                }
            }
        } else {
            match message_id {
                Some(id) => self.note_main_message(id),
                None => self.note_main_message(&super::usage::anonymous_key(ctx.line)),
            }
            if let Some(r) = stop_reason {
                self.note_stop_reason(r);
            }
        }
        if let Some(id) = message_id.filter(|id| !self.assistant_seen.contains(*id)) {
            self.assistant_seen.insert(id.to_owned());
        }
        let skip_text = message_id.is_some_and(|id| self.text_from_deltas.contains(id));
        self.blocks(v, msg, ctx, ev, skip_text);
        if has_error(v) {
            self.api_error(v, msg, ctx, ev);
        }
    }

    /// The content blocks of an assistant line's message.
    fn blocks(
        &mut self,
        v: Val<'_, '_>,
        msg: Val<'_, '_>,
        ctx: &Ctx<'_>,
        ev: &mut Events,
        skip_text: bool,
    ) {
        let message_id = get_str(msg, "id");
        let model = get_str(msg, "model");
        let error = get_str(v, "error");
        let synthetic = model == Some("<synthetic>");
        const FROM_DELTAS: &str =
            "the message's text was already emitted from the partial-message deltas";
        let Some(content) = get(msg, "content") else {
            self.skip_reason = Some("the message has no content");
            return;
        };
        if let Some(text) = str_of(content) {
            if skip_text {
                self.skip_reason = Some(FROM_DELTAS);
            } else {
                self.text_event(ev, ctx, message_id, model, Some(text), synthetic, error);
                ev.end();
            }
            return;
        }
        let Some(blocks) = content.as_array() else {
            return self.unknown_line(v, ctx, ev, "shape", "assistant");
        };
        if blocks.is_empty() {
            self.skip_reason = Some("the message's content is empty");
        }
        for b in blocks.iter() {
            match get_str(b, "type").unwrap_or("") {
                "text" => {
                    if skip_text {
                        self.skip_reason = Some(FROM_DELTAS);
                    } else {
                        let bad = violations(b, &[("text", Want::Str)]);
                        let text = get_str(b, "text");
                        self.text_event(ev, ctx, message_id, model, text, synthetic, error);
                        write_violation(ev, &bad, b);
                        write_block_extra(ev.out(), b, TEXT_MAPPED);
                        ev.end();
                    }
                }
                "thinking" | "redacted_thinking" => {
                    if skip_text {
                        self.skip_reason = Some(FROM_DELTAS);
                    } else {
                        let redacted = get_str(b, "type") == Some("redacted_thinking");
                        let o = ev.begin(kind::THINKING, ctx);
                        o.key("message_id");
                        o.opt_str(message_id);
                        o.key("thinking");
                        o.opt_str_in(get_str(b, "thinking"), &ctx.spans);
                        o.key("redacted");
                        o.bool(redacted);
                        write_block_extra(o, b, THINKING_MAPPED);
                        ev.end();
                    }
                }
                t if is_tool_use(Some(t)) => {
                    self.tool_use_block(b, ctx, ev, message_id);
                }
                t if t.ends_with("_tool_result") => {
                    // Server-side tool results (web search, …) arrive inside the assistant turn.
                    self.tool_result_event(ev, ctx, b, None, true);
                }
                t => {
                    let name = format!("assistant.{t}");
                    self.unknown(b, ctx, ev, "block", &name);
                }
            }
        }
    }

    /// `api.error`: the assistant line reports a failed API call (`error` and its `api_error_*`
    /// details), with or without a text block.
    fn api_error(&mut self, v: Val<'_, '_>, msg: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        let o = ev.begin(kind::API_ERROR, ctx);
        promote(o, msg, &[("message_id", "id"), ("model", "model")]);
        promote(o, v, &[("error", "error")]);
        o.key("details");
        o.members_where(v, |k, _| is_error_detail(k));
        o.key("text");
        let texts = get(msg, "content").map(|c| {
            let mut all = String::new();
            if let Some(t) = str_of(c) {
                all.push_str(t);
            } else if let Some(blocks) = c.as_array() {
                for b in blocks
                    .iter()
                    .filter(|b| get_str(*b, "type") == Some("text"))
                {
                    all.push_str(get_str(b, "text").unwrap_or(""));
                }
            }
            all
        });
        match texts.filter(|t| !t.is_empty()) {
            Some(t) => o.str(&t),
            None => o.raw(b"null"),
        }
        ev.end();
    }

    /// Begin a `text` event (the caller may add members, then ends it).
    #[allow(clippy::too_many_arguments)]
    fn text_event<'e>(
        &mut self,
        ev: &'e mut Events,
        ctx: &Ctx<'_>,
        message_id: Option<&str>,
        model: Option<&str>,
        text: Option<&str>,
        synthetic: bool,
        error: Option<&str>,
    ) -> &'e mut crate::json::Out {
        let o = ev.begin(kind::TEXT, ctx);
        o.key("message_id");
        o.opt_str(message_id);
        o.key("model");
        o.opt_str(model);
        o.key("text");
        o.opt_str_in(text, &ctx.spans);
        if synthetic || error.is_some() {
            o.key("synthetic");
            o.bool(synthetic);
            o.key("error");
            o.opt_str(error);
        }
        o
    }

    pub(super) fn user(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        let Some(msg) = get(v, "message").filter(|m| m.as_object().is_some()) else {
            return self.unknown_line(v, ctx, ev, "shape", "user");
        };
        // A user line closes the assistant message that ran before it on this stream, unless the
        // message is still streaming and its final counts are yet to come (a fast tool's result
        // can arrive before the message_delta).
        let key = ctx.parent.map(str::to_owned);
        // CLI 2.1.3xx follows a refused message with a synthetic user line naming it: the
        // message's record says refusal even when no message_delta came (no partial messages).
        if let Some(id) = get_str(v, "refused_message_id") {
            self.note_refusal(&key, id);
        }
        // Without partial messages CLI 2.1.x writes no stop_reason for a reply cut by the output
        // limit, but follows it with a synthetic user line that is its output-limit prompt: the
        // message before it on this stream takes max_tokens.
        if get(v, "isSynthetic").and_then(|x| x.as_bool()) == Some(true)
            && first_text(msg).is_some_and(super::usage::says_output_limit)
        {
            self.note_output_limit(&key);
        }
        if !self.usage_awaits_delta(&key) && !self.usage_awaits_lines(&key) {
            self.flush_usage(&key, ev);
        }
        let replay = get(v, "isReplay")
            .and_then(|x| x.as_bool())
            .unwrap_or(false);
        let structured = get(v, "tool_use_result");
        let Some(content) = get(msg, "content") else {
            self.skip_reason = Some("the message has no content");
            return;
        };
        if let Some(text) = str_of(content) {
            self.user_text(ev, ctx, Some(text), replay);
            ev.end();
            return;
        }
        let Some(blocks) = content.as_array() else {
            return self.unknown_line(v, ctx, ev, "shape", "user");
        };
        if blocks.is_empty() {
            self.skip_reason = Some("the message's content is empty");
        }
        let mut structured_left = structured;
        for b in blocks.iter() {
            match get_str(b, "type").unwrap_or("") {
                "tool_result" => {
                    let s = structured_left.take();
                    self.tool_result_event(ev, ctx, b, s, false);
                }
                "text" => {
                    let bad = violations(b, &[("text", Want::Str)]);
                    self.user_text(ev, ctx, get_str(b, "text"), replay);
                    write_violation(ev, &bad, b);
                    write_block_extra(ev.out(), b, TEXT_MAPPED);
                    ev.end();
                }
                "image" | "document" => {
                    let o = ev.begin(kind::USER_BLOCK, ctx);
                    o.key("block");
                    self.write_blobbed(b, o_buf(ev), &ctx.spans);
                    ev.end();
                }
                t => {
                    let name = format!("user.{t}");
                    self.unknown(b, ctx, ev, "block", &name);
                }
            }
        }
    }

    /// Begin a `user.text` event (the caller may add members, then ends it).
    fn user_text<'e>(
        &mut self,
        ev: &'e mut Events,
        ctx: &Ctx<'_>,
        text: Option<&str>,
        replay: bool,
    ) -> &'e mut crate::json::Out {
        let o = ev.begin(kind::USER_TEXT, ctx);
        o.key("text");
        o.opt_str(text);
        o.key("replay");
        o.bool(replay);
        o
    }

    /// `tool.result` from a `tool_result` block (or a server tool result block).
    fn tool_result_event(
        &mut self,
        ev: &mut Events,
        ctx: &Ctx<'_>,
        b: Val<'_, '_>,
        structured: Option<Val<'_, '_>>,
        server: bool,
    ) {
        let id = get_str(b, "tool_use_id");
        let bad = violations(b, &[("tool_use_id", Want::Str)]).or_else(|| {
            get(b, "is_error").and_then(|_| violations(b, &[("is_error", Want::Bool)]))
        });
        // A result for a call only seen as deltas: emit that call first. Without an id it is
        // paired with nothing.
        if let Some(id) = id
            && !self
                .tools
                .get(id)
                .is_some_and(|t| t.call_emitted && t.scope == self.scope)
        {
            self.flush_call_by_id(id, ev);
        }
        let call = id.and_then(|id| self.tools.get(id));
        let name = call.and_then(|t| t.name.clone());
        let call_kind = call.map(|t| t.kind);
        let is_error = get(b, "is_error")
            .and_then(|x| x.as_bool())
            .unwrap_or(false);
        let o = ev.begin(kind::TOOL_RESULT, ctx);
        o.key("tool_use_id");
        o.opt_str(id);
        o.key("name");
        o.opt_str(name.as_deref());
        o.key("is_error");
        o.bool(is_error);
        o.key("server");
        o.bool(server);
        o.key("content");
        match get(b, "content") {
            Some(c) => self.write_blobbed(c, o_buf(ev), &ctx.spans),
            None => o_buf(ev).raw(b"null"),
        }
        let o = ev.out();
        o.key("structured");
        match structured {
            Some(s) => self.write_blobbed(s, o_buf(ev), &ctx.spans),
            None => o_buf(ev).raw(b"null"),
        }
        let facts = ResultFacts {
            kind: call_kind,
            is_error,
            content: get(b, "content"),
            structured,
        };
        write_result_meaning(ev.out(), self.opts.dialect, &facts, Some(&ctx.spans));
        write_violation(ev, &bad, b);
        write_block_extra(ev.out(), b, RESULT_MAPPED);
        ev.end();
        if !server
            && call_kind == Some(crate::tool::Kind::Subagent)
            && let (Some(id), Some(s)) = (id, structured)
        {
            self.subagent_final_usage(ev, ctx, id, s);
        }
    }
}

/// Whether a block of type `t` is a tool use.
fn is_tool_use(t: Option<&str>) -> bool {
    matches!(t, Some("tool_use" | "server_tool_use" | "mcp_tool_use"))
}

/// An assistant line member that details an API error (under `api.error.details`).
fn is_error_detail(member: &str) -> bool {
    member == "is_api_error_message" || member.starts_with("api_error_")
}

/// Whether an assistant line reports an API error.
fn has_error(v: Val<'_, '_>) -> bool {
    v.as_object()
        .is_some_and(|o| o.iter().any(|(k, _)| k == "error" || is_error_detail(k)))
}

/// The text of a user message: its string content, else its first `text` block's.
fn first_text<'i>(msg: Val<'_, 'i>) -> Option<&'i str> {
    let content = get(msg, "content")?;
    str_of(content).or_else(|| {
        content
            .as_array()?
            .iter()
            .find(|b| get_str(*b, "type") == Some("text"))
            .and_then(|b| get_str(b, "text"))
    })
}

/// The open event's output buffer.
fn o_buf(ev: &mut Events) -> &mut crate::json::Out {
    ev.out()
}
