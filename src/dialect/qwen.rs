//! Qwen Code, `qwen -p … --output-format stream-json [--include-partial-messages]`: Claude's
//! stream-json with small changes (`QwenLM/qwen-code:packages/cli/src/nonInteractive/types.ts`),
//! read as stream-json after these:
//!
//! - the system line's subtype is `init` in current releases and `session_start` in its docs and
//!   older fixtures: both are the run's `system/init`; `qwen_code_version` is the agent's version;
//! - an assistant line holds one content-block type (a new type starts a new line of the same
//!   message id): the normalizer counts the message's usage once by its id;
//! - a failed `result` carries `error` as an object (`{type, message}`), kept under its extra;
//!   when that error is an API failure (`type` `api_error`, or a message `[API Error: …]`) the
//!   turn ended on a failed API call: its subtype is written `error` (so `turn.end.outcome` is
//!   `error`, as Claude Code's for the same failure), Qwen's own kept as `qwen_subtype`;
//! - `stream_event` `tool_progress` (a running tool's progress) is `skipped` with its reason;
//!   `goal_state` (0.24's goal and activity, in its real output, in no documentation) is
//!   `skipped` when no goal is set, else `informational` naming the goal;
//! - an API error arrives as assistant text (`[API Error: 500 …]`): the line gets `error`
//!   (`api_error`), so the envelope has an `api.error` beside its text.
//!
//! - usage counts are OpenAI's (`input_tokens` is the prompt's, cached tokens included, as the
//!   `total_tokens` beside them shows): the envelope's `input_tokens` is the uncached part
//!   (`input_tokens` − `cache_read_input_tokens`), the CLI's figure kept as `qwen_input_tokens`;
//!   each assistant line of one response has its own id, the first ones with zero usage, so
//!   counting once per id counts the response once.
//!
//! Every other line is Claude's shape and passes as it is.

use simd_json::prelude::*;

use super::emit::{Obj, ObjWith, members_removing};
use super::{Emit, Reader, object, s, string};
use crate::json::{Val, get};

/// See the module docs.
#[derive(Default)]
pub struct Qwen;

/// Marks of the lines [`Qwen`] rewrites (any other line passes unparsed).
const REWRITTEN: &[&str] = &[
    "\"cache_read_input_tokens\"",
    "[API Error",
    "\"api_error\"",
    "\"system\"",
    "tool_progress",
    "goal_state",
];

impl Reader for Qwen {
    fn needs(&self, raw: &[u8]) -> bool {
        REWRITTEN
            .iter()
            .any(|m| memchr::memmem::find(raw, m.as_bytes()).is_some())
    }

    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        match s(v, "type").unwrap_or("") {
            "system" if matches!(s(v, "subtype"), Some("init" | "session_start")) => {
                if s(v, "session_id").is_none() {
                    e.violation("the system line has no \"session_id\"");
                }
                let version = s(v, "qwen_code_version");
                // The subtype as Qwen wrote it is kept under extra.
                let sub = get(v, "subtype");
                let members = members_removing(v, &["type", "subtype"]);
                e.init(version, |w| {
                    for (k, x) in &members {
                        w.m(k, *x);
                    }
                    if let Some(sub) = sub {
                        w.m("qwen_subtype", sub);
                    }
                });
            }
            "stream_event"
                if get(v, "event")
                    .and_then(|x| get(x, "type"))
                    .and_then(string)
                    == Some("tool_progress") =>
            {
                e.skip("a running tool's progress (tool_progress)")
            }
            "stream_event"
                if get(v, "event")
                    .and_then(|x| get(x, "type"))
                    .and_then(string)
                    == Some("goal_state") =>
            {
                goal_state(v, e)
            }
            "assistant" => {
                let usage = object(v, "message").and_then(|m| object(m, "usage"));
                let tokens = usage.and_then(uncached);
                let flag = api_error_text(v) && get(v, "error").is_none();
                if tokens.is_none() && !flag {
                    return e.keep();
                }
                e.line(|w| {
                    for (k, x) in members_removing(v, &[]) {
                        match (k, usage, tokens) {
                            ("message", Some(u), Some(t)) => {
                                let m = ObjWith(|w: &mut Obj<'_>| {
                                    for (k, x) in members_removing(x, &[]) {
                                        match k {
                                            "usage" => {
                                                w.m(k, ObjWith(|w: &mut Obj<'_>| rewrite(u, t, w)))
                                            }
                                            _ => w.m(k, x),
                                        };
                                    }
                                });
                                w.m(k, m)
                            }
                            _ => w.m(k, x),
                        };
                    }
                    if flag {
                        w.m("error", "api_error");
                    }
                });
            }
            "result" => {
                let usage = object(v, "usage");
                let tokens = usage.and_then(uncached);
                let api = api_failure(v);
                if tokens.is_none() && !api {
                    return e.keep();
                }
                e.line(|w| {
                    for (k, x) in members_removing(v, &[]) {
                        match (k, usage, tokens) {
                            ("usage", Some(u), Some(t)) => {
                                w.m(k, ObjWith(|w: &mut Obj<'_>| rewrite(u, t, w)))
                            }
                            ("subtype", _, _) if api => w.m(k, "error"),
                            _ => w.m(k, x),
                        };
                    }
                    if api && let Some(sub) = get(v, "subtype") {
                        w.m("qwen_subtype", sub);
                    }
                });
            }
            _ => e.keep(),
        }
    }
}

/// `stream_event` `goal_state` (`{v, goal, activity}`): no goal → `skipped`; a goal →
/// `informational` naming it and the activity.
fn goal_state(v: Val<'_, '_>, e: &mut Emit<'_>) {
    let state = get(v, "event").and_then(|x| get(x, "goal_state"));
    let activity = state.and_then(|g| s(g, "activity")).unwrap_or("unknown");
    let goal = state.and_then(|g| get(g, "goal")).filter(|g| !g.is_null());
    let Some(goal) = goal else {
        return e.skip(&format!("Qwen's goal state: no goal, {activity}"));
    };
    let text = match string(goal) {
        Some(t) => t.to_owned(),
        None => {
            let mut o = crate::json::Out::default();
            o.value(goal);
            String::from_utf8_lossy(&o.buf).into_owned()
        }
    };
    let sid = s(v, "session_id");
    e.system(sid, "informational", |w| {
        w.m("level", "info")
            .m("content", format!("goal: {text} ({activity})").as_str())
            .m("goal_state", state);
    });
}

/// Whether a result line ends its turn on a failed API call: `is_error`, and its `error` is
/// Qwen's API error (`type` `api_error`, or a message `[API Error: …]`).
fn api_failure(v: Val<'_, '_>) -> bool {
    let failed = get(v, "is_error").and_then(|x| x.as_bool()) == Some(true);
    let err = object(v, "error");
    failed
        && err.is_some_and(|x| {
            s(x, "type") == Some("api_error")
                || s(x, "message").is_some_and(|m| m.starts_with("[API Error"))
        })
}

/// Whether an assistant line's message is an API error written as its text.
fn api_error_text(v: Val<'_, '_>) -> bool {
    let blocks = get(v, "message").and_then(|m| get(m, "content"));
    let Some(blocks) = blocks.and_then(|b| b.as_array()) else {
        return false;
    };
    blocks.iter().any(|b| {
        get(b, "text")
            .and_then(string)
            .is_some_and(|t| t.starts_with("[API Error"))
    })
}

/// The CLI's `input_tokens` of usage `u` when it is to be rewritten as its uncached part (see
/// the module docs).
fn uncached(u: Val<'_, '_>) -> Option<u64> {
    let read = get(u, "cache_read_input_tokens")
        .and_then(|x| x.as_u64())
        .unwrap_or(0);
    let input = get(u, "input_tokens").and_then(|x| x.as_u64())?;
    (read != 0 && read <= input).then_some(input)
}

/// The members of usage `u` with `input_tokens` the uncached part of the CLI's `input`, which is
/// kept as `qwen_input_tokens`.
fn rewrite(u: Val<'_, '_>, input: u64, w: &mut Obj<'_>) {
    let read = get(u, "cache_read_input_tokens")
        .and_then(|x| x.as_u64())
        .unwrap_or(0);
    let mut seen = false;
    for (k, x) in members_removing(u, &[]) {
        match k {
            "input_tokens" => w.m(k, input - read),
            "qwen_input_tokens" => {
                seen = true;
                w.m(k, input)
            }
            _ => w.m(k, x),
        };
    }
    if !seen {
        w.m("qwen_input_tokens", input);
    }
}
