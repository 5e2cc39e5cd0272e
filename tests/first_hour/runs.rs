//! Issue 29 §1, "promises on odd but legal input", on the real binary, what odd but legal runs
//! say: values filled from "the last message", one trace per invocation, and missing required
//! members.

use super::input::{path_str, stderr};
use crate::common::{self, bin, events, of_type, run};

// ---- 5. values filled from "the last message" ----

/// An assistant line of message `id` (`parent`: a subagent's), with `stop_reason` (raw JSON)
/// and, when `usage`, a usage object.
fn assistant(id: &str, parent: &str, block: &str, stop: &str, usage: bool) -> String {
    let usage = if usage {
        r#","usage":{"input_tokens":3,"output_tokens":5}"#
    } else {
        ""
    };
    format!(
        r#"{{"type":"assistant","session_id":"s-last","parent_tool_use_id":{parent},"message":{{"id":"{id}","type":"message","role":"assistant","model":"claude-x","content":[{block}],"stop_reason":{stop}{usage}}}}}"#
    )
}

const TOOL_USE: &str =
    r#"{"type":"tool_use","id":"toolu_a","name":"Bash","input":{"command":"ls"}}"#;
const TEXT: &str = r#"{"type":"text","text":"done"}"#;
const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s-last","model":"claude-x","tools":["Bash"],"cwd":"/","claude_code_version":"1.0.128"}"#;
const TOOL_RESULT: &str = r#"{"type":"user","session_id":"s-last","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}}"#;

/// `turn.end.stop_reason` of `lines` (plus a result line `result`).
fn turn_stop(lines: &[String], result: &str) -> (serde_json::Value, Vec<serde_json::Value>) {
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str(result);
    text.push('\n');
    let o = run(&[], text.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ev = events(&o.stdout);
    let end = of_type(&ev, "turn.end")[0]["stop_reason"].clone();
    let usage = of_type(&ev, "usage").iter().map(|u| (*u).clone()).collect();
    (end, usage)
}

/// Plain stream mode of older CLIs: only the last main-thread API message's own `stop_reason`
/// (any of its assistant lines, or its `message_delta`) fills `turn.end.stop_reason`; an earlier
/// message's or a subagent's never does, so a turn that ended in text without one is null.
/// Likewise the result line's `stop_reason` goes only to the last main-thread message's usage
/// record. Also on the real captures that showed it.
#[test]
fn turn_end_stop_reason_comes_from_the_last_message_only() {
    let result = r#"{"type":"result","subtype":"success","session_id":"s-last","is_error":false,"result":"done","num_turns":2}"#;
    let tool_then_text = vec![
        INIT.to_owned(),
        assistant("msg_a", "null", TOOL_USE, r#""tool_use""#, true),
        TOOL_RESULT.to_owned(),
        assistant("msg_b", "null", TEXT, "null", true),
    ];
    assert_eq!(
        turn_stop(&tool_then_text, result).0,
        serde_json::Value::Null
    );
    // A subagent's message after the main thread's last one does not count either.
    let mut with_sub = tool_then_text.clone();
    with_sub.push(assistant(
        "msg_s",
        r#""toolu_a""#,
        TEXT,
        r#""end_turn""#,
        true,
    ));
    assert_eq!(turn_stop(&with_sub, result).0, serde_json::Value::Null);
    // The last message's own stop_reason, from an earlier line of that message, counts.
    let own = vec![
        INIT.to_owned(),
        assistant("msg_a", "null", TOOL_USE, r#""tool_use""#, true),
        TOOL_RESULT.to_owned(),
        assistant("msg_b", "null", TEXT, r#""end_turn""#, true),
        assistant("msg_b", "null", TEXT, "null", true),
    ];
    assert_eq!(turn_stop(&own, result).0, "end_turn");
    // Its message_delta (partial messages) counts too.
    let delta = |ev: &str| {
        format!(
            r#"{{"type":"stream_event","session_id":"s-last","parent_tool_use_id":null,"event":{ev}}}"#
        )
    };
    let mut partial = tool_then_text.clone();
    partial.insert(
        3,
        delta(r#"{"type":"message_start","message":{"id":"msg_b","model":"claude-x","usage":{"input_tokens":3,"output_tokens":1}}}"#),
    );
    partial.insert(
        4,
        delta(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#),
    );
    assert_eq!(turn_stop(&partial, result).0, "end_turn");
    // The result's own stop_reason wins; it fills the last message's usage record only, not a
    // pending record of an earlier message when the last one had no usage.
    let with_stop = r#"{"type":"result","subtype":"success","session_id":"s-last","is_error":false,"result":"done","num_turns":2,"stop_reason":"end_turn"}"#;
    let no_usage_last = vec![
        INIT.to_owned(),
        assistant("msg_a", "null", TEXT, "null", true),
        assistant("msg_b", "null", TEXT, "null", false),
    ];
    let (stop, usage) = turn_stop(&no_usage_last, with_stop);
    assert_eq!(stop, "end_turn");
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["message_id"], "msg_a");
    assert_eq!(
        usage[0]["stop_reason"],
        serde_json::Value::Null,
        "{}",
        usage[0]
    );
    // Real captures whose last message (text) carries no stop_reason, after tool_use ones that do.
    for (name, want) in [
        (
            "fixtures/real/terragon__edit.ndjson",
            vec![serde_json::Value::Null],
        ),
        (
            "fixtures/real/sheenapps__plan-tasks-example.ndjson",
            vec![serde_json::Value::Null],
        ),
        (
            "fixtures/captured/1.0.128/tools.ndjson",
            vec!["end_turn".into()],
        ),
        (
            "fixtures/captured/2.0.76/tools.ndjson",
            vec!["end_turn".into()],
        ),
    ] {
        let o = run(&[path_str(&common::root().join(name))], b"");
        let ev = events(&o.stdout);
        let got: Vec<_> = of_type(&ev, "turn.end")
            .iter()
            .map(|e| e["stop_reason"].clone())
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

// ---- 6. one trace per agent invocation ----

/// Root spans of OTLP/JSON requests (one per line in `lines`, or the bodies a receiver got):
/// trace id → (session id, number of spans, spans whose parent is not in the trace).
fn traces(requests: &[serde_json::Value]) -> Vec<(String, String, usize, usize)> {
    let mut spans: Vec<&serde_json::Value> = Vec::new();
    for r in requests {
        for rs in r["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                spans.extend(ss["spans"].as_array().unwrap());
            }
        }
    }
    let attr = |s: &serde_json::Value, k: &str| {
        s["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == k)
            .map(|a| a["value"]["stringValue"].as_str().unwrap_or("").to_owned())
    };
    let mut out = Vec::new();
    for root in spans
        .iter()
        .filter(|s| s["parentSpanId"].as_str().unwrap_or("").is_empty())
    {
        let trace = root["traceId"].as_str().unwrap();
        let mine: Vec<_> = spans.iter().filter(|s| s["traceId"] == trace).collect();
        let ids: Vec<_> = mine.iter().map(|s| s["spanId"].clone()).collect();
        let orphans = mine
            .iter()
            .filter(|s| {
                let p = &s["parentSpanId"];
                !p.as_str().unwrap_or("").is_empty() && !ids.contains(p)
            })
            .count();
        let session = attr(root, "gen_ai.conversation.id").unwrap_or_default();
        out.push((trace.to_owned(), session, mine.len(), orphans));
    }
    out
}

/// A loopback OTLP/HTTP receiver answering 200 to every request; the JSON bodies it got.
fn receiver() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let g = got.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let g = g.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut w = s;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut len = 0;
                    loop {
                        let mut h = String::new();
                        r.read_line(&mut h).unwrap();
                        let h = h.trim_end().to_ascii_lowercase();
                        if h.is_empty() {
                            break;
                        }
                        if let Some(v) = h.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).unwrap();
                    g.lock()
                        .unwrap()
                        .push(serde_json::from_slice(&body).unwrap());
                    let ok = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                    if w.write_all(ok).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, got)
}

/// A log holding three `claude -p` runs one after the other (as a loop appending to one file
/// writes it: a new `system/init` with a new session each) gives three traces, each with one
/// root whose spans all hang inside it, on `--format otlp`, `--otlp FILE` and `--otlp-endpoint`.
#[test]
fn each_invocation_in_a_log_is_its_own_trace() {
    let d = tempfile::tempdir().unwrap();
    let real = common::root().join("fixtures/real");
    let parts = ["terragon__bash", "terragon__edit", "terragon__todo"];
    let mut log = Vec::new();
    let mut sessions = Vec::new();
    for p in parts {
        let text = std::fs::read(real.join(format!("{p}.ndjson"))).unwrap();
        let ev = events(&run(&[], &text).stdout);
        sessions.push(
            of_type(&ev, "session.init")[0]["session_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        log.extend_from_slice(&text);
    }
    let file = d.path().join("loop.ndjson");
    std::fs::write(&file, &log).unwrap();
    let check = |reqs: &[serde_json::Value], what: &str| {
        let t = traces(reqs);
        assert_eq!(t.len(), 3, "{what}: one root per invocation: {t:?}");
        let mut ids: Vec<_> = t.iter().map(|x| x.0.clone()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 3, "{what}: three trace ids");
        let got: Vec<_> = t.iter().map(|x| x.1.clone()).collect();
        assert_eq!(got, sessions, "{what}: each root names its session");
        for (trace, _, n, orphans) in &t {
            assert!(*n > 1, "{what}: trace {trace} has its spans");
            assert_eq!(*orphans, 0, "{what}: a span of {trace} hangs outside it");
        }
    };
    let json_lines = |b: &[u8]| -> Vec<serde_json::Value> {
        b.split(|&c| c == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    };
    let o = run(&["--format", "otlp", path_str(&file)], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check(&json_lines(&o.stdout), "--format otlp");
    let otlp = d.path().join("t.otlp");
    let o = run(&["--otlp", path_str(&otlp), path_str(&file)], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check(&json_lines(&std::fs::read(&otlp).unwrap()), "--otlp FILE");
    let (url, got) = receiver();
    let o = bin()
        .args(["--otlp-endpoint", &url, path_str(&file)])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let end = events(&o.stdout).last().unwrap().clone();
    assert_eq!(end["otlp"]["failed"], 0, "{end}");
    check(&got.lock().unwrap(), "--otlp-endpoint");
    // A single invocation keeps its one trace, with the id it always had.
    let one = run(
        &["--format", "otlp", "--run-id", "r1"],
        &std::fs::read(real.join("terragon__bash.ndjson")).unwrap(),
    );
    assert_eq!(traces(&json_lines(&one.stdout)).len(), 1);
}

// ---- 7. a required member missing ----

/// A required member missing from a line the CLI wrote is reported the way a tool_result
/// without `tool_use_id` is: the line's first event says how the source broke the schema in
/// `violation` (`session_id`; `message`, `message.content` of a user or assistant line), joined
/// with a block's own violation; every event still validates against the strict schema.
#[test]
fn a_missing_required_member_says_how_the_source_broke_the_schema() {
    let validator = jsonschema::validator_for(&boo_normalize::schema::schema(true)).unwrap();
    let lines = [
        r#"{"type":"system","subtype":"init","session_id":"s","tools":[],"model":"m","cwd":"/"}"#,
        r#"{"type":"user","session_id":"s","message":{"role":"user"}}"#,
        r#"{"type":"user","session_id":"s"}"#,
        r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
        r#"{"type":"assistant","session_id":"s","message":{"id":"m1","role":"assistant","content":null}}"#,
        r#"{"type":"assistant","session_id":"s","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#,
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let o = run(&[], input.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ev = events(&o.stdout);
    for e in &ev {
        assert!(validator.is_valid(e), "not valid: {e}");
    }
    // line → (the type of its event that carries the violation, what it says)
    let want = [
        (2, "skipped", r#"the user line has no "message.content""#),
        (3, "unknown", r#"the user line has no "message""#),
        (4, "user.text", r#"the user line has no "session_id""#),
        (
            5,
            "unknown",
            r#"the assistant line has "message.content" null"#,
        ),
        (
            7,
            "tool.result",
            r#"the user line has no "session_id"; the tool_result block has no "tool_use_id""#,
        ),
        (8, "turn.end", r#"the result line has no "session_id""#),
    ];
    let with: Vec<_> = ev.iter().filter(|e| e.get("violation").is_some()).collect();
    assert_eq!(with.len(), want.len(), "{with:#?}");
    for ((line, ty, why), e) in want.iter().zip(&with) {
        assert_eq!(e["line"], *line, "{e}");
        assert_eq!(e["type"], *ty, "{e}");
        assert_eq!(
            e["violation"],
            format!("the source broke the schema: {why}"),
            "line {line}"
        );
    }
    // A well-formed line says nothing (line 6: its tool.call has no violation).
    let call = of_type(&ev, "tool.call");
    assert!(call[0].get("violation").is_none());
}
