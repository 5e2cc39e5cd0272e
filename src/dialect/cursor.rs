//! Cursor, `cursor-agent -p … --output-format stream-json [--stream-partial-output]`: Claude's
//! `system/init`, `user`, `assistant` and `result` line types with Cursor's own payloads, plus
//! top-level `thinking` and `tool_call` events (https://cursor.com/docs/cli/reference/output-format;
//! observed shapes in `reifying/cursor-hack:docs/stream-json-events.md`).
//!
//! - `system/init` and the `user` prompt echo are Claude's shape and pass as they are (the model
//!   is a display name such as "Auto"; no version in the stream).
//! - Assistant text comes in four forms (forum.cursor.com/t/156289): pieces as they stream (with
//!   `timestamp_ms`, no `model_call_id`: only with `--stream-partial-output`), one line per
//!   message with `model_call_id` (the same text as the pieces before it, when there were any),
//!   and a last line with neither (the whole response again when pieces came; else the last
//!   message). Pieces become live `text.delta`s and one `text` per message; the copies of text
//!   already written are `skipped`, so no text is doubled.
//! - `thinking` `delta`s are thinking pieces, `completed` ends them.
//! - `tool_call` `started` → one tool call per `call_id` (which may hold a newline); the tool is
//!   the key of `tool_call` (`shellToolCall`, `readToolCall`, …, or `function` with its `name`
//!   and JSON-string `arguments`), its input the `args`. `completed` → its result (parallel
//!   calls complete in finish order: paired by id); `is_error` when the result is not `success`
//!   (a shell command that exits non-zero is a success to Cursor: its `exitCode` is kept in
//!   `structured`, as is the whole result).
//! - `result` → `turn.end`; newer releases add camelCase `usage` (`inputTokens`,
//!   `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`), the run's only token counts. No
//!   cost: Cursor reports none.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::emit::DeltaText;
use super::{Emit, Reader, n, s};

/// See the module docs.
#[derive(Default)]
pub struct Cursor {
    session: Option<String>,
    model: Option<String>,
    text: DeltaText,
    /// Pieces came (`--stream-partial-output`).
    partial: bool,
    /// Text written so far (to tell a cumulative copy).
    written: String,
    called: HashSet<String>,
    messages: u64,
}

/// The text of an assistant line's blocks.
fn text_of(v: &Map<String, Value>) -> Option<String> {
    let blocks = v.get("message")?.get("content")?.as_array()?;
    let mut t = String::new();
    for b in blocks {
        if let Some(x) = b.get("text").and_then(Value::as_str) {
            t.push_str(x);
        }
    }
    Some(t)
}

/// The tool of a `tool_call` object: its name and input.
fn tool_of(tc: &Map<String, Value>) -> Option<(String, String, Value)> {
    let (key, body) = tc.iter().next()?;
    let body = body.as_object()?;
    if key == "function" {
        let name = s(body, "name").unwrap_or("function").to_owned();
        let input = match body.get("arguments") {
            Some(Value::String(a)) => serde_json::from_str(a).unwrap_or(json!({"arguments": a})),
            Some(v) => v.clone(),
            None => json!({}),
        };
        return Some((key.clone(), name, input));
    }
    let mut args = body.get("args").cloned().unwrap_or(json!({}));
    if let Some(a) = args.as_object_mut() {
        // The call id again, inside its own input.
        a.remove("toolCallId");
    }
    Some((key.clone(), key.clone(), args))
}

impl Cursor {
    fn sid(&self) -> Option<String> {
        self.session.clone()
    }

    fn close(&mut self, e: &mut Emit<'_>) {
        let sid = self.sid();
        self.text.close(e, sid.as_deref());
    }

    fn prefix(&self) -> String {
        format!("{}-msg", self.session.as_deref().unwrap_or("cursor"))
    }

    fn assistant(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        let Some(text) = text_of(v) else {
            e.violation("the assistant line has no \"message.content\"");
            return e.skip("an assistant line without content");
        };
        let sid = self.sid();
        let piece = v.contains_key("timestamp_ms") && !v.contains_key("model_call_id");
        if piece {
            self.partial = true;
            let (prefix, model) = (self.prefix(), self.model.clone());
            self.written.push_str(&text);
            return self
                .text
                .piece(e, sid.as_deref(), &prefix, model.as_deref(), &text, false);
        }
        if self.partial {
            // A copy of what the pieces said: the message (model_call_id) or the whole response.
            self.close(e);
            return e.skip("the same text as the partial-output pieces before it");
        }
        if !v.contains_key("model_call_id")
            && !self.written.is_empty()
            && self.written.ends_with(&text)
        {
            return e.skip("a copy of the text already written");
        }
        self.messages += 1;
        let id = match s(v, "model_call_id") {
            Some(m) => format!("{m}-{}", self.messages),
            None => format!("{}-{}", self.prefix(), self.messages),
        };
        self.written.push_str(&text);
        let block = json!({"type": "text", "text": text});
        let model = self.model.clone();
        e.assistant(sid.as_deref(), &id, model.as_deref(), vec![block], None);
    }

    fn tool_call(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.sid();
        let sid = sid.as_deref();
        let Some(id) = s(v, "call_id").map(str::to_owned) else {
            e.violation("the tool_call line has no \"call_id\"");
            return e.skip("a tool call without id");
        };
        let Some((key, name, input)) = v
            .get("tool_call")
            .and_then(Value::as_object)
            .and_then(tool_of)
        else {
            e.violation("the tool_call line has no \"tool_call\" object");
            return e.skip("a tool call without its tool");
        };
        let message = format!("{}-call", s(v, "model_call_id").unwrap_or("cursor"));
        let started = self.called.insert(id.clone());
        match s(v, "subtype") {
            Some("started") if started => e.tool_use(sid, &message, &id, &name, input),
            Some("started") => e.skip("the call started again (re-emitted)"),
            Some("completed") => {
                if started {
                    e.tool_use(sid, &message, &id, &name, input);
                }
                let result = v["tool_call"][&key].get("result").cloned();
                let r = result.clone().unwrap_or(Value::Null);
                let success = r.get("success");
                let is_error = success.is_none();
                let content = match success
                    .or_else(|| r.as_object().and_then(|o| o.values().next()))
                {
                    Some(body) => match (body.get("stdout"), body.get("stderr")) {
                        (Some(out), err) => {
                            let mut t = out.as_str().unwrap_or("").to_owned();
                            if let Some(err) = err.and_then(Value::as_str).filter(|x| !x.is_empty())
                            {
                                t.push_str(err);
                            }
                            json!(t)
                        }
                        _ => match body {
                            Value::String(x) => json!(x),
                            other => json!(other.to_string()),
                        },
                    },
                    None => json!(""),
                };
                let mut details = json!({"result": result});
                if let Some(code) = success.and_then(|x| x.get("exitCode")) {
                    details["exit_code"] = code.clone();
                }
                e.tool_result(sid, &id, content, is_error, Some(details));
            }
            _ => e.keep(),
        }
    }

    fn result(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.sid();
        let mut m = Map::new();
        for k in ["duration_ms", "duration_api_ms", "result", "request_id"] {
            if let Some(x) = v.get(k) {
                m.insert(k.into(), x.clone());
            }
        }
        if let Some(u) = v.get("usage").and_then(Value::as_object) {
            let usage = json!({
                "input_tokens": n(u, "inputTokens"),
                "output_tokens": n(u, "outputTokens"),
                "cache_read_input_tokens": n(u, "cacheReadTokens"),
                "cache_creation_input_tokens": n(u, "cacheWriteTokens"),
            });
            let id = format!("{}-usage", s(v, "request_id").unwrap_or("cursor"));
            let model = self.model.clone();
            e.assistant(
                sid.as_deref(),
                &id,
                model.as_deref(),
                Vec::new(),
                Some(usage.clone()),
            );
            m.insert("usage".into(), usage);
        }
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let subtype = s(v, "subtype").unwrap_or(if is_error { "error" } else { "success" });
        e.result(sid.as_deref(), is_error, subtype, m);
    }
}

impl Reader for Cursor {
    fn line(&mut self, v: Map<String, Value>, e: &mut Emit<'_>) {
        if let Some(id) = s(&v, "session_id") {
            self.session = Some(id.to_owned());
        }
        match s(&v, "type").unwrap_or("") {
            "system" => {
                if s(&v, "subtype") == Some("init") {
                    self.model = s(&v, "model").map(str::to_owned);
                }
                e.keep();
            }
            "user" => {
                self.close(e);
                e.keep();
            }
            "assistant" => self.assistant(&v, e),
            "thinking" => match s(&v, "subtype") {
                Some("delta") => {
                    let sid = self.sid();
                    let (prefix, model) = (self.prefix(), self.model.clone());
                    let text = s(&v, "text").unwrap_or("");
                    self.text
                        .piece(e, sid.as_deref(), &prefix, model.as_deref(), text, true);
                }
                Some("completed") => {
                    if self.text.is_open() {
                        self.close(e);
                    } else {
                        e.skip("the thinking ended");
                    }
                }
                _ => e.keep(),
            },
            "tool_call" => self.tool_call(&v, e),
            "result" => self.result(&v, e),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
