//! Gemini CLI, `gemini -p … --output-format stream-json`: flat events with `type` and an ISO
//! `timestamp` (`google-gemini/gemini-cli:packages/core/src/output/types.ts`).
//!
//! - `init` → `system/init` (`session_id`, `model`; the stream names no version).
//! - `message` `role:"user"` → the prompt (`user.text`); `role:"assistant"` arrives only as
//!   `delta:true` pieces: written as partial-message events, so each message's text is one
//!   `text`, assembled once, with live `text.delta`s (a tool call or the result closes it).
//! - `tool_use` → one tool call per `tool_id`; `tool_result` → its result (`is_error` when
//!   `status` is `error`; `status` and `error` kept in `structured`).
//! - `error` (non-fatal: loop detected, max turns, …) → `informational` with its severity.
//! - `result` → usage per model of `stats.models` (Gemini reports tokens only as run totals:
//!   one usage per model) and the `result` (error when `status` is `error`), whose usage is
//!   `stats`' totals. Gemini's `input_tokens` includes the cached ones (`cached`); the
//!   envelope's `input_tokens` is the uncached part (`stats.input`), `cache_read_input_tokens`
//!   the cached. No cost: Gemini reports none.
//!
//! Banner lines that are not JSON (YOLO mode, skills) are `diagnostic`s, as any such line.

use serde_json::{Map, Value, json};

use super::emit::DeltaText;
use super::{Emit, Reader, n, s};

/// See the module docs.
#[derive(Default)]
pub struct Gemini {
    session: Option<String>,
    model: Option<String>,
    text: DeltaText,
    calls: u64,
}

/// Gemini's token counts as a stream-json usage object.
fn usage(st: &Map<String, Value>) -> Value {
    let input_total = n(st, "input_tokens");
    let cached = n(st, "cached");
    let uncached = st
        .get("input")
        .and_then(Value::as_u64)
        .unwrap_or(input_total.saturating_sub(cached));
    json!({
        "input_tokens": uncached,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": n(st, "output_tokens"),
        "gemini_total_tokens": st.get("total_tokens"),
        "gemini_input_tokens": st.get("input_tokens"),
    })
}

impl Gemini {
    fn close(&mut self, e: &mut Emit<'_>) {
        let sid = self.session.clone();
        self.text.close(e, sid.as_deref());
    }

    fn prefix(&self) -> String {
        format!("{}-msg", self.session.as_deref().unwrap_or("gemini"))
    }

    fn result(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.session.clone();
        let sid = sid.as_deref();
        let stats = v.get("stats").and_then(Value::as_object);
        if stats.is_none() {
            e.violation("the result line has no \"stats\"");
        }
        let empty = Map::new();
        let stats = stats.unwrap_or(&empty);
        let prefix = self.prefix();
        match stats.get("models").and_then(Value::as_object) {
            Some(models) if !models.is_empty() => {
                for (model, st) in models {
                    if let Some(st) = st.as_object() {
                        let id = format!("{prefix}-usage-{model}");
                        e.assistant(sid, &id, Some(model), Vec::new(), Some(usage(st)));
                    }
                }
            }
            _ if n(stats, "total_tokens") > 0 => {
                let id = format!("{prefix}-usage");
                let model = self.model.clone();
                e.assistant(sid, &id, model.as_deref(), Vec::new(), Some(usage(stats)));
            }
            _ => {}
        }
        let is_error = s(v, "status") == Some("error");
        let mut m = Map::new();
        m.insert("usage".into(), usage(stats));
        if let Some(d) = stats.get("duration_ms") {
            m.insert("duration_ms".into(), d.clone());
        }
        if let Some(err) = v.get("error") {
            let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
            m.insert("errors".into(), json!([msg]));
            m.insert("error".into(), err.clone());
        }
        m.insert("stats".into(), Value::Object(stats.clone()));
        let subtype = if is_error {
            "error_during_execution"
        } else {
            "success"
        };
        e.result(sid, is_error, subtype, m);
    }
}

impl Reader for Gemini {
    fn line(&mut self, v: Map<String, Value>, e: &mut Emit<'_>) {
        let t = s(&v, "type").unwrap_or("");
        match t {
            "init" => {
                self.close(e);
                match s(&v, "session_id") {
                    Some(id) => self.session = Some(id.to_owned()),
                    None => e.violation("the init line has no \"session_id\""),
                }
                self.model = s(&v, "model").map(str::to_owned);
                let mut m = Map::new();
                m.insert("session_id".into(), json!(self.session));
                m.insert("model".into(), json!(self.model));
                m.insert("timestamp".into(), json!(v.get("timestamp")));
                e.init(None, m);
            }
            "message" => {
                let Some(content) = s(&v, "content") else {
                    e.violation("the message line has no \"content\"");
                    return e.skip("a message without content");
                };
                let sid = self.session.clone();
                if s(&v, "role") == Some("assistant") {
                    let prefix = self.prefix();
                    let model = self.model.clone();
                    self.text
                        .piece(e, sid.as_deref(), &prefix, model.as_deref(), content, false);
                } else {
                    self.close(e);
                    e.user_text(sid.as_deref(), content);
                }
            }
            "tool_use" => {
                self.close(e);
                let (Some(id), Some(name)) = (s(&v, "tool_id"), s(&v, "tool_name")) else {
                    e.violation("the tool_use line has no \"tool_id\" or \"tool_name\"");
                    return e.skip("a tool call without id or name");
                };
                self.calls += 1;
                let message = format!("{}-call-{}", self.prefix(), self.calls);
                let input = v.get("parameters").cloned().unwrap_or(json!({}));
                let sid = self.session.clone();
                e.tool_use(sid.as_deref(), &message, id, name, input);
            }
            "tool_result" => {
                self.close(e);
                let Some(id) = s(&v, "tool_id") else {
                    e.violation("the tool_result line has no \"tool_id\"");
                    return e.skip("a tool result without id");
                };
                let is_error = s(&v, "status") == Some("error");
                let err = v.get("error");
                let content = match (v.get("output"), err) {
                    (Some(o), _) if !o.is_null() => o.clone(),
                    (_, Some(x)) => json!(x.get("message").and_then(Value::as_str).unwrap_or("")),
                    _ => json!(""),
                };
                let mut details = json!({"status": v.get("status")});
                if let Some(x) = err {
                    details["error"] = x.clone();
                }
                let sid = self.session.clone();
                e.tool_result(sid.as_deref(), id, content, is_error, Some(details));
            }
            "error" => {
                self.close(e);
                let sid = self.session.clone();
                e.system(
                    sid.as_deref(),
                    "informational",
                    json!({"level": s(&v, "severity").unwrap_or("error"), "content": s(&v, "message").unwrap_or("")}),
                );
            }
            "result" => self.result(&v, e),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
