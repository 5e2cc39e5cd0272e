//! Gemini CLI, `gemini -p … --output-format stream-json`: flat events with `type` and an ISO
//! `timestamp` (`google-gemini/gemini-cli:packages/core/src/output/types.ts`).
//!
//! - `init` → `system/init` (`session_id`, `model`; the stream names no version).
//! - `message` `role:"user"` → the prompt (`user.text`); `role:"assistant"` arrives only as
//!   `delta:true` pieces: written as partial-message events, so each message's text is one
//!   `text`, assembled once, with live `text.delta`s (a tool call or the result closes it).
//! - `tool_use` → one tool call per `tool_id`; `tool_result` → its result (`is_error` when
//!   `status` is `error`; `status` and `error` kept in `structured`).
//! - `error` (non-fatal: loop detected, max turns, …) → `informational` with its severity.
//! - `result` → usage per model of `stats.models` (Gemini reports tokens only as run totals:
//!   one usage per model) and the `result` (error when `status` is `error`), whose usage is
//!   `stats`' totals. Gemini's `input_tokens` includes the cached ones (`cached`); the
//!   envelope's `input_tokens` is the uncached part (`stats.input`), `cache_read_input_tokens`
//!   the cached. No cost: Gemini reports none.
//!
//! Banner lines that are not JSON (YOLO mode, skills) are `diagnostic`s, as any such line.

use simd_json::prelude::*;

use super::emit::{DeltaText, Obj, ObjWith, Raw, With};
use super::{Emit, Reader, n, object, s, string};
use crate::json::{Out, Val, get};

/// See the module docs.
#[derive(Default)]
pub struct Gemini {
    session: Option<String>,
    model: Option<String>,
    text: DeltaText,
    calls: u64,
}

/// The members of Gemini's token counts `st` as a stream-json usage object.
fn usage(st: Option<Val<'_, '_>>, w: &mut Obj<'_>) {
    let (input_total, cached, output) = match st {
        Some(st) => (
            n(st, "input_tokens"),
            n(st, "cached"),
            n(st, "output_tokens"),
        ),
        None => (0, 0, 0),
    };
    let uncached = st
        .and_then(|st| get(st, "input"))
        .and_then(|x| x.as_u64())
        .unwrap_or(input_total.saturating_sub(cached));
    w.m("input_tokens", uncached)
        .m("cache_read_input_tokens", cached)
        .m("cache_creation_input_tokens", 0u64)
        .m("output_tokens", output)
        .m(
            "gemini_total_tokens",
            st.and_then(|st| get(st, "total_tokens")),
        )
        .m(
            "gemini_input_tokens",
            st.and_then(|st| get(st, "input_tokens")),
        );
}

impl Gemini {
    fn close(&mut self, e: &mut Emit<'_>) {
        let sid = self.session.clone();
        self.text.close(e, sid.as_deref());
    }

    fn prefix(&self) -> String {
        format!("{}-msg", self.session.as_deref().unwrap_or("gemini"))
    }

    fn result(&mut self, v: Val<'_, '_>, e: &mut Emit<'_>) {
        self.close(e);
        let sid = self.session.clone();
        let sid = sid.as_deref();
        let stats = object(v, "stats");
        if stats.is_none() {
            e.violation("the result line has no \"stats\"");
        }
        let prefix = self.prefix();
        let models = stats
            .and_then(|st| object(st, "models"))
            .and_then(|m| m.as_object().map(|o| o.iter().collect::<Vec<_>>()))
            .filter(|m| !m.is_empty());
        match models {
            Some(models) => {
                for (model, st) in models {
                    if st.as_object().is_some() {
                        let id = format!("{prefix}-usage-{model}");
                        let u = ObjWith(|w: &mut Obj<'_>| usage(Some(st), w));
                        e.assistant(sid, &id, Some(model), &Raw(b"[]"), Some(&u));
                    }
                }
            }
            _ if stats.is_some_and(|st| n(st, "total_tokens") > 0) => {
                let id = format!("{prefix}-usage");
                let model = self.model.clone();
                let u = ObjWith(|w: &mut Obj<'_>| usage(stats, w));
                e.assistant(sid, &id, model.as_deref(), &Raw(b"[]"), Some(&u));
            }
            _ => {}
        }
        let is_error = s(v, "status") == Some("error");
        let err = get(v, "error");
        // A turn that ended on a failed API call (`[API Error: …]`) is `error`, as Claude
        // Code's outcome for one; another failure is `error_during_execution`.
        let api = err
            .and_then(|x| s(x, "message"))
            .is_some_and(|m| m.starts_with("[API Error"));
        let subtype = match (is_error, api) {
            (false, _) => "success",
            (true, true) => "error",
            (true, false) => "error_during_execution",
        };
        e.result(sid, is_error, subtype, |w| {
            w.m("usage", ObjWith(|u: &mut Obj<'_>| usage(stats, u)));
            if let Some(d) = stats.and_then(|st| get(st, "duration_ms")) {
                w.m("duration_ms", d);
            }
            if let Some(err) = err {
                let msg = get(err, "message").and_then(string).unwrap_or("");
                w.m(
                    "errors",
                    With(|o: &mut Out| {
                        o.raw(b"[");
                        o.str(msg);
                        o.raw(b"]");
                    }),
                )
                .m("error", err);
            }
            match stats {
                Some(st) => w.m("stats", st),
                None => w.m("stats", Raw(b"{}")),
            };
        });
    }
}

impl Reader for Gemini {
    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        let t = s(v, "type").unwrap_or("");
        match t {
            "init" => {
                self.close(e);
                match s(v, "session_id") {
                    Some(id) => self.session = Some(id.to_owned()),
                    None => e.violation("the init line has no \"session_id\""),
                }
                self.model = s(v, "model").map(str::to_owned);
                let (session, model) = (self.session.as_deref(), self.model.as_deref());
                e.init(None, |w| {
                    w.m("session_id", session)
                        .m("model", model)
                        .m("timestamp", get(v, "timestamp"));
                });
            }
            "message" => {
                let Some(content) = s(v, "content") else {
                    e.violation("the message line has no \"content\"");
                    return e.skip("a message without content");
                };
                let sid = self.session.clone();
                if s(v, "role") == Some("assistant") {
                    let prefix = self.prefix();
                    let model = self.model.clone();
                    self.text
                        .piece(e, sid.as_deref(), &prefix, model.as_deref(), content, false);
                } else {
                    self.close(e);
                    e.user_text(sid.as_deref(), content);
                }
            }
            "tool_use" => {
                self.close(e);
                let (Some(id), Some(name)) = (s(v, "tool_id"), s(v, "tool_name")) else {
                    e.violation("the tool_use line has no \"tool_id\" or \"tool_name\"");
                    return e.skip("a tool call without id or name");
                };
                self.calls += 1;
                let message = format!("{}-call-{}", self.prefix(), self.calls);
                let sid = self.session.as_deref();
                match get(v, "parameters") {
                    Some(p) => e.tool_use(sid, &message, id, name, &p),
                    None => e.tool_use(sid, &message, id, name, &Raw(b"{}")),
                }
            }
            "tool_result" => {
                self.close(e);
                let Some(id) = s(v, "tool_id") else {
                    e.violation("the tool_result line has no \"tool_id\"");
                    return e.skip("a tool result without id");
                };
                let is_error = s(v, "status") == Some("error");
                let err = get(v, "error");
                let details = ObjWith(|w: &mut Obj<'_>| {
                    w.m("status", get(v, "status"));
                    if let Some(x) = err {
                        w.m("error", x);
                    }
                });
                let sid = self.session.as_deref();
                match (get(v, "output"), err) {
                    (Some(o), _) if !o.is_null() => {
                        e.tool_result(sid, id, &o, is_error, Some(&details))
                    }
                    (_, Some(x)) => {
                        let msg = get(x, "message").and_then(string).unwrap_or("");
                        e.tool_result(sid, id, &msg, is_error, Some(&details))
                    }
                    _ => e.tool_result(sid, id, &"", is_error, Some(&details)),
                }
            }
            "error" => {
                self.close(e);
                let sid = self.session.as_deref();
                e.system(sid, "informational", |w| {
                    w.m("level", s(v, "severity").unwrap_or("error"))
                        .m("content", s(v, "message").unwrap_or(""));
                });
            }
            "result" => self.result(v, e),
            // Undocumented: kept whole as `unknown`.
            _ => e.keep(),
        }
    }

    fn finish(&mut self, e: &mut Emit<'_>) {
        self.close(e);
    }
}
