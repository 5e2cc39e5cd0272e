//! Envelope events → OpenTelemetry GenAI spans: one `invoke_agent` root per run, a `chat` span
//! per API message, an `execute_tool` span per tool call, an `invoke_agent <subagent_type>` span
//! per subagent under the tool call that started it (its chats nest there), span events for
//! diagnostics, policy violations, retries and turn ends.
//! This module owns the span tree and its timing; the sink decides where finished spans go.

use std::collections::{HashMap, HashSet};

/// Maps keyed by ids from the events (foldhash: iteration order never reaches the output, the
/// spans still open at the end are sorted first).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use std::borrow::Cow;

use serde_json::{Value, json};

mod end;
mod events;
#[cfg(test)]
mod tests;

use super::attr;
use crate::clock::Stamp;
use crate::envelope::kind as ek;
use crate::json::fields::{self, Fields};

/// `gen_ai.provider.name` of every span (Claude Code talks to Anthropic's Messages API).
pub const PROVIDER: &str = "anthropic";
/// `gen_ai.agent.name` of the root span.
pub const AGENT: &str = "Claude Code";

/// A `chat` span still open (its message may get more blocks or its usage).
struct Chat {
    span: Span,
    /// Time of the last event that carried this message id (the span's end).
    last: u64,
    /// Output parts (content on only).
    parts: Vec<Value>,
    finish: Option<String>,
}

/// The state of one conversation thread: the main agent (key "") or one subagent (key = the
/// spawning tool call's id).
#[derive(Default)]
struct Thread {
    /// Time of the thread's last event: a new API message of the thread starts here.
    last: Option<u64>,
    /// The most recent chat span: parent of tool calls that name no message.
    last_chat: Option<Vec<u8>>,
    /// Input parts since the previous chat span (content on only).
    input: Vec<Value>,
}

/// Builds the span tree of one run from envelope events.
pub struct Trace {
    run_id: String,
    /// What trace and span ids derive from: the run id, plus `#n` for the n-th invocation.
    seed: String,
    /// 1 for the run's first `claude` invocation, n for the n-th (a log of several, see
    /// [`Trace::invocation`]).
    invocation: u32,
    /// When the trace's last event arrived.
    last_at: Option<Stamp>,
    trace_id: Vec<u8>,
    content: bool,
    root: Option<Span>,
    ended: bool,
    chats: Map<String, Chat>,
    /// Span ids of chats already finished, by message id (late tool calls still find them).
    chat_ids: Map<String, Vec<u8>>,
    tools: Map<String, Span>,
    /// Span ids and start times of tool calls, open or finished, by tool_use_id.
    tool_ids: Map<String, (Vec<u8>, u64)>,
    /// Name and description a tool call gives the subagent it starts (`subagent_type`,
    /// `description` of its input; else the tool's name), by tool_use_id.
    agent_info: Map<String, (String, Option<String>)>,
    /// Open `invoke_agent` spans of subagents, by the spawning tool_use_id (closed at the end:
    /// a background subagent outlives its tool call).
    agents: Map<String, Span>,
    threads: Map<String, Thread>,
    used: Set<u64>,
    /// How often each span key was used (a repeated message or tool id gets `key#n`).
    keys: Map<String, u32>,
    finished: Vec<Span>,
    session_id: Option<String>,
    model: Option<String>,
    /// The model the CLI switched to (`model.fallback`) until the turn ends: the request model
    /// of a chat whose first event names none (the CLI tries its main model again next turn).
    fallback: Option<String>,
    cli_version: Option<String>,
    /// The last turn's outcome when it was not `success`.
    failed_outcome: Option<String>,
    /// Whether a `turn.end` came after the last `session.init`.
    terminal: bool,
}

impl Trace {
    /// A trace for the run `run_id`; `content` adds prompts, outputs and tool input/output.
    pub fn new(run_id: &str, content: bool) -> Self {
        Self::invocation(run_id, 1, content)
    }

    /// The trace of the `n`-th `claude` invocation of run `run_id` (a log holding several runs
    /// one after the other): its own trace id and root, derived from the run id and `n`.
    pub fn invocation(run_id: &str, n: u32, content: bool) -> Self {
        let seed = match n {
            1 => run_id.to_owned(),
            n => format!("{run_id}#{n}"),
        };
        Trace {
            run_id: run_id.to_owned(),
            trace_id: attr::trace_id(&seed).to_vec(),
            seed,
            invocation: n,
            last_at: None,
            content,
            root: None,
            ended: false,
            chats: Map::default(),
            chat_ids: Map::default(),
            tools: Map::default(),
            tool_ids: Map::default(),
            agent_info: Map::default(),
            agents: Map::default(),
            threads: Map::default(),
            used: Set::default(),
            keys: Map::default(),
            finished: Vec::new(),
            session_id: None,
            model: None,
            fallback: None,
            cli_version: None,
            failed_outcome: None,
            terminal: false,
        }
    }

    /// The Claude Code version, once known (resource attribute).
    pub fn cli_version(&self) -> Option<&str> {
        self.cli_version.as_deref()
    }

    /// Which invocation of the run this trace is (1-based).
    pub fn number(&self) -> u32 {
        self.invocation
    }

    /// The session of the trace's events, once one named it.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// When the trace's last event arrived.
    pub fn last_at(&self) -> Option<Stamp> {
        self.last_at
    }

    /// Spans finished since the last call.
    pub fn take_finished(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.finished)
    }

    /// Whether the root span has been closed (later events are ignored).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// A new span named `name` with a deterministic id derived from `key` (made unique within
    /// the run by a counter when a key repeats).
    fn open(&mut self, key: &str, name: String, kind: SpanKind, parent: &[u8], start: u64) -> Span {
        let n = match self.keys.get_mut(key) {
            Some(uses) => {
                *uses += 1;
                *uses
            }
            None => {
                self.keys.insert(key.to_owned(), 1);
                1
            }
        };
        let mut n = n;
        let mut id = attr::span_id(&self.seed, key).to_vec();
        if n > 1 {
            id = attr::span_id(&self.seed, &format!("{key}#{n}")).to_vec();
        }
        while !self.used.insert(u64::from_le_bytes(
            id.as_slice().try_into().expect("span ids are 8 bytes"),
        )) {
            n += 1; // a hash collision: practically never
            id = attr::span_id(&self.seed, &format!("{key}#{n}")).to_vec();
        }
        Span {
            trace_id: self.trace_id.clone(),
            span_id: id,
            parent_span_id: parent.to_vec(),
            name,
            kind: kind as i32,
            start_time_unix_nano: start,
            end_time_unix_nano: start,
            ..Default::default()
        }
    }

    fn root_id(&self) -> Vec<u8> {
        self.root
            .as_ref()
            .map(|r| r.span_id.clone())
            .unwrap_or_default()
    }

    /// Handle one envelope event of type `kind` (its members `ev`) that arrived at `at`.
    pub fn event(&mut self, kind: &str, ev: &Fields<'_>, at: Stamp, cli_version: Option<&str>) {
        if self.ended {
            return;
        }
        let now = attr::nanos(at);
        self.last_at = Some(at);
        if self.root.is_none() {
            let mut root = self.open(
                "invoke_agent",
                format!("invoke_agent {AGENT}"),
                SpanKind::Internal,
                &[],
                now,
            );
            root.attributes = vec![
                attr::str("gen_ai.operation.name", "invoke_agent"),
                attr::str("gen_ai.provider.name", PROVIDER),
                attr::str("gen_ai.agent.name", AGENT),
                attr::str("boo_normalize.run_id", self.run_id.clone()),
            ];
            if self.invocation > 1 {
                root.attributes.push(attr::int(
                    "boo_normalize.invocation",
                    self.invocation.into(),
                ));
            }
            self.root = Some(root);
        }
        if let Some(v) = cli_version {
            self.cli_version.get_or_insert_with(|| v.to_owned());
        }
        if self.session_id.is_none()
            && let Some(s) = text(ev, "session_id")
        {
            self.session_id = Some(s.into_owned());
        }
        let thread = text(ev, "parent_tool_use_id")
            .map(Cow::into_owned)
            .unwrap_or_default();
        if let Some(msg) = text(ev, "message_id") {
            self.message_event(kind, &msg, &thread, ev, now);
        }
        match kind {
            ek::SESSION_INIT => {
                self.terminal = false;
                if let Some(m) = text(ev, "model") {
                    self.model.get_or_insert_with(|| m.into_owned());
                }
                if let Some(v) = text(ev, "cli_version") {
                    self.cli_version.get_or_insert_with(|| v.into_owned());
                }
            }
            ek::TOOL_CALL => self.tool_call(&thread, ev, now),
            ek::TOOL_RESULT => self.tool_result(&thread, ev, now),
            ek::USER_TEXT if self.content => {
                if let Some(t) = text(ev, "text") {
                    let part = json!({"role": "user", "parts": [{"type": "text", "content": t}]});
                    self.thread(&thread).input.push(part);
                }
            }
            _ => self.span_event(kind, ev, now),
        }
        let t = self.thread(&thread);
        t.last = Some(t.last.map_or(now, |l| l.max(now)));
    }

    /// Whether the chat of message `msg` is open and has no stop reason yet (only then does
    /// [`Trace::source_stop_reason`] change it).
    pub fn wants_stop_reason(&self, msg: &str) -> bool {
        self.chats.get(msg).is_some_and(|c| c.finish.is_none())
    }

    /// The stop reason the source line of a message's block carries (assistant lines of some CLI
    /// versions), unless the stream already said.
    pub fn source_stop_reason(&mut self, msg: &str, reason: &str) {
        if let Some(chat) = self.chats.get_mut(msg) {
            chat.finish.get_or_insert_with(|| reason.to_owned());
        }
    }

    fn thread(&mut self, key: &str) -> &mut Thread {
        if !self.threads.contains_key(key) {
            self.threads.insert(key.to_owned(), Thread::default());
        }
        self.threads.get_mut(key).expect("inserted above")
    }

    /// The span a new chat of `thread` hangs under, and its start: the root for the main
    /// conversation; for a subagent its `invoke_agent` span (opened on first need, under the
    /// tool call that started it).
    fn thread_parent(&mut self, thread: &str, now: u64) -> (Vec<u8>, u64) {
        if thread.is_empty() {
            let start = self.root.as_ref().map_or(now, |r| r.start_time_unix_nano);
            return (self.root_id(), start);
        }
        if let Some(a) = self.agents.get(thread) {
            return (a.span_id.clone(), a.start_time_unix_nano);
        }
        let (parent, start) = match self.tool_ids.get(thread) {
            Some((id, start)) => (id.clone(), (*start).min(now)),
            None => (self.root_id(), now),
        };
        let (name, description) = self
            .agent_info
            .get(thread)
            .cloned()
            .unwrap_or_else(|| ("subagent".to_owned(), None));
        let mut span = self.open(
            &format!("agent\0{thread}"),
            format!("invoke_agent {name}"),
            SpanKind::Internal,
            &parent,
            start,
        );
        span.attributes = vec![
            attr::str("gen_ai.operation.name", "invoke_agent"),
            attr::str("gen_ai.provider.name", PROVIDER),
            attr::str("gen_ai.agent.name", name),
            attr::str("boo_normalize.parent_tool_use_id", thread),
        ];
        if let Some(d) = description {
            span.attributes
                .push(attr::str("gen_ai.agent.description", d));
        }
        let id = span.span_id.clone();
        self.agents.insert(thread.to_owned(), span);
        (id, start)
    }

    /// Any event naming an API message: open its chat span on first sight, track its end.
    fn message_event(&mut self, kind: &str, msg: &str, thread: &str, ev: &Fields<'_>, now: u64) {
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
                format!("chat {model}")
            };
            let mut span = self.open(
                &format!("chat\0{msg}"),
                name,
                SpanKind::Client,
                &parent,
                start,
            );
            span.attributes = vec![
                attr::str("gen_ai.operation.name", "chat"),
                attr::str("gen_ai.provider.name", PROVIDER),
                attr::str("gen_ai.response.id", msg),
            ];
            if !model.is_empty() {
                span.attributes
                    .push(attr::str("gen_ai.request.model", model.clone()));
            }
            if let Some(s) = text(ev, "session_id") {
                span.attributes.push(attr::str("gen_ai.conversation.id", s));
            }
            if self.content && !input.is_empty() {
                let v = Value::Array(input).to_string();
                span.attributes.push(attr::str("gen_ai.input.messages", v));
            }
            self.chat_ids.insert(msg.to_owned(), span.span_id.clone());
            self.thread(thread).last_chat = Some(span.span_id.clone());
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
            attr::set(
                &mut chat.span.attributes,
                attr::str("gen_ai.response.model", m),
            );
        }
        if let Some(r) = text(ev, "stop_reason") {
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

    fn close_chat(&mut self, msg: &str) {
        let Some(mut chat) = self.chats.remove(msg) else {
            return;
        };
        let span = &mut chat.span;
        span.end_time_unix_nano = chat.last.max(span.start_time_unix_nano);
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

    fn tool_call(&mut self, thread: &str, ev: &Fields<'_>, now: u64) {
        let id = text(ev, "tool_use_id");
        let id = id.as_deref();
        if id.is_some_and(|id| self.tool_ids.contains_key(id)) {
            return;
        }
        let name = text(ev, "name");
        let name = name.as_deref().unwrap_or("unknown");
        let parent = text(ev, "message_id")
            .and_then(|m| self.chat_ids.get(&*m).cloned())
            .or_else(|| self.thread(thread).last_chat.clone())
            .unwrap_or_else(|| self.thread_parent(thread, now).0);
        // A call without id (the CLI's block had none) still gets its span, keyed by the event's
        // seq; it carries no gen_ai.tool.call.id, is never paired and ends where it starts.
        let key = match id {
            Some(id) => format!("tool\0{id}"),
            None => format!("tool\0seq {}", ev.value("seq").unwrap_or(Value::Null)),
        };
        let mut span = self.open(
            &key,
            format!("execute_tool {name}"),
            SpanKind::Internal,
            &parent,
            now,
        );
        let server = ev.bool("server").unwrap_or(false);
        span.attributes = vec![
            attr::str("gen_ai.operation.name", "execute_tool"),
            attr::str("gen_ai.provider.name", PROVIDER),
            attr::str("gen_ai.tool.name", name),
        ];
        if let Some(id) = id {
            span.attributes.push(attr::str("gen_ai.tool.call.id", id));
        }
        span.attributes.push(attr::str(
            "gen_ai.tool.type",
            if server { "extension" } else { "function" },
        ));
        if text(ev, "name").is_none() {
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
        let input = ev.raw("input");
        let agent = input
            .and_then(|i| fields::member(i, "subagent_type"))
            .and_then(fields::string);
        let agent = agent.as_deref().unwrap_or(name);
        let description = input
            .and_then(|i| fields::member(i, "description"))
            .and_then(fields::string)
            .map(Cow::into_owned);
        self.agent_info
            .insert(id.to_owned(), (agent.to_owned(), description));
        self.tool_ids
            .insert(id.to_owned(), (span.span_id.clone(), now));
        self.tools.insert(id.to_owned(), span);
    }

    fn tool_result(&mut self, thread: &str, ev: &Fields<'_>, now: u64) {
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
        span.end_time_unix_nano = now.max(span.start_time_unix_nano);
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

fn text<'a>(ev: &Fields<'a>, key: &str) -> Option<Cow<'a, str>> {
    ev.str(key)
}
