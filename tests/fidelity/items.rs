//! One test per fidelity rule, on small streams shaped like the CLI's (facts from the Python and
//! TypeScript Agent SDKs' message types: an assistant message's `error` is one of
//! `authentication_failed`, `billing_error`, `rate_limit`, `invalid_request`, `server_error`,
//! `unknown`, and may come with an empty content array).

use crate::common;

use common::{events, of_type, root, run};
use serde_json::{Value, json};

fn normalize(lines: &[Value]) -> Vec<Value> {
    let mut input = Vec::new();
    for l in lines {
        input.extend_from_slice(l.to_string().as_bytes());
        input.push(b'\n');
    }
    let out = run(&["--allow-no-result"], &input);
    assert!(out.status.success(), "{out:?}");
    events(&out.stdout)
}

fn assistant(content: Value, top: Value) -> Value {
    let mut line = json!({
        "type": "assistant",
        "session_id": "s1",
        "parent_tool_use_id": null,
        "uuid": "u-a",
        "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": content, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 3, "output_tokens": 1}
        }
    });
    for (k, v) in top.as_object().unwrap() {
        line[k] = v.clone();
    }
    line
}

#[test]
fn an_api_error_without_a_text_block_is_an_api_error_event() {
    for code in [
        "rate_limit",
        "authentication_failed",
        "billing_error",
        "overloaded",
    ] {
        let ev = normalize(&[assistant(
            json!([]),
            json!({"error": code, "is_api_error_message": true, "api_error_status": 429, "api_error_code": "x"}),
        )]);
        let errs = of_type(&ev, "api.error");
        assert_eq!(errs.len(), 1, "{code}: {ev:#?}");
        assert_eq!(errs[0]["error"], code);
        assert_eq!(errs[0]["details"]["api_error_status"], 429);
        assert_eq!(errs[0]["details"]["api_error_code"], "x");
        assert_eq!(errs[0]["details"]["is_api_error_message"], true);
        assert!(errs[0]["text"].is_null());
        assert!(of_type(&ev, "skipped").is_empty(), "{ev:#?}");
    }
}

#[test]
fn an_api_error_with_text_keeps_the_text_event_and_adds_the_details() {
    let ev = normalize(&[assistant(
        json!([{"type": "text", "text": "API Error: 500"}]),
        json!({"error": "server_error", "api_error_status": 500}),
    )]);
    assert_eq!(of_type(&ev, "text")[0]["error"], "server_error");
    let e = of_type(&ev, "api.error")[0];
    assert_eq!(e["text"], "API Error: 500");
    assert_eq!(e["details"], json!({"api_error_status": 500}));
}

#[test]
fn skipped_says_what_happened() {
    let ev = normalize(&[assistant(json!([]), json!({}))]);
    assert_eq!(
        of_type(&ev, "skipped")[0]["reason"],
        "the message's content is empty"
    );
    let call = json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]);
    let ev = normalize(&[
        assistant(call.clone(), json!({})),
        assistant(call, json!({"uuid": "u-b"})),
    ]);
    let s = of_type(&ev, "skipped");
    assert_eq!(
        s[0]["reason"],
        "the tool call was already emitted with this input"
    );
    assert_eq!(s[0]["uuid"], "u-b");
    assert!(
        ev.iter()
            .all(|e| e["reason"] != "duplicate of an event already emitted")
    );
}

#[test]
fn unmapped_members_go_under_extra_once_and_named_facts_on_every_event() {
    let content = json!([
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    ]);
    let ev = normalize(&[assistant(
        content,
        json!({"timestamp": "2026-01-01T00:00:00Z", "agent_id": "a1", "request_id": "req_1",
               "thinking_duration_ms": 7, "usage_report": {"x": 1}}),
    )]);
    let own: Vec<&Value> = ev
        .iter()
        .filter(|e| e["line"] == 1 && e["type"] != "usage")
        .collect();
    assert_eq!(own.len(), 2);
    for e in &own {
        assert_eq!(e["timestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(e["agent_id"], "a1");
    }
    assert_eq!(
        own[0]["extra"],
        json!({"request_id": "req_1", "thinking_duration_ms": 7, "usage_report": {"x": 1}})
    );
    assert!(
        own[1].get("extra").is_none(),
        "extra is written once per line"
    );
}

#[test]
fn a_synthetic_user_line_says_so() {
    let ev = normalize(&[json!({
        "type": "user", "session_id": "s1", "parent_tool_use_id": null, "isSynthetic": true,
        "message": {"role": "user", "content": [{"type": "text", "text": "summary of the conversation"}]}
    })]);
    let t = of_type(&ev, "user.text")[0];
    assert_eq!(t["is_synthetic"], true);
    assert!(t.get("extra").is_none());
}

#[test]
fn a_wrong_typed_member_is_kept_raw_under_extra() {
    let ev = normalize(&[json!({
        "type": "user", "session_id": "s1", "parent_tool_use_id": null, "isReplay": "yes",
        "message": {"role": "user", "content": "hi"}
    })]);
    assert_eq!(of_type(&ev, "user.text")[0]["extra"]["isReplay"], "yes");
}

#[test]
fn every_message_has_a_record_with_its_stop_reason_in_both_modes() {
    // CLI 2.1.331: the partial capture's message_delta carries each message's stop_reason; the
    // plain capture carries none, so the last main-thread message takes the result's.
    for (name, want) in [
        (
            "tools.partial.ndjson",
            vec!["tool_use", "tool_use", "end_turn"],
        ),
        // "" stands for null.
        ("tools.ndjson", vec!["", "", "end_turn"]),
    ] {
        let path = root().join("fixtures/captured/2.1.331").join(name);
        let out = common::bin().arg(&path).output().unwrap();
        let ev = events(&out.stdout);
        let got: Vec<&str> = of_type(&ev, "usage")
            .iter()
            .map(|u| u["stop_reason"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(got, want, "{name}");
        for u in of_type(&ev, "usage") {
            assert!(
                u["extra"].get("context_management").is_some(),
                "{name}: context_management kept: {u}"
            );
        }
    }
}

#[test]
fn stop_details_and_context_management_reach_the_record() {
    let mut line = assistant(json!([{"type": "text", "text": "no"}]), json!({}));
    line["message"]["stop_reason"] = json!("refusal");
    line["message"]["stop_details"] = json!({"type": "refusal", "category": "cyber"});
    line["message"]["context_management"] = json!({"applied_edits": []});
    let ev = normalize(&[line]);
    let u = of_type(&ev, "usage")[0];
    assert_eq!(u["stop_reason"], "refusal");
    assert_eq!(u["extra"]["stop_details"]["category"], "cyber");
    assert_eq!(
        u["extra"]["context_management"],
        json!({"applied_edits": []})
    );
    assert_eq!(u["provisional"], false);
}

#[test]
fn a_superseding_line_names_the_line_it_replaces() {
    let first = assistant(
        json!([{"type": "text", "text": "I can't help with that."}]),
        json!({}),
    );
    let mut second = assistant(
        json!([{"type": "text", "text": "Here is the answer."}]),
        json!({"uuid": "u-b", "supersedes": "u-a"}),
    );
    second["message"]["id"] = json!("msg_2");
    let ev = normalize(&[first, second]);
    let texts = of_type(&ev, "text");
    assert_eq!(texts[0]["uuid"], "u-a");
    assert!(texts[0].get("supersedes").is_none());
    assert_eq!(texts[1]["supersedes"], texts[0]["uuid"]);
}

#[test]
fn a_repeated_tool_use_id_with_another_input_is_a_revision() {
    let call = |cmd: &str| json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": cmd}}]);
    let ev = normalize(&[
        assistant(call("ls"), json!({})),
        assistant(call("ls -la"), json!({"uuid": "u-b"})),
        assistant(call("ls -la"), json!({"uuid": "u-c"})),
    ]);
    assert_eq!(of_type(&ev, "tool.call").len(), 1);
    let r = of_type(&ev, "tool.call.revised");
    assert_eq!(r.len(), 1, "{ev:#?}");
    assert_eq!(r[0]["tool_use_id"], "t1");
    assert_eq!(r[0]["input"], json!({"command": "ls -la"}));
    assert_eq!(r[0]["uuid"], "u-b");
    assert_eq!(of_type(&ev, "skipped")[0]["uuid"], "u-c");
}

#[test]
fn abandoned_blocks_reach_the_stop_event_and_the_record() {
    let stream = |event: Value| json!({"type": "stream_event", "session_id": "s1", "parent_tool_use_id": null, "event": event});
    let ev = normalize(&[
        stream(
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-x",
            "usage": {"input_tokens": 3, "output_tokens": 1}}}),
        ),
        stream(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        stream(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
        ),
        stream(json!({"type": "message_stop", "abandoned_blocks": [0]})),
    ]);
    assert_eq!(
        of_type(&ev, "message.stop")[0]["abandoned_blocks"],
        json!([0])
    );
    assert_eq!(
        of_type(&ev, "usage")[0]["extra"]["abandoned_blocks"],
        json!([0])
    );
}

#[test]
fn a_missing_id_name_or_text_stays_null_and_is_never_paired() {
    let ev = normalize(&[
        assistant(
            json!([{"type": "tool_use", "input": {}}, {"type": "text"}]),
            json!({}),
        ),
        json!({"type": "user", "session_id": "s1", "parent_tool_use_id": null,
               "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}}),
    ]);
    let call = of_type(&ev, "tool.call")[0];
    assert!(call["tool_use_id"].is_null() && call["name"].is_null());
    assert!(
        call["violation"]
            .as_str()
            .unwrap()
            .contains("has no \"id\""),
        "{call}"
    );
    let text = of_type(&ev, "text")[0];
    assert!(text["text"].is_null());
    assert!(text["violation"].as_str().unwrap().contains("text"));
    let result = of_type(&ev, "tool.result")[0];
    assert!(result["tool_use_id"].is_null());
    assert!(result["name"].is_null(), "paired on a missing id: {result}");
    assert!(result["violation"].is_string());
}

#[test]
fn wrong_typed_values_are_kept_raw() {
    let mut line = assistant(json!([{"type": "text", "text": 42}]), json!({}));
    line["message"]["usage"] = json!("lots");
    let result = json!({"type": "result", "subtype": "success", "session_id": "s1",
        "is_error": false, "total_cost_usd": "0.25", "cost_usd": 0.5, "usage": "n/a"});
    let ev = normalize(&[line, result]);
    let text = of_type(&ev, "text")[0];
    assert!(text["text"].is_null());
    assert_eq!(text["raw"]["text"], 42);
    assert_eq!(text["extra"]["message"]["usage"], "lots");
    assert!(
        of_type(&ev, "usage").is_empty(),
        "no record made up from a string"
    );
    let end = of_type(&ev, "turn.end")[0];
    assert_eq!(end["cost_usd"], 0.5);
    assert_eq!(end["extra"]["total_cost_usd"], "0.25");
    assert_eq!(end["usage"], "n/a");
}

/// Real CLI 2.1.331 captures (loopback API): a reply cut by the output limit and a refused one.
/// The CLI writes stop_reason null on every assistant line and then a synthetic user line.
#[test]
fn a_truncated_or_refused_reply_is_visible_in_both_modes() {
    let stop = |name: &str, id: &str| -> Value {
        let path = root().join("fixtures/captured/2.1.331").join(name);
        let ev = events(&common::bin().arg(path).output().unwrap().stdout);
        let synthetic: Vec<&Value> = of_type(&ev, "user.text")
            .into_iter()
            .filter(|e| e["is_synthetic"] == true)
            .collect();
        assert_eq!(
            synthetic.len(),
            1,
            "{name}: the CLI's own user line says so"
        );
        of_type(&ev, "usage")
            .into_iter()
            .find(|u| u["message_id"] == id)
            .unwrap()["stop_reason"]
            .clone()
    };
    let cut = "msg_01itUeGbJmFaYhRGyAAaBUeD";
    assert_eq!(stop("max_tokens.partial.ndjson", cut), "max_tokens");
    // Without partial messages the CLI says it only in its synthetic "Output token limit hit"
    // prompt right after the message: the record takes max_tokens from it.
    assert_eq!(stop("max_tokens.ndjson", cut), "max_tokens");
    let refused = "msg_011NNRg2IuGiiG7LkWyVliJO";
    assert_eq!(stop("refusal.partial.ndjson", refused), "refusal");
    // The synthetic line's refused_message_id names the message: its record says refusal.
    assert_eq!(stop("refusal.ndjson", refused), "refusal");
}

/// The output-limit rule reads the CLI's own prompt, nothing else: a synthetic line with other
/// text (a Stop hook's feedback) or a non-synthetic line with that text leaves the record alone,
/// and a stop_reason that came is never overwritten.
#[test]
fn only_the_clis_output_limit_prompt_marks_a_message_max_tokens() {
    let user = |text: &str, synthetic: bool| {
        let mut l = json!({"type": "user", "session_id": "s1", "parent_tool_use_id": null,
            "message": {"role": "user", "content": [{"type": "text", "text": text}]}});
        if synthetic {
            l["isSynthetic"] = json!(true);
        }
        l
    };
    let stop_after = |first: Value, next: Value| -> Value {
        let ev = normalize(&[first, next]);
        of_type(&ev, "usage")[0]["stop_reason"].clone()
    };
    let said = assistant(
        json!([{"type": "text", "text": "The long answer starts"}]),
        json!({}),
    );
    for prompt in [
        "Output token limit hit. Resume directly.",
        "Output token limit hit again. Give the whole answer.",
        "Your response was cut off because it exceeded the output token limit. Continue.",
        "[Your previous response reached the output limit with no visible output.]",
    ] {
        assert_eq!(
            stop_after(said.clone(), user(prompt, true)),
            "max_tokens",
            "{prompt}"
        );
    }
    let limit = "Output token limit hit. Resume directly.";
    assert_eq!(stop_after(said.clone(), user(limit, false)), Value::Null);
    let hook = "Stop hook feedback: run the tests first";
    assert_eq!(stop_after(said.clone(), user(hook, true)), Value::Null);
    let mut ended = said.clone();
    ended["message"]["stop_reason"] = json!("end_turn");
    assert_eq!(stop_after(ended, user(limit, true)), "end_turn");
    // A string content counts the same as a text block.
    let mut plain = user("", true);
    plain["message"]["content"] = json!(limit);
    assert_eq!(stop_after(said, plain), "max_tokens");
}
