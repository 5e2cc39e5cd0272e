//! The Python Agent SDK's message-parser tests: the shapes its parser is fed and the facts it
//! asserts (see the source list in `tests/fidelity_peers.rs`).

use super::{normalize, of_type, on_line};
use serde_json::{Value, json};

fn result(extra: Value) -> Value {
    let mut r = json!({"type": "result", "subtype": "success", "duration_ms": 1000,
        "duration_api_ms": 500, "is_error": false, "num_turns": 2, "session_id": "session_123"});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

/// Item 1: `tool_use_result` is kept whether the line's content is a tool_result block (as
/// `structured`) or a plain string (under `extra`); `uuid` and `origin` (with members the SDK
/// does not model) reach the envelope.
#[test]
fn tool_use_result_uuid_and_origin_are_kept() {
    let patch = json!({"filePath": "/path/to/file.py", "oldString": "old code",
        "newString": "new code", "originalFile": "full file contents",
        "structuredPatch": [{"oldStart": 33, "oldLines": 7, "newStart": 33, "newLines": 7,
            "lines": ["   # comment", "-      old line", "+      new line"]}],
        "userModified": false, "replaceAll": false});
    let simple = json!({"filePath": "/path/to/file.py", "userModified": true});
    let origin = json!({"kind": "peer", "from": "peer-addr", "name": "other-session",
        "verifiedPeerPid": 4242, "someFutureField": true});
    let ev = normalize(&[
        json!({"type": "user", "message": {"role": "user", "content": [{
            "tool_use_id": "toolu_vrtx_01KXWexk3NJdwkjWzPMGQ2F1", "type": "tool_result",
            "content": "The file has been updated."}]},
            "parent_tool_use_id": null, "session_id": "84afb479-17ae-49af-8f2b-666ac2530c3a",
            "uuid": "2ace3375-1879-48a0-a421-6bce25a9295a", "tool_use_result": patch}),
        json!({"type": "user", "message": {"content": "Simple string content"},
            "tool_use_result": simple}),
        json!({"type": "user", "message": {"content": "hi"}, "origin": origin}),
        json!({"type": "user", "message": {"content": [{"type": "text", "text": "hi"}]},
            "origin": origin}),
    ]);
    let r = of_type(&ev, "tool.result")[0];
    assert_eq!(r["structured"], patch);
    assert_eq!(r["structured"]["structuredPatch"][0]["oldStart"], 33);
    assert_eq!(r["uuid"], "2ace3375-1879-48a0-a421-6bce25a9295a");
    assert_eq!(r["content"], "The file has been updated.");
    let t = on_line(&ev, 2);
    assert_eq!(t[0]["text"], "Simple string content");
    assert_eq!(t[0]["extra"]["tool_use_result"], simple);
    for line in [3, 4] {
        assert_eq!(
            on_line(&ev, line)[0]["extra"]["origin"],
            origin,
            "line {line}"
        );
    }
}

/// Items 1 and 8: `parent_tool_use_id` on assistant and user lines; a result's `origin`,
/// `terminal_reason`, `deferred_tool_use`, `api_error_status`, `modelUsage` and
/// `permission_denials`.
#[test]
fn subagent_parent_and_result_members_are_kept() {
    let parent = "toolu_01Xrwd5Y13sEHtzScxR77So8";
    let deferred = json!({"id": "toolu_01abc", "name": "Bash",
        "input": {"command": "rm -rf /tmp/scratch"}});
    let model_usage = json!({"claude-sonnet-4-5-20250929": {"inputTokens": 3,
        "outputTokens": 24, "cacheReadInputTokens": 20012, "costUSD": 0.0106,
        "contextWindow": 200000, "maxOutputTokens": 64000}});
    let ev = normalize(&[
        json!({"type": "user", "message": {"content": [{"type": "text", "text": "Hello"}]},
            "parent_tool_use_id": parent}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Hello"},
            {"type": "tool_use", "id": "tool_123", "name": "Read",
             "input": {"file_path": "/test.txt"}}], "model": "claude-opus-4-1-20250805"},
            "parent_tool_use_id": parent}),
        result(json!({"result": "", "terminal_reason": "aborted_tools",
            "origin": {"kind": "task-notification", "subkind": "scheduled-trigger"}})),
        result(json!({"deferred_tool_use": deferred})),
        result(json!({"is_error": true, "api_error_status": 529,
            "session_id": "session_overload"})),
        result(json!({"stop_reason": "end_turn", "total_cost_usd": 0.0106,
            "usage": {"input_tokens": 3, "output_tokens": 24}, "result": "Hello",
            "modelUsage": model_usage, "permission_denials": [],
            "uuid": "d379c496-f33a-4ea4-b920-3c5483baa6f7"})),
    ]);
    for line in [1, 2] {
        for e in on_line(&ev, line) {
            assert_eq!(e["parent_tool_use_id"], parent, "{e}");
        }
    }
    let call = of_type(&ev, "tool.call")[0];
    assert_eq!(
        (&call["tool_use_id"], &call["name"]),
        (&json!("tool_123"), &json!("Read"))
    );
    let ends = of_type(&ev, "turn.end");
    assert_eq!(ends[0]["terminal_reason"], "aborted_tools");
    assert_eq!(ends[0]["result"], "");
    assert_eq!(ends[0]["extra"]["origin"]["subkind"], "scheduled-trigger");
    assert_eq!(ends[1]["extra"]["deferred_tool_use"], deferred);
    // success + is_error: never reported as a success; the HTTP status is kept.
    assert_eq!(ends[2]["subtype"], "success");
    assert_eq!(ends[2]["is_error"], true);
    assert_eq!(ends[2]["outcome"], "error");
    assert_eq!(ends[2]["extra"]["api_error_status"], 529);
    assert_eq!(ends[3]["model_usage"], model_usage);
    assert_eq!(ends[3]["cost_usd"], 0.0106);
    assert_eq!(ends[3]["permission_denials"], json!([]));
    assert_eq!(ends[3]["stop_reason"], "end_turn");
    assert_eq!(ends[3]["uuid"], "d379c496-f33a-4ea4-b920-3c5483baa6f7");
}

/// Result subtypes: `error_during_execution` keeps its `errors`, `error_max_turns` an explicit
/// null `stop_reason` (nothing filled in).
#[test]
fn error_results_keep_errors_and_subtype() {
    let ev = normalize(&[
        result(
            json!({"subtype": "error_during_execution", "is_error": true, "num_turns": 3,
            "errors": ["Tool execution failed: permission denied", "Unable to write to /etc/hosts"],
            "uuid": "err-uuid-789"}),
        ),
        result(
            json!({"subtype": "error_max_turns", "is_error": true, "num_turns": 10,
            "stop_reason": null}),
        ),
    ]);
    let ends = of_type(&ev, "turn.end");
    assert_eq!(ends[0]["outcome"], "during_execution");
    assert_eq!(ends[0]["subtype"], "error_during_execution");
    assert_eq!(
        ends[0]["errors"],
        json!([
            "Tool execution failed: permission denied",
            "Unable to write to /etc/hosts"
        ])
    );
    assert_eq!(ends[0]["uuid"], "err-uuid-789");
    assert_eq!(ends[1]["outcome"], "max_turns");
    assert_eq!(ends[1]["num_turns"], 10);
    assert!(ends[1]["stop_reason"].is_null());
}

/// Item 2: the message's id, `stop_reason` and usage (cache counts included) reach the
/// per-message record, also for a message without an id.
#[test]
fn message_usage_and_stop_reason_are_kept() {
    let cached = json!({"input_tokens": 100, "output_tokens": 50,
        "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 500});
    let ev = normalize(&[
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Hello"}],
            "model": "claude-sonnet-4-5-20250929", "id": "msg_01HRq7YZE3apPqSHydvG77Ve",
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}},
            "session_id": "fdf2d90a-fd9e-4736-ae35-806edd13643f",
            "uuid": "0dbd2453-1209-4fe9-bd51-4102f64e33df"}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}],
            "model": "claude-opus-4-5", "usage": cached}}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}],
            "model": "claude-opus-4-5"}}),
    ]);
    let u = of_type(&ev, "usage");
    assert_eq!(u.len(), 2, "{ev:#?}");
    assert_eq!(u[0]["message_id"], "msg_01HRq7YZE3apPqSHydvG77Ve");
    assert_eq!(u[0]["stop_reason"], "end_turn");
    assert_eq!(
        u[0]["usage"],
        json!({"input_tokens": 10, "output_tokens": 5})
    );
    assert_eq!(u[0]["provisional"], false);
    assert_eq!(u[0]["session_id"], "fdf2d90a-fd9e-4736-ae35-806edd13643f");
    let text = on_line(&ev, 1)[0];
    assert_eq!(text["uuid"], "0dbd2453-1209-4fe9-bd51-4102f64e33df");
    assert_eq!(text["message_id"], "msg_01HRq7YZE3apPqSHydvG77Ve");
    // No id: a record of its own, nothing made up for the id.
    assert!(u[1]["message_id"].is_null());
    assert_eq!(u[1]["usage"], cached);
    assert_eq!(u[1]["line"], 2);
    let end = of_type(&ev, "run.end")[0];
    assert_eq!(end["usage"]["input_tokens"], 10 + 100);
    assert_eq!(end["usage"]["output_tokens"], 5 + 50);
    assert_eq!(end["usage"]["cache_read_input_tokens"], 2000);
    assert_eq!(end["usage"]["cache_creation_input_tokens"], 500);
    assert_eq!(end["api_messages"], 2);
}

/// Item 3: the assistant line's top-level `error` (`authentication_failed`, `unknown`,
/// `rate_limit`) next to a text block from the `<synthetic>` model.
#[test]
fn assistant_errors_are_api_error_events() {
    let cases = [
        (
            "authentication_failed",
            "Invalid API key · Fix external API key",
        ),
        (
            "unknown",
            "API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}",
        ),
        ("rate_limit", "Rate limit exceeded"),
    ];
    for (code, text) in cases {
        let ev = normalize(&[json!({"type": "assistant", "message": {
            "content": [{"type": "text", "text": text}], "model": "<synthetic>"},
            "session_id": "test-session", "error": code})]);
        let e = of_type(&ev, "api.error");
        assert_eq!(e.len(), 1, "{code}: {ev:#?}");
        assert_eq!(e[0]["error"], code);
        assert_eq!(e[0]["text"], text);
        assert_eq!(e[0]["model"], "<synthetic>");
        let t = of_type(&ev, "text");
        assert_eq!(
            (&t[0]["text"], &t[0]["error"]),
            (&json!(text), &json!(code))
        );
    }
    let ok = normalize(&[json!({"type": "assistant", "message": {
        "content": [{"type": "text", "text": "Hello"}], "model": "claude-opus-4-5-20251101"}})]);
    assert!(of_type(&ok, "api.error").is_empty());
    assert!(of_type(&ok, "text")[0].get("error").is_none());
}

/// A thinking block keeps its `signature` (the SDK exposes it; the API needs it back to go on).
#[test]
fn thinking_keeps_its_signature() {
    let ev = normalize(&[json!({"type": "assistant", "message": {"content": [
        {"type": "thinking", "thinking": "I'm thinking about the answer...", "signature": "sig-123"},
        {"type": "text", "text": "Here's my response"}], "model": "claude-opus-4-1-20250805"}})]);
    let t = of_type(&ev, "thinking")[0];
    assert_eq!(t["thinking"], "I'm thinking about the answer...");
    assert_eq!(t["block_extra"], json!({"signature": "sig-123"}));
    let text = of_type(&ev, "text")[0];
    assert_eq!(text["text"], "Here's my response");
    assert!(text.get("block_extra").is_none());
}

/// The SDK's stream accumulator: a thinking block streamed as deltas (its `signature` on the
/// `content_block_start`) comes out whole, signature included.
#[test]
fn a_streamed_thinking_block_keeps_its_signature() {
    let event = |uuid: &str, e: Value| json!({"type": "stream_event", "session_id": "test", "uuid": uuid, "event": e});
    let delta = |uuid: &str, t: &str| {
        event(
            uuid,
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": t}}),
        )
    };
    let ev = normalize(&[
        event(
            "uuid1",
            json!({"type": "message_start", "message": {"model": "claude-sonnet-4-5"}}),
        ),
        event(
            "uuid2",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": "sig123"}}),
        ),
        delta("uuid3", "Let me think"),
        delta("uuid4", " about this..."),
        event("uuid5", json!({"type": "content_block_stop", "index": 0})),
        event("uuid6", json!({"type": "message_stop"})),
    ]);
    let t = of_type(&ev, "thinking");
    assert_eq!(t.len(), 1, "{ev:#?}");
    assert_eq!(t[0]["thinking"], "Let me think about this...");
    assert_eq!(t[0]["source"], "deltas");
    assert_eq!(t[0]["block_extra"], json!({"signature": "sig123"}));
}

/// Tool results: `is_error`, server tool use and a server tool's result with its raw content.
#[test]
fn tool_results_keep_is_error_and_server_blocks() {
    let advisor =
        json!({"type": "advisor_result", "text": "Consider edge cases around empty input."});
    let ev = normalize(&[
        json!({"type": "user", "message": {"content": [{"type": "tool_result",
            "tool_use_id": "tool_error", "content": "File not found", "is_error": true}]}}),
        json!({"type": "assistant", "message": {"content": [{"type": "server_tool_use",
            "id": "srvtoolu_01ABC", "name": "advisor", "input": {}}], "model": "claude-sonnet-4-5"}}),
        json!({"type": "assistant", "message": {"content": [{"type": "advisor_tool_result",
            "tool_use_id": "srvtoolu_01ABC", "content": advisor}], "model": "claude-sonnet-4-5"}}),
    ]);
    let r = of_type(&ev, "tool.result");
    assert_eq!(r[0]["tool_use_id"], "tool_error");
    assert_eq!(r[0]["is_error"], true);
    assert_eq!(r[0]["content"], "File not found");
    let c = of_type(&ev, "tool.call")[0];
    assert_eq!(
        (&c["name"], &c["server"], &c["input"]),
        (&json!("advisor"), &json!(true), &json!({}))
    );
    assert_eq!(r[1]["tool_use_id"], "srvtoolu_01ABC");
    assert_eq!(r[1]["server"], true);
    assert_eq!(r[1]["name"], "advisor");
    assert_eq!(r[1]["content"], advisor);
}

/// Item 8: the system subtypes the SDK types (task lifecycle, hooks) are typed events with
/// their facts; an unknown subtype passes through whole; `rate_limit_event` and
/// `conversation_reset` keep their members.
#[test]
fn system_lines_rate_limits_and_resets_keep_their_facts() {
    let progress_usage = json!({"total_tokens": 1234, "tool_uses": 5, "duration_ms": 9876});
    let future = json!({"type": "system", "subtype": "some_future_subtype", "foo": "bar"});
    let ev = normalize(&[
        json!({"type": "system", "subtype": "task_started", "task_id": "task-abc",
            "tool_use_id": "toolu_01", "description": "Reticulating splines",
            "task_type": "background", "uuid": "uuid-1", "session_id": "session-1"}),
        json!({"type": "system", "subtype": "task_progress", "task_id": "task-abc",
            "tool_use_id": "toolu_01", "description": "Halfway there", "usage": progress_usage,
            "last_tool_name": "Read", "uuid": "uuid-2", "session_id": "session-1"}),
        json!({"type": "system", "subtype": "task_notification", "task_id": "task-abc",
            "status": "failed", "output_file": "/tmp/out.md", "summary": "Boom",
            "uuid": "uuid-3", "session_id": "session-1"}),
        json!({"type": "system", "subtype": "task_updated", "task_id": "bs2r8eew4",
            "patch": {"status": "killed", "end_time": 1780405729183_u64}}),
        json!({"type": "system", "subtype": "hook_response", "hook_event": "PostToolUse",
            "hook_name": "PostToolUse", "session_id": "sess-123", "uuid": "uuid-789",
            "output": "", "exit_code": 0, "outcome": "success"}),
        future.clone(),
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning",
            "resetsAt": 1700000000, "rateLimitType": "five_hour", "utilization": 0.91},
            "uuid": "abc-123", "session_id": "session_xyz"}),
        json!({"type": "conversation_reset",
            "new_conversation_id": "d2f4a573-ca99-42a2-bb7a-905b40c908e8",
            "uuid": "msg-1", "session_id": "66694129-ce74-4ee1-9b0f-994155ac97ba"}),
    ]);
    let one = |n: u64| -> &Value { on_line(&ev, n)[0] };
    assert_eq!(one(1)["type"], "task.started");
    assert_eq!(one(1)["task_type"], "background");
    assert_eq!(one(1)["tool_use_id"], "toolu_01");
    assert_eq!(one(2)["type"], "task.progress");
    assert_eq!(one(2)["usage"], progress_usage);
    assert_eq!(one(2)["last_tool_name"], "Read");
    assert_eq!(one(3)["type"], "task.notification");
    assert_eq!(
        (&one(3)["status"], &one(3)["summary"]),
        (&json!("failed"), &json!("Boom"))
    );
    assert!(one(3)["usage"].is_null() && one(3)["tool_use_id"].is_null());
    assert_eq!(one(4)["type"], "task.updated");
    assert_eq!(one(4)["patch"]["status"], "killed");
    assert_eq!(one(5)["type"], "hook.response");
    assert_eq!(
        (&one(5)["exit_code"], &one(5)["outcome"]),
        (&json!(0), &json!("success"))
    );
    assert_eq!(one(5)["output"], "");
    assert_eq!(one(6)["type"], "unknown");
    assert_eq!(one(6)["raw"], future);
    assert_eq!(one(7)["type"], "rate_limit");
    assert_eq!(one(7)["status"], "allowed_warning");
    assert_eq!(one(7)["resets_at"], 1700000000);
    assert_eq!(one(7)["rate_limit_type"], "five_hour");
    assert_eq!(one(7)["utilization"], 0.91);
    assert_eq!(one(7)["uuid"], "abc-123");
    assert_eq!(one(8)["type"], "session.reset");
    assert_eq!(
        one(8)["new_session_id"],
        "d2f4a573-ca99-42a2-bb7a-905b40c908e8"
    );
}

/// Items 9 and 11: the lines the SDK rejects as malformed (no `message`, a non-object block)
/// are kept whole and said to be malformed; nothing is made up for them.
#[test]
fn malformed_lines_are_kept_not_filled_in() {
    let lines = [
        json!({"type": "user"}),
        json!({"type": "assistant"}),
        json!({"type": "assistant", "message": {"model": "m", "content": ["oops"]}}),
        json!({"type": "user", "message": {"content": ["oops"]}}),
        json!({"message": {"content": []}}),
    ];
    let ev = normalize(&lines);
    for (i, line) in lines.iter().enumerate() {
        let mine = on_line(&ev, i as u64 + 1);
        assert_eq!(mine.len(), 1, "{line}: {mine:#?}");
        let e = mine[0];
        assert!(
            ["unknown", "diagnostic"].contains(&e["type"].as_str().unwrap()),
            "{line}: {e}"
        );
        if e["type"] == "diagnostic" {
            // Not an envelope line at all (no `type`): its text is kept as it came.
            assert_eq!(e["text"], line.to_string(), "{e}");
        } else {
            assert!(
                super::contains(&e["raw"], line) || e["raw"] == "oops",
                "{line}: {e}"
            );
            assert!(
                e.get("text").is_none() && e.get("tool_use_id").is_none(),
                "{e}"
            );
        }
    }
}
