//! Unit tests of the span builder: determinism of what is closed at the end of a run.

use serde_json::json;

use super::Trace;
use crate::clock::Stamp;

fn at(us: i64) -> Stamp {
    Stamp {
        unix_us: us,
        mono_us: 0,
    }
}

/// Span names and ids in emission order for a run that ends with many messages and tool
/// calls still open.
fn cut_short_run() -> Vec<(String, Vec<u8>)> {
    let mut t = Trace::new("r", false);
    for i in 0..12 {
        let msg = format!("msg_{i}");
        let ev = json!({"session_id": "s", "message_id": msg, "model": "m", "text": "x"});
        t.event("text", &ev, at(i), None);
        let call = json!({"message_id": msg, "tool_use_id": format!("toolu_{i}"), "name": "Bash"});
        t.event("tool.call", &call, at(i), None);
    }
    t.end(at(100), "killed");
    t.take_finished()
        .into_iter()
        .map(|s| (s.name, s.span_id))
        .collect()
}

#[test]
fn spans_closed_at_the_end_come_out_in_a_stable_order() {
    let first = cut_short_run();
    assert_eq!(first.len(), 25, "12 chats, 12 tool calls, the root");
    for _ in 0..5 {
        assert_eq!(cut_short_run(), first);
    }
    assert_eq!(
        first.last().unwrap().0,
        "invoke_agent Claude Code",
        "the root last"
    );
}

#[test]
fn repeated_message_ids_get_distinct_span_ids_in_linear_time() {
    // Inputs that append runs can repeat message ids; each repetition is a span of its own,
    // numbered by a counter (not by probing, which was quadratic).
    let mut t = Trace::new("r", false);
    let n = 3000;
    for i in 0..n {
        let msg = json!({"message_id": "msg_same", "text": "x"});
        t.event("text", &msg, at(i), None);
        t.event(
            "usage",
            &json!({"message_id": "msg_same", "usage": {}}),
            at(i),
            None,
        );
        let call = json!({"message_id": "msg_same", "tool_use_id": "toolu_same", "name": "Bash"});
        t.event("tool.call", &call, at(i), None);
        t.event(
            "tool.result",
            &json!({"tool_use_id": "toolu_same"}),
            at(i),
            None,
        );
    }
    t.end(at(n), "eof");
    let spans = t.take_finished();
    let ids: std::collections::HashSet<_> = spans.iter().map(|s| s.span_id.clone()).collect();
    assert_eq!(ids.len(), spans.len());
    assert!(spans.len() > n as usize, "{}", spans.len());
}
