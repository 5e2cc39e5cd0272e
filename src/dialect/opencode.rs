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

use simd_json::prelude::*;

use super::emit::{Obj, ObjWith, Raw, TextBlock, With};
use super::{Emit, Reader, n, object, s, string};
use crate::json::{Out, Val, get};

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
    /// That error is the API's (`APIError`).
    api_error: bool,
}

/// The members of a usage object of tokens `t` (input, output, cache read, cache write,
/// reasoning).
fn tokens(t: [u64; 5], w: &mut Obj<'_>) {
    w.m("input_tokens", t[0])
        .m("output_tokens", t[1])
        .m("cache_read_input_tokens", t[2])
        .m("cache_creation_input_tokens", t[3])
        .m("reasoning_output_tokens", t[4]);
}

impl OpenCode {
    fn result(&mut self, e: &mut Emit<'_>) {
        let t = std::mem::take(&mut self.open);
        let steps = std::mem::take(&mut self.steps);
        let cost = self.cost;
        let sid = self.session.clone();
        let err = self.error.take();
        let api = std::mem::take(&mut self.api_error);
        let members = |w: &mut Obj<'_>| {
            w.m("usage", ObjWith(|u: &mut Obj<'_>| tokens(t, u)))
                .m("num_turns", steps);
            if let Some(c) = cost {
                w.m("total_cost_usd", c);
            }
            if let Some(err) = &err {
                w.m(
                    "errors",
                    With(|o: &mut Out| {
                        o.raw(b"[");
                        o.str(err);
                        o.raw(b"]");
                    }),
                );
            }
        };
        match &err {
            // A turn that ended on a failed API call is `error`, as Claude Code's outcome for
            // one; another failure is `error_during_execution`.
            Some(_) if api => e.result(sid.as_deref(), true, "error", members),
            Some(_) => e.result(sid.as_deref(), true, "error_during_execution", members),
            None => e.result(sid.as_deref(), false, "success", members),
        }
    }

    fn step_finish(&mut self, part: Option<Val<'_, '_>>, e: &mut Emit<'_>) {
        let sid = self.session.clone();
        let sid = sid.as_deref();
        let Some(msg) = part.and_then(|p| s(p, "messageID")) else {
            e.violation("the step_finish line has no \"part.messageID\"");
            return e.skip("a step without its message id");
        };
        let part = part.expect("it has a messageID");
        let t = object(part, "tokens");
        if t.is_none() {
            e.violation("the step_finish line has no \"part.tokens\"");
        }
        let cache = t.and_then(|t| object(t, "cache"));
        let num = |o: Option<Val<'_, '_>>, k: &str| o.map_or(0, |o| n(o, k));
        let step = [
            num(t, "input"),
            num(t, "output"),
            num(cache, "read"),
            num(cache, "write"),
            num(t, "reasoning"),
        ];
        for (a, b) in self.open.iter_mut().zip(step) {
            *a += b;
        }
        self.steps += 1;
        let cost = get(part, "cost").and_then(|c| c.cast_f64());
        if let Some(c) = cost {
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
        e.line(|w| {
            w.m("type", "assistant").m(
                "message",
                ObjWith(|m: &mut Obj<'_>| {
                    m.m("id", id.as_str())
                        .m("type", "message")
                        .m("role", "assistant")
                        .m("model", Raw(b"null"))
                        .m("content", Raw(b"[]"))
                        .m("stop_reason", reason)
                        .m(
                            "usage",
                            ObjWith(|u: &mut Obj<'_>| {
                                tokens(step, u);
                                if let Some(c) = cost {
                                    u.m("cost_usd", c);
                                }
                            }),
                        );
                }),
            );
            w.m("parent_tool_use_id", Raw(b"null")).m("session_id", sid);
        });
        if reason.is_some_and(|r| r != "tool-calls") {
            self.result(e);
        }
    }
}

impl Reader for OpenCode {
    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        match s(v, "sessionID") {
            Some(id) => self.session = Some(id.to_owned()),
            None => e.violation("the line has no \"sessionID\""),
        }
        let sid = self.session.clone();
        let sid = sid.as_deref();
        if !self.init_done {
            self.init_done = true;
            e.init(None, |w| {
                w.m("session_id", sid);
            });
        }
        let t = s(v, "type").unwrap_or("");
        let part = object(v, "part");
        if part.is_none()
            && matches!(
                t,
                "step_start" | "text" | "reasoning" | "tool_use" | "step_finish"
            )
        {
            e.violation(format!("the {t} line has no \"part\""));
        }
        let msg = part
            .and_then(|p| s(p, "messageID"))
            .unwrap_or("opencode-message");
        match t {
            "step_start" => e.skip("a model step starts"),
            "text" | "reasoning" => {
                let text = part.and_then(|p| s(p, "text")).unwrap_or("");
                let block = TextBlock {
                    text,
                    thinking: t == "reasoning",
                };
                e.assistant(sid, msg, None, &block, None);
            }
            "tool_use" => {
                let Some(id) = part.and_then(|p| s(p, "callID")) else {
                    e.violation("the tool_use line has no \"part.callID\"");
                    return e.skip("a tool call without id");
                };
                let part = part.expect("it has a callID");
                let name = s(part, "tool").unwrap_or("");
                let state = object(part, "state");
                let member = |k: &str| state.and_then(|st| get(st, k));
                match member("input") {
                    Some(input) => e.tool_use(sid, msg, id, name, &input),
                    None => e.tool_use(sid, msg, id, name, &Raw(b"{}")),
                }
                let is_error = state.and_then(|st| s(st, "status")) == Some("error");
                let details = ObjWith(|w: &mut Obj<'_>| {
                    for k in ["status", "title", "metadata", "time"] {
                        if let Some(x) = member(k) {
                            w.m(k, x);
                        }
                    }
                });
                match (member("output"), member("error")) {
                    (Some(o), _) if !o.is_null() => {
                        e.tool_result(sid, id, &o, is_error, Some(&details))
                    }
                    (_, Some(x)) => e.tool_result(sid, id, &x, is_error, Some(&details)),
                    _ => e.tool_result(sid, id, &"", is_error, Some(&details)),
                }
            }
            "step_finish" => self.step_finish(part, e),
            "error" => {
                let err = get(v, "error");
                let msg = err
                    .and_then(|x| get(x, "data"))
                    .and_then(|d| get(d, "message"))
                    .and_then(string)
                    .or_else(|| err.and_then(|x| get(x, "name")).and_then(string))
                    .unwrap_or("")
                    .to_owned();
                self.error = Some(msg);
                self.api_error =
                    err.and_then(|x| get(x, "name")).and_then(string) == Some("APIError");
                let event = ObjWith(|w: &mut Obj<'_>| {
                    w.m("type", "error").m("error", err);
                });
                e.stream_event(sid, &event);
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
