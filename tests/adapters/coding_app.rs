//! Adapter 5: a self-hosted coding app. Its contract: stale-stream detection (no tokens for N s,
//! while no tool is running); a doom-loop guard (3 identical tool calls); a 5 MB output cap;
//! usage never null, on every path.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::*;
use crate::spawn::common::*;

/// Usage is an object of counts on every `turn.end`, every `usage` event and `run.end`.
fn assert_usage_never_null(ev: &[Value]) {
    for e in ev {
        let u = match e["type"].as_str() {
            Some("turn.end" | "usage" | "run.end") => &e["usage"],
            _ => continue,
        };
        for k in ["input_tokens", "output_tokens"] {
            assert!(u[k].as_u64().is_some(), "{k} in {e}");
        }
    }
    assert!(run_end(ev)["usage"].is_object());
}

fn bash(command: &str) -> Value {
    json!({"content": [{"type": "tool_use", "name": "Bash", "input": {"command": command, "description": "run"}}]})
}

/// No tokens for N s while no tool runs: the stream is stale, the run is stopped (124).
#[test]
fn a_stale_stream_is_stopped() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(&d, &json!({"responses": [{"hang": true, "repeat": -1}]}));
    let mark = marker("code_stale");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Say hi.",
            "--idle-timeout",
            "3s",
            "--grace",
            "1s",
        ],
        &[],
    );
    let (code, ev, _) = finish(c);
    assert_eq!(run_end(&ev)["cause"], "idle_timeout");
    assert_session_error(&ev);
    assert_eq!(code, Some(124));
    assert_usage_never_null(&ev);
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// A quiet tool (4 s, twice the idle timeout) is not a stale stream; a quiet model is, and in
/// warn mode that is a `stall` event, not a stop.
#[test]
fn a_quiet_tool_is_not_stale_and_warn_mode_reports_a_stall() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            bash("sleep 4; echo slept"),
            {"delay": 3.5, "content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let mark = marker("code_quiet");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Run it.",
            "--idle-timeout",
            "2s",
            "--idle-action",
            "warn",
        ],
        &[],
    );
    let (code, ev, err) = finish(c);
    assert_eq!(code, Some(0), "{err}");
    let call_at = ev
        .iter()
        .position(|e| e["type"] == "tool.call")
        .expect("the tool call");
    let result_at = ev
        .iter()
        .position(|e| e["type"] == "tool.result")
        .expect("the tool ran");
    assert!(text_of(&ev[result_at]["content"]).contains("slept"));
    let stalls: Vec<usize> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "stall")
        .map(|(i, _)| i)
        .collect();
    // (A slow start of the CLI may be a stall too: it said nothing yet.)
    let after: Vec<&usize> = stalls.iter().filter(|i| **i > result_at).collect();
    assert!(!after.is_empty(), "the model's 3.5 s silence is a stall");
    assert!(
        !stalls.iter().any(|i| *i > call_at && *i < result_at),
        "a stall while the tool ran: {stalls:?} between {call_at} and {result_at}"
    );
    assert!(ev[*after[0]]["quiet_ms"].as_u64().unwrap() >= 2000);
    assert_eq!(of_type(&ev, "turn.end")[0]["outcome"], "success");
    assert_usage_never_null(&ev);
}

/// `--max-repeat-calls 3`: the third identical call in a row is a violation, and so is every
/// further repeat; with `--enforce` the third stops the run.
#[test]
fn doom_loop_of_three_identical_calls() {
    need_cli!();
    for enforce in [false, true] {
        let d = Dirs::new();
        let same = bash("echo same");
        let fake = Fake::start(
            &d,
            &json!({"responses": [same, same, same, same, {"content": [{"type": "text", "text": "ok"}]}]}),
        );
        let mark = marker("code_loop");
        let mut args = vec![
            "--prompt",
            "Loop.",
            "--max-repeat-calls",
            "3",
            "--grace",
            "2s",
        ];
        if enforce {
            args.push("--enforce");
        }
        let (code, ev, err) = finish(claude_cmd(&d, &fake, &mark, &args, &[]));
        let v = of_type(&ev, "policy.violation");
        let counts: Vec<u64> = v.iter().map(|v| v["count"].as_u64().unwrap()).collect();
        assert!(
            v.iter()
                .all(|v| v["rule"] == "max_repeat_calls" && v["limit"] == 3)
        );
        let calls = of_type(&ev, "tool.call");
        assert_eq!(v[0]["tool_use_id"], calls[2]["tool_use_id"]);
        if enforce {
            assert_eq!(counts, [3]);
            let end = run_end(&ev);
            assert_eq!(
                (end["cause"].as_str(), end["reason"].as_str()),
                (Some("killed"), Some("policy"))
            );
            assert_eq!(code, Some(125));
        } else {
            assert_eq!(counts, [3, 4], "{err}");
            assert_eq!(v[1]["tool_use_id"], calls[3]["tool_use_id"]);
            assert_eq!(code, Some(0));
        }
        assert_usage_never_null(&ev);
        assert_no_procs(&mark, Duration::from_secs(1));
    }
}

/// `--max-output-bytes 5MB --enforce`: past 5 000 000 bytes of claude's stdout the run is
/// stopped (the model wrote 3 MB, which the CLI repeats in a delta and in the message).
#[test]
fn output_cap_of_5_mb() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("code_cap");
    let big = "x".repeat(3_000_000);
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [
                {"type": "text", "text": big},
                {"type": "tool_use", "name": "Bash", "input": {"command": long_job(30, &mark), "description": "wait"}}
            ]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Write a lot.",
            "--max-output-bytes",
            "5MB",
            "--enforce",
            "--grace",
            "2s",
        ],
        &[],
    );
    let (code, ev, _) = finish(c);
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["rule"], "max_output_bytes");
    assert_eq!(v[0]["limit"], 5_000_000);
    assert!(v[0]["count"].as_u64().unwrap() > 5_000_000);
    let end = run_end(&ev);
    assert_eq!(
        (end["cause"].as_str(), end["reason"].as_str()),
        (Some("killed"), Some("policy"))
    );
    assert_eq!(code, Some(125));
    assert_usage_never_null(&ev);
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// An API error ends the turn with an error result; usage is still there.
#[test]
fn usage_is_there_when_the_api_fails() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(&d, &json!({"responses": [{"error": 500, "repeat": -1}]}));
    let mark = marker("code_500");
    let mut c = claude_cmd(&d, &fake, &mark, &["--prompt", "Say hi."], &[]);
    c.env("CLAUDE_CODE_MAX_RETRIES", "1");
    let (code, ev, _) = finish(c);
    assert_eq!(of_type(&ev, "turn.end")[0]["is_error"], true);
    assert_eq!(code, Some(1));
    assert_usage_never_null(&ev);
}
