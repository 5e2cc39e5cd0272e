//! Real CLI 2.1.332 captures of the modes adopters run it in (loopback Messages API,
//! `fixtures/captured/2.1.332/`, made by `tests/support/capture.py`): what each capture says
//! reaches the envelope, in both modes where the capture has a partial variant.

use crate::common;

use common::{bin, events, root};
use serde_json::Value;

/// The envelope of capture `name` (`--strict`: no unknown line, no diagnostic).
fn envelope(name: &str) -> Vec<Value> {
    let path = root().join("fixtures/captured/2.1.332").join(name);
    let out = bin().arg("--strict").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    events(&out.stdout)
}

/// The raw lines of capture `name` of type `t`.
fn lines(name: &str, t: &str) -> Vec<Value> {
    let path = root().join("fixtures/captured/2.1.332").join(name);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == t)
        .collect()
}

fn of_type<'a>(ev: &'a [Value], t: &str) -> Vec<&'a Value> {
    ev.iter().filter(|e| e["type"] == t).collect()
}

/// `--input-format stream-json --replay-user-messages`: three user messages over stdin (a
/// string, a content array after the first result, a third one cut short by an interrupt
/// control request). Every turn has its `turn.end`, the echoed messages say `replay`, the
/// control responses keep their request ids, and the run's totals are the three results'.
#[test]
fn stream_json_input_keeps_every_turn_echo_and_control_response() {
    for name in ["stream_input.ndjson", "stream_input.partial.ndjson"] {
        let ev = envelope(name);
        let users: Vec<(&str, bool)> = of_type(&ev, "user.text")
            .iter()
            .map(|e| (e["text"].as_str().unwrap(), e["replay"] == true))
            .collect();
        assert_eq!(
            users,
            [
                ("first question", true),
                ("second question", true),
                ("third question", true),
                ("[Request interrupted by user]", false),
            ],
            "{name}"
        );
        let ids: Vec<&Value> = of_type(&ev, "control.response")
            .iter()
            .map(|e| &e["response"]["request_id"])
            .collect();
        assert_eq!(ids, ["req_init_1", "req_int_1"], "{name}");
        let ends = of_type(&ev, "turn.end");
        let outcomes: Vec<&Value> = ends.iter().map(|e| &e["outcome"]).collect();
        assert_eq!(
            outcomes,
            ["success", "success", "during_execution"],
            "{name}"
        );
        assert_eq!(ends[2]["terminal_reason"], "aborted_streaming", "{name}");
        let results = lines(name, "result");
        let run_end = ev.last().unwrap();
        assert_eq!(run_end["turns"], 3, "{name}");
        // The CLI's cost is cumulative: the run's is the last result's.
        assert_eq!(run_end["cost_usd"], results[2]["total_cost_usd"], "{name}");
        let out: u64 = results
            .iter()
            .map(|r| r["usage"]["output_tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(run_end["usage"]["output_tokens"], out, "{name}");
        assert_eq!(run_end["usage"]["provisional"], false, "{name}");
    }
}

/// `--permission-prompt-tool` (an MCP tool, permission mode `default`): one Bash call allowed,
/// one denied. The denied call's result is an error with the tool's message, the CLI's
/// decision (`tool_result_meta`) stays on it, and `turn.end.permission_denials` names it.
#[test]
fn a_permission_prompt_tool_denial_reaches_the_result_and_the_turn_end() {
    for name in [
        "permission_prompt.ndjson",
        "permission_prompt.partial.ndjson",
    ] {
        let ev = envelope(name);
        let calls = of_type(&ev, "tool.call");
        let results = of_type(&ev, "tool.result");
        assert_eq!((calls.len(), results.len()), (2, 2), "{name}");
        let (allowed, denied) = (results[0], results[1]);
        assert_eq!(allowed["tool_use_id"], calls[0]["tool_use_id"], "{name}");
        assert_eq!(allowed["is_error"], false, "{name}");
        assert_eq!(denied["tool_use_id"], calls[1]["tool_use_id"], "{name}");
        assert_eq!(denied["is_error"], true, "{name}");
        assert_eq!(
            denied["content"], "denied by the approve tool: the input contains 'denied'",
            "{name}"
        );
        let meta = &denied["extra"]["tool_result_meta"][0];
        assert_eq!(meta["permission_decision"]["decision"], "reject", "{name}");
        assert_eq!(meta["non_execution_kind"], "permission-rule", "{name}");
        let end = of_type(&ev, "turn.end")[0];
        let denials = end["permission_denials"].as_array().unwrap();
        assert_eq!(denials.len(), 1, "{name}");
        assert_eq!(denials[0]["tool_use_id"], calls[1]["tool_use_id"], "{name}");
        assert_eq!(denials[0]["tool_input"], calls[1]["input"], "{name}");
        assert_eq!(
            of_type(&ev, "session.init")[0]["permission_mode"],
            "default"
        );
    }
}
