//! The community AI SDK provider's language-model tests: the SDK messages they stream in and the
//! facts their stream parts carry; plus the AI SDK UI message stream's own rule that every tool
//! chunk has a `toolCallId` and a `toolName` string (vercel/ai,
//! `packages/ai/src/ui-message-stream/ui-message-chunks.ts` @ 014f4437a9faabe3e62741158a43534ebb93cd7a).

use super::{ai_sdk, normalize, of_type, on_line};
use serde_json::{Value, json};

fn result(extra: Value) -> Value {
    let mut r = json!({"type": "result", "subtype": "success", "session_id": "s-aip",
        "usage": {"input_tokens": 10, "output_tokens": 5}, "total_cost_usd": 0.001,
        "duration_ms": 500});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

/// Item 3: SDK 0.3.x reports an API failure as an assistant line whose `error` holds the kind
/// and whose content is empty, then an error result whose `errors` say why. The kind decides
/// retry (`overloaded`) or not (`model_not_found`) or re-authentication (`oauth_org_not_allowed`).
#[test]
fn structured_api_errors_keep_their_kind_and_reasons() {
    for (kind, why) in [
        ("overloaded", "API request failed"),
        ("model_not_found", "Request failed with status 404"),
        ("oauth_org_not_allowed", "Request failed with status 403"),
    ] {
        let lines = [
            json!({"type": "assistant", "error": kind,
                "message": {"type": "message", "role": "assistant", "content": []},
                "session_id": "structured-error-session"}),
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
                "errors": [why], "session_id": "structured-error-session", "total_cost_usd": 0,
                "duration_ms": 10, "usage": {"input_tokens": 0, "output_tokens": 0}}),
        ];
        let ev = normalize(&lines);
        let e = of_type(&ev, "api.error");
        assert_eq!(e.len(), 1, "{kind}: {ev:#?}");
        assert_eq!(e[0]["error"], kind);
        assert!(e[0]["text"].is_null());
        assert!(of_type(&ev, "skipped").is_empty(), "{kind}: {ev:#?}");
        let end = of_type(&ev, "turn.end")[0];
        assert_eq!(
            (&end["outcome"], &end["is_error"]),
            (&json!("during_execution"), &json!(true))
        );
        assert_eq!(end["errors"], json!([why]));
        // The UI stream's error chunk says why: from errors[], as there is no result text.
        let chunks = ai_sdk(&lines);
        let err: Vec<&Value> = chunks.iter().filter(|c| c["type"] == "error").collect();
        assert_eq!(err.len(), 1, "{kind}: {chunks:#?}");
        assert!(
            err[0]["errorText"].as_str().unwrap().contains(why),
            "{kind}: {err:?}"
        );
        let finish = chunks.iter().find(|c| c["type"] == "finish").unwrap();
        assert_eq!(finish["finishReason"], "error");
    }
}

/// Item 5: a refused answer, the fallback notice naming the retracted lines, and the
/// replacement that `supersedes` it: every event says which line it came from, so the refused
/// text, its tool call and its tool result can be dropped by `uuid`.
#[test]
fn superseded_answers_are_linked_to_their_replacement() {
    let lines = [
        json!({"type": "assistant", "uuid": "uuid-refused", "message": {"content": [
            {"type": "text", "text": "Refused partial answer"},
            {"type": "tool_use", "id": "toolu_gen_refused", "name": "Bash",
             "input": {"command": "echo refused"}}]}}),
        json!({"type": "user", "uuid": "uuid-toolresult", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_gen_refused", "name": "Bash",
             "content": "refused", "is_error": false}]}}),
        json!({"type": "system", "subtype": "model_refusal_fallback", "trigger": "refusal",
            "direction": "retry", "original_model": "claude-opus-4-6",
            "fallback_model": "claude-sonnet-4-5", "request_id": "req-notice",
            "retracted_message_uuids": ["uuid-refused", "uuid-toolresult"],
            "content": "Retried on fallback model", "session_id": "gen-notice-session"}),
        json!({"type": "assistant", "uuid": "uuid-replacement", "supersedes": ["uuid-refused"],
            "message": {"content": [{"type": "text", "text": "Replacement answer"}]}}),
        result(json!({})),
    ];
    let ev = normalize(&lines);
    for e in on_line(&ev, 1) {
        assert_eq!(e["uuid"], "uuid-refused", "{e}");
    }
    assert_eq!(of_type(&ev, "tool.result")[0]["uuid"], "uuid-toolresult");
    let f = of_type(&ev, "model.fallback")[0];
    assert_eq!(f["original_model"], "claude-opus-4-6");
    assert_eq!(f["fallback_model"], "claude-sonnet-4-5");
    assert_eq!(f["trigger"], "refusal");
    assert_eq!(
        f["extra"]["retracted_message_uuids"],
        json!(["uuid-refused", "uuid-toolresult"])
    );
    let texts = of_type(&ev, "text");
    assert_eq!(texts[1]["text"], "Replacement answer");
    assert_eq!(texts[1]["uuid"], "uuid-replacement");
    assert_eq!(texts[1]["supersedes"], json!(["uuid-refused"]));
    assert!(texts[0].get("supersedes").is_none());
    // In the UI stream both answers are parts of their own.
    let chunks = ai_sdk(&lines);
    let deltas: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .collect();
    let said: Vec<&Value> = deltas.iter().map(|c| &c["delta"]).collect();
    assert_eq!(
        said,
        [
            &json!("Refused partial answer"),
            &json!("Replacement answer")
        ]
    );
    assert_ne!(deltas[0]["id"], deltas[1]["id"]);
}

/// Item 9: a tool result without `content` has none (null, not ""), and the string "null"
/// stays that string.
#[test]
fn tool_result_content_is_not_made_up() {
    let ev = normalize(&[
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "toolu_gen_nocontent", "name": "Bash", "input": {"command": "true"}},
            {"type": "tool_use", "id": "toolu_gen_nullstring", "name": "Bash", "input": {"command": "x"}}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_gen_nocontent", "name": "Bash"},
            {"type": "tool_result", "tool_use_id": "toolu_gen_nullstring", "name": "Bash",
             "content": "null"}]}}),
        json!({"type": "user", "message": {"content": [{"type": "tool_error",
            "tool_use_id": "toolu_gen_error", "name": "Read",
            "error": "File not found: /nonexistent.txt"}]}}),
    ]);
    let r = of_type(&ev, "tool.result");
    assert_eq!(r.len(), 2);
    assert!(r[0]["content"].is_null());
    assert_eq!(r[0]["name"], "Bash");
    assert_eq!(r[1]["content"], "null");
    // The result block's own `name` (the call's name comes from the pairing) is kept too.
    assert_eq!(r[0]["block_extra"], json!({"name": "Bash"}));
    // A block type the CLI does not write is kept whole.
    let u = on_line(&ev, 3)[0];
    assert_eq!(u["type"], "unknown");
    assert_eq!(u["raw"]["error"], "File not found: /nonexistent.txt");
}

/// Item 6: the same tool_use id again with another input (the provider's tool call ends with
/// the replaced input): the envelope keeps both, and the UI part ends with the replaced input;
/// once the call's output came, a late revision no longer replaces the part.
#[test]
fn a_revised_tool_input_reaches_the_envelope_and_the_ui() {
    let call = |arg: &str| {
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
            "id": "toolu_nonprefix", "name": "TestTool", "input": {"arg": arg}}]}})
    };
    let done = json!({"type": "user", "message": {"content": [{"type": "tool_result",
        "tool_use_id": "toolu_nonprefix", "content": "ok"}]}});
    let end = result(json!({"usage": {"input_tokens": 10, "output_tokens": 2}, "duration_ms": 50}));
    let lines = [call("initial"), call("replaced"), end.clone()];
    let ev = normalize(&lines);
    assert_eq!(
        of_type(&ev, "tool.call")[0]["input"],
        json!({"arg": "initial"})
    );
    let r = of_type(&ev, "tool.call.revised");
    assert_eq!(r.len(), 1, "{ev:#?}");
    assert_eq!(r[0]["input"], json!({"arg": "replaced"}));
    assert_eq!(r[0]["tool_use_id"], "toolu_nonprefix");
    let inputs = |chunks: &[Value]| -> Vec<Value> {
        chunks
            .iter()
            .filter(|c| c["type"] == "tool-input-available")
            .map(|c| json!([c["toolCallId"], c["input"]]))
            .collect()
    };
    let chunks = ai_sdk(&lines);
    assert_eq!(
        inputs(&chunks),
        [
            json!(["toolu_nonprefix", {"arg": "initial"}]),
            json!(["toolu_nonprefix", {"arg": "replaced"}])
        ]
    );
    let late = ai_sdk(&[call("initial"), done, call("replaced"), end]);
    assert_eq!(
        inputs(&late),
        [json!(["toolu_nonprefix", {"arg": "initial"}])]
    );
}

/// Result subtypes and finish reasons: `error_max_turns` is the max-turns outcome (`length` in
/// the UI stream); a subagent's tool call and result keep their parent.
#[test]
fn max_turns_and_subagent_parents() {
    let lines = [
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Partial response"}]}}),
        json!({"type": "assistant", "parent_tool_use_id": "toolu_task_parent", "message": {
            "content": [{"type": "tool_use", "id": "toolu_child", "name": "Bash",
                "input": {"command": "echo \"hi\""}}]}}),
        json!({"type": "user", "parent_tool_use_id": "toolu_task_parent", "message": {
            "content": [{"type": "tool_result", "tool_use_id": "toolu_child", "name": "Bash",
                "content": "ok", "is_error": false}]}}),
        json!({"type": "result", "subtype": "error_max_turns", "session_id": "test-session-123",
            "usage": {"input_tokens": 100, "output_tokens": 50}}),
    ];
    let ev = normalize(&lines);
    let end = of_type(&ev, "turn.end")[0];
    assert_eq!(end["outcome"], "max_turns");
    assert_eq!(
        end["usage"],
        json!({"input_tokens": 100, "output_tokens": 50})
    );
    for t in ["tool.call", "tool.result"] {
        let e = of_type(&ev, t)[0];
        assert_eq!(e["parent_tool_use_id"], "toolu_task_parent", "{e}");
        assert_eq!(e["tool_use_id"], "toolu_child");
    }
    let chunks = ai_sdk(&lines);
    assert_eq!(chunks.last().unwrap()["finishReason"], "length");
}

/// `api_retry`, `permission_denied`, a result's `permission_denials` and the
/// `prompt_suggestion` after the result keep their facts.
#[test]
fn retries_denials_and_suggestions_keep_their_facts() {
    let retry = |n: u64, delay: u64| {
        json!({"type": "system", "subtype": "api_retry", "attempt": n, "max_retries": 3,
            "retry_delay_ms": delay, "error_status": 529, "error": "overloaded",
            "session_id": "retry-session"})
    };
    let denials = json!([{"tool_name": "Bash", "tool_use_id": "hook-tool-1",
        "tool_input": {"command": "rm -rf"}}]);
    let ev = normalize(&[
        retry(1, 1000),
        retry(2, 2000),
        json!({"type": "system", "subtype": "permission_denied", "tool_name": "Bash",
            "tool_use_id": "tool-1", "decision_reason_type": "rule",
            "decision_reason": "Matched deny rule", "message": "Permission denied by rule",
            "session_id": "denied-session"}),
        result(json!({"permission_denials": denials})),
        json!({"type": "prompt_suggestion", "suggestion": "Run the test suite next",
            "session_id": "suggestion-session"}),
    ]);
    let r = of_type(&ev, "api.retry");
    assert_eq!(r.len(), 2);
    for (e, (n, delay)) in r.iter().zip([(1, 1000), (2, 2000)]) {
        let all = Value::Array(vec![(*e).clone()]);
        for fact in [
            json!(n),
            json!(3),
            json!(delay),
            json!(529),
            json!("overloaded"),
        ] {
            assert!(super::contains(&all, &fact), "{fact} lost: {e}");
        }
    }
    let d = of_type(&ev, "permission.denied")[0];
    let all = Value::Array(vec![d.clone()]);
    for fact in [
        "Bash",
        "tool-1",
        "rule",
        "Matched deny rule",
        "Permission denied by rule",
    ] {
        assert!(super::contains(&all, &json!(fact)), "{fact} lost: {d}");
    }
    assert_eq!(of_type(&ev, "turn.end")[0]["permission_denials"], denials);
    let s = of_type(&ev, "prompt.suggestion")[0];
    assert!(super::contains(s, &json!("Run the test suite next")), "{s}");
}

/// The AI SDK profile invents no tool ids: a call the envelope has no id (or name) for gets a
/// generated, declared id and is never paired; a result without id is not attached to it.
#[test]
fn ai_sdk_profile_declares_what_it_makes_up() {
    let lines = [
        json!({"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "input": {}},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}}),
        json!({"type": "user", "session_id": "s", "message": {"content": [
            {"type": "tool_result", "content": "whose?", "is_error": true},
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}),
        result(json!({})),
    ];
    let ev = normalize(&lines);
    let calls = of_type(&ev, "tool.call");
    assert!(calls[0]["tool_use_id"].is_null() && calls[1]["name"].is_null());
    let chunks = ai_sdk(&lines);
    let inputs: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "tool-input-available")
        .collect();
    assert_eq!(inputs.len(), 3);
    let first = format!("boo-normalize-seq-{}", calls[0]["seq"]);
    assert_eq!(inputs[0]["toolCallId"], first.as_str());
    assert_eq!(inputs[0]["toolName"], "Bash");
    assert_eq!(
        inputs[0]["providerMetadata"],
        json!({"boo-normalize": {"generated": ["toolCallId"]}})
    );
    assert_ne!(inputs[1]["toolCallId"], inputs[0]["toolCallId"]);
    assert_eq!(inputs[1]["toolName"], "unknown");
    assert_eq!(
        inputs[1]["providerMetadata"],
        json!({"boo-normalize": {"generated": ["toolCallId", "toolName"]}})
    );
    assert_eq!(inputs[2]["toolCallId"], "t1");
    assert!(inputs[2].get("providerMetadata").is_none());
    for c in &chunks {
        if let Some(id) = c.get("toolCallId") {
            assert!(!id.as_str().unwrap().is_empty(), "{c}");
        }
    }
    let outputs: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"].as_str().unwrap().starts_with("tool-output"))
        .collect();
    assert_eq!(outputs.len(), 1, "{chunks:#?}");
    assert_eq!(outputs[0]["toolCallId"], "t1");
    let unpaired: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "data-unpaired-tool-result")
        .collect();
    assert_eq!(unpaired.len(), 1, "{chunks:#?}");
    assert_eq!(
        unpaired[0]["data"],
        json!({"isError": true, "output": "whose?"})
    );
    real_client_reads(&lines, &calls[0]["seq"]);
}

/// The `ai` package's own chat transport and `readUIMessageStream` (as in `tests/clients.rs`)
/// accept those chunks: every chunk passes its schema, the made-up values are declared on the
/// parts, and the unpaired result is a data part.
fn real_client_reads(lines: &[Value], first_seq: &Value) {
    use crate::sinks::clients::{Server, node, node_clients, skip};
    let dir = match node_clients() {
        Ok(d) => d,
        Err(e) => return skip(&e),
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), super::ndjson(lines)).unwrap();
    let Some(server) = Server::start(file.path(), &["--timeout", "60"]) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/chat", server.port);
    let got = node(dir, &["ai-sdk-read.mjs", &url]);
    drop(server);
    assert_eq!(got["errors"], json!([]), "{got:#}");
    let parts = got["message"]["parts"].as_array().unwrap();
    let tools: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "dynamic-tool")
        .collect();
    assert_eq!(tools.len(), 3, "{parts:#?}");
    assert_eq!(
        tools[0]["toolCallId"],
        format!("boo-normalize-seq-{first_seq}").as_str()
    );
    assert_eq!(
        tools[0]["callProviderMetadata"],
        json!({"boo-normalize": {"generated": ["toolCallId"]}})
    );
    assert_eq!(tools[0]["state"], "input-available");
    assert_eq!(tools[1]["toolName"], "unknown");
    assert_eq!(
        (&tools[2]["toolCallId"], &tools[2]["state"]),
        (&json!("t1"), &json!("output-available"))
    );
    let data: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "data-unpaired-tool-result")
        .collect();
    assert_eq!(data.len(), 1, "{parts:#?}");
    assert_eq!(data[0]["data"]["output"], "whose?");
}

/// Partial messages without message ids (the provider's stream-event tests): the envelope keeps
/// the deltas and the assistant line's final text; the UI stream shows the text once, and a
/// final text longer than what streamed adds only the rest.
#[test]
fn streamed_text_is_not_repeated_by_its_final_line() {
    let delta = |t: &str| {
        json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": t}}})
    };
    let said = |text: &str, deltas: &[&str]| -> Vec<Value> {
        let mut lines: Vec<Value> = deltas.iter().map(|d| delta(d)).collect();
        lines.push(
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}),
        );
        lines.push(result(
            json!({"session_id": "test-session", "duration_ms": 1000}),
        ));
        let ev = normalize(&lines);
        assert_eq!(of_type(&ev, "text.delta").len(), deltas.len());
        assert_eq!(of_type(&ev, "text")[0]["text"], text);
        ai_sdk(&lines)
            .into_iter()
            .filter(|c| c["type"] == "text-delta")
            .map(|c| c["delta"].clone())
            .collect()
    };
    assert_eq!(
        said("Hello world", &["Hello", " world"]),
        [json!("Hello"), json!(" world")]
    );
    assert_eq!(
        said("Hello world!", &["Hello"]),
        [json!("Hello"), json!(" world!")]
    );
}
