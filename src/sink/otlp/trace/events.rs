//! Span events of the trace: turn ends, diagnostics, repaired lines, API retries, model
//! fallbacks, stream errors, background tasks' start and end, compactions and the CLI's
//! informational notices on the root span; a guard's policy violation and a permission denial on the tool call's span.

use std::borrow::Cow;

use super::{Trace, text};
use crate::envelope::kind;
use crate::json::fields::Fields;
use crate::sink::otlp::attr;
use crate::sink::otlp::span::{Event, KeyValue};

impl Trace {
    /// Envelope events that become span events (others are ignored here).
    pub(super) fn span_event(&mut self, kind: &str, ev: &Fields<'_>, now: u64) {
        match kind {
            kind::TURN_END => self.turn_end(ev, now),
            kind::POLICY_VIOLATION => self.policy(ev, now),
            kind::DIAGNOSTIC => {
                let keys = ["kind", "bytes", "line", "detail"];
                let attrs = attr::fields(ev, &keys, "boo_normalize.diagnostic.");
                self.root_event("boo_normalize.diagnostic", now, attrs);
            }
            kind::API_RETRY => {
                let keys = [
                    "attempt",
                    "max_retries",
                    "retry_delay_ms",
                    "error_status",
                    "error",
                ];
                let attrs = attr::fields(ev, &keys, "boo_normalize.retry.");
                self.root_event("boo_normalize.api_retry", now, attrs);
            }
            kind::MODEL_FALLBACK => {
                self.fallback = text(ev, "fallback_model").map(Cow::into_owned);
                let keys = ["original_model", "fallback_model", "trigger"];
                let attrs = attr::fields(ev, &keys, "boo_normalize.fallback.");
                self.root_event("boo_normalize.model_fallback", now, attrs);
            }
            kind::LINE_REPAIRED => {
                let attrs = attr::fields(ev, &["kind", "count", "line"], "boo_normalize.repair.");
                self.root_event("boo_normalize.line_repaired", now, attrs);
            }
            kind::STREAM_ERROR => {
                let attrs = attr::fields(ev, &["error"], "boo_normalize.stream.");
                self.root_event("boo_normalize.stream_error", now, attrs);
            }
            kind::PERMISSION_DENIED => {
                // Why the call did not run (a rule, a hook, auto mode's safety check), on the
                // call's span; its error result alone would only say the tool failed.
                let keys = ["tool_name", "tool_use_id", "decision_reason", "message"];
                let mut attrs = attr::fields(ev, &keys, "boo_normalize.permission.");
                if let Some(extra) = ev.value("extra") {
                    let keys = ["decision_reason_type", "decision_reason_code"];
                    attrs.extend(attr::fields(&extra, &keys, "boo_normalize.permission."));
                }
                self.tool_event("boo_normalize.permission_denied", ev, now, attrs);
            }
            kind::TASK_STARTED | kind::TASK_NOTIFICATION => {
                // A background task (a command, a subagent) runs past its tool call's span: when
                // it started and how it ended. Its description and summary are content (opt-in).
                let (name, keys): (&'static str, &[&str]) = if kind == kind::TASK_STARTED {
                    (
                        "boo_normalize.task_started",
                        &["task_id", "tool_use_id", "task_type"],
                    )
                } else {
                    (
                        "boo_normalize.task_notification",
                        &["task_id", "tool_use_id", "status", "output_file"],
                    )
                };
                let mut attrs = attr::fields(ev, keys, "boo_normalize.task.");
                if self.content {
                    attrs.extend(attr::fields(
                        ev,
                        &["description", "summary"],
                        "boo_normalize.task.",
                    ));
                }
                self.root_event(name, now, attrs);
            }
            kind::COMPACT_BOUNDARY => {
                // The conversation was compacted (manual /compact or automatic): what it held
                // before and after.
                let mut attrs =
                    attr::fields(ev, &["trigger", "pre_tokens"], "boo_normalize.compact.");
                if let Some(meta) = ev
                    .value("extra")
                    .and_then(|x| x.get("compact_metadata").cloned())
                {
                    let keys = ["post_tokens", "duration_ms"];
                    attrs.extend(attr::fields(&meta, &keys, "boo_normalize.compact."));
                }
                self.root_event("boo_normalize.compact_boundary", now, attrs);
            }
            kind::INFORMATIONAL => {
                let mut attrs = attr::fields(ev, &["level", "content"], "boo_normalize.info.");
                if let Some(extra) = ev.value("extra") {
                    attrs.extend(attr::fields(&extra, &["tag"], "boo_normalize.info."));
                }
                self.tool_event("boo_normalize.informational", ev, now, attrs);
            }
            _ => {}
        }
    }

    fn turn_end(&mut self, ev: &Fields<'_>, now: u64) {
        self.terminal = true;
        self.fallback = None;
        let outcome = text(ev, "outcome");
        let outcome = outcome.as_deref().unwrap_or("unknown");
        self.failed_outcome = (outcome != "success").then(|| outcome.to_owned());
        let attrs = attr::fields(
            ev,
            &[
                "outcome",
                "num_turns",
                "cost_usd",
                "duration_ms",
                "duration_api_ms",
                "stop_reason",
            ],
            "boo_normalize.turn.",
        );
        self.root_event("boo_normalize.turn_end", now, attrs);
    }

    fn policy(&mut self, ev: &Fields<'_>, now: u64) {
        let attrs = attr::fields(
            ev,
            &[
                "rule",
                "detail",
                "name",
                "tool_use_id",
                "limit",
                "count",
                "enforced",
            ],
            "boo_normalize.policy.",
        );
        self.tool_event("boo_normalize.policy_violation", ev, now, attrs);
    }

    /// A span event `name` on the span of the tool call `ev` names (`tool_use_id`) while it is
    /// open, else on the root.
    fn tool_event(
        &mut self,
        name: &'static str,
        ev: &Fields<'_>,
        now: u64,
        attributes: Vec<KeyValue>,
    ) {
        let e = Event {
            time: now,
            name,
            attributes,
        };
        match text(ev, "tool_use_id").and_then(|id| self.tools.get_mut(&*id)) {
            Some(span) => span.events.push(e),
            None => {
                if let Some(r) = self.root.as_mut() {
                    r.events.push(e);
                }
            }
        }
    }

    /// A span event `name` on the root span.
    pub(super) fn root_event(&mut self, name: &'static str, now: u64, attributes: Vec<KeyValue>) {
        if let Some(r) = self.root.as_mut() {
            r.events.push(Event {
                time: now,
                name,
                attributes,
            });
        }
    }
}
