//! The OTLP sink live under `spawn` (a fake `claude` script): spans carry the real arrival
//! times, a guard's policy violation is an event on the offending tool call's span, and a child
//! killed by the guard still leaves a complete trace (open tool calls closed with an error).

#![cfg(unix)]

use crate::spawn::common as spawn_common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use spawn_common::fake::run;
use spawn_common::*;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn spans(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .flat_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect()
}

fn ns(s: &Value, k: &str) -> u64 {
    s[k].as_str().unwrap().parse().unwrap()
}

fn by_name<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

const RESULT_1: &str = r#"{"type":"user","session_id":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a b"}]}}"#;

#[test]
fn live_spans_carry_arrival_times_and_violations_sit_on_their_tool_call() {
    let d = Dirs::new();
    let file = d.tmp.path().join("t.otlp");
    let before = now_ns();
    let body = format!(
        "echo \"$INIT\"; sleep 0.3; echo \"$BASH_CALL\"; sleep 0.4; echo '{RESULT_1}'; sleep 0.2; \
         echo \"$BASH_CALL\" | sed 's/toolu_1/toolu_2/; s/msg_1/msg_2/'; echo \"$RESULT\""
    );
    let (out, ev, _) = run(
        &d,
        &body,
        &["--otlp", file.to_str().unwrap(), "--max-tool-calls", "1"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = now_ns();
    assert_eq!(of_type(&ev, "policy.violation").len(), 1);
    let spans = spans(&file);
    for s in &spans {
        let (start, end) = (ns(s, "startTimeUnixNano"), ns(s, "endTimeUnixNano"));
        assert!(
            before <= start && start <= end && end <= after,
            "{} within the run",
            s["name"]
        );
    }
    let tools = by_name(&spans, "execute_tool Bash");
    assert_eq!(tools.len(), 2);
    let first = tools
        .iter()
        .find(|s| s["events"].as_array().unwrap().is_empty())
        .unwrap();
    let took = ns(first, "endTimeUnixNano") - ns(first, "startTimeUnixNano");
    assert!(
        took >= 350_000_000,
        "call → result as the lines arrived: {took} ns"
    );
    let root = spans.iter().find(|s| s["parentSpanId"] == "").unwrap();
    assert!(ns(root, "endTimeUnixNano") - ns(root, "startTimeUnixNano") >= 850_000_000);
    // The second call broke --max-tool-calls 1: the event is on its span.
    let second = tools.iter().find(|s| *s != first).unwrap();
    let e = &second["events"][0];
    assert_eq!(e["name"], "boo_normalize.policy_violation");
    let attrs: Vec<&str> = e["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| kv["key"].as_str().unwrap())
        .collect();
    assert!(attrs.contains(&"boo_normalize.policy.rule"), "{attrs:?}");
    assert_eq!(
        second["status"]["code"], 2,
        "no result before the run ended"
    );
}

#[test]
fn a_child_killed_by_a_guard_still_leaves_a_whole_trace() {
    let d = Dirs::new();
    let file = d.tmp.path().join("t.otlp");
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; echo \"$BASH_CALL\"; sleep 300",
        &[
            "--otlp",
            file.to_str().unwrap(),
            "--allow-tools",
            "Read",
            "--enforce",
            "--grace",
            "1s",
        ],
    );
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(run_end(&ev)["cause"], "killed");
    let spans = spans(&file);
    let root = spans.iter().find(|s| s["parentSpanId"] == "").unwrap();
    assert_eq!(root["status"]["code"], 2, "killed without a result");
    let attrs = root["attributes"].as_array().unwrap();
    assert!(
        attrs
            .iter()
            .any(|kv| kv["key"] == "boo_normalize.run.cause"
                && kv["value"]["stringValue"] == "killed")
    );
    let tool = by_name(&spans, "execute_tool Bash")[0];
    assert_eq!(tool["status"]["code"], 2);
    assert_eq!(tool["events"][0]["name"], "boo_normalize.policy_violation");
    assert_no_procs(&mark, Duration::from_secs(2));
}
