//! The end of a run: how the input ended ([`EndInfo`]), the counters of the run ([`Stats`]) and
//! the `run.end` event that reports both (always the last event).

use std::collections::BTreeMap;

use super::Normalizer;
use crate::envelope::{Ctx, Events, kind};

/// How the input ended, for `run.end`.
#[derive(Debug, Clone, Default)]
pub struct EndInfo {
    /// `eof`, `exit`, `timeout`, `idle_timeout`, `interrupted`, `killed`, `signal`, …
    pub cause: String,
    /// Extra members written into `run.end` (each value is raw JSON), e.g. `exit_code`.
    pub extra: Vec<(String, String)>,
}

impl EndInfo {
    /// Plain end of input.
    pub fn eof() -> Self {
        EndInfo {
            cause: "eof".into(),
            extra: Vec::new(),
        }
    }

    /// The run stopped because writing the file `sink` failed with `error`: cause `sink_failed`,
    /// with `sink` and `error` members (the other members of `self` are kept).
    pub fn sink_failed(mut self, sink: &str, error: &std::io::Error) -> Self {
        self.cause = "sink_failed".into();
        self.extra.retain(|(k, _)| k != "reason");
        self.extra.push(("sink".into(), json_string(sink)));
        self.extra
            .push(("error".into(), json_string(&error.to_string())));
        self
    }

    /// Reading the input `input` failed with `error` (an I/O error after its first bytes):
    /// cause `input_failed`, with `input` and `error` members. The inputs after it are not read.
    pub fn input_failed(mut self, input: &str, error: &std::io::Error) -> Self {
        self.cause = "input_failed".into();
        self.extra.push(("input".into(), json_string(input)));
        self.extra
            .push(("error".into(), json_string(&error.to_string())));
        self
    }

    /// The reader closed stdout before the input ended (as `| head -1` does): cause
    /// `output_closed`. The rest of the input was not read; the other sinks (an audit log) get
    /// this `run.end`.
    pub fn output_closed(mut self) -> Self {
        self.cause = "output_closed".into();
        self
    }

    /// A signal (`SIGINT`, `SIGTERM`, `SIGHUP`) ended the run before its input did: cause
    /// `interrupted`, `reason` the signal's name (as `spawn` gives it).
    pub fn interrupted(signal: &str) -> Self {
        EndInfo {
            cause: "interrupted".into(),
            extra: vec![("reason".into(), json_string(signal))],
        }
    }

    /// The run could not start: cause `spawn_failed`, with the `error`.
    pub fn spawn_failed(error: &str) -> Self {
        EndInfo {
            cause: "spawn_failed".into(),
            extra: vec![("error".into(), json_string(error))],
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Counters reported in `run.end.stats`.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Input lines (an unterminated last line counts).
    pub lines: u64,
    /// Input bytes, terminators included.
    pub bytes: u64,
    /// Lines that parsed as JSON (objects or not).
    pub json_lines: u64,
    /// JSON objects whose `type` is a stream-json one ([`crate::dialect::STREAM_JSON_TYPES`]),
    /// session transcript lines excepted. Not in `run.end`: zero means the input was not
    /// stream-json at all (see [`crate::sniff`]).
    pub stream_json_lines: u64,
    /// Events written before `run.end`.
    pub events: u64,
    /// `unknown` events.
    pub unknown: u64,
    /// `diagnostic` events.
    pub diagnostics: u64,
    /// Lines the serde_json reference parser handled in simd mode (simd-json rejected them, or
    /// they hold floats with 15+ significant digits). Not in `run.end`: the envelope does not
    /// depend on the parser.
    pub reference_fallbacks: u64,
    /// Lines that strict JSON parsers refuse but that were repaired and normalized (each is
    /// followed by a `line.repaired` event).
    pub repaired: u64,
    /// Events per type.
    pub by_type: BTreeMap<&'static str, u64>,
}

impl Normalizer {
    /// Flush pending state and append `run.end` (always the last event).
    pub fn finish(&mut self, end: &EndInfo, ev: &mut Events) {
        let first = ev.len();
        let st = &mut self.st;
        st.flush_all(ev, "input ended before the tool input was complete");
        st.count(ev, first);
        let session = st.session.clone();
        let ctx = Ctx {
            session_id: session.as_deref(),
            ..Default::default()
        };
        if !st.terminal_seen && !st.opts.allow_no_result {
            st.run_error(end, &ctx, ev);
        }
        st.stats.events = ev.numbered();
        let s = &st.stats;
        let o = ev.begin(kind::RUN_END, &ctx);
        o.key("cause");
        o.str(&end.cause);
        o.key("terminal_seen");
        o.bool(st.terminal_seen);
        o.key("turns");
        o.u64(st.turns);
        o.key("cli_version");
        o.opt_str(st.cli_version.as_deref());
        if let Some(agent) = st.agent {
            o.key("agent");
            o.str(agent);
        }
        st.totals.write(o, s);
        for (k, raw) in &end.extra {
            o.key(k);
            o.raw(raw.as_bytes());
        }
        o.key("stats");
        o.raw(b"{\"lines\":");
        o.u64(s.lines);
        for (k, n) in [
            ("bytes", s.bytes),
            ("json_lines", s.json_lines),
            ("events", s.events),
            ("unknown", s.unknown),
            ("diagnostics", s.diagnostics),
            ("repaired", s.repaired),
        ] {
            o.key(k);
            o.u64(n);
        }
        o.key("by_type");
        o.raw(b"{");
        for (i, (k, n)) in s.by_type.iter().enumerate() {
            if i > 0 {
                o.raw(b",");
            }
            o.str(k);
            o.raw(b":");
            o.u64(*n);
        }
        o.raw(b"}}");
        ev.end();
    }
}
