//! A tool call assembled from `--include-partial-messages` deltas when no complete assistant line
//! carried it: an input that never finished streaming reads as incomplete (`input` null,
//! `input_error` says why), whether one fragment or none came; a block that stopped with no
//! fragment is a tool without arguments (`{}`).

use crate::common;

use common::{events, of_type, root, run};

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","cwd":"/w","tools":["Bash"],"model":"m","claude_code_version":"2.1.332"}"#;
const START: &str = r#"{"type":"stream_event","session_id":"s1","parent_tool_use_id":null,"event":{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":4,"output_tokens":1}}}}"#;
const BLOCK: &str = r#"{"type":"stream_event","session_id":"s1","parent_tool_use_id":null,"event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}}"#;
const STOP: &str = r#"{"type":"stream_event","session_id":"s1","parent_tool_use_id":null,"event":{"type":"content_block_stop","index":0}}"#;

fn the_call(lines: &[&str], args: &[&str]) -> serde_json::Value {
    let input = lines.join("\n") + "\n";
    let out = run(args, input.as_bytes());
    let ev = events(&out.stdout);
    let calls = of_type(&ev, "tool.call");
    assert_eq!(calls.len(), 1, "{ev:?}");
    calls[0].clone()
}

/// Audit defect #3: a block that started and never streamed a fragment nor stopped was written
/// `input: {}` with `input_error: null`, as if the model had called Bash with no arguments.
#[test]
fn a_block_started_with_no_fragment_and_no_stop_is_incomplete() {
    let c = the_call(&[INIT, START, BLOCK], &["--allow-no-result"]);
    assert!(c["input"].is_null(), "{c}");
    assert!(c["command"].is_null(), "{c}");
    let why = c["input_error"].as_str().expect("input_error is a string");
    assert!(why.starts_with("incomplete input did not parse"), "{why}");
    assert!(why.contains("no input fragment was streamed"), "{why}");
    assert!(
        why.ends_with("input ended before the tool input was complete"),
        "{why}"
    );
    assert_eq!(c["source"], "deltas");
}

/// The one-fragment case, as it already was: incomplete, with the parser's reason.
#[test]
fn a_block_cut_after_one_fragment_is_incomplete() {
    let frag = r#"{"type":"stream_event","session_id":"s1","parent_tool_use_id":null,"event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ec"}}}"#;
    let c = the_call(&[INIT, START, BLOCK, frag], &["--allow-no-result"]);
    assert!(c["input"].is_null(), "{c}");
    let why = c["input_error"].as_str().unwrap();
    assert!(why.starts_with("incomplete input did not parse"), "{why}");
    assert_eq!(c["partial_json"], r#"{"command":"ec"#);
}

/// A block that stopped without a fragment is a genuinely empty input: `{}`, no error.
#[test]
fn a_stopped_block_with_no_fragment_is_an_empty_input() {
    let c = the_call(&[INIT, START, BLOCK, STOP], &["--allow-no-result"]);
    assert_eq!(c["input"], serde_json::json!({}), "{c}");
    assert!(c["input_error"].is_null(), "{c}");
}

/// Qwen Code in partial mode goes through the same assembly: its real capture cut right after the
/// shell call's `content_block_start` (what a policy kill at `block.start` leaves).
#[test]
fn qwen_partial_cut_at_block_start_is_incomplete() {
    let f = root().join("fixtures/agents/qwen/0.24.4/bash.partial.ndjson");
    let text = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<&str> = text.lines().take(8).collect();
    assert!(lines[7].contains("\"content_block_start\""), "{}", lines[7]);
    let c = the_call(&lines, &["--allow-no-result", "--input-format", "qwen"]);
    assert_eq!(c["name"], "run_shell_command");
    assert!(c["input"].is_null(), "{c}");
    assert!(c["command"].is_null(), "{c}");
    let why = c["input_error"].as_str().expect("input_error is a string");
    assert!(why.contains("no input fragment was streamed"), "{why}");
}
