//! The OTLP trace sink: the run as an OpenTelemetry trace following the GenAI semantic
//! conventions, written as OTLP/JSON lines (`--format otlp`, `--otlp FILE`: one
//! `ExportTraceServiceRequest` per line, the layout the Collector's `otlpjsonfile` receiver
//! reads) or sent to an OTLP/HTTP receiver (`--otlp-endpoint`).
//!
//! Spans (see [`trace`]): `invoke_agent Claude Code` (root, one per `claude` invocation: a log
//! holding several, one after the other, gives one trace each, a `system/init` of another
//! session starting the next), `chat <model>` per API
//! message, `execute_tool <name>` per tool call from call to result (or, with
//! [`OtlpOptions::per_turn`], one trace per turn: `acp`'s prompts); a subagent is an
//! `invoke_agent <subagent_type>` span under the `execute_tool` span of the `Task`/`Agent` call
//! that started it, and its chats hang there. Ids are derived from
//! the run id (the same capture replayed gives the same trace); times are the pipeline's stamps
//! (arrival times live, recorded times in `replay`). Content (prompts, outputs, tool input and
//! output) is added only with `--otlp-content`, after `--redact` did its work on the events.

pub mod attr;
pub mod config;
pub mod export;
mod json;
pub mod span;
pub mod trace;

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::clock::Stamp;
use crate::envelope::kind;
use crate::envelope::{EventMeta, Events};
use crate::json::Out;
use crate::json::fields::{Fields, Index};
use crate::sink::{EventCtx, Sink};
use config::Endpoint;
use export::Exporter;
use span::{Batch, Span};
use trace::Trace;

/// `boo_normalize.run.cause` of the root of an invocation that a later one followed in the same
/// input (a `system/init` of another session).
pub const NEXT_INVOCATION: &str = "next_invocation";

/// `boo_normalize.run.cause` of the root of a turn's trace (see [`OtlpOptions::per_turn`]).
pub const TURN_END: &str = "turn_end";

/// Spans gathered before a line is written (or a batch handed to the exporter) between flushes;
/// keeps lines well under the Collector's default 1 MiB line limit.
const LINE_SPANS: usize = 64;

/// What every OTLP sink of a run shares.
#[derive(Debug, Clone, Default)]
pub struct OtlpOptions {
    /// The run id (trace and span ids derive from it; also a resource attribute).
    pub run_id: String,
    /// Add message content (`--otlp-content`).
    pub content: bool,
    /// Resource attributes, `service.name` first (see [`config::resource`]).
    pub resource: Vec<(String, String)>,
    /// One trace per turn instead of one per `claude` invocation (`acp`: one per prompt): a
    /// main-thread `turn.end` ends the trace and the next event starts the next one. The turns
    /// are numbered from this counter, the last number traced (trace ids derive from the run
    /// id and the number; the root says it as `boo_normalize.turn`), which every CLI run of a
    /// session shares, so a restarted CLI never reuses a trace id; a trace that never started
    /// takes no number. The traces of a session share
    /// `gen_ai.conversation.id` and `boo_normalize.run_id`.
    pub per_turn: Option<Arc<AtomicU32>>,
}

/// The number of the next turn after those `counter` has seen traced (1 for the first).
fn next_turn(counter: &AtomicU32) -> u32 {
    counter.load(Ordering::SeqCst) + 1
}

enum Dest<W: Write> {
    Lines(io::BufWriter<W>),
    Export(Exporter),
}

/// The OTLP sink.
pub struct Otlp<W: Write> {
    trace: Trace,
    opts: OtlpOptions,
    pending: Vec<Span>,
    dest: Dest<W>,
    /// The line being written (reused).
    line: Out,
    /// The members of an event the pipeline did not index (a sink driven on its own).
    index: Index,
}

impl<W: Write> Otlp<W> {
    /// OTLP/JSON lines written to `w` (buffered here).
    pub fn lines(w: W, opts: OtlpOptions) -> Self {
        Self::with(
            Dest::Lines(io::BufWriter::with_capacity(64 * 1024, w)),
            opts,
        )
    }

    fn with(dest: Dest<W>, opts: OtlpOptions) -> Self {
        let trace = match &opts.per_turn {
            Some(c) => Trace::turn(&opts.run_id, next_turn(c), opts.content),
            None => Trace::new(&opts.run_id, opts.content),
        };
        Otlp {
            trace,
            opts,
            pending: Vec::new(),
            dest,
            line: Out::default(),
            index: Index::default(),
        }
    }

    /// The spans finished so far as one resource's worth.
    fn batch(&mut self) -> Batch {
        let mut resource: Vec<_> = self
            .opts
            .resource
            .iter()
            .map(|(k, v)| attr::str(k.clone(), v.clone()))
            .collect();
        if let Some(v) = self.trace.cli_version()
            && !self
                .opts
                .resource
                .iter()
                .any(|(k, _)| k == "service.version")
        {
            resource.push(attr::str("service.version", v.to_owned()));
        }
        resource.push(attr::str("boo_normalize.run_id", self.opts.run_id.clone()));
        Batch {
            resource,
            spans: std::mem::take(&mut self.pending),
        }
    }

    /// Write (or hand over) the finished spans: all of them, or only a full batch.
    fn emit(&mut self, all: bool) -> io::Result<()> {
        self.trace.move_finished(&mut self.pending);
        if self.pending.is_empty() || (!all && self.pending.len() < LINE_SPANS) {
            return Ok(());
        }
        let mut batch = self.batch();
        match &mut self.dest {
            Dest::Lines(w) => {
                self.line.clear();
                json::request(&mut self.line, &batch);
                self.line.raw(b"\n");
                // The spans' room serves the next batch's.
                batch.spans.clear();
                self.pending = batch.spans;
                w.write_all(&self.line.buf)
            }
            Dest::Export(x) => {
                x.send(batch.into_proto());
                Ok(())
            }
        }
    }
}

impl<W: Write> Otlp<W> {
    /// With one trace per turn: this trace's turn has been traced (its number is taken).
    fn traced_turn(&self) {
        if let (Some(c), Some(n)) = (&self.opts.per_turn, self.trace.turn_number()) {
            c.fetch_max(n, Ordering::SeqCst);
        }
    }

    /// Whether the trace reads event `meta`. Live-only progress (deltas, block lifecycle, pings)
    /// adds nothing a span needs: the message lifecycle events bound the chat spans. Skipping it
    /// keeps partial-message streams cheap.
    fn reads(&self, meta: &EventMeta) -> bool {
        !self.trace.is_ended()
            && (!meta.ephemeral
                || matches!(
                    meta.kind,
                    kind::MESSAGE_START | kind::MESSAGE_DELTA | kind::MESSAGE_STOP
                ))
    }
}

impl<W: Write> Otlp<W> {
    /// One event the trace reads, by its members.
    fn fields_event(
        &mut self,
        meta: &EventMeta,
        ev: &Fields<'_>,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        if meta.kind == kind::SESSION_INIT
            && let Some(s) = ev.str("session_id")
            && self.trace.session_id().is_some_and(|current| current != s)
        {
            // A new `claude` invocation (a loop appending run after run to one log): the
            // previous one's trace ends at its last event, and this one gets its own.
            let at = self.trace.last_at().unwrap_or(ctx.stamp);
            self.traced_turn();
            self.trace.end(at, NEXT_INVOCATION);
            self.emit(true)?;
            match self.opts.per_turn.clone() {
                // One trace per turn: the next one's number, whatever the CLI's session.
                Some(c) => self.trace.next_turn(next_turn(&c)),
                None => self.trace.next_invocation(),
            }
        }
        if meta.kind == kind::RUN_END && self.opts.per_turn.is_some() && self.trace.is_fresh() {
            // The run ends between turns: nothing to trace since the last one.
            self.trace.close_empty();
            return self.emit(true);
        }
        self.trace
            .event(meta.kind, ev, ctx.stamp, ctx.cli_version, ctx.raw);
        if meta.kind == kind::RUN_END {
            self.traced_turn();
            let cause = ev.str("cause");
            self.trace.end(ctx.stamp, cause.as_deref().unwrap_or("eof"));
            return self.emit(true);
        }
        if meta.kind == kind::TURN_END
            && ev.str("parent_tool_use_id").is_none()
            && let Some(c) = self.opts.per_turn.clone()
        {
            // One trace per turn: this one is whole; the next event starts the next.
            self.traced_turn();
            self.trace.end(ctx.stamp, TURN_END);
            self.emit(true)?;
            self.trace.next_turn(next_turn(&c));
            return Ok(());
        }
        self.emit(false)
    }
}

impl Otlp<io::Sink> {
    /// Spans sent to an OTLP/HTTP receiver by a background exporter thread.
    pub fn endpoint(endpoint: Endpoint, opts: OtlpOptions) -> Self {
        Self::with(Dest::Export(Exporter::start(endpoint)), opts)
    }
}

impl<W: Write> Sink for Otlp<W> {
    /// The trace is always whole: a resumed run still exports every span.
    fn keeps_history(&self) -> bool {
        true
    }

    fn wants_fields(&self, meta: &EventMeta) -> bool {
        self.reads(meta)
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        if !self.reads(meta) {
            return Ok(());
        }
        let mut own = std::mem::take(&mut self.index);
        let res = match ctx.fields(events, meta, &mut own) {
            Some(ev) => self.fields_event(meta, &ev, ctx),
            None => Ok(()),
        };
        self.index = own;
        res
    }

    fn end_members(&mut self, cause: &str, at: Stamp) -> io::Result<Vec<(String, String)>> {
        if self.opts.per_turn.is_some() && self.trace.is_fresh() {
            self.trace.close_empty();
        } else {
            self.traced_turn();
            self.trace.end(at, cause);
        }
        self.emit(true)?;
        let Dest::Export(x) = &mut self.dest else {
            return Ok(Vec::new());
        };
        let d = x.settle(x.limit());
        let member = serde_json::json!({
            "spans": d.spans,
            "exported": d.exported,
            "failed": d.failed,
        });
        Ok(vec![("otlp".into(), member.to_string())])
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit(true)?;
        match &mut self.dest {
            Dest::Lines(w) => w.flush(),
            Dest::Export(_) => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush()?;
        if let Dest::Export(x) = &mut self.dest {
            // Spans finished after `run.end` was written (a run ended without the pipeline's
            // end hook): deliver them before the process exits.
            let before = x.delivery();
            let after = x.settle(x.limit());
            if after.spans > before.spans && after.failed > before.failed {
                eprintln!(
                    "boo-normalize: otlp: {} spans of the run's end were not delivered",
                    after.failed - before.failed
                );
            }
        }
        Ok(())
    }
}

impl<W: Write> Drop for Otlp<W> {
    /// A run cut short (an output error ended the pipeline before `finish`): still hand the
    /// finished spans to the exporter, which delivers them as it is dropped.
    fn drop(&mut self) {
        if matches!(self.dest, Dest::Export(_)) {
            let _ = self.emit(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;
    use crate::normalize::{EndInfo, Normalizer};
    use crate::pipeline::Pipeline;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A run of `turns` prompts of session `s` through a per-turn OTLP sink numbered by
    /// `counter`: the roots it wrote, as (trace id, turn, cause).
    fn run(turns: usize, counter: &Arc<AtomicU32>) -> Vec<(String, i64, String)> {
        let mut input = String::new();
        for t in 0..turns {
            for line in [
                json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "cwd": "/", "tools": []}),
                json!({"type": "assistant", "session_id": "s", "message": {"id": format!("msg_{t}"), "role": "assistant", "model": "m", "content": [{"type": "text", "text": "hi"}]}}),
                json!({"type": "result", "subtype": "success", "session_id": "s", "is_error": false, "result": "hi"}),
            ] {
                input.push_str(&line.to_string());
                input.push('\n');
            }
        }
        let buf = Buf::default();
        let opts = OtlpOptions {
            run_id: "r".into(),
            per_turn: Some(counter.clone()),
            ..OtlpOptions::default()
        };
        let sink = Otlp::lines(buf.clone(), opts);
        let mut p = Pipeline::new(Normalizer::new(Default::default()), vec![Box::new(sink)]);
        p.run(input.as_bytes(), None).unwrap();
        p.finish(&EndInfo::eof()).unwrap();
        drop(p);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let attr = |s: &Value, k: &str| {
            s["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == k)
                .map(|a| a["value"].clone())
        };
        let mut roots = Vec::new();
        for l in text.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            for s in v["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array()
                .unwrap()
            {
                if s.get("parentSpanId").is_none_or(|p| p.as_str() == Some("")) {
                    let turn = attr(s, "boo_normalize.turn").unwrap()["intValue"].clone();
                    let turn = turn
                        .as_i64()
                        .or_else(|| turn.as_str().and_then(|t| t.parse().ok()))
                        .unwrap();
                    let cause = attr(s, "boo_normalize.run.cause").unwrap()["stringValue"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    roots.push((s["traceId"].as_str().unwrap().to_owned(), turn, cause));
                }
            }
        }
        roots
    }

    #[test]
    fn one_trace_per_turn_numbered_across_runs() {
        let counter = Arc::new(AtomicU32::new(0));
        let first = run(2, &counter);
        assert_eq!(
            first.iter().map(|r| (r.1, &*r.2)).collect::<Vec<_>>(),
            [(1, TURN_END), (2, TURN_END)],
            "no empty trace after the last turn"
        );
        assert_ne!(first[0].0, first[1].0);
        assert_eq!(counter.load(Ordering::SeqCst), 2);
        // The session's next CLI run goes on numbering; its trace ids are new.
        let second = run(1, &counter);
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].1, 3);
        assert!(first.iter().all(|r| r.0 != second[0].0));
        // A run with no turn at all takes no number.
        assert!(run(0, &counter).is_empty());
        assert_eq!(run(1, &counter)[0].1, 4);
    }
}
