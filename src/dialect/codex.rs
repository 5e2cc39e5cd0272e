//! OpenAI Codex, `codex exec --json`: `thread.started`, `turn.started`, `item.started` /
//! `item.updated` / `item.completed` of every item type, `turn.completed` with usage,
//! `turn.failed`, `error` (see `openai/codex:codex-rs/exec/src/exec_events.rs`).
//!
//! - `thread.started` → `system/init` (the thread id is the session id; Codex names no model,
//!   cwd or version in the stream).
//! - `agent_message` → text, `reasoning` → thinking, `plan` → text; `command_execution`,
//!   `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `collab_tool_call` → one tool
//!   call per item id (at `item.started`, or at `item.completed` when it never started) and its
//!   result at `item.completed` (`is_error` when the item's status is `failed` or `declined`:
//!   what Codex says; the exit code kept in `structured`). An `error` item → `informational`.
//! - `turn.completed` → the turn's usage (one model response per turn: Codex reports no finer
//!   grain) and a `result`. Its `usage` is the **thread's running total** (across `exec resume`
//!   too): each turn's usage is the difference from the thread's previous total in the stream,
//!   never the total again; the CLI's figures are kept in the usage's `codex_thread_total`.
//!   Codex's `input_tokens` includes the cached ones: the envelope's `input_tokens` is the
//!   uncached part, `cache_read_input_tokens` the cached (their sum is Codex's figure).
//! - Re-emitted items (an `item.completed` again for an id already completed, with the same
//!   content) are skipped; duplicate `id` keys in one item (web_search) read as the last one.
//! - `turn.failed` → an error `result`; `error` "Reconnecting… n/m" → `api_retry`, any other
//!   `error` → `stream.error`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::{Emit, Reader, n, s};

/// The running total of one thread's `turn.completed.usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Total {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
    cache_write: u64,
}

impl Total {
    fn of(u: &Map<String, Value>) -> Total {
        Total {
            input: n(u, "input_tokens"),
            cached: n(u, "cached_input_tokens"),
            output: n(u, "output_tokens"),
            reasoning: n(u, "reasoning_output_tokens"),
            cache_write: n(u, "cache_write_input_tokens"),
        }
    }

    /// What was used since `prev` (the totals of a new thread count whole when one went down).
    fn since(self, prev: Total) -> Total {
        let down = self.input < prev.input || self.output < prev.output;
        if down {
            return self;
        }
        Total {
            input: self.input - prev.input,
            cached: self.cached.saturating_sub(prev.cached),
            output: self.output - prev.output,
            reasoning: self.reasoning.saturating_sub(prev.reasoning),
            cache_write: self.cache_write.saturating_sub(prev.cache_write),
        }
    }

    /// As an envelope usage object (stream-json names).
    fn usage(self) -> Value {
        json!({
            "input_tokens": self.input.saturating_sub(self.cached),
            "cache_read_input_tokens": self.cached,
            "cache_creation_input_tokens": self.cache_write,
            "output_tokens": self.output,
            "reasoning_output_tokens": self.reasoning,
        })
    }
}

/// See the module docs.
#[derive(Default)]
pub struct Codex {
    thread: Option<String>,
    /// Per thread: the last `turn.completed` total.
    totals: HashMap<String, Total>,
    /// Item ids whose tool call was written.
    called: HashSet<String>,
    /// Item ids completed (with what they said), for re-emits.
    completed: HashMap<String, u64>,
    turns: u64,
    messages: u64,
}

/// The tool name and input of a tool-like item, or `None` for a message-like one.
fn call_of(item: &Map<String, Value>) -> Option<(String, Value)> {
    let kind = s(item, "type")?;
    let pick = |keys: &[&str]| {
        let mut o = Map::new();
        for k in keys {
            if let Some(v) = item.get(*k) {
                o.insert((*k).to_owned(), v.clone());
            }
        }
        Value::Object(o)
    };
    Some(match kind {
        "command_execution" => (kind.into(), pick(&["command"])),
        "file_change" => (kind.into(), pick(&["changes"])),
        "mcp_tool_call" => {
            let name = format!(
                "mcp__{}__{}",
                s(item, "server").unwrap_or(""),
                s(item, "tool").unwrap_or("")
            );
            let input = item.get("arguments").cloned().unwrap_or(json!({}));
            (name, input)
        }
        "web_search" => (kind.into(), pick(&["query", "action"])),
        "todo_list" => (kind.into(), pick(&["items"])),
        "collab_tool_call" => {
            let name = s(item, "tool").unwrap_or(kind).to_owned();
            (
                name,
                pick(&["prompt", "sender_thread_id", "receiver_thread_ids"]),
            )
        }
        _ => return None,
    })
}

/// The result of a finished tool-like item: content, `is_error` as Codex says, details.
fn result_of(item: &Map<String, Value>) -> (Value, bool, Value) {
    let status = s(item, "status");
    let is_error = matches!(status, Some("failed" | "declined"));
    let mut details = Map::new();
    for k in [
        "status",
        "exit_code",
        "error",
        "agents_states",
        "action",
        "items",
    ] {
        if let Some(v) = item.get(k) {
            details.insert(k.into(), v.clone());
        }
    }
    let content = match s(item, "type").unwrap_or("") {
        "command_execution" => json!(s(item, "aggregated_output").unwrap_or("")),
        "file_change" => {
            let changes = item.get("changes").and_then(Value::as_array);
            let lines: Vec<String> = changes
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .map(|c| {
                    format!(
                        "{} {}",
                        s(c, "kind").unwrap_or("?"),
                        s(c, "path").unwrap_or("?")
                    )
                })
                .collect();
            json!(lines.join("\n"))
        }
        "mcp_tool_call" => {
            let r = item.get("result").and_then(Value::as_object);
            if let Some(sc) = r.and_then(|r| r.get("structured_content")) {
                details.insert("structured_content".into(), sc.clone());
            }
            match (r.and_then(|r| r.get("content")), item.get("error")) {
                (Some(c), _) if !c.is_null() => c.clone(),
                (_, Some(e)) if !e.is_null() => {
                    json!(e.get("message").and_then(Value::as_str).unwrap_or(""))
                }
                _ => json!(""),
            }
        }
        "web_search" => json!(s(item, "query").unwrap_or("")),
        "todo_list" => {
            let items = item.get("items").and_then(Value::as_array);
            let lines: Vec<String> = items
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .map(|i| {
                    let done = i.get("completed").and_then(Value::as_bool) == Some(true);
                    format!(
                        "[{}] {}",
                        if done { "x" } else { " " },
                        s(i, "text").unwrap_or("")
                    )
                })
                .collect();
            json!(lines.join("\n"))
        }
        _ => json!(""),
    };
    (content, is_error, Value::Object(details))
}

/// A digest of an item, to tell a re-emit from a changed item.
fn digest(item: &Map<String, Value>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(item).unwrap_or_default().hash(&mut h);
    h.finish()
}

impl Codex {
    fn item(&mut self, t: &str, item: &Map<String, Value>, e: &mut Emit<'_>) {
        let Some(id) = s(item, "id").map(str::to_owned) else {
            e.violation(format!("the {t} line has no \"item.id\""));
            return e.skip("an item without an id");
        };
        let kind = s(item, "type").unwrap_or("");
        let sid = self.thread.clone();
        let sid = sid.as_deref();
        if let Some((name, input)) = call_of(item) {
            match t {
                "item.started" => {
                    if self.called.insert(id.clone()) {
                        e.tool_use(sid, &format!("{id}.call"), &id, &name, input);
                    } else {
                        e.skip("the item started again (re-emitted)");
                    }
                }
                "item.updated" => {
                    e.skip("an update of a running item: its result comes with item.completed")
                }
                _ => {
                    let d = digest(item);
                    if self.completed.get(&id) == Some(&d) {
                        return e.skip("the item was completed before (re-emitted)");
                    }
                    if self.completed.insert(id.clone(), d).is_some() {
                        // Completed again with other content: the call stands, the result is new.
                        e.violation(format!(
                            "item {id} was completed twice with different content"
                        ));
                    }
                    if self.called.insert(id.clone()) {
                        e.tool_use(sid, &format!("{id}.call"), &id, &name, input);
                    }
                    let (content, is_error, details) = result_of(item);
                    e.tool_result(sid, &id, content, is_error, Some(details));
                }
            }
            return;
        }
        if t != "item.completed" {
            return e.skip("the item's content comes with item.completed");
        }
        let d = digest(item);
        if self.completed.insert(id.clone(), d) == Some(d) {
            return e.skip("the item was completed before (re-emitted)");
        }
        let text = s(item, "text");
        match kind {
            "agent_message" | "plan" => {
                let Some(text) = text else {
                    e.violation(format!("the {kind} item has no \"text\""));
                    return e.skip("a message without text");
                };
                let mut block = json!({"type": "text", "text": text});
                if let Some(p) = item.get("phase") {
                    block["phase"] = p.clone();
                }
                self.messages += 1;
                e.assistant(sid, &id, None, vec![block], None);
            }
            "reasoning" => {
                let block = json!({"type": "thinking", "thinking": text.unwrap_or("")});
                e.assistant(sid, &id, None, vec![block], None);
            }
            "error" => e.system(
                sid,
                "informational",
                json!({"level": "error", "content": s(item, "message").unwrap_or(""), "item_id": id}),
            ),
            // Undocumented item types: the line kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn turn_completed(&mut self, v: &Map<String, Value>, e: &mut Emit<'_>) {
        self.turns += 1;
        let sid = self.thread.clone();
        let sid = sid.as_deref();
        let Some(u) = v.get("usage").and_then(Value::as_object) else {
            e.violation("the turn.completed line has no \"usage\"");
            return e.result(sid, false, "success", Map::new());
        };
        let now = Total::of(u);
        let key = self.thread.clone().unwrap_or_default();
        let prev = self.totals.insert(key, now).unwrap_or_default();
        let used = now.since(prev);
        let mut usage = used.usage();
        usage["codex_thread_total"] = Value::Object(u.clone());
        let message = format!(
            "{}.turn-{}",
            self.thread.as_deref().unwrap_or("codex"),
            self.turns
        );
        e.assistant(sid, &message, None, Vec::new(), Some(usage.clone()));
        let mut m = Map::new();
        m.insert("usage".into(), usage);
        m.insert("num_turns".into(), json!(1));
        e.result(sid, false, "success", m);
    }
}

impl Reader for Codex {
    fn line(&mut self, v: Map<String, Value>, e: &mut Emit<'_>) {
        let t = s(&v, "type").unwrap_or("").to_owned();
        match t.as_str() {
            "thread.started" => {
                match s(&v, "thread_id") {
                    Some(id) => self.thread = Some(id.to_owned()),
                    None => e.violation("the thread.started line has no \"thread_id\""),
                }
                let mut m = Map::new();
                m.insert("session_id".into(), json!(self.thread));
                e.init(None, m);
            }
            "turn.started" => e.skip("a turn started"),
            "item.started" | "item.updated" | "item.completed" => {
                match v.get("item").and_then(Value::as_object) {
                    Some(item) => self.item(&t, item, e),
                    None => {
                        e.violation(format!("the {t} line has no \"item\""));
                        e.skip("an item line without its item");
                    }
                }
            }
            "turn.completed" => self.turn_completed(&v, e),
            "turn.failed" => {
                self.turns += 1;
                let msg = v
                    .get("error")
                    .and_then(|x| x.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let mut m = Map::new();
                m.insert("errors".into(), json!([msg]));
                m.insert("num_turns".into(), json!(1));
                let sid = self.thread.clone();
                e.result(sid.as_deref(), true, "error_during_execution", m);
            }
            "error" => {
                let msg = s(&v, "message").unwrap_or("");
                let sid = self.thread.clone();
                if let Some(rest) = msg.strip_prefix("Reconnecting...") {
                    let (a, m) = rest.trim().split_once('/').unwrap_or(("", ""));
                    e.system(
                        sid.as_deref(),
                        "api_retry",
                        json!({"attempt": a.trim().parse::<u64>().ok(), "max_retries": m.trim().parse::<u64>().ok(), "error": msg}),
                    );
                } else {
                    e.stream_event(
                        sid.as_deref(),
                        json!({"type": "error", "error": {"message": msg}}),
                    );
                }
            }
            "item.plan.delta" => e.skip("a plan delta: the plan comes whole in its item"),
            "request_user_input" => e.system(
                self.thread.clone().as_deref(),
                "informational",
                json!({"level": "info", "content": "the model asked for user input", "call_id": v.get("call_id"), "questions": v.get("questions")}),
            ),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }
}
