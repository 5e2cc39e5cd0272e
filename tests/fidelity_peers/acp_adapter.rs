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
