//! OpenCode, `opencode run --format json`: every line `{type, timestamp (epoch ms), sessionID,
//! …}` with a whole `part` (`anomalyco/opencode:packages/opencode/src/cli/cmd/run.ts`, the
//! `emit()` helper).
//!
//! - The stream has no init event: its first line also gives a `session.init` (session id from
//!   `sessionID`; OpenCode names no model or version in the stream).
//! - `step_start` (a model step) → `skipped`; `text` → text, `reasoning` → thinking, both of the
//!   step's message (`part.messageID`).
//! - `tool_use` arrives only when the tool finished or failed: its call and its result at once
//!   (`is_error` when `state.status` is `error`; `title`, `metadata` and times kept in
//!   `structured`).
//! - `step_finish` → the step's usage (`tokens.input` is the uncached input as OpenCode counts it,
//!   `cache.read`/`cache.write` the cached, `reasoning` kept) and its cost. A step whose `reason`
//!   is not `tool-calls` ends the turn: a `result` with the turn's tokens and the run's cost so
//!   far (OpenCode reports USD per step; 0 on subscriptions). A `step_finish` without `reason`
//!   does not end the turn by itself: the end of the input, or `done`, does.
//! - `error` → `stream.error`; a turn that ended with it is an error `result`.
//! - `done` (newest releases) ends the turn if a step is still open.

use serde_json::{Map, Value, json};

use super::{Emit, Reader, n, s};

/// See the module docs.
#[derive(Default)]
pub struct OpenCode {
    session: Option<String>,
    init_done: bool,
    /// Tokens of the steps since the last result: input, output, cache read, cache write,
    /// reasoning.
    open: [u64; 5],
    /// Steps since the last result.
    steps: u64,
    /// The run's cost so far (USD), when some step gave one.
    cost: Option<f64>,
    /// The error of the current turn, if one came.
    error: Option<String>,
}

impl OpenCode {
    fn result(&mut self, e: &mut Emit<'_>) {
        let [input, output, read, write, reasoning] = std::mem::take(&mut self.open);
        let mut m = Map::new();
        m.insert(
            "usage".into(),
            json!({"input_tokens": input, "output_tokens": output, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "reasoning_output_tokens": reasoning}),
        );
        m.insert("num_turns".into(), json!(std::mem::take(&mut self.steps)));
        if let Some(c) = self.cost {
            m.insert("total_cost_usd".into(), json!(c));
        }
        let sid = self.session.clone();
        match self.error.take() {
            Some(err) => {
                m.insert("errors".into(), json!([err]));
                e.result(sid.as_deref(), true, "error_during_execution", m);
            }
            None => e.result(sid.as_deref(), false, "success", m),
        }
    }

    fn step_finish(&mut self, part: &Map<String, Value>, e: &mut Emit<'_>) {
        let sid = self.session.clone();
        let sid = sid.as_deref();
        let Some(msg) = s(part, "messageID").map(str::to_owned) else {
            e.violation("the step_finish line has no \"part.messageID\"");
            return e.skip("a step without its message id");
        };
        let empty = Map::new();
        let tokens = part.get("tokens").and_then(Value::as_object);
        if tokens.is_none() {
            e.violation("the step_finish line has no \"part.tokens\"");
        }
        let t = tokens.unwrap_or(&empty);
        let cache = t.get("cache").and_then(Value::as_object).unwrap_or(&empty);
        let step = [
            n(t, "input"),
            n(t, "output"),
            n(cache, "read"),
            n(cache, "write"),
            n(t, "reasoning"),
        ];
        for (a, b) in self.open.iter_mut().zip(step) {
            *a += b;
        }
        self.steps += 1;
        let mut usage = json!({"input_tokens": step[0], "output_tokens": step[1], "cache_read_input_tokens": step[2], "cache_creation_input_tokens": step[3], "reasoning_output_tokens": step[4]});
        if let Some(c) = part.get("cost").and_then(Value::as_f64) {
            usage["cost_usd"] = json!(c);
            let sum = self.cost.unwrap_or(0.0) + c;
            // Summed in binary floating point: rounded to the nano-dollar, as no price is finer.
            self.cost = Some((sum * 1e9).round() / 1e9);
        }
        let reason = s(part, "reason");
        // One message can hold several steps: each step's usage is its own (keyed by the
        // step_finish part's id).
        let id = match s(part, "id") {
            Some(p) => format!("{msg}/{p}"),
            None => format!("{msg}/step-{}", self.steps),
        };
        let mut line = json!({"type": "assistant", "message": {"id": id, "type": "message", "role": "assistant", "model": null, "content": [], "stop_reason": reason.unwrap_or("end_turn"), "usage": usage}, "parent_tool_use_id": null, "session_id": sid});
        if reason.is_none() {
            line["message"]["stop_reason"] = Value::Null;
        }
        e.line(&line);
        if reason.is_some_and(|r| r != "tool-calls") {
            self.result(e);
        }
    }
}

impl Reader for OpenCode {
    fn line(&mut self, v: Map<String, Value>, e: &mut Emit<'_>) {
        match s(&v, "sessionID") {
            Some(id) => self.session = Some(id.to_owned()),
            None => e.violation("the line has no \"sessionID\""),
        }
        let sid = self.session.clone();
        let sid = sid.as_deref();
        if !self.init_done {
            self.init_done = true;
            let mut m = Map::new();
            m.insert("session_id".into(), json!(sid));
            e.init(None, m);
        }
        let t = s(&v, "type").unwrap_or("");
        let empty = Map::new();
        let part = v.get("part").and_then(Value::as_object);
        if part.is_none()
            && matches!(
                t,
                "step_start" | "text" | "reasoning" | "tool_use" | "step_finish"
            )
        {
            e.violation(format!("the {t} line has no \"part\""));
        }
        let part = part.unwrap_or(&empty);
        let msg = s(part, "messageID")
            .unwrap_or("opencode-message")
            .to_owned();
        match t {
            "step_start" => e.skip("a model step starts"),
            "text" | "reasoning" => {
                let text = s(part, "text").unwrap_or("");
                let block = if t == "text" {
                    json!({"type": "text", "text": text})
                } else {
                    json!({"type": "thinking", "thinking": text})
                };
                e.assistant(sid, &msg, None, vec![block], None);
            }
            "tool_use" => {
                let Some(id) = s(part, "callID") else {
                    e.violation("the tool_use line has no \"part.callID\"");
                    return e.skip("a tool call without id");
                };
                let name = s(part, "tool").unwrap_or("");
                let state = part
                    .get("state")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty);
                let input = state.get("input").cloned().unwrap_or(json!({}));
                e.tool_use(sid, &msg, id, name, input);
                let status = s(state, "status");
                let is_error = status == Some("error");
                let content = match (state.get("output"), state.get("error")) {
                    (Some(o), _) if !o.is_null() => o.clone(),
                    (_, Some(x)) => x.clone(),
                    _ => json!(""),
                };
                let mut details = Map::new();
                for k in ["status", "title", "metadata", "time"] {
                    if let Some(x) = state.get(k) {
                        details.insert(k.into(), x.clone());
                    }
                }
                e.tool_result(sid, id, content, is_error, Some(Value::Object(details)));
            }
            "step_finish" => self.step_finish(part, e),
            "error" => {
                let err = v.get("error").cloned().unwrap_or(Value::Null);
                let msg = err
                    .get("data")
                    .and_then(|d| d.get("message"))
                    .and_then(Value::as_str)
                    .or_else(|| err.get("name").and_then(Value::as_str))
                    .unwrap_or("")
                    .to_owned();
                self.error = Some(msg);
                e.stream_event(sid, json!({"type": "error", "error": err}));
            }
            "done" => {
                if self.steps > 0 || self.error.is_some() {
                    self.result(e);
                } else {
                    e.skip("the run is done (its last turn already ended)");
                }
            }
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        if self.steps > 0 || self.error.is_some() {
            self.result(e);
        }
    }
}
