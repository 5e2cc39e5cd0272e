//! `result` lines: one `turn.end` per result, with an outcome that never says `success` for an
//! error, costs from whichever field this CLI version used, and everything else under `extra`.

use super::State;
use super::system::write_extra;
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::{Val, get, get_some, get_str};
use simd_json::prelude::*;

/// The `outcome` of a result: from the subtype, except that `is_error: true` never reads as
/// `success` (API failures arrive as `subtype: "success", is_error: true`).
pub fn outcome(subtype: Option<&str>, is_error: bool) -> &str {
    let o = match subtype {
        Some("success") => "success",
        // Another agent's turn that ended on a failed API call (its reader's subtype).
        Some("error") => "error",
        Some("error_max_turns") => "max_turns",
        Some("error_max_budget_usd") => "max_budget",
        Some("error_during_execution") => "during_execution",
        Some("error_max_structured_output_retries") => "structured_output_retries",
        Some(other) => other,
        None => {
            if is_error {
                "error"
            } else {
                "success"
            }
        }
    };
    if is_error && o == "success" {
        "error"
    } else {
        o
    }
}

/// Where CLI versions put the run's cost, newest first.
const COST_KEYS: [&str; 3] = ["total_cost_usd", "cost_usd", "total_cost"];

fn is_number(x: Val<'_, '_>) -> bool {
    x.is_f64() || x.is_i64() || x.is_u64()
}

impl State {
    pub(super) fn result(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        // Whatever the turn left pending (usage of the last message, calls seen only as deltas)
        // belongs before its end.
        self.stop_reason_from_result(get(v, "stop_reason"));
        self.flush_all(ev, "the turn ended before the tool input was complete");
        self.turns += 1;
        self.terminal_seen = true;
        // Message ids do not recur across turns: keep these sets small on long streams.
        self.assistant_seen.clear();
        self.text_from_deltas.clear();
        self.usage_done.clear();
        self.settle_totals(v);
        let last_stop = self.take_last_stop_reason();
        let subtype = get_str(v, "subtype");
        let is_error = get(v, "is_error")
            .and_then(|x| x.as_bool())
            .unwrap_or(false);
        let cost = COST_KEYS
            .iter()
            .find_map(|k| get(v, k).filter(|x| is_number(*x)));
        let o = ev.begin(kind::TURN_END, ctx);
        o.key("outcome");
        o.str(outcome(subtype, is_error));
        o.key("subtype");
        o.opt_str(subtype);
        o.key("is_error");
        o.bool(is_error);
        o.key("result");
        o.opt_value(get(v, "result"));
        o.key("cost_usd");
        o.opt_value(cost);
        for (field, src) in [
            ("duration_ms", "duration_ms"),
            ("duration_api_ms", "duration_api_ms"),
            ("num_turns", "num_turns"),
            ("usage", "usage"),
            ("model_usage", "modelUsage"),
            ("permission_denials", "permission_denials"),
            ("stop_reason", "stop_reason"),
            ("terminal_reason", "terminal_reason"),
            ("errors", "errors"),
            ("structured_output", "structured_output"),
        ] {
            o.key(field);
            if field == "stop_reason" {
                // CLIs before 2.1.150 write no stop_reason in the result line; the turn's last
                // main-thread message's own (assistant line, or message_delta), else null.
                match (get_some(v, src), &last_stop) {
                    (Some(r), _) => o.value(r),
                    (None, Some(raw)) => o.raw(raw),
                    (None, None) => o.raw(b"null"),
                }
                continue;
            }
            o.opt_value(get(v, src));
        }
        // A member read with the wrong type (a string cost, a non-boolean is_error) stays under
        // extra as written.
        // Only the cost member read for cost_usd is left out of extra.
        let is_bool = get(v, "is_error").is_some_and(|x| x.as_bool().is_some());
        let cost_key = COST_KEYS
            .iter()
            .copied()
            .find(|k| get(v, k).is_some_and(is_number))
            .unwrap_or("");
        write_extra(
            o,
            v,
            &[
                if is_bool { "is_error" } else { "" },
                "result",
                cost_key,
                "duration_ms",
                "duration_api_ms",
                "num_turns",
                "usage",
                "modelUsage",
                "permission_denials",
                "stop_reason",
                "terminal_reason",
                "errors",
                "structured_output",
            ],
        );
        ev.end();
    }

    /// A result ends a turn: its own usage (final, the turn's main-thread messages) replaces the
    /// counts those messages carried (see [`super::Totals::settle`] for which turn it is);
    /// without one, theirs stand. So do they when the result's usage
    /// is all zeros and theirs is not: CLI 2.1.33x writes such a usage on the result of a turn
    /// stopped by `--max-budget-usd` (`error_max_budget_usd`) or an interrupt, which counts none
    /// of its messages.
    /// Its cost is the run's so far.
    fn settle_totals(&mut self, v: Val<'_, '_>) {
        let t = &mut self.totals;
        let own = get(v, "usage").and_then(|u| {
            let o = u.as_object()?;
            let n = |k: &str| o.get(k).and_then(|x| x.as_u64());
            n("input_tokens").or(n("output_tokens"))?;
            Some(super::Tokens {
                input: n("input_tokens").unwrap_or(0),
                output: n("output_tokens").unwrap_or(0),
                cache_read: n("cache_read_input_tokens").unwrap_or(0),
                cache_creation: n("cache_creation_input_tokens").unwrap_or(0),
            })
        });
        t.settle(own);
        let cost = COST_KEYS
            .iter()
            .find_map(|k| get(v, k).filter(|x| is_number(*x)));
        if let Some(c) = cost {
            let mut o = crate::json::Out::default();
            o.value(c);
            t.cost = Some(o.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::outcome;

    #[test]
    fn outcomes() {
        assert_eq!(outcome(Some("success"), false), "success");
        assert_eq!(outcome(Some("success"), true), "error");
        assert_eq!(outcome(Some("error_max_turns"), false), "max_turns");
        assert_eq!(outcome(Some("error_max_turns"), true), "max_turns");
        assert_eq!(outcome(Some("brand_new"), false), "brand_new");
        assert_eq!(outcome(None, true), "error");
    }
}
