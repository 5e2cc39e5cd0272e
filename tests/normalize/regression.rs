//! Regression tests for what the fuzzers found, each named after the finding.

use crate::common;

use common::{events, run};

/// structured_stream crash-4118730d: a tool use id streamed in a subagent, then a new init, then
/// the same id streamed again (cut off) on the main thread. The second one is a new call in the
/// new init scope: exactly one tool.call per id per scope, never a panic, never a lost call.
#[test]
fn fuzz_tool_id_reused_across_init_is_one_call_per_scope() {
    let lines = [
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_s253","model":"m","content":[],"usage":{"input_tokens":3}}},"parent_tool_use_id":"toolu_parent0","session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_s0","name":"Bash","input":{}}},"parent_tool_use_id":"toolu_parent0","session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"\"}"}},"parent_tool_use_id":"toolu_parent0","session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0},"parent_tool_use_id":"toolu_parent0","session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":"toolu_parent0","session_id":"s"}"#,
        r#"{"type":"system","subtype":"init","session_id":"s255","model":"m","cwd":"/","tools":["Bash"],"mcp_servers":[],"permissionMode":"default","apiKeySource":"none","claude_code_version":"2.1.255"}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_s0","model":"m","content":[],"usage":{"input_tokens":3}}},"parent_tool_use_id":null,"session_id":"s"}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_s0","name":"Bash","input":{}}},"parent_tool_use_id":null,"session_id":"s"}"#,
    ];
    let input = lines.join("\n") + "\n";
    let out = run(&[], input.as_bytes());
    assert!(matches!(out.status.code(), Some(0 | 3)));
    let ev = events(&out.stdout);
    let calls: Vec<_> = ev.iter().filter(|e| e["type"] == "tool.call").collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0]["parent_tool_use_id"], "toolu_parent0");
    assert_eq!(calls[0]["input"], serde_json::json!({"command": ""}));
    assert!(calls[0]["input_error"].is_null());
    // The second was cut off before any input: incomplete, not a tool without arguments.
    assert_eq!(calls[1]["parent_tool_use_id"], serde_json::Value::Null);
    assert_eq!(calls[1]["source"], "deltas");
    assert!(calls[1]["input"].is_null(), "{:?}", calls[1]);
    assert!(calls[1]["input_error"].is_string(), "{:?}", calls[1]);
    assert_eq!(ev.last().unwrap()["type"], "run.end");
}

/// parse_line crash-2b6f34a8: simd-json read the 17-digit float 0.38520001354184372 one ULP low
/// (0.3852000135418437); the envelope must carry the exact value, 0.38520001354184374, as
/// serde_json, Python and JavaScript read it.
#[test]
fn fuzz_long_float_is_not_one_ulp_off() {
    let line = r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","total_cost_usd":0.38520001354184372,"modelUsage":{"m":{"costUSD":0.38520001354184372}}}"#;
    let out = run(&[], format!("{line}\n").as_bytes());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(r#""cost_usd":0.38520001354184374"#), "{text}");
    assert!(text.contains(r#""costUSD":0.38520001354184374"#), "{text}");
    let reference = run(&["--reference-parser"], format!("{line}\n").as_bytes());
    assert_eq!(text, String::from_utf8(reference.stdout).unwrap());
}

/// parse_line crash-0fefd27c: `-0` is the integer 0 to simd-json and -0.0 to serde_json. Negative
/// zero is written `0` (as JavaScript's JSON.stringify does), so both engines write the same bytes.
#[test]
fn fuzz_negative_zero_is_written_as_zero_by_both_engines() {
    let line = "{\"type\":\"x\",\"a\":-0,\"b\":-0.0,\"c\":-0e5,\"d\":0.0}\n";
    let fast = String::from_utf8(run(&[], line.as_bytes()).stdout).unwrap();
    let slow = String::from_utf8(run(&["--reference-parser"], line.as_bytes()).stdout).unwrap();
    assert_eq!(fast, slow);
    assert!(
        fast.contains(r#""raw":{"type":"x","a":0,"b":0,"c":0,"d":0.0}"#),
        "{fast}"
    );
}

/// parse_line crash-d1b5748b: `6e88` must stay 6e88 through both engines. serde_json's default
/// float parser can be one ULP off (5.999999999999999e88); the `float_roundtrip` feature makes the
/// reference path, which also handles every long float the fast path hands over, exact.
#[test]
fn fuzz_6e88_is_exact_in_both_engines() {
    let line = "{\"type\":\"x\",\"v\":6e88,\"w\":0.38520001354184372}\n";
    for args in [&[][..], &["--reference-parser"]] {
        let out = String::from_utf8(run(args, line.as_bytes()).stdout).unwrap();
        assert!(
            out.contains(r#""v":6e88,"w":0.38520001354184374"#),
            "{args:?}: {out}"
        );
    }
}
