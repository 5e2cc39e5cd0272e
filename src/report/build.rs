//! Building the [`Run`] model from envelope events, one event at a time: each type goes to the
//! thread its `parent_tool_use_id` names, results are paired with their calls by id, and every
//! type the report does not draw is counted, so nothing disappears unseen. An event is read
//! through its member index ([`Fields`], as every view and structured sink reads events): only
//! the members drawn are parsed, never the whole event.

use serde_json::Value;

use super::model::{
    Call, Init, Item, Level, Notice, Run, RunEnd, Task, Tokens, ToolResult, TurnEnd, Usage,
};
use crate::envelope::kind;
use crate::json::fields::Fields;

fn s(v: &Fields<'_>, k: &str) -> Option<String> {
    v.str(k).map(std::borrow::Cow::into_owned)
}

fn n(v: &Fields<'_>, k: &str) -> Option<u64> {
    v.u64(k)
}

/// Member `k`, parsed (`Null` when absent).
fn value(v: &Fields<'_>, k: &str) -> Value {
    v.value(k).unwrap_or_default()
}

/// Member `k` when it is `true` (false when absent or anything else).
fn flag(v: &Fields<'_>, k: &str) -> bool {
    v.bool(k).unwrap_or(false)
}

/// The number of elements of member `k` when it is an array.
fn count(v: &Fields<'_>, k: &str) -> usize {
    v.json(k)
        .and_then(|r| serde_json::from_slice::<Vec<serde::de::IgnoredAny>>(r).ok())
        .map_or(0, |a| a.len())
}

/// A JSON value as short text: strings as they are, anything else as compact JSON.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// A tool result's content as text: a string as is; blocks as their text, images and
/// documents described, anything else as JSON.
pub fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let mut out = String::new();
            for b in blocks {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        out.push_str(b.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some(t @ ("image" | "document")) => {
                        let src = b.get("source").unwrap_or(&Value::Null);
                        let media = src.get("media_type").and_then(Value::as_str).unwrap_or("?");
                        let bytes = src.get("bytes").and_then(Value::as_u64);
                        out.push_str(&format!("[{t}: {media}"));
                        if let Some(b) = bytes {
                            out.push_str(&format!(", {b} bytes"));
                        }
                        out.push(']');
                    }
                    _ => out.push_str(&b.to_string()),
                }
            }
            out
        }
        Value::Null => String::new(),
        v => serde_json::to_string_pretty(v).unwrap_or_default(),
    }
}

/// Time of an event: the recorded stamp when the input has times, else its `timestamp`.
fn time_of(v: &Fields<'_>, stamp_us: i64) -> Option<i64> {
    if stamp_us > 0 {
        return Some(stamp_us);
    }
    let t = v.str("timestamp")?;
    let st = humantime::parse_rfc3339_weak(&t).ok()?;
    let d = st.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_micros()).ok()
}

impl Run {
    /// Add one (non-ephemeral) event: its type, `seq`, members and recorded time (0: none).
    pub fn push(&mut self, kind: &str, seq: u64, v: &Fields<'_>, stamp_us: i64) {
        self.events += 1;
        let at = time_of(v, stamp_us);
        if let Some(t) = at {
            self.span_us = Some(match self.span_us {
                Some((a, b)) => (a.min(t), b.max(t)),
                None => (t, t),
            });
        }
        let parent = s(v, "parent_tool_use_id");
        let p = parent.as_deref();
        match kind {
            kind::TEXT => {
                let text = s(v, "text").unwrap_or_default();
                if let Some(e) = s(v, "error") {
                    self.notice(
                        p,
                        seq,
                        Level::Error,
                        kind::API_ERROR,
                        format!("{e}: {text}"),
                    );
                } else {
                    self.thread_mut(p).push(Item::Text { seq, text });
                }
            }
            kind::THINKING => {
                let text = s(v, "thinking");
                let redacted = flag(v, "redacted");
                self.thread_mut(p).push(Item::Thinking {
                    seq,
                    text,
                    redacted,
                });
            }
            kind::USER_TEXT => {
                let synthetic = flag(v, "is_synthetic") || flag(v, "replay");
                let text = s(v, "text").unwrap_or_default();
                self.thread_mut(p).push(Item::User {
                    seq,
                    text,
                    synthetic,
                });
            }
            kind::USER_BLOCK => {
                let text = content_text(&Value::Array(vec![value(v, "block")]));
                self.thread_mut(p).push(Item::User {
                    seq,
                    text,
                    synthetic: true,
                });
            }
            kind::TOOL_CALL => self.call(seq, v, parent, at),
            kind::TOOL_CALL_REVISED => {
                let id = s(v, "tool_use_id").unwrap_or_default();
                if let Some(&i) = self.call_index.get(&id) {
                    self.calls[i].revised.push(value(v, "input"));
                }
                let text = format!(
                    "{} {id}: a later, different input",
                    s(v, "name").unwrap_or_default()
                );
                self.notice(p, seq, Level::Warn, kind, text);
            }
            kind::TOOL_RESULT => self.result(seq, v, parent, at),
            kind::USAGE => {
                let u = Usage {
                    seq,
                    model: s(v, "model"),
                    tokens: Tokens::of(&value(v, "usage")),
                    stop_reason: s(v, "stop_reason"),
                    provisional: flag(v, "provisional"),
                    parent: parent.clone(),
                    at_us: at,
                };
                self.usages.push(u);
                let i = self.usages.len() - 1;
                self.thread_mut(p).push(Item::Usage(i));
            }
            kind::SESSION_INIT => {
                self.inits.push(Init {
                    seq,
                    model: s(v, "model"),
                    cwd: s(v, "cwd"),
                    cli_version: s(v, "cli_version"),
                    agent: s(v, "agent"),
                    permission_mode: s(v, "permission_mode"),
                    tools: count(v, "tools"),
                    session_id: s(v, "session_id"),
                });
                let i = self.inits.len() - 1;
                self.thread_mut(p).push(Item::Init(i));
            }
            kind::TURN_END => {
                let t = TurnEnd {
                    seq,
                    outcome: s(v, "outcome").unwrap_or_else(|| "?".into()),
                    is_error: flag(v, "is_error"),
                    result: s(v, "result"),
                    cost_usd: v.f64("cost_usd"),
                    duration_ms: n(v, "duration_ms"),
                    duration_api_ms: n(v, "duration_api_ms"),
                    num_turns: n(v, "num_turns"),
                    tokens: Tokens::of(&value(v, "usage")),
                    denials: count(v, "permission_denials"),
                    errors: value(v, "errors")
                        .as_array()
                        .map_or(Vec::new(), |a| a.iter().map(plain).collect()),
                    parent: parent.clone(),
                };
                self.turn_ends.push(t);
                let i = self.turn_ends.len() - 1;
                self.thread_mut(p).push(Item::TurnEnd(i));
            }
            kind::RUN_END => self.end = Some(run_end(seq, v)),
            k if k.starts_with("task.") => self.task(k, v),
            kind::API_ERROR => {
                // The CLI writes the error's text as a text block too: shown once, as the notice.
                let text = s(v, "text");
                let items = self.thread_mut(p);
                if let (Some(Item::Text { text: t, .. }), Some(e)) = (items.last(), &text)
                    && t == e
                {
                    items.pop();
                }
                let (level, msg) = notice_of(kind, v).expect("api.error is a notice");
                let items = self.thread_mut(p);
                let said = matches!(items.last(), Some(Item::Notice(n)) if n.kind == kind && n.text == msg);
                if !said {
                    self.notice(p, seq, level, kind, msg);
                }
            }
            _ => match notice_of(kind, v) {
                Some((level, text)) => self.notice(p, seq, level, kind, text),
                None => *self.other.entry(kind.to_owned()).or_default() += 1,
            },
        }
    }

    fn notice(&mut self, parent: Option<&str>, seq: u64, level: Level, kind: &str, text: String) {
        *self.notice_counts.entry(level).or_default() += 1;
        let kind = kind.to_owned();
        self.thread_mut(parent).push(Item::Notice(Notice {
            seq,
            level,
            kind,
            text,
        }));
    }

    /// Whose tool names the calls carry: the agent the last `session.init` named.
    fn dialect(&self) -> crate::tool::Dialect {
        crate::dialect::Dialect::tools_of(self.inits.last().and_then(|i| i.agent.as_deref()))
    }

    fn call(&mut self, seq: u64, v: &Fields<'_>, parent: Option<String>, at: Option<i64>) {
        let id = s(v, "tool_use_id");
        let c = Call {
            seq,
            id: id.clone(),
            name: s(v, "name").unwrap_or_else(|| "?".into()),
            input: value(v, "input"),
            input_error: s(v, "input_error"),
            dialect: self.dialect(),
            parent: parent.clone(),
            at_us: at,
            result: None,
            revised: Vec::new(),
            orphan: false,
        };
        self.calls.push(c);
        let i = self.calls.len() - 1;
        if let Some(id) = id {
            self.call_index.entry(id).or_insert(i);
        }
        self.thread_mut(parent.as_deref()).push(Item::Call(i));
    }

    fn result(&mut self, seq: u64, v: &Fields<'_>, parent: Option<String>, at: Option<i64>) {
        let mut body = content_text(&value(v, "content"));
        if body.is_empty()
            && let Some(st) = v.value("structured").filter(|s| !s.is_null())
        {
            body = content_text(&st);
        }
        let r = ToolResult {
            seq,
            is_error: flag(v, "is_error"),
            exit_code: v.i64("exit_code"),
            body,
            at_us: at,
        };
        let id = s(v, "tool_use_id");
        let paired = id.as_ref().and_then(|id| self.call_index.get(id)).copied();
        match paired {
            Some(i) if self.calls[i].result.is_none() => self.calls[i].result = Some(r),
            _ => {
                // A result without its call (or a second one): shown on its own, never dropped.
                let c = Call {
                    seq,
                    id,
                    name: s(v, "name").unwrap_or_else(|| "?".into()),
                    input: Value::Null,
                    input_error: None,
                    dialect: self.dialect(),
                    parent: parent.clone(),
                    at_us: at,
                    result: Some(r),
                    revised: Vec::new(),
                    orphan: true,
                };
                self.calls.push(c);
                let i = self.calls.len() - 1;
                self.thread_mut(parent.as_deref()).push(Item::Call(i));
            }
        }
    }

    fn task(&mut self, kind: &str, v: &Fields<'_>) {
        let Some(id) = s(v, "tool_use_id") else {
            *self.other.entry(kind.to_owned()).or_default() += 1;
            return;
        };
        let t: &mut Task = self.tasks.entry(id).or_default();
        match kind {
            kind::TASK_STARTED => {
                t.kind = s(v, "subagent_type").or_else(|| s(v, "task_type"));
                t.description = s(v, "description");
            }
            kind::TASK_NOTIFICATION => {
                t.status = s(v, "status");
                t.summary = s(v, "summary");
                if let Some(u) = v.value("usage").filter(|u| !u.is_null()) {
                    t.usage = Some(u);
                }
            }
            _ => {
                if let Some(u) = v.value("usage").filter(|u| !u.is_null()) {
                    t.usage = Some(u);
                }
            }
        }
    }
}

fn run_end(seq: u64, v: &Fields<'_>) -> RunEnd {
    let usage = value(v, "usage");
    let stats = value(v, "stats");
    RunEnd {
        seq,
        cause: s(v, "cause").unwrap_or_default(),
        turns: n(v, "turns"),
        cli_version: s(v, "cli_version"),
        agent: s(v, "agent"),
        tokens: Tokens::of(&usage),
        provisional: usage
            .get("provisional")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        cost_usd: v.f64("cost_usd"),
        api_messages: n(v, "api_messages"),
        tool_calls: n(v, "tool_calls"),
        exit_code: v.i64("exit_code"),
        signal: s(v, "signal"),
        elapsed_ms: n(v, "elapsed_ms"),
        lines: stats.get("lines").and_then(Value::as_u64),
        diagnostics: stats.get("diagnostics").and_then(Value::as_u64),
    }
}

/// The notice an event type gives, if the report shows it as one.
fn notice_of(kind: &str, v: &Fields<'_>) -> Option<(Level, String)> {
    let f = |k: &str| v.value(k).as_ref().map(plain).unwrap_or_default();
    let (level, text) = match kind {
        kind::API_ERROR => (Level::Error, format!("{}: {}", f("error"), f("text"))),
        kind::STREAM_ERROR => (Level::Error, f("error")),
        kind::RUN_ERROR => (Level::Error, format!("{}: {}", f("cause"), f("detail"))),
        kind::POLICY_VIOLATION => (
            Level::Error,
            format!("{} ({}): {}", f("rule"), f("name"), f("detail")),
        ),
        kind::DIAGNOSTIC => (
            Level::Warn,
            format!(
                "line {}: {} ({} bytes): {}",
                f("line"),
                f("kind"),
                f("bytes"),
                f("text")
            ),
        ),
        kind::UNKNOWN => (Level::Warn, format!("{} {}", f("kind"), f("name"))),
        kind::API_RETRY => (
            Level::Warn,
            format!(
                "attempt {}/{} in {} ms: {} {}",
                f("attempt"),
                f("max_retries"),
                f("retry_delay_ms"),
                f("error_status"),
                f("error")
            ),
        ),
        kind::RATE_LIMIT => (
            Level::Warn,
            format!(
                "{} {} resets at {}",
                f("status"),
                f("rate_limit_type"),
                f("resets_at")
            ),
        ),
        kind::PERMISSION_DENIED => (Level::Warn, format!("{}: {}", f("tool_name"), f("message"))),
        kind::STALL => (Level::Warn, format!("no output for {} ms", f("quiet_ms"))),
        kind::MODEL_FALLBACK => (
            Level::Warn,
            format!("{} → {}", f("original_model"), f("fallback_model")),
        ),
        kind::MODEL_REFUSAL => (
            Level::Warn,
            format!("{} refused ({})", f("original_model"), f("trigger")),
        ),
        kind::COMPACT_BOUNDARY => (
            Level::Info,
            format!(
                "compaction ({}), {} tokens before",
                f("trigger"),
                f("pre_tokens")
            ),
        ),
        kind::LINE_REPAIRED => (
            Level::Info,
            format!(
                "line {}: {} surrogate escapes replaced",
                f("line"),
                f("count")
            ),
        ),
        kind::CHILD_STDERR => (Level::Info, f("text")),
        kind::HOOK_RESPONSE if v.i64("exit_code").is_some_and(|c| c != 0) => (
            Level::Warn,
            format!(
                "{} {} exit {}: {}",
                f("hook_event"),
                f("hook_name"),
                f("exit_code"),
                f("stderr")
            ),
        ),
        kind::SESSION_RESET => (Level::Info, format!("new session {}", f("new_session_id"))),
        _ => return None,
    };
    Some((level, text))
}
