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

/// Main-thread messages of one turn that no result has covered yet.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OpenTurn {
    pub(super) tokens: Tokens,
    /// How many messages were counted in.
    pub(super) messages: u64,
    /// Some message had no final count.
    pub(super) provisional: bool,
}

/// At most this many turns wait for their result; an older one then counts as it is.
const MAX_OPEN_TURNS: usize = 16;

/// The run's usage so far, for `run.end`: each API message once; a `result` line's own usage
/// (final, covering the main thread's messages of its turn) replaces what those messages said.
#[derive(Debug, Clone, Default)]
pub(super) struct Totals {
    /// Results' usage, subagent messages (never part of a result's usage) and turns no result
    /// will cover.
    pub(super) settled: Tokens,
    /// Turns awaiting their result, oldest first; the last is the current one. A turn's result
    /// can come after the next turn's `system/init`: a run with a background subagent (CLI
    /// 2.1.33x) writes init, the first turn's result, then the second turn's.
    pub(super) open: Vec<OpenTurn>,
    /// Some message in `settled` had no final count.
    pub(super) settled_provisional: bool,
    /// API messages with usage.
    pub(super) api_messages: u64,
    /// The last result's cost (raw JSON number): the CLI reports it cumulatively.
    pub(super) cost: Option<Vec<u8>>,
}

impl Totals {
    /// A main-thread message's counts: part of the current turn.
    pub(super) fn add_main(&mut self, t: Tokens, is_final: bool) {
        if self.open.is_empty() {
            self.open.push(OpenTurn::default());
        }
        let turn = self.open.last_mut().expect("pushed above");
        turn.tokens.add(t);
        turn.messages += 1;
        turn.provisional |= !is_final;
    }

    /// A message no result covers (a subagent's): counted as it is.
    pub(super) fn add_settled(&mut self, t: Tokens, is_final: bool) {
        self.settled.add(t);
        self.settled_provisional |= !is_final;
    }

    /// A `system/init` begins a turn: the current one keeps waiting for its result (which may
    /// still come), the messages from now on are the new turn's.
    pub(super) fn new_turn(&mut self) {
        if self.open.last().is_some_and(|t| t.messages == 0) {
            return;
        }
        if self.open.len() == MAX_OPEN_TURNS {
            let oldest = self.open.remove(0);
            self.close(oldest);
        }
        self.open.push(OpenTurn::default());
    }

    /// Turn `t` counts as it is: no result will cover it.
    fn close(&mut self, t: OpenTurn) {
        self.settled.add(t.tokens);
        self.settled_provisional |= t.provisional;
    }

    /// A result came with usage `own` (None: without one). It covers the oldest waiting turn
    /// whose messages' input, cache read and cache creation counts are its own (those counts are
    /// final on every message line; turns before that one count as they are), else the current
    /// turn (the others then count as they are). Its usage replaces the covered turn's counts,
    /// unless it is all zeros and theirs is not (see [`covers`]). Without usage every waiting
    /// turn counts as it is.
    pub(super) fn settle(&mut self, own: Option<Tokens>) {
        let Some(own) = own else {
            for t in std::mem::take(&mut self.open) {
                self.close(t);
            }
            return;
        };
        let at = match self.open.len() {
            0 | 1 => 0,
            _ => self
                .open
                .iter()
                .position(|t| same_input(&t.tokens, &own))
                .unwrap_or(self.open.len() - 1),
        };
        let mut rest = std::mem::take(&mut self.open);
        let later = if at < rest.len() {
            rest.split_off(at + 1)
        } else {
            Vec::new()
        };
        let covered = if at < rest.len() { rest.pop() } else { None };
        for t in rest {
            self.close(t);
        }
        match covered {
            Some(turn) if !covers(&own, &turn.tokens) => self.close(turn),
            _ => self.settled.add(own),
        }
        self.open = later;
    }
}

/// Whether the input counts of `a` and `b` (input, cache read, cache creation) are the same.
fn same_input(a: &Tokens, b: &Tokens) -> bool {
    a.input == b.input && a.cache_read == b.cache_read && a.cache_creation == b.cache_creation
}

/// Whether a result's usage `own` can be the final count of the messages `open`: not when it is
/// all zeros and they are not. (A non-zero result usage stands even where it is below the
/// messages' sum: CLI 1.0.x results count less than their turn's messages, and that is what the
/// CLI reports as final.)
fn covers(own: &Tokens, open: &Tokens) -> bool {
    !own.is_zero() || open.is_zero()
}

impl Totals {
    /// Write `run.end`'s `usage`, `cost_usd`, `api_messages`, `tool_calls` and `tool_results`.
    pub(super) fn write(&self, o: &mut Out, s: &Stats) {
        let mut tokens = self.settled;
        let mut provisional = self.settled_provisional;
        for t in &self.open {
            tokens.add(t.tokens);
            provisional |= t.provisional;
        }
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
        o.bool(provisional);
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

#[cfg(test)]
mod tests {
    use super::{Tokens, Totals};

    fn t(input: u64, cache_read: u64) -> Tokens {
        Tokens {
            input,
            output: 1,
            cache_read,
            cache_creation: 0,
        }
    }

    fn sum(x: &Totals) -> (u64, u64) {
        let mut s = x.settled;
        for o in &x.open {
            s.add(o.tokens);
        }
        (s.input, s.cache_read)
    }

    #[test]
    fn a_turns_result_after_the_next_init_covers_that_turn_once() {
        // CLI 2.1.33x with a background subagent: init, 2 messages, init, 1 message, then the
        // first turn's result (8) and the second's (4).
        let mut x = Totals::default();
        x.new_turn();
        x.add_main(t(4, 100), false);
        x.add_main(t(4, 100), false);
        x.new_turn();
        x.add_main(t(4, 100), false);
        x.settle(Some(t(8, 200)));
        assert_eq!(sum(&x), (12, 300));
        x.settle(Some(t(4, 100)));
        assert_eq!(sum(&x), (12, 300));
        assert!(x.open.is_empty());
    }

    #[test]
    fn a_turn_without_result_counts_as_it_is() {
        // A run that died without a result, then another run with its result.
        let mut x = Totals::default();
        x.new_turn();
        x.add_main(t(4, 100), false);
        x.new_turn();
        x.add_main(t(6, 100), false);
        x.settle(Some(t(6, 100)));
        assert_eq!(sum(&x), (10, 200));
        // No match at all: the result is the current turn's; older turns count as they are.
        let mut x = Totals::default();
        x.add_main(t(4, 100), false);
        x.new_turn();
        x.add_main(t(6, 100), false);
        x.settle(Some(t(7, 100)));
        assert_eq!(sum(&x), (11, 200));
        assert!(x.open.is_empty());
    }

    #[test]
    fn an_all_zero_result_leaves_its_messages_counts() {
        let mut x = Totals::default();
        x.add_main(t(4, 100), true);
        x.settle(Some(Tokens::default()));
        assert_eq!(sum(&x), (4, 100));
        x.add_main(t(4, 100), true);
        x.settle(None);
        assert_eq!(sum(&x), (8, 200));
    }
}
