//! The ACP adapter's agent tests: the stop reasons it reads from result lines, the replayed user
//! line, the session going idle, and the per-message usage it turns into `usage_update`
//! (context used = input + output + cache read + cache creation of the last main-thread message).

use super::{normalize, of_type};
use serde_json::{Value, json};

fn result(subtype: &str, stop_reason: Value, is_error: bool, errors: Value) -> Value {
    json!({"type": "result", "subtype": subtype, "stop_reason": stop_reason,
        "is_error": is_error, "result": "", "errors": errors, "duration_ms": 0,
        "duration_api_ms": 0, "num_turns": 1, "total_cost_usd": 0,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0},
        "modelUsage": {}, "permission_denials": [], "uuid": "r-1", "session_id": "test-session"})
}

fn idle() -> Value {
    json!({"type": "system", "subtype": "session_state_changed", "state": "idle",
        "session_id": "test-session"})
}

/// Item 2: the result line's `stop_reason` (`max_tokens` also on an error result and on a
/// success with `is_error`) and an explicit null reach `turn.end`; the idle state arrives.
#[test]
fn stop_reasons_of_results_are_kept() {
    let cases = [
        (
            result("success", json!("max_tokens"), false, json!([])),
            "success",
        ),
        (
            result("success", json!("max_tokens"), true, json!([])),
            "error",
        ),
        (
            result(
                "error_during_execution",
                json!("max_tokens"),
                true,
                json!(["some error"]),
            ),
            "during_execution",
        ),
    ];
    for (line, outcome) in cases {
        let ev = normalize(&[line.clone(), idle()]);
        let end = of_type(&ev, "turn.end")[0];
        assert_eq!(end["stop_reason"], "max_tokens", "{line}");
        assert_eq!(end["outcome"], outcome, "{line}");
        assert_eq!(end["errors"], line["errors"]);
        assert_eq!(of_type(&ev, "session.state")[0]["state"], "idle");
    }
    let ev = normalize(&[result("success", Value::Null, false, json!([])), idle()]);
    assert!(of_type(&ev, "turn.end")[0]["stop_reason"].is_null());
}

/// A replayed user line says so.
#[test]
fn a_replayed_prompt_is_marked() {
    let ev = normalize(&[json!({"type": "user", "message": {"role": "user",
        "content": [{"type": "text", "text": "test"}]}, "parent_tool_use_id": null,
        "uuid": "u-replayed", "session_id": "test-session", "isReplay": true})]);
    let t = of_type(&ev, "user.text")[0];
    assert_eq!(
        (&t["replay"], &t["uuid"]),
        (&json!(true), &json!("u-replayed"))
    );
}

/// Item 2: the adapter's assistant lines carry usage but no message id; each is a per-message
/// record with all four counts (1000 + 500 + 200 + 100 = 1800 used), a subagent's kept apart by
/// its parent; the result's `modelUsage` keeps each model's context window.
#[test]
fn usage_of_messages_without_id_is_kept() {
    let assistant = |model: &str, parent: Value, usage: Value| {
        json!({"type": "assistant", "parent_tool_use_id": parent, "uuid": format!("u-{model}"),
            "session_id": "test-session", "message": {"model": model,
                "content": [{"type": "text", "text": "hello"}], "usage": usage}})
    };
    let main = json!({"input_tokens": 1000, "output_tokens": 500,
        "cache_read_input_tokens": 200, "cache_creation_input_tokens": 100});
    let sub = json!({"input_tokens": 50, "output_tokens": 25, "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0});
    let mut end = result("success", json!("end_turn"), false, json!([]));
    end["modelUsage"] = json!({
        "claude-opus-4-20250514": {"inputTokens": 1000, "outputTokens": 500,
            "cacheReadInputTokens": 200, "cacheCreationInputTokens": 100,
            "webSearchRequests": 0, "costUSD": 0.01, "contextWindow": 1000000,
            "maxOutputTokens": 16384},
        "claude-haiku-4-5-20251001": {"inputTokens": 50, "outputTokens": 25,
            "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0, "webSearchRequests": 0,
            "costUSD": 0.001, "contextWindow": 200000, "maxOutputTokens": 8192}});
    let ev = normalize(&[
        assistant("claude-opus-4-20250514", Value::Null, main.clone()),
        assistant(
            "claude-haiku-4-5-20251001",
            json!("tool_use_123"),
            sub.clone(),
        ),
        end.clone(),
        idle(),
    ]);
    let u = of_type(&ev, "usage");
    assert_eq!(u.len(), 2, "{ev:#?}");
    let top = u
        .iter()
        .find(|e| e["parent_tool_use_id"].is_null())
        .unwrap();
    assert_eq!(top["usage"], main);
    assert_eq!(top["model"], "claude-opus-4-20250514");
    let used: u64 = top["usage"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(used, 1800);
    let inner = u
        .iter()
        .find(|e| e["parent_tool_use_id"] == "tool_use_123")
        .unwrap();
    assert_eq!(inner["usage"], sub);
    assert_eq!(inner["model"], "claude-haiku-4-5-20251001");
    let t = of_type(&ev, "turn.end")[0];
    assert_eq!(t["model_usage"], end["modelUsage"]);
    assert_eq!(
        t["model_usage"]["claude-opus-4-20250514"]["contextWindow"],
        1000000
    );
}

/// The adapter's tool tests (`src/tests/tools.test.ts` at the same commit): server-side results
/// inside the assistant turn (web search results, an MCP result of text blocks, a code
/// execution result) keep their raw content and pair with their calls; a Read result of text
/// blocks and one with an image keep their blocks (a small image's data included).
#[test]
fn tool_results_keep_their_raw_output() {
    let call = |id: &str, name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "input": input});
    let search = json!([{"type": "web_search_result", "url": "https://example.com",
        "title": "Example", "encrypted_content": "encrypted content here",
        "page_age": "2 days ago"}]);
    let mcp = json!([{"type": "text", "text": "Result 1", "citations": null},
        {"type": "text", "text": "Result 2", "citations": null}]);
    let bash = json!({"type": "bash_code_execution_result", "stdout": "file1.txt\nfile2.txt",
        "stderr": "", "return_code": 0, "content": []});
    let lines = json!({"type": "text", "text": "Line 1\nLine 2\nLine 3"});
    let image = json!({"type": "image",
        "source": {"type": "base64", "data": "iVBORw0KGgo=", "media_type": "image/png"}});
    let ev = normalize(&[
        json!({"type": "assistant", "session_id": "test-session", "message": {"id": "msg_t",
            "content": [call("toolu_web", "WebSearch", json!({"query": "test search"})),
                call("toolu_abc", "mcp__server__search", json!({"term": "test"})),
                call("toolu_bash", "Bash", json!({"command": "ls -la"})),
                call("toolu_read", "Read", json!({"file_path": "/test/file.txt"})),
                call("toolu_img", "Read", json!({"file_path": "/test/image.png"}))]}}),
        json!({"type": "assistant", "session_id": "test-session", "message": {"id": "msg_t",
            "content": [
                {"type": "web_search_tool_result", "tool_use_id": "toolu_web", "content": search},
                {"type": "mcp_tool_result", "tool_use_id": "toolu_abc", "content": mcp,
                 "is_error": false},
                {"type": "bash_code_execution_tool_result", "tool_use_id": "toolu_bash",
                 "content": bash}]}}),
        json!({"type": "user", "session_id": "test-session", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_read", "content": [lines]},
            {"type": "tool_result", "tool_use_id": "toolu_img", "content": [image],
             "is_error": false}]}}),
    ]);
    let r = of_type(&ev, "tool.result");
    let got: Vec<(Value, Value, Value, Value)> = r
        .iter()
        .map(|e| {
            (
                e["tool_use_id"].clone(),
                e["name"].clone(),
                e["server"].clone(),
                e["content"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (json!("toolu_web"), json!("WebSearch"), json!(true), search),
            (
                json!("toolu_abc"),
                json!("mcp__server__search"),
                json!(true),
                mcp
            ),
            (json!("toolu_bash"), json!("Bash"), json!(true), bash),
            (
                json!("toolu_read"),
                json!("Read"),
                json!(false),
                json!([lines])
            ),
            (
                json!("toolu_img"),
                json!("Read"),
                json!(false),
                json!([image])
            ),
        ]
    );
    assert!(r.iter().all(|e| e["is_error"] == false));
}
