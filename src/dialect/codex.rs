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
//!   line: a digest of its bytes) are skipped; duplicate `id` keys in one item (web_search) read as the last one.
//! - `turn.failed` → an error `result`; `error` "Reconnecting… n/m" → `api_retry`, any other
//!   `error` → `stream.error`.

use std::collections::{HashMap, HashSet};

use simd_json::prelude::*;

use super::emit::{Json, Obj, ObjWith, Raw, With};
use super::{Emit, Reader, n, object, s, string};
use crate::json::{Out, Val, get};

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
    fn of(u: Val<'_, '_>) -> Total {
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

    /// The members of an envelope usage object (stream-json names).
    fn usage(self, w: &mut Obj<'_>) {
        w.m("input_tokens", self.input.saturating_sub(self.cached))
            .m("cache_read_input_tokens", self.cached)
            .m("cache_creation_input_tokens", self.cache_write)
            .m("output_tokens", self.output)
            .m("reasoning_output_tokens", self.reasoning);
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
    /// Item ids completed (with a digest of the line that completed them), for re-emits.
    completed: HashMap<String, u64>,
    turns: u64,
    messages: u64,
}

/// The members `keys` of `item` that it has, as an object.
fn pick<'a>(item: Val<'a, 'a>, keys: &'a [&'a str]) -> impl Json + 'a {
    ObjWith(move |w: &mut Obj<'_>| {
        for k in keys {
            if let Some(v) = get(item, k) {
                w.m(k, v);
            }
        }
    })
}

/// Write the tool call of a tool-like item (`false`: a message-like one, nothing written).
fn write_call(item: Val<'_, '_>, sid: Option<&str>, id: &str, e: &mut Emit<'_>) -> bool {
    let Some(kind) = s(item, "type") else {
        return false;
    };
    let message = format!("{id}.call");
    let mut call = |name: &str, input: &dyn Json| e.tool_use(sid, &message, id, name, input);
    match kind {
        "command_execution" => call(kind, &pick(item, &["command"])),
        "file_change" => call(kind, &pick(item, &["changes"])),
        "mcp_tool_call" => {
            let name = format!(
                "mcp__{}__{}",
                s(item, "server").unwrap_or(""),
                s(item, "tool").unwrap_or("")
            );
            match get(item, "arguments") {
                Some(a) => call(&name, &a),
                None => call(&name, &Raw(b"{}")),
            }
        }
        "web_search" => call(kind, &pick(item, &["query", "action"])),
        "todo_list" => call(kind, &pick(item, &["items"])),
        "collab_tool_call" => {
            let name = s(item, "tool").unwrap_or(kind);
            call(
                name,
                &pick(item, &["prompt", "sender_thread_id", "receiver_thread_ids"]),
            )
        }
        _ => return false,
    }
    true
}

/// Whether `item` is tool-like (see [`write_call`]).
fn is_call(item: Val<'_, '_>) -> bool {
    matches!(
        s(item, "type"),
        Some(
            "command_execution"
                | "file_change"
                | "mcp_tool_call"
                | "web_search"
                | "todo_list"
                | "collab_tool_call"
        )
    )
}

/// Write the result of a finished tool-like item: content, `is_error` as Codex says, details.
fn write_result(item: Val<'_, '_>, sid: Option<&str>, id: &str, e: &mut Emit<'_>) {
    let status = s(item, "status");
    let is_error = matches!(status, Some("failed" | "declined"));
    let kind = s(item, "type").unwrap_or("");
    let mcp = get(item, "result").filter(|r| r.as_object().is_some());
    let details = ObjWith(|w: &mut Obj<'_>| {
        for k in [
            "status",
            "exit_code",
            "error",
            "agents_states",
            "action",
            "items",
        ] {
            if let Some(v) = get(item, k) {
                w.m(k, v);
            }
        }
        if kind == "mcp_tool_call"
            && let Some(sc) = mcp.and_then(|r| get(r, "structured_content"))
        {
            w.m("structured_content", sc);
        }
    });
    let lines = |sep: &dyn Fn(Val<'_, '_>, &mut String), key: &str| {
        let mut t = String::new();
        let all = get(item, key).and_then(|a| a.as_array().map(|a| a.iter().collect::<Vec<_>>()));
        for (i, c) in all
            .into_iter()
            .flatten()
            .filter(|c| c.as_object().is_some())
            .enumerate()
        {
            if i > 0 {
                t.push('\n');
            }
            sep(c, &mut t);
        }
        t
    };
    match kind {
        "command_execution" => {
            let out = s(item, "aggregated_output").unwrap_or("");
            e.tool_result(sid, id, &out, is_error, Some(&details));
        }
        "file_change" => {
            let t = lines(
                &|c, t| {
                    t.push_str(s(c, "kind").unwrap_or("?"));
                    t.push(' ');
                    t.push_str(s(c, "path").unwrap_or("?"));
                },
                "changes",
            );
            e.tool_result(sid, id, &t, is_error, Some(&details));
        }
        "mcp_tool_call" => {
            let content = mcp.and_then(|r| get(r, "content")).filter(|c| !c.is_null());
            let err = get(item, "error").filter(|x| !x.is_null());
            match (content, err) {
                (Some(c), _) => e.tool_result(sid, id, &c, is_error, Some(&details)),
                (_, Some(x)) => {
                    let msg = get(x, "message").and_then(string).unwrap_or("");
                    e.tool_result(sid, id, &msg, is_error, Some(&details))
                }
                _ => e.tool_result(sid, id, &"", is_error, Some(&details)),
            }
        }
        "web_search" => {
            let q = s(item, "query").unwrap_or("");
            e.tool_result(sid, id, &q, is_error, Some(&details));
        }
        "todo_list" => {
            let t = lines(
                &|i, t| {
                    let done = get(i, "completed").and_then(|x| x.as_bool()) == Some(true);
                    t.push_str(if done { "[x] " } else { "[ ] " });
                    t.push_str(s(i, "text").unwrap_or(""));
                },
                "items",
            );
            e.tool_result(sid, id, &t, is_error, Some(&details));
        }
        _ => e.tool_result(sid, id, &"", is_error, Some(&details)),
    }
}

/// A digest of the line that carries an item, to tell a re-emit from a changed item.
fn digest(raw: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0x38).hash_one(raw)
}

impl Codex {
    fn item(&mut self, t: &str, item: Val<'_, '_>, raw: &[u8], e: &mut Emit<'_>) {
        let Some(id) = s(item, "id") else {
            e.violation(format!("the {t} line has no \"item.id\""));
            return e.skip("an item without an id");
        };
        let kind = s(item, "type").unwrap_or("");
        let sid = self.thread.clone();
        let sid = sid.as_deref();
        if is_call(item) {
            match t {
                "item.started" => {
                    if self.called.insert(id.to_owned()) {
                        write_call(item, sid, id, e);
                    } else {
                        e.skip("the item started again (re-emitted)");
                    }
                }
                "item.updated" => {
                    e.skip("an update of a running item: its result comes with item.completed")
                }
                _ => {
                    let d = digest(raw);
                    if self.completed.get(id) == Some(&d) {
                        return e.skip("the item was completed before (re-emitted)");
                    }
                    if self.completed.insert(id.to_owned(), d).is_some() {
                        // Completed again with other content: the call stands, the result is new.
                        e.violation(format!(
                            "item {id} was completed twice with different content"
                        ));
                    }
                    if self.called.insert(id.to_owned()) {
                        write_call(item, sid, id, e);
                    }
                    write_result(item, sid, id, e);
                }
            }
            return;
        }
        if t != "item.completed" {
            return e.skip("the item's content comes with item.completed");
        }
        let d = digest(raw);
        if self.completed.insert(id.to_owned(), d) == Some(d) {
            return e.skip("the item was completed before (re-emitted)");
        }
        let text = s(item, "text");
        match kind {
            "agent_message" | "plan" => {
                let Some(text) = text else {
                    e.violation(format!("the {kind} item has no \"text\""));
                    return e.skip("a message without text");
                };
                let phase = get(item, "phase");
                let block = With(|o: &mut Out| {
                    o.raw(b"[");
                    super::emit::obj(o, |b| {
                        b.m("type", "text").m("text", text);
                        if let Some(p) = phase {
                            b.m("phase", p);
                        }
                    });
                    o.raw(b"]");
                });
                self.messages += 1;
                e.assistant(sid, id, None, &block, None);
            }
            "reasoning" => {
                let block = super::emit::TextBlock {
                    text: text.unwrap_or(""),
                    thinking: true,
                };
                e.assistant(sid, id, None, &block, None);
            }
            "error" => e.system(sid, "informational", |w| {
                w.m("level", "error")
                    .m("content", s(item, "message").unwrap_or(""))
                    .m("item_id", id);
            }),
            // Undocumented item types: the line kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn turn_completed(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        self.turns += 1;
        let sid = self.thread.clone();
        let sid = sid.as_deref();
        let Some(u) = object(v, "usage") else {
            e.violation("the turn.completed line has no \"usage\"");
            return e.result(sid, false, "success", |_| {});
        };
        let now = Total::of(u);
        let key = self.thread.clone().unwrap_or_default();
        let prev = self.totals.insert(key, now).unwrap_or_default();
        let used = now.since(prev);
        let usage = ObjWith(|w: &mut Obj<'_>| {
            used.usage(w);
            w.m("codex_thread_total", u);
        });
        let message = format!(
            "{}.turn-{}",
            self.thread.as_deref().unwrap_or("codex"),
            self.turns
        );
        e.assistant(sid, &message, None, &Raw(b"[]"), Some(&usage));
        e.result(sid, false, "success", |w| {
            w.m("usage", &usage).m("num_turns", 1u64);
        });
    }
}

impl Reader for Codex {
    fn line(&mut self, v: Val<'_, '_>, raw: &[u8], e: &mut Emit<'_>) {
        let t = s(v, "type").unwrap_or("");
        match t {
            "thread.started" => {
                match s(v, "thread_id") {
                    Some(id) => self.thread = Some(id.to_owned()),
                    None => e.violation("the thread.started line has no \"thread_id\""),
                }
                let thread = self.thread.as_deref();
                e.init(None, |w| {
                    w.m("session_id", thread);
                });
            }
            "turn.started" => e.skip("a turn started"),
            "item.started" | "item.updated" | "item.completed" => match object(v, "item") {
                Some(item) => self.item(t, item, raw, e),
                None => {
                    e.violation(format!("the {t} line has no \"item\""));
                    e.skip("an item line without its item");
                }
            },
            "turn.completed" => self.turn_completed(v, e),
            "turn.failed" => {
                self.turns += 1;
                let msg = get(v, "error")
                    .and_then(|x| get(x, "message"))
                    .and_then(string)
                    .unwrap_or("");
                let sid = self.thread.as_deref();
                // A failed model turn (the API refused or the stream broke): `error`, as
                // Claude Code's outcome for a failed API call.
                e.result(sid, true, "error", |w| {
                    w.m(
                        "errors",
                        With(|o: &mut Out| {
                            o.raw(b"[");
                            o.str(msg);
                            o.raw(b"]");
                        }),
                    )
                    .m("num_turns", 1u64);
                });
            }
            "error" => {
                let msg = s(v, "message").unwrap_or("");
                let sid = self.thread.as_deref();
                if let Some(rest) = msg.strip_prefix("Reconnecting...") {
                    let (a, m) = rest.trim().split_once('/').unwrap_or(("", ""));
                    e.system(sid, "api_retry", |w| {
                        w.m("attempt", a.trim().parse::<u64>().ok())
                            .m("max_retries", m.trim().parse::<u64>().ok())
                            .m("error", msg);
                    });
                } else {
                    let event = ObjWith(|w: &mut Obj<'_>| {
                        w.m("type", "error").m(
                            "error",
                            ObjWith(|x: &mut Obj<'_>| {
                                x.m("message", msg);
                            }),
                        );
                    });
                    e.stream_event(sid, &event);
                }
            }
            "item.plan.delta" => e.skip("a plan delta: the plan comes whole in its item"),
            "request_user_input" => e.system(self.thread.as_deref(), "informational", |w| {
                w.m("level", "info")
                    .m("content", "the model asked for user input")
                    .m("call_id", get(v, "call_id"))
                    .m("questions", get(v, "questions"));
            }),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }
}
