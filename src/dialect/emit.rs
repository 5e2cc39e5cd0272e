//! Writing a dialect's lines as stream-json: [`Emit`] accounts for each input line exactly once
//! (its first output line stands for it; later ones are synthesized lines of the same number
//! with no bytes of their own) and builds the stream-json lines every reader writes (an init, an
//! assistant message, a tool result, a result, the partial-message events of delta text).

use serde_json::{Map, Value, json};

use crate::read::Line;
use crate::transform::{Origin, Transformed};

/// The line type the normalizer turns into `skipped` with the line's `reason` (a dialect line
/// that says nothing the envelope shows, such as Codex's `turn.started`).
pub const SKIP_TYPE: &str = "boo-normalize.skip";

/// Where a reader writes the stream-json lines of one input line.
pub struct Emit<'a> {
    out: &'a mut Transformed,
    origin: Option<Origin>,
    /// The input line has its output line.
    main: bool,
    violations: &'a mut Vec<(usize, String)>,
    pending_violation: Option<String>,
}

impl<'a> Emit<'a> {
    pub(super) fn new(
        out: &'a mut Transformed,
        line: Option<&Line<'_>>,
        violations: &'a mut Vec<(usize, String)>,
    ) -> Self {
        Emit {
            out,
            origin: line.map(Origin::of),
            main: false,
            violations,
            pending_violation: None,
        }
    }

    /// Every line written from now on is synthesized (end of input).
    pub(super) fn main_done(&mut self) {
        self.main = true;
    }

    /// Mark the next line written as breaking its dialect's schema: `why` names the missing
    /// field (`the thread.started line has no "thread_id"`).
    pub fn violation(&mut self, why: impl Into<String>) {
        self.pending_violation = Some(why.into());
    }

    /// Write one stream-json line (the first stands for the input line).
    pub fn line(&mut self, v: &Value) {
        let buf = self.out.buf();
        serde_json::to_writer(&mut *buf, v).expect("a Value serializes");
        if let Some(w) = self.pending_violation.take() {
            self.violations.push((self.out.len(), w));
        }
        let origin = if self.main {
            self.origin.map(|o| Origin { raw_len: 0, ..o })
        } else {
            self.main = true;
            None
        };
        self.out.end_line(origin);
    }

    /// Pass the input line on as it is (the first output line only).
    pub fn keep(&mut self) {
        if self.main {
            return;
        }
        if let Some(w) = self.pending_violation.take() {
            self.violations.push((self.out.len(), w));
        }
        self.main = true;
        self.out.keep_line();
    }

    /// The input line makes no event of its own: `skipped` with `reason`.
    pub fn skip(&mut self, reason: &str) {
        self.line(&json!({"type": SKIP_TYPE, "reason": reason}));
    }

    /// `skipped` with `reason` when nothing was written for the input line yet.
    pub fn skip_unless_written(&mut self, reason: &str) {
        if !self.main {
            self.skip(reason);
        }
    }

    /// The input line, if nothing was written for it, is skipped as consumed.
    pub(super) fn finish_line(&mut self) {
        if !self.main {
            self.skip("consumed by the dialect reader without an event of its own");
        }
    }

    /// `system/init` of `agent_version` (when the stream says it) with `members` (session id,
    /// model, cwd, …: stream-json names).
    pub fn init(&mut self, agent_version: Option<&str>, members: Map<String, Value>) {
        let mut o = Map::new();
        o.insert("type".into(), "system".into());
        o.insert("subtype".into(), "init".into());
        o.insert("agent_version".into(), json!(agent_version));
        o.extend(members);
        self.line(&Value::Object(o));
    }

    /// An assistant line of message `id` with `content` blocks (`usage` and `stop_reason` when
    /// the message is over and its usage known).
    pub fn assistant(
        &mut self,
        session: Option<&str>,
        id: &str,
        model: Option<&str>,
        content: Vec<Value>,
        usage: Option<Value>,
    ) {
        let mut m = json!({"id": id, "type": "message", "role": "assistant", "model": model, "content": content});
        if let Some(u) = usage {
            m["usage"] = u;
            m["stop_reason"] = "end_turn".into();
        }
        self.line(&json!({"type": "assistant", "message": m, "parent_tool_use_id": null, "session_id": session}));
    }

    /// A user line with the prompt `text`.
    pub fn user_text(&mut self, session: Option<&str>, text: &str) {
        self.line(&json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}, "parent_tool_use_id": null, "session_id": session}));
    }

    /// A user line with the result of call `id`: `content` (a string or content blocks), the
    /// CLI's `is_error`, `structured` details (exit code, status, …) as `tool_use_result`.
    pub fn tool_result(
        &mut self,
        session: Option<&str>,
        id: &str,
        content: Value,
        is_error: bool,
        structured: Option<Value>,
    ) {
        let mut v = json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}]}, "parent_tool_use_id": null, "session_id": session});
        if let Some(s) = structured {
            v["tool_use_result"] = s;
        }
        self.line(&v);
    }

    /// A tool call (an assistant line of message `message` with one `tool_use` block).
    pub fn tool_use(
        &mut self,
        session: Option<&str>,
        message: &str,
        id: &str,
        name: &str,
        input: Value,
    ) {
        let block = json!({"type": "tool_use", "id": id, "name": name, "input": input});
        self.assistant(session, message, None, vec![block], None);
    }

    /// A `stream_event` line holding `event`.
    pub fn stream_event(&mut self, session: Option<&str>, event: Value) {
        self.line(&json!({"type": "stream_event", "event": event, "parent_tool_use_id": null, "session_id": session}));
    }

    /// A `result` line: the turn's outcome, with the CLI's own members in `members` (`usage`,
    /// `duration_ms`, `result`, `num_turns`, `total_cost_usd` only where the CLI reports one).
    pub fn result(
        &mut self,
        session: Option<&str>,
        is_error: bool,
        subtype: &str,
        members: Map<String, Value>,
    ) {
        let mut o = Map::new();
        o.insert("type".into(), "result".into());
        o.insert("subtype".into(), subtype.into());
        o.insert("is_error".into(), is_error.into());
        o.extend(members);
        o.insert("session_id".into(), json!(session));
        self.line(&Value::Object(o));
    }

    /// A system line of `subtype` (a mapped one: `informational`, `api_retry`, …).
    pub fn system(&mut self, session: Option<&str>, subtype: &str, members: Value) {
        let mut v = json!({"type": "system", "subtype": subtype, "session_id": session});
        if let (Some(o), Value::Object(m)) = (v.as_object_mut(), members) {
            o.extend(m);
        }
        self.line(&v);
    }
}

/// Delta text of a dialect that streams assistant text in pieces, written as the partial-message
/// events of stream-json (so the envelope has live `text.delta` events and one `text` per
/// message, assembled once: never doubled).
#[derive(Debug, Default)]
pub struct DeltaText {
    /// The open message's id.
    open: Option<String>,
    /// Messages opened so far (for ids).
    count: u64,
    /// The kind of the open block (`text` or `thinking`).
    block: &'static str,
}

impl DeltaText {
    /// Write one piece of text (`thinking` when it is reasoning), opening a message (id made
    /// from `prefix`) or a block when none is open.
    pub fn piece(
        &mut self,
        e: &mut Emit<'_>,
        session: Option<&str>,
        prefix: &str,
        model: Option<&str>,
        text: &str,
        thinking: bool,
    ) {
        let block = if thinking { "thinking" } else { "text" };
        if self.open.is_some() && self.block != block {
            // One block per message: a new kind of text starts a new message.
            self.close(e, session);
        }
        if self.open.is_none() {
            self.count += 1;
            let id = format!("{prefix}-{}", self.count);
            e.stream_event(
                session,
                json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": model, "content": []}}),
            );
            let start = if thinking {
                json!({"type": "thinking", "thinking": ""})
            } else {
                json!({"type": "text", "text": ""})
            };
            e.stream_event(
                session,
                json!({"type": "content_block_start", "index": 0, "content_block": start}),
            );
            self.open = Some(id);
            self.block = block;
        }
        let delta = if thinking {
            json!({"type": "thinking_delta", "thinking": text})
        } else {
            json!({"type": "text_delta", "text": text})
        };
        e.stream_event(
            session,
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        );
    }

    /// Whether a message is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// End the open message, if any (its text is written once, from the pieces).
    pub fn close(&mut self, e: &mut Emit<'_>, session: Option<&str>) {
        if self.open.take().is_some() {
            e.stream_event(session, json!({"type": "content_block_stop", "index": 0}));
            e.stream_event(session, json!({"type": "message_stop"}));
        }
    }
}
