//! The envelope events of a session's run as ACP `session/update` notifications: a [`Sink`] in
//! the same pipeline (the same `Normalizer`) as every other output, so nothing here parses
//! stream-json. Text and thinking stream from their deltas; tool calls, their results, the
//! TodoWrite plan, the slash commands (described as the CLI's `initialize` answer describes
//! them), usage, the permission mode the CLI reports, and the run's own `turn.end` as the stop
//! reason. What concerns the session itself goes to its [`Listener`].

use std::collections::{HashMap, HashSet};
use std::io;

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, Content, ContentBlock,
    ContentChunk, Cost, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    StopReason, TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, UnstructuredCommandInput, UsageUpdate,
};
use serde_json::{Value, json};

use super::tool;
use super::wire::RpcError;
use crate::envelope::{EventMeta, Events, kind};
use crate::sink::{EventCtx, Sink};

/// The event types this sink reads; every other passes by.
const READS: &[&str] = &[
    kind::TEXT_DELTA,
    kind::THINKING_DELTA,
    kind::TEXT,
    kind::THINKING,
    kind::TOOL_CALL,
    kind::TOOL_RESULT,
    kind::USER_TEXT,
    kind::SESSION_INIT,
    kind::USAGE,
    kind::TURN_END,
    kind::API_ERROR,
    kind::CONTROL_REQUEST,
    kind::CONTROL_RESPONSE,
    kind::COMMANDS_CHANGED,
    kind::STATUS,
];

/// What the sink tells the session it serves (updates, and what the run says of the session).
pub trait Listener: Send + Sync {
    /// Send a `session/update` (`meta`: its `_meta`).
    fn update(&self, u: SessionUpdate, meta: Option<serde_json::Map<String, Value>>);
    /// The CLI's own session id (its init line).
    fn claude_session(&self, id: &str);
    /// The CLI reported an authentication failure.
    fn auth_failed(&self);
    /// A `can_use_tool` control request of the CLI (`request_id`, its `request`).
    fn can_use_tool(&self, request_id: String, request: Value);
    /// A main-thread `turn.end` of CLI run `generation`: how it ended.
    fn turn_ended(&self, generation: u64, stop: Result<StopReason, RpcError>);
    /// The CLI says its permission mode is `mode` (it may have changed it itself: an approved
    /// `ExitPlanMode`, `EnterPlanMode`).
    fn mode_reported(&self, mode: &str);
}

/// `_meta` for an update from inside a subagent: the `Task`/`Agent` call it belongs to.
pub fn subagent_meta(parent: Option<&str>) -> Option<serde_json::Map<String, Value>> {
    let p = parent?;
    let mut m = serde_json::Map::new();
    m.insert("claudeCode".into(), json!({"parentToolUseId": p}));
    Some(m)
}

/// How a replayed session differs from a live one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A running CLI: stop reasons and permission requests go to the session.
    Live(u64),
    /// `session/load`: history only.
    Replay,
}

/// The ACP updates of one CLI run of a session.
pub struct AcpSink {
    session: Box<dyn Listener>,
    mode: Mode,
    /// Messages whose text or thinking already streamed as deltas.
    streamed: HashSet<String>,
    /// TodoWrite calls (shown as the plan, not as tool calls).
    todos: HashSet<String>,
    /// Slash commands already announced.
    commands: Option<Vec<String>>,
    /// The slash commands' descriptions and argument hints, by name, as the CLI's answer to
    /// `initialize` (or its `commands_changed`) gave them.
    described: HashMap<String, (String, String)>,
    /// Tokens in context after the last main-thread API message.
    context_used: u64,
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn text_block(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t))
}

impl AcpSink {
    /// The sink of CLI run `generation` of `session`.
    pub fn new(session: Box<dyn Listener>, generation: u64) -> Self {
        Self::with_mode(session, Mode::Live(generation))
    }

    /// A sink in `mode`.
    pub fn with_mode(session: Box<dyn Listener>, mode: Mode) -> Self {
        AcpSink {
            session,
            mode,
            streamed: HashSet::new(),
            todos: HashSet::new(),
            commands: None,
            described: HashMap::new(),
            context_used: 0,
        }
    }

    fn send(&self, u: SessionUpdate, v: &Value) {
        self.session
            .update(u, subagent_meta(str_of(v, "parent_tool_use_id")));
    }

    fn handle(&mut self, k: &str, v: &Value) {
        let msg = str_of(v, "message_id").unwrap_or("").to_owned();
        match k {
            kind::TEXT_DELTA | kind::THINKING_DELTA => {
                let (field, thought) = if k == kind::TEXT_DELTA {
                    ("text", false)
                } else {
                    ("thinking", true)
                };
                let Some(t) = str_of(v, field).filter(|t| !t.is_empty()) else {
                    return;
                };
                self.streamed.insert(format!("{field}:{msg}"));
                let chunk = ContentChunk::new(text_block(t));
                self.send(
                    if thought {
                        SessionUpdate::AgentThoughtChunk(chunk)
                    } else {
                        SessionUpdate::AgentMessageChunk(chunk)
                    },
                    v,
                );
            }
            kind::TEXT | kind::THINKING => {
                let field = if k == kind::TEXT { "text" } else { "thinking" };
                if self.streamed.contains(&format!("{field}:{msg}")) {
                    return;
                }
                let Some(t) = str_of(v, field).filter(|t| !t.is_empty()) else {
                    return;
                };
                let chunk = ContentChunk::new(text_block(t));
                self.send(
                    if k == kind::TEXT {
                        SessionUpdate::AgentMessageChunk(chunk)
                    } else {
                        SessionUpdate::AgentThoughtChunk(chunk)
                    },
                    v,
                );
            }
            kind::USER_TEXT => {
                if v.get("replay").and_then(Value::as_bool) == Some(true) {
                    return;
                }
                if let Some(t) = str_of(v, "text").filter(|t| !t.is_empty()) {
                    self.send(
                        SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(t))),
                        v,
                    );
                }
            }
            kind::TOOL_CALL => self.tool_call(v),
            kind::TOOL_RESULT => self.tool_result(v),
            kind::SESSION_INIT => {
                if let (Mode::Live(_), Some(id)) = (self.mode, str_of(v, "session_id")) {
                    self.session.claude_session(id);
                }
                self.mode_reported(v);
                let names = v
                    .get("extra")
                    .and_then(|e| e.get("slash_commands"))
                    .and_then(Value::as_array)
                    .map(|l| {
                        l.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    });
                if let Some(names) = names {
                    self.commands(names, v);
                }
            }
            kind::STATUS => self.mode_reported(v),
            // The CLI's answer to `initialize` (and, in later CLIs, `commands_changed`): the
            // commands with their descriptions and argument hints.
            kind::CONTROL_RESPONSE | kind::COMMANDS_CHANGED => {
                let list = match k {
                    kind::CONTROL_RESPONSE => v.pointer("/response/response/commands"),
                    _ => v.get("commands"),
                };
                if let Some(list) = list.and_then(Value::as_array) {
                    self.describe(list, v);
                }
            }
            // The main thread's messages fill the context (a subagent has its own).
            kind::USAGE if str_of(v, "parent_tool_use_id").is_none() => {
                let u = v.get("usage").unwrap_or(&Value::Null);
                let n = |key: &str| u.get(key).and_then(Value::as_u64).unwrap_or(0);
                let used = n("input_tokens")
                    + n("cache_read_input_tokens")
                    + n("cache_creation_input_tokens")
                    + n("output_tokens");
                if used > 0 {
                    self.context_used = used;
                }
            }
            kind::API_ERROR => {
                if let Mode::Live(_) = self.mode
                    && str_of(v, "error").is_some_and(|e| e.contains("authentication"))
                {
                    self.session.auth_failed();
                }
            }
            kind::CONTROL_REQUEST => {
                let req = v.get("request").cloned().unwrap_or(Value::Null);
                if let (Mode::Live(_), Some("can_use_tool"), Some(id)) =
                    (self.mode, str_of(&req, "subtype"), str_of(v, "request_id"))
                {
                    self.session.can_use_tool(id.to_owned(), req);
                }
            }
            kind::TURN_END => self.turn_end(v),
            _ => {}
        }
    }

    fn tool_call(&mut self, v: &Value) {
        let Some(id) = str_of(v, "tool_use_id") else {
            return;
        };
        let name = str_of(v, "name").unwrap_or("tool");
        let input = v.get("input").cloned().unwrap_or(Value::Null);
        // A plan tool's list (the envelope's `kind`) is sent as ACP's own plan.
        if str_of(v, "kind") == Some(crate::tool::Kind::Plan.as_str())
            && input.get("todos").is_some_and(Value::is_array)
        {
            self.todos.insert(id.to_owned());
            let entries = input
                .get("todos")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| {
                    let content = str_of(t, "content")?;
                    let status = match str_of(t, "status") {
                        Some("completed") => PlanEntryStatus::Completed,
                        Some("in_progress") => PlanEntryStatus::InProgress,
                        _ => PlanEntryStatus::Pending,
                    };
                    let priority = match str_of(t, "priority") {
                        Some("high") => PlanEntryPriority::High,
                        Some("low") => PlanEntryPriority::Low,
                        _ => PlanEntryPriority::Medium,
                    };
                    Some(PlanEntry::new(content, priority, status))
                })
                .collect();
            self.send(SessionUpdate::Plan(Plan::new(entries)), v);
            return;
        }
        let m = tool::meaning(name, &input);
        let call = ToolCall::new(id.to_owned(), m.title)
            .kind(m.kind)
            .status(ToolCallStatus::Pending)
            .locations(m.locations)
            .content(m.diffs)
            .raw_input(input);
        self.send(SessionUpdate::ToolCall(call), v);
    }

    fn tool_result(&mut self, v: &Value) {
        let Some(id) = str_of(v, "tool_use_id") else {
            return;
        };
        if self.todos.contains(id) {
            return;
        }
        let failed = v.get("is_error").and_then(Value::as_bool) == Some(true);
        let text = match v.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| str_of(b, "text"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let raw = match v.get("structured") {
            Some(s) if !s.is_null() => s.clone(),
            _ => v.get("content").cloned().unwrap_or(Value::Null),
        };
        let mut fields = ToolCallUpdateFields::new()
            .status(if failed {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            })
            .raw_output(raw);
        if !text.is_empty() {
            fields = fields.content(vec![ToolCallContent::Content(Content::new(text_block(
                &text,
            )))]);
        }
        self.send(
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)),
            v,
        );
    }

    /// The permission mode the CLI reports (init line, `status`), to the session.
    fn mode_reported(&self, v: &Value) {
        if let (Mode::Live(_), Some(m)) = (self.mode, str_of(v, "permission_mode")) {
            self.session.mode_reported(m);
        }
    }

    /// Learn the commands' descriptions from `list` (the CLI's own objects); announced again
    /// when the init line already named them.
    fn describe(&mut self, list: &[Value], v: &Value) {
        for c in list {
            if let Some(name) = str_of(c, "name") {
                let d = str_of(c, "description").unwrap_or("").to_owned();
                let hint = str_of(c, "argumentHint").unwrap_or("").to_owned();
                self.described.insert(name.to_owned(), (d, hint));
            }
        }
        if let Some(names) = self.commands.take() {
            self.commands(names, v);
        }
    }

    /// `available_commands_update` for the commands `names` (unless just announced), each
    /// with its description and argument hint when the CLI gave them.
    fn commands(&mut self, names: Vec<String>, v: &Value) {
        if self.commands.as_ref() == Some(&names) {
            return;
        }
        let cmds = names
            .iter()
            .map(|n| match self.described.get(n) {
                Some((d, hint)) => {
                    let d = if d.is_empty() {
                        format!("/{n}")
                    } else {
                        d.clone()
                    };
                    let c = AvailableCommand::new(n.clone(), d);
                    if hint.is_empty() {
                        c
                    } else {
                        c.input(AvailableCommandInput::Unstructured(
                            UnstructuredCommandInput::new(hint.clone()),
                        ))
                    }
                }
                None => AvailableCommand::new(n.clone(), format!("/{n}")).input(
                    AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("arguments")),
                ),
            })
            .collect();
        self.commands = Some(names);
        self.send(
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(cmds)),
            v,
        );
    }

    fn turn_end(&mut self, v: &Value) {
        // Usage: tokens in context, the window of the turn's model, the CLI's cost.
        let size = v
            .get("model_usage")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
            .filter_map(|u| u.get("contextWindow").and_then(Value::as_u64))
            .max();
        if let Some(size) = size {
            let mut u = UsageUpdate::new(self.context_used, size);
            if let Some(c) = v.get("cost_usd").and_then(Value::as_f64) {
                u = u.cost(Cost::new(c, "USD"));
            }
            self.send(SessionUpdate::UsageUpdate(u), v);
        }
        let Mode::Live(generation) = self.mode else {
            return;
        };
        if str_of(v, "parent_tool_use_id").is_some() {
            return;
        }
        self.session.turn_ended(generation, stop_reason(v));
    }
}

/// The prompt's stop reason from the run's `turn.end`, or the error it is.
pub fn stop_reason(v: &Value) -> Result<StopReason, RpcError> {
    let outcome = str_of(v, "outcome").unwrap_or("");
    let is_error = v.get("is_error").and_then(Value::as_bool) == Some(true);
    match outcome {
        "max_turns" | "max_budget" => return Ok(StopReason::MaxTurnRequests),
        // Interrupted, and not by a cancel (the session answers those itself).
        "during_execution" => {
            return Err(RpcError::internal(
                "claude: the turn was interrupted (error_during_execution)",
            )
            .with_data(v.clone()));
        }
        _ => {}
    }
    if is_error {
        let text = str_of(v, "result")
            .map(str::to_owned)
            .or_else(|| {
                v.get("errors").and_then(Value::as_array).map(|e| {
                    e.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            })
            .unwrap_or_else(|| format!("the turn ended with {outcome}"));
        return Err(RpcError::internal(format!("claude: {text}")).with_data(v.clone()));
    }
    Ok(match str_of(v, "stop_reason") {
        Some("max_tokens") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refusal,
        _ => StopReason::EndTurn,
    })
}

impl Sink for AcpSink {
    fn event(&mut self, events: &Events, meta: &EventMeta, _: &EventCtx<'_>) -> io::Result<()> {
        if !READS.contains(&meta.kind) {
            return Ok(());
        }
        if let Ok(v) = serde_json::from_slice::<Value>(events.bytes(meta)) {
            self.handle(meta.kind, &v);
        }
        Ok(())
    }

    fn wants_time(&self) -> bool {
        false
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stop_reasons_from_turn_end() {
        let s = |v: Value| stop_reason(&v);
        assert_eq!(
            s(json!({"outcome": "success", "is_error": false})),
            Ok(StopReason::EndTurn)
        );
        assert_eq!(
            s(json!({"outcome": "success", "is_error": false, "stop_reason": "max_tokens"})),
            Ok(StopReason::MaxTokens)
        );
        assert_eq!(
            s(json!({"outcome": "success", "is_error": false, "stop_reason": "refusal"})),
            Ok(StopReason::Refusal)
        );
        assert_eq!(
            s(json!({"outcome": "max_turns", "is_error": true})),
            Ok(StopReason::MaxTurnRequests)
        );
        assert_eq!(
            s(json!({"outcome": "max_budget", "is_error": true})),
            Ok(StopReason::MaxTurnRequests)
        );
        let e = s(json!({"outcome": "success", "is_error": true, "result": "API Error: 500"}))
            .unwrap_err();
        assert!(e.message.contains("API Error: 500"), "{}", e.message);
    }
}
