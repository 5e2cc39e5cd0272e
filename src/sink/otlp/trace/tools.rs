//! The `execute_tool` spans: one per tool call, from the call to its result (a call without
//! id ends where it starts), with what the call does (`boo_normalize.tool.kind`, the envelope's
//! `kind`) and what a subagent it starts is called.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;

use serde_json::{Value, json};

use super::{Call, Trace, text};
use crate::json::fields::{self, Fields};
use crate::sink::otlp::attr;
use crate::sink::otlp::span::SpanKind;

impl Trace {
    /// A tool call of the message `msg` (when the event names one).
    pub(super) fn tool_call(&mut self, thread: &str, msg: Option<&str>, ev: &Fields<'_>, now: u64) {
        let id = text(ev, "tool_use_id");
        let id = id.as_deref();
        if id.is_some_and(|id| self.calls.contains_key(id)) {
            return;
        }
        let named = text(ev, "name");
        let name = named.as_deref().unwrap_or("unknown");
        let parent = msg
            .and_then(|m| self.chat_ids.get(m).copied())
            .or_else(|| self.thread(thread).last_chat)
            .or_else(|| self.thread_parent(thread, now).0);
        // A call without id (the CLI's block had none) still gets its span, keyed by the event's
        // seq; it carries no gen_ai.tool.call.id, is never paired and ends where it starts.
        let key = match id {
            Some(id) => ["tool\0", id].concat(),
            None => format!("tool\0seq {}", ev.value("seq").unwrap_or(Value::Null)),
        };
        let span_name = ["execute_tool ", name].concat();
        let internal = SpanKind::Internal;
        let (op, room) = ("execute_tool", 8);
        let mut span = self.open(key, op, span_name, internal, parent, now, room);
        let server = ev.bool("server").unwrap_or(false);
        span.attributes
            .push(attr::str("gen_ai.tool.name", name.to_owned()));
        if let Some(id) = id {
            span.attributes
                .push(attr::str("gen_ai.tool.call.id", id.to_owned()));
        }
        span.attributes.push(attr::str(
            "gen_ai.tool.type",
            if server { "extension" } else { "function" },
        ));
        // What the call does, as the envelope says it (the tool table's answer).
        let kind = text(ev, "kind").and_then(|k| crate::tool::Kind::parse(&k));
        if let Some(k) = kind {
            span.attributes
                .push(attr::str("boo_normalize.tool.kind", k.as_str()));
        }
        if named.is_none() {
            span.attributes
                .push(attr::bool("boo_normalize.tool.name_missing", true));
        }
        if self.content
            && let Some(input) = ev.value("input").filter(|v| !v.is_null())
        {
            span.attributes
                .push(attr::str("gen_ai.tool.call.arguments", input.to_string()));
        }
        if let Some(e) = text(ev, "input_error") {
            span.attributes
                .push(attr::str("boo_normalize.tool.input_error", e.into_owned()));
        }
        let Some(id) = id else {
            span.attributes
                .push(attr::bool("boo_normalize.tool.call_id_missing", true));
            self.finished.push(span);
            return;
        };
        // Only a subagent call names an agent (an envelope without kind: any call may).
        let starts_agent = kind.is_none_or(|k| k == crate::tool::Kind::Subagent);
        let [agent, description] = ev
            .raw("input")
            .filter(|i| starts_agent && may_name_agent(i))
            .map_or([None; 2], |i| {
                fields::members_named(i, ["subagent_type", "description"])
            });
        let agent = agent.and_then(fields::string);
        let agent = agent.as_deref().unwrap_or(name);
        let description = description.and_then(fields::string).map(Cow::into_owned);
        let call = Call {
            span_id: span.span_id,
            start: now,
            agent: agent.to_owned(),
            description,
        };
        self.calls.insert(id.to_owned(), call);
        self.tools.insert(id.to_owned(), span);
    }

    pub(super) fn tool_result(&mut self, thread: &str, ev: &Fields<'_>, now: u64) {
        let id = text(ev, "tool_use_id");
        let id = id.as_deref();
        // The content is read only when it goes into the trace.
        let response = if self.content {
            ev.value("content")
        } else {
            None
        };
        let content = response.as_ref().map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        if self.content {
            let part = json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": id, "response": response}]});
            self.thread(thread).input.push(part);
        }
        let Some(id) = id else {
            // Belongs to no call: a root span event says it came (and whether it was an error).
            let attrs = attr::fields(ev, &["is_error", "line"], "boo_normalize.tool.");
            self.root_event("boo_normalize.unpaired_tool_result", now, attrs);
            return;
        };
        let Some(mut span) = self.tools.remove(id) else {
            return;
        };
        span.end = now.max(span.start);
        if ev.bool("is_error") == Some(true) {
            let msg = match (&content, self.content) {
                (Some(c), true) => c.clone(),
                _ => "the tool reported an error".to_owned(),
            };
            span.status = Some(attr::error_status(msg));
            span.attributes.push(attr::str("error.type", "tool_error"));
        }
        if self.content
            && let Some(c) = content
        {
            span.attributes
                .push(attr::str("gen_ai.tool.call.result", c));
        }
        self.finished.push(span);
    }
}

/// Whether the tool input `input` (raw JSON) may have a `subagent_type` or `description`
/// member: only when those bytes are in it, or a `\u` escape (the only way to spell a letter of
/// a key otherwise). Most inputs (commands, paths, file contents) have neither, and are not
/// read member by member.
fn may_name_agent(input: &[u8]) -> bool {
    static NEEDLES: LazyLock<[memmem::Finder<'static>; 3]> = LazyLock::new(|| {
        [b"subagent_type".as_slice(), b"description", b"\\u"].map(memmem::Finder::new)
    });
    NEEDLES.iter().any(|f| f.find(input).is_some())
}
