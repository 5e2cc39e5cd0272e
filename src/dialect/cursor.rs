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

use serde_json::Value;
use simd_json::prelude::*;

use super::emit::{DeltaText, Json, Obj, ObjWith, Raw, TextBlock, members_removing};
use super::{Emit, Reader, n, object, s, string};
use crate::json::{Out, Val, get};

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
fn text_of(v: Val<'_, '_>) -> Option<String> {
    let blocks = get(get(v, "message")?, "content")?;
    let blocks = blocks.as_array()?;
    let mut t = String::new();
    for b in blocks.iter() {
        if let Some(x) = get(b, "text").and_then(string) {
            t.push_str(x);
        }
    }
    Some(t)
}

/// The input of a tool call, as Cursor gives it.
enum Input<'t, 'i> {
    /// A `function` call's JSON-string `arguments`, parsed.
    Parsed(Value),
    /// A `function` call's `arguments` that are not a JSON string.
    Given(Val<'t, 'i>),
    /// A tool's `args`, without its `toolCallId`.
    Args(Val<'t, 'i>),
    /// None.
    Empty,
}

impl Json for Input<'_, '_> {
    fn write(&self, o: &mut Out) {
        match self {
            Input::Parsed(v) => {
                let _ = serde_json::to_writer(&mut o.buf, v);
            }
            Input::Given(v) => o.value(*v),
            Input::Args(v) if v.as_object().is_some() => {
                // The call id again, inside its own input.
                let members = members_removing(*v, &["toolCallId"]);
                super::emit::obj(o, |w| {
                    for (k, x) in &members {
                        w.m(k, *x);
                    }
                });
            }
            Input::Args(v) => o.value(*v),
            Input::Empty => o.raw(b"{}"),
        }
    }
}

/// The tool of a `tool_call` object: its key, its name and its input.
fn tool_of<'t, 'i>(tc: Val<'t, 'i>) -> Option<(&'i str, &'i str, Input<'t, 'i>)> {
    // The first member, as serde_json's map holds them.
    let (key, body) = members_removing(tc, &[]).into_iter().next()?;
    body.as_object()?;
    if key == "function" {
        let name = s(body, "name").unwrap_or("function");
        let input = match get(body, "arguments") {
            Some(a) => match string(a) {
                Some(text) => match serde_json::from_str(text) {
                    Ok(v) => Input::Parsed(v),
                    Err(_) => Input::Parsed(serde_json::json!({ "arguments": text })),
                },
                None => Input::Given(a),
            },
            None => Input::Empty,
        };
        return Some((key, name, input));
    }
    let input = match get(body, "args") {
        Some(a) => Input::Args(a),
        None => Input::Empty,
    };
    Some((key, key, input))
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

    fn assistant(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        let Some(text) = text_of(v) else {
            e.violation("the assistant line has no \"message.content\"");
            return e.skip("an assistant line without content");
        };
        let sid = self.sid();
        let has = |k: &str| get(v, k).is_some();
        let piece = has("timestamp_ms") && !has("model_call_id");
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
        if !has("model_call_id") && !self.written.is_empty() && self.written.ends_with(&text) {
            return e.skip("a copy of the text already written");
        }
        self.messages += 1;
        let id = match s(v, "model_call_id") {
            Some(m) => format!("{m}-{}", self.messages),
            None => format!("{}-{}", self.prefix(), self.messages),
        };
        self.written.push_str(&text);
        let block = TextBlock {
            text: &text,
            thinking: false,
        };
        let model = self.model.clone();
        e.assistant(sid.as_deref(), &id, model.as_deref(), &block, None);
    }

    fn tool_call(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.sid();
        let sid = sid.as_deref();
        let Some(id) = s(v, "call_id") else {
            e.violation("the tool_call line has no \"call_id\"");
            return e.skip("a tool call without id");
        };
        let tc = object(v, "tool_call");
        let Some((key, name, input)) = tc.and_then(tool_of) else {
            e.violation("the tool_call line has no \"tool_call\" object");
            return e.skip("a tool call without its tool");
        };
        let message = format!("{}-call", s(v, "model_call_id").unwrap_or("cursor"));
        let started = self.called.insert(id.to_owned());
        match s(v, "subtype") {
            Some("started") if started => e.tool_use(sid, &message, id, name, &input),
            Some("started") => e.skip("the call started again (re-emitted)"),
            Some("completed") => {
                if started {
                    e.tool_use(sid, &message, id, name, &input);
                }
                let result = tc
                    .and_then(|tc| get(tc, key))
                    .and_then(|b| get(b, "result"));
                let success = result.and_then(|r| get(r, "success"));
                let is_error = success.is_none();
                let first = result.and_then(|r| members_removing(r, &[]).first().map(|m| m.1));
                let mut details = Out::default();
                super::emit::obj(&mut details, |w| {
                    w.m("result", result);
                    if let Some(code) = success.and_then(|x| get(x, "exitCode")) {
                        w.m("exit_code", code);
                    }
                });
                let details = Raw(&details.buf);
                match success.or(first) {
                    Some(body) => match (get(body, "stdout"), get(body, "stderr")) {
                        (Some(out), err) => {
                            let mut t = string(out).unwrap_or("").to_owned();
                            if let Some(err) = err.and_then(string).filter(|x| !x.is_empty()) {
                                t.push_str(err);
                            }
                            e.tool_result(sid, id, &t, is_error, Some(&details));
                        }
                        _ => match string(body) {
                            Some(x) => e.tool_result(sid, id, &x, is_error, Some(&details)),
                            None => {
                                // The body as JSON text, as serde_json writes it.
                                let mut o = Out::default();
                                o.value(body);
                                let text = String::from_utf8_lossy(&o.buf);
                                e.tool_result(sid, id, &text.as_ref(), is_error, Some(&details));
                            }
                        },
                    },
                    None => e.tool_result(sid, id, &"", is_error, Some(&details)),
                }
            }
            _ => e.keep(),
        }
    }

    fn result(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.sid();
        let u = object(v, "usage");
        let usage = u.map(|u| {
            [
                n(u, "inputTokens"),
                n(u, "outputTokens"),
                n(u, "cacheReadTokens"),
                n(u, "cacheWriteTokens"),
            ]
        });
        let usage_of = |t: [u64; 4]| {
            ObjWith(move |w: &mut Obj<'_>| {
                w.m("input_tokens", t[0])
                    .m("output_tokens", t[1])
                    .m("cache_read_input_tokens", t[2])
                    .m("cache_creation_input_tokens", t[3]);
            })
        };
        if let Some(t) = usage {
            let id = format!("{}-usage", s(v, "request_id").unwrap_or("cursor"));
            let model = self.model.clone();
            e.assistant(
                sid.as_deref(),
                &id,
                model.as_deref(),
                &Raw(b"[]"),
                Some(&usage_of(t)),
            );
        }
        let is_error = get(v, "is_error")
            .and_then(|x| x.as_bool())
            .unwrap_or(false);
        let subtype = s(v, "subtype").unwrap_or(if is_error { "error" } else { "success" });
        e.result(sid.as_deref(), is_error, subtype, |w| {
            for k in ["duration_ms", "duration_api_ms", "result", "request_id"] {
                if let Some(x) = get(v, k) {
                    w.m(k, x);
                }
            }
            if let Some(t) = usage {
                w.m("usage", usage_of(t));
            }
        });
    }
}

impl Reader for Cursor {
    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        if let Some(id) = s(v, "session_id") {
            self.session = Some(id.to_owned());
        }
        match s(v, "type").unwrap_or("") {
            "system" => {
                if s(v, "subtype") == Some("init") {
                    self.model = s(v, "model").map(str::to_owned);
                }
                e.keep();
            }
            "user" => {
                self.close(e);
                e.keep();
            }
            "assistant" => self.assistant(v, e),
            "thinking" => match s(v, "subtype") {
                Some("delta") => {
                    let sid = self.sid();
                    let (prefix, model) = (self.prefix(), self.model.clone());
                    let text = s(v, "text").unwrap_or("");
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
            "tool_call" => self.tool_call(v, e),
            "result" => self.result(v, e),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
