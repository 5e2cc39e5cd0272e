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
//! - `model.call_start`, `model.call_finished`, `model.call_final_result` (seen in the real
//!   output of 1.0.92 and 1.0.102, in no documentation: one model call's lifecycle, its model,
//!   dispatch time and outcome) are `skipped`; `model.call_failure` (a call the API refused:
//!   `statusCode`, `errorCode`, `errorMessage`, …) is an `api.error` (`error` its `errorCode`,
//!   the details as `api_error_status`, `api_error_type`, `api_error_message`, …).
//! - Lifecycle events (`assistant.turn_start`/`turn_end`, `assistant.message_start`,
//!   `session.idle`, `session.usage_checkpoint`, `tool.execution_progress`, …) are `skipped`.

use std::collections::HashSet;

use serde_json::Value;
use simd_json::prelude::*;

use super::emit::{DeltaText, Json, Obj, ObjWith, Raw, TextBlock};
use super::{Emit, Reader, n, object, s, string};
use crate::json::{Out, Val, get};

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
    /// A model call of the current turn failed (`model.call_failure`): a failed turn then
    /// ended on a failed API call.
    api_failed: bool,
}

/// The subtype of a turn's result: `success`; `error` for a failed turn whose model call the API
/// refused (as Claude Code's outcome for a failed API call); else `error_during_execution`.
fn failed_subtype(is_error: bool, api_failed: bool) -> &'static str {
    match (is_error, api_failed) {
        (false, _) => "success",
        (true, true) => "error",
        (true, false) => "error_during_execution",
    }
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

/// A call's input: Copilot's `arguments`, a JSON string parsed, or as given.
enum Args<'t, 'i> {
    Parsed(Value),
    Given(Val<'t, 'i>),
    Empty,
}

impl Json for Args<'_, '_> {
    fn write(&self, o: &mut Out) {
        match self {
            Args::Parsed(v) => {
                let _ = serde_json::to_writer(&mut o.buf, v);
            }
            Args::Given(v) => o.value(*v),
            Args::Empty => o.raw(b"{}"),
        }
    }
}

impl<'t, 'i> Args<'t, 'i> {
    fn of(args: Option<Val<'t, 'i>>) -> Self {
        match args {
            Some(a) => match string(a) {
                Some(text) => match serde_json::from_str(text) {
                    Ok(v) => Args::Parsed(v),
                    Err(_) => Args::Parsed(serde_json::json!({ "arguments": text })),
                },
                None => Args::Given(a),
            },
            None => Args::Empty,
        }
    }
}

/// The members of a usage object of Copilot's counts `u`.
fn usage_members(u: Val<'_, '_>, w: &mut Obj<'_>) {
    w.m("input_tokens", n(u, "inputTokens"))
        .m("output_tokens", n(u, "outputTokens"))
        .m("cache_read_input_tokens", n(u, "cacheReadTokens"))
        .m("cache_creation_input_tokens", n(u, "cacheWriteTokens"));
    if let Some(c) = get(u, "cost") {
        w.m("copilot_cost", c);
    }
}

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
        args: Option<Val<'_, '_>>,
    ) {
        if !self.called.insert(id.to_owned()) {
            return;
        }
        let sid = self.sid();
        e.tool_use(sid.as_deref(), message, id, name, &Args::of(args));
    }

    fn usage(&mut self, id: &str, model: Option<&str>, u: Val<'_, '_>, e: &mut Emit<'_>) {
        let sid = self.sid();
        let usage = ObjWith(|w: &mut Obj<'_>| usage_members(u, w));
        e.assistant(sid.as_deref(), id, model, &Raw(b"[]"), Some(&usage));
    }

    fn message(&mut self, d: Val<'_, '_>, id: &str, e: &mut Emit<'_>) {
        let sid = self.sid();
        let msg = s(d, "messageId").unwrap_or(id);
        if self.text.is_open() {
            // Its text came in pieces.
            self.close(e);
        } else if let Some(text) = s(d, "content").filter(|t| !t.is_empty()) {
            let model = self.model.clone();
            let block = TextBlock {
                text,
                thinking: false,
            };
            e.assistant(sid.as_deref(), msg, model.as_deref(), &block, None);
        }
        let requests =
            get(d, "toolRequests").and_then(|r| r.as_array().map(|a| a.iter().collect::<Vec<_>>()));
        for r in requests
            .into_iter()
            .flatten()
            .filter(|r| r.as_object().is_some())
        {
            let Some(call) = s(r, "toolCallId") else {
                continue;
            };
            let name = s(r, "name").unwrap_or("");
            self.call(e, &format!("{msg}.tools"), call, name, get(r, "arguments"));
        }
        e.skip_unless_written("the message's text came in pieces and it asks for no new tool");
    }

    /// `model.call_failure`: a model call the API refused (`api.error`): an assistant line of
    /// no content with `error` (Copilot's `errorCode`, else its `failureKind`) and the
    /// details as `api_error_*` members.
    fn call_failure(&mut self, d: Val<'_, '_>, id: &str, e: &mut Emit<'_>) {
        self.api_failed = true;
        let sid = self.sid();
        let model = s(d, "model").map(str::to_owned).or(self.model.clone());
        let error = s(d, "errorCode")
            .or_else(|| s(d, "failureKind"))
            .unwrap_or("api_error");
        e.line(|w| {
            w.m("type", "assistant").m(
                "message",
                ObjWith(|m: &mut Obj<'_>| {
                    m.m("id", id)
                        .m("type", "message")
                        .m("role", "assistant")
                        .m("model", model.as_deref())
                        .m("content", Raw(b"[]"));
                }),
            );
            w.m("parent_tool_use_id", Raw(b"null"))
                .m("session_id", sid.as_deref())
                .m("error", error);
            for (from, to) in [
                ("statusCode", "api_error_status"),
                ("errorType", "api_error_type"),
                ("errorMessage", "api_error_message"),
                ("failureKind", "api_error_kind"),
                ("apiEndpoint", "api_error_endpoint"),
                ("retryAttempt", "api_error_retry_attempt"),
            ] {
                if let Some(x) = get(d, from) {
                    w.m(to, x);
                }
            }
        });
    }

    fn result(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        self.close(e);
        if let Some(id) = s(v, "sessionId") {
            self.session = Some(id.to_owned());
        }
        self.turns += 1;
        let code = get(v, "exitCode").and_then(|c| c.as_i64());
        let is_error = code.is_some_and(|c| c != 0);
        let sid = self.sid();
        let subtype = failed_subtype(is_error, std::mem::take(&mut self.api_failed));
        let reported = self.usage_seen > 0;
        e.result(sid.as_deref(), is_error, subtype, |w| {
            if let Some(u) = get(v, "usage") {
                w.m("copilot_usage", u);
                if let Some(d) = get(u, "sessionDurationMs") {
                    w.m("duration_ms", d);
                }
                if let Some(d) = get(u, "totalApiDurationMs") {
                    w.m("duration_api_ms", d);
                }
            }
            w.m("tokens_reported", reported).m("exit_code", code);
        });
    }
}

impl Reader for Copilot {
    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        let t = s(v, "type").unwrap_or("");
        if t == "result" {
            return self.result(v, e);
        }
        let id = s(v, "id").unwrap_or("");
        let Some(d) = object(v, "data") else {
            e.violation(format!("the {t} line has no \"data\""));
            return e.keep();
        };
        if !self.init_done && !matches!(t, "session.start" | "session.resume") {
            self.init_done = true;
            e.init(None, |_| {});
        }
        let sid = self.sid();
        match t {
            "session.start" | "session.resume" => {
                self.init_done = true;
                self.close(e);
                if let Some(id) = s(d, "sessionId") {
                    self.session = Some(id.to_owned());
                }
                self.model = s(d, "selectedModel").map(str::to_owned);
                let cwd = get(d, "context").and_then(|c| get(c, "cwd"));
                let version = s(d, "copilotVersion");
                let (session, model) = (self.session.as_deref(), self.model.as_deref());
                e.init(version, |w| {
                    w.m("session_id", session).m("model", model).m("cwd", cwd);
                });
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
            "assistant.message" => self.message(d, id, e),
            "assistant.reasoning" => {
                if self.text.is_open() {
                    self.close(e);
                } else {
                    let block = TextBlock {
                        text: s(d, "content").unwrap_or(""),
                        thinking: true,
                    };
                    let msg = s(d, "reasoningId").unwrap_or(id);
                    e.assistant(sid.as_deref(), msg, None, &block, None);
                }
            }
            "tool.execution_start" => {
                self.close(e);
                let Some(call) = s(d, "toolCallId") else {
                    e.violation("the tool.execution_start line has no \"data.toolCallId\"");
                    return e.skip("a tool call without id");
                };
                let name = s(d, "toolName").unwrap_or("");
                self.call(e, &format!("{id}.tools"), call, name, get(d, "arguments"));
                e.skip_unless_written("the call was already asked for by the assistant message");
            }
            "tool.execution_complete" => {
                self.close(e);
                let Some(call) = s(d, "toolCallId") else {
                    e.violation("the tool.execution_complete line has no \"data.toolCallId\"");
                    return e.skip("a tool result without id");
                };
                let name = s(d, "toolName").unwrap_or("");
                self.call(e, &format!("{id}.tools"), call, name, get(d, "arguments"));
                let success = get(d, "success").and_then(|x| x.as_bool()).unwrap_or(true);
                let details = ObjWith(|w: &mut Obj<'_>| {
                    for k in ["success", "result", "error", "toolTelemetry"] {
                        if let Some(x) = get(d, k) {
                            w.m(k, x);
                        }
                    }
                });
                let content = match (get(d, "result"), get(d, "error")) {
                    (Some(r), _) if !r.is_null() => get(r, "content").unwrap_or(r),
                    (_, Some(x)) => get(x, "message").unwrap_or(x),
                    _ => {
                        return e.tool_result(sid.as_deref(), call, &"", !success, Some(&details));
                    }
                };
                e.tool_result(sid.as_deref(), call, &content, !success, Some(&details));
            }
            "assistant.usage" => {
                self.usage_seen += 1;
                let model = s(d, "model").map(str::to_owned).or(self.model.clone());
                self.usage(&format!("copilot-usage-{id}"), model.as_deref(), d, e);
            }
            "session.shutdown" => {
                self.close(e);
                let metrics = object(d, "modelMetrics")
                    .and_then(|m| m.as_object().map(|o| o.iter().collect::<Vec<_>>()));
                if self.usage_seen == 0 {
                    for (model, m) in metrics.into_iter().flatten() {
                        if let Some(u) = object(m, "usage") {
                            self.usage_seen += 1;
                            self.usage(&format!("copilot-session-{model}"), Some(model), u, e);
                        }
                    }
                }
                // The session log's last event: the run's end (stdout's is its result line).
                let reported = self.usage_seen > 0;
                let is_error = s(d, "shutdownType").is_some_and(|t| t != "routine");
                let subtype = failed_subtype(is_error, std::mem::take(&mut self.api_failed));
                self.turns += 1;
                e.result(sid.as_deref(), is_error, subtype, |w| {
                    w.m("tokens_reported", reported);
                    for (from, to) in [
                        ("totalApiDurationMs", "duration_api_ms"),
                        ("totalPremiumRequests", "premium_requests"),
                        ("shutdownType", "shutdown_type"),
                    ] {
                        if let Some(x) = get(d, from) {
                            w.m(to, x);
                        }
                    }
                });
            }
            "session.error" => {
                self.close(e);
                let event = ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "error").m(
                        "error",
                        ObjWith(|x: &mut Obj<'_>| {
                            x.m("type", get(d, "errorType"))
                                .m("message", get(d, "message"));
                        }),
                    );
                });
                e.stream_event(sid.as_deref(), &event);
            }
            "model.call_start" => e.skip("a model call starts"),
            "model.call_finished" => {
                e.skip("a model call finished (its response came as the events before it)")
            }
            "model.call_final_result" => {
                e.skip("a model call's outcome (its response came as the events before it)")
            }
            "model.call_failure" => self.call_failure(d, id, e),
            t if LIFECYCLE.contains(&t) => e.skip("a lifecycle event"),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
