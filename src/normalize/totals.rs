//! The run's totals for `run.end` (usage per API message once, the result lines' final usage
//! replacing their messages', cost, counts) and the `run.error` of a run without a result.

use super::{EndInfo, State, Stats};
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::Out;

/// Token counts of one message or a sum of them.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tokens {
    pub(super) input: u64,
    pub(super) output: u64,
    pub(super) cache_read: u64,
    pub(super) cache_creation: u64,
}

impl Tokens {
    /// Whether every count is zero.
    pub(super) fn is_zero(&self) -> bool {
        self.input == 0 && self.output == 0 && self.cache_read == 0 && self.cache_creation == 0
    }

    pub(super) fn add(&mut self, o: Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_creation += o.cache_creation;
    }

    /// The counts among `fields` (raw JSON members of a usage object).
    pub(super) fn of_fields(fields: &[(String, Vec<u8>)]) -> Tokens {
        let mut t = Tokens::default();
        for (k, raw) in fields {
            let n = std::str::from_utf8(raw)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            match k.as_str() {
                "input_tokens" => t.input = n,
                "output_tokens" => t.output = n,
                "cache_read_input_tokens" => t.cache_read = n,
                "cache_creation_input_tokens" => t.cache_creation = n,
                _ => {}
            }
        }
        t
    }
}

/// The run's usage so far, for `run.end`: each API message once; a `result` line's own usage
/// (final, covering the main thread's messages of its turn) replaces what those messages said.
#[derive(Debug, Clone, Default)]
pub(super) struct Totals {
    /// Results' usage, plus subagent messages (never part of a result's usage).
    pub(super) settled: Tokens,
    /// Main-thread messages since the last result.
    pub(super) open: Tokens,
    /// Some message in `open` had no final count.
    pub(super) open_provisional: bool,
    /// Some subagent message had no final count.
    pub(super) sub_provisional: bool,
    /// API messages with usage.
    pub(super) api_messages: u64,
    /// The last result's cost (raw JSON number): the CLI reports it cumulatively.
    pub(super) cost: Option<Vec<u8>>,
}

impl Totals {
    /// The main-thread messages so far count as they are (no result will cover them: a new
    /// `system/init` began, or a result came without usage).
    pub(super) fn close_open(&mut self) {
        self.settled.add(self.open);
        self.sub_provisional |= self.open_provisional;
        self.open = Tokens::default();
        self.open_provisional = false;
    }
}

impl Totals {
    /// Write `run.end`'s `usage`, `cost_usd`, `api_messages`, `tool_calls` and `tool_results`.
    pub(super) fn write(&self, o: &mut Out, s: &Stats) {
        let mut tokens = self.settled;
        tokens.add(self.open);
        o.key("usage");
        o.raw(b"{\"input_tokens\":");
        o.u64(tokens.input);
        o.raw(b",\"output_tokens\":");
        o.u64(tokens.output);
        o.raw(b",\"cache_read_input_tokens\":");
        o.u64(tokens.cache_read);
        o.raw(b",\"cache_creation_input_tokens\":");
        o.u64(tokens.cache_creation);
        o.raw(b",\"provisional\":");
        o.bool(self.open_provisional || self.sub_provisional);
        o.raw(b"}");
        o.key("cost_usd");
        match &self.cost {
            Some(raw) => o.raw(raw),
            None => o.raw(b"null"),
        }
        o.key("api_messages");
        o.u64(self.api_messages);
        o.key("tool_calls");
        o.u64(s.by_type.get(kind::TOOL_CALL).copied().unwrap_or(0));
        o.key("tool_results");
        o.u64(s.by_type.get(kind::TOOL_RESULT).copied().unwrap_or(0));
    }
}

impl State {
    /// `run.error` (cause `no_result`): the stream ended without a result after its last init.
    pub(super) fn run_error(&mut self, end: &EndInfo, ctx: &Ctx<'_>, ev: &mut Events) {
        let o = ev.begin(kind::RUN_ERROR, ctx);
        o.key("cause");
        o.str("no_result");
        o.key("detail");
        o.str(if end.cause == "output_closed" {
            "stdout was closed before the input ended: reading stopped before a result line, so the run's outcome is unknown"
        } else if self.turns == 0 {
            "the stream ended without a result line: the run's outcome, cost and final usage are unknown"
        } else {
            "the stream ended without a result line after the last system/init: the last turn's outcome is unknown"
        });
        o.key("end_cause");
        o.str(&end.cause);
        o.key("exit_code");
        match end.extra.iter().find(|(k, _)| k == "exit_code") {
            Some((_, raw)) => o.raw(raw.as_bytes()),
            None => o.raw(b"null"),
        }
        o.key("last_event");
        match self.last_event {
            Some((kind, seq)) => {
                o.raw(b"{\"type\":");
                o.str(kind);
                o.raw(b",\"seq\":");
                o.u64(seq);
                o.raw(b"}");
            }
            None => o.raw(b"null"),
        }
        ev.end();
        self.count(ev, ev.len() - 1);
    }
}
