//! Redaction of other agents' streams and of the parts of a line around a delta: a secret
//! streamed across Gemini CLI, Copilot CLI or Cursor pieces is replaced in the raw lines that
//! `redact` and `--record` keep (not only in the envelope), a secret in any member of a delta
//! line is found, a secret used as a member name never reaches a mark's `path`, and every
//! agent fixture comes out of `redact` byte for byte.

use crate::common;
use crate::dialects::contract::agent_fixtures;

use common::{bin, events, run};
use serde_json::{Value, json};

const TOKEN: &str = "ghp_4EBTEx2QVFXan9wsYIs9kn7efnwj72fHjcQr";

fn ndjson(lines: &[Value]) -> Vec<u8> {
    let mut b = Vec::new();
    for l in lines {
        b.extend_from_slice(l.to_string().as_bytes());
        b.push(b'\n');
    }
    b
}

fn count(hay: &[u8], needle: &str) -> usize {
    hay.windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

/// `redact` of `input`: the output, with the line count and JSON of every line checked.
fn redact(input: &[u8]) -> Vec<u8> {
    let out = run(&["redact", "-"], input);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(count(&out.stdout, "\n"), count(input, "\n"), "line count");
    for l in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<Value>(l).expect("valid JSON");
    }
    out.stdout
}

#[test]
fn a_secret_split_across_other_agents_pieces_is_replaced_in_the_raw_lines() {
    let (a, b) = TOKEN.split_at(19);
    let streams: Vec<(&str, Vec<Value>)> = vec![
        (
            "gemini",
            vec![
                json!({"type":"init","timestamp":"2026-08-06T10:00:00.000Z","session_id":"s","model":"auto"}),
                json!({"type":"message","timestamp":"2026-08-06T10:00:01.100Z","role":"assistant","content":format!("Your token is {a}"),"delta":true}),
                json!({"type":"message","timestamp":"2026-08-06T10:00:01.120Z","role":"assistant","content":format!("{b} ok."),"delta":true}),
                json!({"type":"result","timestamp":"2026-08-06T10:00:02.000Z","status":"success","stats":{"total_tokens":10,"input_tokens":5,"output_tokens":5,"duration_ms":100,"tool_calls":0}}),
            ],
        ),
        (
            "cursor text",
            vec![
                json!({"type":"system","subtype":"init","session_id":"s","model":"Auto","cwd":"/w","apiKeySource":"login","permissionMode":"default"}),
                json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":format!("Your token is {a}")}]},"session_id":"s","timestamp_ms":1}),
                json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":format!("{b} ok.")}]},"session_id":"s","timestamp_ms":2}),
                json!({"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"done","duration_ms":3}),
            ],
        ),
        (
            "cursor thinking",
            vec![
                json!({"type":"system","subtype":"init","session_id":"s","model":"Auto","cwd":"/w","apiKeySource":"login","permissionMode":"default"}),
                json!({"type":"thinking","subtype":"delta","text":format!("the key {a}"),"session_id":"s","timestamp_ms":1}),
                json!({"type":"thinking","subtype":"delta","text":format!("{b} is set"),"session_id":"s","timestamp_ms":2}),
                json!({"type":"thinking","subtype":"completed","session_id":"s","timestamp_ms":3}),
                json!({"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"done","duration_ms":3}),
            ],
        ),
        (
            "copilot message, reasoning and tool input",
            vec![
                json!({"type":"session.start","data":{"sessionId":"s","selectedModel":"m"},"id":"a0","timestamp":"2026-12-03T11:19:03.340Z","parentId":null}),
                json!({"type":"assistant.reasoning_delta","data":{"reasoningId":"r1","deltaContent":format!("need {a}")},"ephemeral":true,"id":"a1","timestamp":"2026-12-03T11:19:03.341Z","parentId":"a0"}),
                json!({"type":"assistant.reasoning_delta","data":{"reasoningId":"r1","deltaContent":format!("{b} now")},"ephemeral":true,"id":"a2","timestamp":"2026-12-03T11:19:03.342Z","parentId":"a1"}),
                json!({"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":format!("Your token is {a}")},"ephemeral":true,"id":"a3","timestamp":"2026-12-03T11:19:03.347Z","parentId":"a2"}),
                json!({"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":format!("{b} ok.")},"ephemeral":true,"id":"a4","timestamp":"2026-12-03T11:19:03.348Z","parentId":"a3"}),
                json!({"type":"assistant.tool_call_delta","data":{"toolCallId":"t1","toolName":"bash","toolType":"function","inputDelta":format!("{{\"command\":\"export T={a}")},"ephemeral":true,"id":"a5","timestamp":"2026-12-03T11:19:03.349Z","parentId":"a4"}),
                json!({"type":"assistant.tool_call_delta","data":{"toolCallId":"t1","toolName":"bash","toolType":"function","inputDelta":format!("{b}\"}}")},"ephemeral":true,"id":"a6","timestamp":"2026-12-03T11:19:03.350Z","parentId":"a5"}),
                json!({"type":"result","timestamp":"2026-12-03T11:19:04.000Z","sessionId":"s","exitCode":0}),
            ],
        ),
    ];
    for (name, lines) in streams {
        let input = ndjson(&lines);
        let out = redact(&input);
        assert_eq!(count(&out, TOKEN), 0, "{name}: whole token left");
        assert_eq!(count(&out, a), 0, "{name}: its first piece left");
        assert_eq!(count(&out, b), 0, "{name}: its second piece left");
        assert!(count(&out, "[REDACTED:github_token:") >= 1, "{name}");
        // Read back, the pieces never make the token again.
        let envelope = run(&["-"], &out).stdout;
        assert_eq!(
            count(&envelope, a),
            0,
            "{name}: envelope of the redacted copy"
        );
        // The capture `--record` keeps under `--redact`.
        let dir = tempfile::tempdir().unwrap();
        let cap = dir.path().join("run.cap");
        let input_file = dir.path().join("in.jsonl");
        std::fs::write(&input_file, &input).unwrap();
        let r = bin()
            .args(["--redact", "--record"])
            .arg(&cap)
            .arg(&input_file)
            .output()
            .unwrap();
        assert!(r.status.success(), "{name}: {r:?}");
        let kept = std::fs::read(&cap).unwrap();
        assert_eq!(count(&kept, a), 0, "{name}: --record capture");
    }
}

#[test]
fn every_member_of_a_claude_delta_line_is_scanned() {
    let lines = [
        json!({"type":"stream_event","session_id":"s1","event":{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}}),
        json!({"type":"stream_event","session_id":"s1","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}),
        json!({"type":"stream_event","session_id":"s1","uuid":TOKEN,"note":format!("see {TOKEN}"),"event":{"type":"content_block_delta","index":0,"extra":TOKEN,"delta":{"type":"text_delta","text":"hello","x":TOKEN}}}),
        json!({"type":"stream_event","session_id":"s1","event":{"type":"content_block_stop","index":0}}),
        json!({"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"x","num_turns":1}),
    ];
    let out = redact(&ndjson(&lines));
    assert_eq!(count(&out, TOKEN), 0);
    assert_eq!(count(&out, "[REDACTED:github_token:"), 4);
    assert_eq!(count(&out, "\"text\":\"hello\""), 1, "the fragment kept");
    let ev = events(&run(&["--redact", "-"], &ndjson(&lines)).stdout);
    assert!(!serde_json::to_string(&ev).unwrap().contains(TOKEN));
}

#[test]
fn a_secret_member_name_never_reaches_a_marks_path() {
    let key =
        "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz1Ab3AA";
    let lines = [
        json!({"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/x","tools":[],"claude_code_version":"2.1.45"}),
        json!({"type":"assistant","session_id":"s","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"X","input":{"tokens":{key:{"note":"password=Zq8vR2mNp4Lk7Xw1"}}}}]}}),
        json!({"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"x","num_turns":1}),
    ];
    let out = run(&["--redact", "-"], &ndjson(&lines));
    assert!(out.status.success());
    assert_eq!(
        count(&out.stdout, key),
        0,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let ev = events(&out.stdout);
    let call = ev.iter().find(|e| e["type"] == "tool.call").unwrap();
    let paths: Vec<&str> = call["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/message/content/0/input/tokens/[REDACTED:anthropic_key:")),
        "{paths:?}"
    );
}

#[test]
fn every_agent_fixture_is_unchanged() {
    for (dialect, path) in agent_fixtures() {
        let input = std::fs::read(&path).unwrap();
        let out = bin()
            .args(["redact", "--summary"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{dialect} {}: {out:?}",
            path.display()
        );
        assert!(
            out.stdout == input,
            "{dialect} {}: redact changed clean input",
            path.display()
        );
    }
}
