//! The `chat` spans: one per API message, opened by the first event that names the message,
//! given its model, usage, stop reason, errors and (with content) its output parts, and closed
//! by its usage.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;
use serde_json::{Value, json};

use super::{Chat, Trace, text};
use crate::envelope::kind as ek;
use crate::json::fields::{self, Fields};
use crate::sink::otlp::attr;
use crate::sink::otlp::span::SpanKind;

/// How the key of a message without an id begins (a control character no API id has): its
/// chat span has no `gen_ai.response.id`.
pub(super) const ANONYMOUS: &str = "\u{1}";

impl Trace {
    /// Any event naming an API message: open its chat span on first sight, track its end. A
    /// block's event whose chat has no stop reason yet takes the one its input line `source`
    /// carries (assistant lines of some CLI versions), when the stream said none.
    pub(super) fn message_event(
        &mut self,
        kind: &str,
        msg: &str,
        thread: &str,
        ev: &Fields<'_>,
        now: u64,
        source: Option<&[u8]>,
    ) {
        if !self.chats.contains_key(msg) {
            if self.chat_ids.contains_key(msg) && kind != ek::USAGE {
                return; // a late event of a finished message (e.g. a tool call from deltas)
            }
            let (parent, parent_start) = self.thread_parent(thread, now);
            let t = self.thread(thread);
            let start = t.last.unwrap_or(parent_start).min(now);
            let input = std::mem::take(&mut t.input);
            let model = text(ev, "model")
                .map(Cow::into_owned)
                .or_else(|| self.fallback.clone())
                .or_else(|| self.model.clone())
                .unwrap_or_default();
            let name = if model.is_empty() {
                "chat".to_owned()
            } else {
                ["chat ", &model].concat()
            };
            let key = ["chat\0", msg].concat();
            // op, provider, ids, models, 4 usage counts, finish reasons (+ content's 2)
            let room = if self.content { 14 } else { 12 };
            let kind = SpanKind::Client;
            let mut span = self.open(key, "chat", name, kind, parent, start, room);
            if !msg.starts_with(ANONYMOUS) {
                span.attributes
                    .push(attr::str("gen_ai.response.id", msg.to_owned()));
            }
            if !model.is_empty() {
                span.attributes
                    .push(attr::str("gen_ai.request.model", model.clone()));
            }
            if let Some(s) = text(ev, "session_id") {
                span.attributes
                    .push(attr::str("gen_ai.conversation.id", s.into_owned()));
            }
            if self.content && !input.is_empty() {
                let v = Value::Array(input).to_string();
                span.attributes.push(attr::str("gen_ai.input.messages", v));
            }
            self.chat_ids.insert(msg.to_owned(), span.span_id);
            self.thread(thread).last_chat = Some(span.span_id);
            self.chats.insert(
                msg.to_owned(),
                Chat {
                    span,
                    last: now,
                    parts: Vec::new(),
                    finish: None,
                },
            );
        }
        let content = self.content;
        let Some(chat) = self.chats.get_mut(msg) else {
            return;
        };
        if kind != ek::USAGE {
            chat.last = chat.last.max(now);
        }
        if let Some(m) = text(ev, "model") {
            attr::set_str(&mut chat.span.attributes, "gen_ai.response.model", &m);
        }
        if let Some(r) = text(ev, "stop_reason")
            && chat.finish.as_deref() != Some(&*r)
        {
            chat.finish = Some(r.into_owned());
        }
        if chat.finish.is_none()
            && matches!(kind, ek::TEXT | ek::THINKING | ek::TOOL_CALL)
            && let Some(r) = source.and_then(stop_reason)
        {
            chat.finish = Some(r.into_owned());
        }
        match kind {
            ek::TEXT | ek::THINKING if content => {
                let (ty, body) = if kind == ek::TEXT {
                    ("text", text(ev, "text"))
                } else {
                    ("reasoning", text(ev, "thinking"))
                };
                if let Some(b) = body {
                    chat.parts.push(json!({"type": ty, "content": b}));
                }
            }
            ek::TOOL_CALL if content => {
                chat.parts.push(json!({
                    "type": "tool_call",
                    "id": ev.value("tool_use_id"),
                    "name": ev.value("name"),
                    "arguments": ev.value("input"),
                }));
            }
            _ => {}
        }
        if kind == ek::TEXT && ev.bool("synthetic") == Some(true) {
            // The CLI wrote this message itself (model `<synthetic>`: an API error, a local
            // command's output): no API call happened.
            attr::set(
                &mut chat.span.attributes,
                attr::bool("boo_normalize.synthetic", true),
            );
        }
        if kind == ek::TEXT
            && let Some(e) = text(ev, "error")
        {
            chat.span.status = Some(attr::error_status(format!("API error: {e}")));
            attr::set(
                &mut chat.span.attributes,
                attr::str("error.type", e.into_owned()),
            );
        }
        if kind == ek::USAGE {
            if let Some(u) = ev.raw("usage") {
                attr::usage(&mut chat.span.attributes, u);
            }
            // A count that is the CLI's placeholder (no final value arrived) says so, as the
            // envelope does, so that a backend can tell it from a measured one.
            if ev.bool("provisional") == Some(true) {
                attr::set(
                    &mut chat.span.attributes,
                    attr::bool("boo_normalize.usage.provisional", true),
                );
            }
            self.close_chat(msg);
        }
    }

    pub(super) fn close_chat(&mut self, msg: &str) {
        let Some(mut chat) = self.chats.remove(msg) else {
            return;
        };
        let span = &mut chat.span;
        span.end = chat.last.max(span.start);
        if let Some(f) = &chat.finish {
            span.attributes.push(attr::strs(
                "gen_ai.response.finish_reasons",
                std::slice::from_ref(f),
            ));
        }
        if self.content && !chat.parts.is_empty() {
            let mut m = json!({"role": "assistant", "parts": chat.parts});
            if let Some(f) = &chat.finish {
                m["finish_reason"] = json!(f);
            }
            span.attributes.push(attr::str(
                "gen_ai.output.messages",
                Value::Array(vec![m]).to_string(),
            ));
        }
        self.finished.push(chat.span);
    }
}

/// `/message/stop_reason` of the input line `line` when it is a string (the last of a repeated
/// member, as a parser keeps it), read by stepping over every other member without parsing it.
/// Only lines that hold the key are read.
fn stop_reason(line: &[u8]) -> Option<Cow<'_, str>> {
    static KEY: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\"stop_reason\":\""));
    KEY.find(line)?;
    let message = fields::member(line, "message")?;
    fields::string(fields::member(message, "stop_reason")?)
}
