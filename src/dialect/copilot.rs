//! GitHub Copilot CLI, `copilot -p … --output-format json`, and its session log
//! `~/.copilot/session-state/<id>/events.jsonl`: Copilot SDK session events
//! `{type, data, id, timestamp, parentId[, ephemeral]}` and, on stdout, a last `result` line
//! (`{type:"result", sessionId, exitCode, usage{premiumRequests, …}}`). Its event types are
//! more than its docs list (`icksaur/caco:doc/chatview-design.md`, captures quoted in
//! jarrodwatts/claude-delegator#11); those below are read, any other is kept as `unknown`.
//!
//! - `session.start` → `system/init` (`sessionId`, `selectedModel`, `context.cwd`,
//!   `copilotVersion`); the session id may come only with the last `result` line.
//! - `user.message` → the prompt. `assistant.message_delta` / `assistant.reasoning_delta` →
//!   live pieces (one `text`/`thinking` per message, assembled once); `assistant.message` →
//!   its text (unless its pieces came) and one tool call per `toolRequests[].toolCallId`;
//!   `assistant.reasoning` → thinking (unless its pieces came).
//! - `tool.execution_start` → the tool call (once per id); `tool.execution_complete` → its result
//!   (`is_error` when `success` is false).
//! - `assistant.usage` → usage per model response (`inputTokens`, `outputTokens`,
//!   `cacheReadTokens`, `cacheWriteTokens`; its `cost` is not USD and is kept as
//!   `copilot_cost`). The log's `session.shutdown` has per-model token counts
//!   (`modelMetrics`): used only when no `assistant.usage` came. The stdout stream has neither:
//!   its `result` gives premium requests, no tokens, no cost, so the run's tokens are reported
//!   as unknown (`tokens_reported: false` on `turn.end`), never invented. `session.shutdown`,
//!   the log's last event, ends the run there as `result` does on stdout.
//! - `session.error` → `stream.error`; `result` → `turn.end` (an error when `exitCode` ≠ 0).
//! - Lifecycle events (`assistant.turn_start`/`turn_end`, `assistant.message_start`,
//!   `session.idle`, `session.usage_checkpoint`, `tool.execution_progress`, …) are `skipped`.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::emit::DeltaText;
use super::{Emit, Reader, n, s};

/// See the module docs.
#[derive(Default)]
pub struct Copilot {
    session: Option<String>,
    model: Option<String>,
    text: DeltaText,
    /// Call ids whose tool call was written.
    called: HashSet<String>,
    /// Usage events seen (`assistant.usage`).
    usage_seen: u64,
    turns: u64,
    /// A `session.init` was written (stdout has no `session.start`: one is made at its first
    /// line, so the run names its agent).
    init_done: bool,
}

/// Lifecycle events that say nothing the envelope shows.
const LIFECYCLE: &[&str] = &[
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message_start",
    "assistant.intent",
    "session.idle",
    "session.usage_checkpoint",
    "session.info",
    "session.mcp_server_status_changed",
    "session.model_change",
    "tool.execution_progress",
    "tool.execution_partial_result",
    "tool.user_requested",
];

impl Copilot {
    fn sid(&self) -> Option<String> {
        self.session.clone()
    }

    fn close(&mut self, e: &mut Emit<'_>) {
        let sid = self.sid();
        self.text.close(e, sid.as_deref());
    }

    fn prefix(&self) -> String {
        format!("{}-msg", self.session.as_deref().unwrap_or("copilot"))
    }

    fn call(
        &mut self,
        e: &mut Emit<'_>,
        message: &str,
        id: &str,
        name: &str,
        args: Option<&Value>,
    ) {
        if !self.called.insert(id.to_owned()) {
            return;
        }
        let input = match args {
            Some(Value::String(a)) => serde_json::from_str(a).unwrap_or(json!({"arguments": a})),
            Some(v) => v.clone(),
            None => json!({}),
        };
        let sid = self.sid();
        e.tool_use(sid.as_deref(), message, id, name, input);
    }

    fn usage(&mut self, id: &str, model: Option<&str>, u: &Map<String, Value>, e: &mut Emit<'_>) {
        let mut usage = json!({
            "input_tokens": n(u, "inputTokens"),
            "output_tokens": n(u, "outputTokens"),
            "cache_read_input_tokens": n(u, "cacheReadTokens"),
            "cache_creation_input_tokens": n(u, "cacheWriteTokens"),
        });
        if let Some(c) = u.get("cost") {
            usage["copilot_cost"] = c.clone();
        }
        let sid = self.sid();
        e.assistant(sid.as_deref(), id, model, Vec::new(), Some(usage));
    }

    fn message(&mut self, d: &Map<String, Value>, id: &str, e: &mut Emit<'_>) {
        let sid = self.sid();
        let msg = s(d, "messageId").unwrap_or(id).to_owned();
        if self.text.is_open() {
            // Its text came in pieces.
            self.close(e);
        } else if let Some(text) = s(d, "content").filter(|t| !t.is_empty()) {
            let model = self.model.clone();
            let block = json!({"type": "text", "text": text});
            e.assistant(sid.as_deref(), &msg, model.as_deref(), vec![block], None);
        }
        let requests = d.get("toolRequests").and_then(Value::as_array);
        for r in requests.into_iter().flatten().filter_map(Value::as_object) {
            let Some(call) = s(r, "toolCallId") else {
                continue;
            };
            let name = s(r, "name").unwrap_or("");
            self.call(e, &format!("{msg}.tools"), call, name, r.get("arguments"));
        }
        e.skip_unless_written("the message's text came in pieces and it asks for no new tool");
    }

    fn result(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        self.close(e);
        if let Some(id) = s(v, "sessionId") {
            self.session = Some(id.to_owned());
        }
        self.turns += 1;
        let code = v.get("exitCode").and_then(Value::as_i64);
        let mut m = Map::new();
        if let Some(u) = v.get("usage") {
            m.insert("copilot_usage".into(), u.clone());
            if let Some(d) = u.get("sessionDurationMs") {
                m.insert("duration_ms".into(), d.clone());
            }
            if let Some(d) = u.get("totalApiDurationMs") {
                m.insert("duration_api_ms".into(), d.clone());
            }
        }
        m.insert("tokens_reported".into(), json!(self.usage_seen > 0));
        m.insert("exit_code".into(), json!(code));
        let is_error = code.is_some_and(|c| c != 0);
        let sid = self.sid();
        let subtype = if is_error {
            "error_during_execution"
        } else {
            "success"
        };
        e.result(sid.as_deref(), is_error, subtype, m);
    }
}

impl Reader for Copilot {
    fn line(&mut self, v: Map<String, Value>, e: &mut Emit<'_>) {
        let t = s(&v, "type").unwrap_or("").to_owned();
        if t == "result" {
            return self.result(&v, e);
        }
        let id = s(&v, "id").unwrap_or("").to_owned();
        let Some(d) = v.get("data").and_then(Value::as_object) else {
            e.violation(format!("the {t} line has no \"data\""));
            return e.keep();
        };
        if !self.init_done && !matches!(t.as_str(), "session.start" | "session.resume") {
            self.init_done = true;
            e.init(None, Map::new());
        }
        let sid = self.sid();
        match t.as_str() {
            "session.start" | "session.resume" => {
                self.init_done = true;
                self.close(e);
                if let Some(id) = s(d, "sessionId") {
                    self.session = Some(id.to_owned());
                }
                self.model = s(d, "selectedModel").map(str::to_owned);
                let mut m = Map::new();
                m.insert("session_id".into(), json!(self.session));
                m.insert("model".into(), json!(self.model));
                let cwd = d.get("context").and_then(|c| c.get("cwd"));
                m.insert("cwd".into(), json!(cwd));
                let version = s(d, "copilotVersion").map(str::to_owned);
                e.init(version.as_deref(), m);
            }
            "user.message" => {
                self.close(e);
                e.user_text(sid.as_deref(), s(d, "content").unwrap_or(""));
            }
            "assistant.message_delta" | "assistant.reasoning_delta" => {
                let thinking = t == "assistant.reasoning_delta";
                let (prefix, model) = (self.prefix(), self.model.clone());
                let piece = s(d, "deltaContent").unwrap_or("");
                self.text.piece(
                    e,
                    sid.as_deref(),
                    &prefix,
                    model.as_deref(),
                    piece,
                    thinking,
                );
            }
            "assistant.message" => self.message(d, &id, e),
            "assistant.reasoning" => {
                if self.text.is_open() {
                    self.close(e);
                } else {
                    let block =
                        json!({"type": "thinking", "thinking": s(d, "content").unwrap_or("")});
                    let msg = s(d, "reasoningId").unwrap_or(&id).to_owned();
                    e.assistant(sid.as_deref(), &msg, None, vec![block], None);
                }
            }
            "tool.execution_start" => {
                self.close(e);
                let Some(call) = s(d, "toolCallId").map(str::to_owned) else {
                    e.violation("the tool.execution_start line has no \"data.toolCallId\"");
                    return e.skip("a tool call without id");
                };
                let name = s(d, "toolName").unwrap_or("").to_owned();
                self.call(e, &format!("{id}.tools"), &call, &name, d.get("arguments"));
                e.skip_unless_written("the call was already asked for by the assistant message");
            }
            "tool.execution_complete" => {
                self.close(e);
                let Some(call) = s(d, "toolCallId").map(str::to_owned) else {
                    e.violation("the tool.execution_complete line has no \"data.toolCallId\"");
                    return e.skip("a tool result without id");
                };
                let name = s(d, "toolName").unwrap_or("").to_owned();
                self.call(e, &format!("{id}.tools"), &call, &name, d.get("arguments"));
                let success = d.get("success").and_then(Value::as_bool).unwrap_or(true);
                let content = match (d.get("result"), d.get("error")) {
                    (Some(r), _) if !r.is_null() => r.get("content").cloned().unwrap_or(r.clone()),
                    (_, Some(x)) => x.get("message").cloned().unwrap_or(x.clone()),
                    _ => json!(""),
                };
                let mut details = Map::new();
                for k in ["success", "result", "error", "toolTelemetry"] {
                    if let Some(x) = d.get(k) {
                        details.insert(k.into(), x.clone());
                    }
                }
                e.tool_result(
                    sid.as_deref(),
                    &call,
                    content,
                    !success,
                    Some(Value::Object(details)),
                );
            }
            "assistant.usage" => {
                self.usage_seen += 1;
                let model = s(d, "model").map(str::to_owned).or(self.model.clone());
                self.usage(&format!("copilot-usage-{id}"), model.as_deref(), d, e);
            }
            "session.shutdown" => {
                self.close(e);
                let metrics = d.get("modelMetrics").and_then(Value::as_object);
                if self.usage_seen == 0 {
                    for (model, m) in metrics.into_iter().flatten() {
                        if let Some(u) = m.get("usage").and_then(Value::as_object) {
                            self.usage_seen += 1;
                            self.usage(&format!("copilot-session-{model}"), Some(model), u, e);
                        }
                    }
                }
                // The session log's last event: the run's end (stdout's is its result line).
                let mut m = Map::new();
                m.insert("tokens_reported".into(), json!(self.usage_seen > 0));
                for (from, to) in [
                    ("totalApiDurationMs", "duration_api_ms"),
                    ("totalPremiumRequests", "premium_requests"),
                    ("shutdownType", "shutdown_type"),
                ] {
                    if let Some(x) = d.get(from) {
                        m.insert(to.into(), x.clone());
                    }
                }
                let is_error = s(d, "shutdownType").is_some_and(|t| t != "routine");
                let subtype = if is_error {
                    "error_during_execution"
                } else {
                    "success"
                };
                self.turns += 1;
                e.result(sid.as_deref(), is_error, subtype, m);
            }
            "session.error" => {
                self.close(e);
                e.stream_event(
                    sid.as_deref(),
                    json!({"type": "error", "error": {"type": d.get("errorType"), "message": d.get("message")}}),
                );
            }
            t if LIFECYCLE.contains(&t) => e.skip("a lifecycle event"),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
