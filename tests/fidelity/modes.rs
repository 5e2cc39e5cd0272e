//! Real CLI 2.1.332 captures of the modes adopters run it in (loopback Messages API,
//! `fixtures/captured/2.1.332/`, made by `tests/support/capture.py`): what each capture says
//! reaches the envelope, in both modes where the capture has a partial variant.

use crate::common;

use common::{bin, captured, of_type};
use serde_json::Value;

/// The envelope of capture `name` (`--strict`: no unknown line, no diagnostic).
fn envelope(name: &str) -> Vec<Value> {
    common::strict_envelope(&captured("2.1.332", name))
}

/// The raw lines of capture `name` of type `t`.
fn lines(name: &str, t: &str) -> Vec<Value> {
    std::fs::read_to_string(captured("2.1.332", name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == t)
        .collect()
}

/// `--input-format stream-json --replay-user-messages`: three user messages over stdin (a
/// string, a content array after the first result, a third one cut short by an interrupt
/// control request). Every turn has its `turn.end`, the echoed messages say `replay`, the
/// control responses keep their request ids, and the run's totals are the three results'.
#[test]
fn stream_json_input_keeps_every_turn_echo_and_control_response() {
    for name in ["stream_input.ndjson", "stream_input.partial.ndjson"] {
        let ev = envelope(name);
        let users: Vec<(&str, bool)> = of_type(&ev, "user.text")
            .iter()
            .map(|e| (e["text"].as_str().unwrap(), e["replay"] == true))
            .collect();
        assert_eq!(
            users,
            [
                ("first question", true),
                ("second question", true),
                ("third question", true),
                ("[Request interrupted by user]", false),
            ],
            "{name}"
        );
        let ids: Vec<&Value> = of_type(&ev, "control.response")
            .iter()
            .map(|e| &e["response"]["request_id"])
            .collect();
        assert_eq!(ids, ["req_init_1", "req_int_1"], "{name}");
        let ends = of_type(&ev, "turn.end");
        let outcomes: Vec<&Value> = ends.iter().map(|e| &e["outcome"]).collect();
        assert_eq!(
            outcomes,
            ["success", "success", "during_execution"],
            "{name}"
        );
        assert_eq!(ends[2]["terminal_reason"], "aborted_streaming", "{name}");
        let results = lines(name, "result");
        let run_end = ev.last().unwrap();
        assert_eq!(run_end["turns"], 3, "{name}");
        // The CLI's cost is cumulative: the run's is the last result's.
        assert_eq!(run_end["cost_usd"], results[2]["total_cost_usd"], "{name}");
        let out: u64 = results
            .iter()
            .map(|r| r["usage"]["output_tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(run_end["usage"]["output_tokens"], out, "{name}");
        assert_eq!(run_end["usage"]["provisional"], false, "{name}");
    }
}

/// `--permission-prompt-tool` (an MCP tool, permission mode `default`): one Bash call allowed,
/// one denied. The denied call's result is an error with the tool's message, the CLI's
/// decision (`tool_result_meta`) stays on it, and `turn.end.permission_denials` names it.
#[test]
fn a_permission_prompt_tool_denial_reaches_the_result_and_the_turn_end() {
    for name in [
        "permission_prompt.ndjson",
        "permission_prompt.partial.ndjson",
    ] {
        let ev = envelope(name);
        let calls = of_type(&ev, "tool.call");
        let results = of_type(&ev, "tool.result");
        assert_eq!((calls.len(), results.len()), (2, 2), "{name}");
        let (allowed, denied) = (results[0], results[1]);
        assert_eq!(allowed["tool_use_id"], calls[0]["tool_use_id"], "{name}");
        assert_eq!(allowed["is_error"], false, "{name}");
        assert_eq!(denied["tool_use_id"], calls[1]["tool_use_id"], "{name}");
        assert_eq!(denied["is_error"], true, "{name}");
        assert_eq!(
            denied["content"], "denied by the approve tool: the input contains 'denied'",
            "{name}"
        );
        let meta = &denied["extra"]["tool_result_meta"][0];
        assert_eq!(meta["permission_decision"]["decision"], "reject", "{name}");
        assert_eq!(meta["non_execution_kind"], "permission-rule", "{name}");
        let end = of_type(&ev, "turn.end")[0];
        let denials = end["permission_denials"].as_array().unwrap();
        assert_eq!(denials.len(), 1, "{name}");
        assert_eq!(denials[0]["tool_use_id"], calls[1]["tool_use_id"], "{name}");
        assert_eq!(denials[0]["tool_input"], calls[1]["input"], "{name}");
        assert_eq!(
            of_type(&ev, "session.init")[0]["permission_mode"],
            "default"
        );
    }
}

/// The spans of `--format otlp` for capture `name`.
fn spans(name: &str) -> Vec<Value> {
    let path = captured("2.1.332", name);
    let out = bin()
        .args(["--format", "otlp"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}");
    let mut v = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let req: Value = serde_json::from_str(line).unwrap();
        for rs in req["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                v.extend(ss["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    v
}

/// A span's (or span event's) string attribute `key`.
fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a str> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|kv| kv["key"] == key)?["value"]["stringValue"]
        .as_str()
}

/// A custom agent from `--agents` (reviewer) that starts a nested general-purpose subagent,
/// with `--forward-subagent-text` (both modes): each forwarded line names its own Agent call
/// as parent and its own agent, the nested task says its parent task and depth, and the trace
/// nests the nested subagent's Bash call under both agents.
#[test]
fn forwarded_subagent_text_of_a_custom_agent_nests_under_its_calls() {
    for name in ["agents_forward.ndjson", "agents_forward.partial.ndjson"] {
        let ev = envelope(name);
        let calls = of_type(&ev, "tool.call");
        let agent_calls: Vec<&&Value> = calls.iter().filter(|c| c["name"] == "Agent").collect();
        assert_eq!(agent_calls.len(), 2, "{name}");
        let (outer, inner) = (agent_calls[0], agent_calls[1]);
        assert_eq!(outer["input"]["subagent_type"], "reviewer", "{name}");
        assert!(outer["parent_tool_use_id"].is_null(), "{name}");
        assert_eq!(inner["parent_tool_use_id"], outer["tool_use_id"], "{name}");
        let started = of_type(&ev, "task.started");
        assert_eq!(started.len(), 2, "{name}");
        assert_eq!(started[0]["subagent_type"], "reviewer", "{name}");
        assert_eq!(started[1]["extra"]["parent_task_id"], started[0]["task_id"]);
        assert_eq!(started[1]["extra"]["spawn_depth"], 2, "{name}");
        // The reviewer's forwarded thinking and text.
        let thinking = of_type(&ev, "thinking");
        assert_eq!(thinking.len(), 1, "{name}");
        let reviewer_text = of_type(&ev, "text")
            .into_iter()
            .find(|t| t["text"] == "Reviewer here: delegating the command.")
            .unwrap();
        for e in [thinking[0], reviewer_text] {
            assert_eq!(e["parent_tool_use_id"], outer["tool_use_id"], "{name}");
            assert_eq!(e["agent_id"], started[0]["task_id"], "{name}");
            assert_eq!(e["subagent_type"], "reviewer", "{name}");
            assert_eq!(e["extra"]["task_description"], "Review the marker");
        }
        // The nested subagent's Bash call and text.
        let bash = calls.iter().find(|c| c["name"] == "Bash").unwrap();
        let nested_text = of_type(&ev, "text")
            .into_iter()
            .find(|t| t["text"] == "The command printed: from-nested")
            .unwrap();
        for e in [*bash, nested_text] {
            assert_eq!(e["parent_tool_use_id"], inner["tool_use_id"], "{name}");
            assert_eq!(e["agent_id"], started[1]["task_id"], "{name}");
            assert_eq!(e["subagent_type"], "general-purpose", "{name}");
        }
        // The trace: Bash ← chat ← invoke_agent general-purpose ← execute_tool Agent ← chat ←
        // invoke_agent reviewer ← execute_tool Agent ← chat ← root.
        let sp = spans(name);
        let by_id = |id: &Value| sp.iter().find(|s| s["spanId"] == *id);
        let mut chain = Vec::new();
        let bash = sp
            .iter()
            .find(|s| s["name"] == "execute_tool Bash")
            .unwrap();
        let mut cur = by_id(&bash["parentSpanId"]);
        while let Some(s) = cur {
            chain.push(s["name"].as_str().unwrap());
            cur = by_id(&s["parentSpanId"]);
        }
        assert_eq!(
            chain,
            [
                "chat claude-opus-5-5",
                "invoke_agent general-purpose",
                "execute_tool Agent",
                "chat claude-opus-5-5",
                "invoke_agent reviewer",
                "execute_tool Agent",
                "chat claude-opus-5-5",
                "invoke_agent Claude Code",
            ],
            "{name}"
        );
    }
    // Without --forward-subagent-text the CLI writes the reviewer's tool calls only.
    for name in ["agents.ndjson", "agents.partial.ndjson"] {
        let ev = envelope(name);
        assert!(of_type(&ev, "thinking").is_empty(), "{name}");
        let calls = of_type(&ev, "tool.call");
        assert_eq!(calls.len(), 2, "{name}");
        assert_eq!(calls[1]["parent_tool_use_id"], calls[0]["tool_use_id"]);
        assert_eq!(calls[1]["subagent_type"], "reviewer", "{name}");
    }
}

/// Hooks from a `--settings` file (UserPromptSubmit, PreToolUse that denies one Bash call,
/// PostToolUse, a Stop hook that blocks once with feedback), plain, partial and with
/// `--include-hook-events`: the denied call's result names the hook, the Stop hook's feedback
/// is a synthetic user line, and every hook run is a `hook.started`/`hook.response` pair.
#[test]
fn hook_denials_stop_feedback_and_hook_events_reach_the_envelope() {
    for name in ["hooks.ndjson", "hooks.partial.ndjson", "hook_events.ndjson"] {
        let ev = envelope(name);
        let results = of_type(&ev, "tool.result");
        assert_eq!(results.len(), 2, "{name}");
        let denied = results[1];
        assert_eq!(denied["is_error"], true, "{name}");
        assert_eq!(
            denied["content"],
            "PreToolUse:Bash hook error: hook-denied commands are not allowed"
        );
        let decision = &denied["extra"]["tool_result_meta"][0]["permission_decision"];
        assert_eq!(decision["source"], "hook", "{name}");
        let end = of_type(&ev, "turn.end")[0];
        assert_eq!(
            end["permission_denials"][0]["tool_use_id"], denied["tool_use_id"],
            "{name}"
        );
        let feedback: Vec<&Value> = of_type(&ev, "user.text")
            .into_iter()
            .filter(|u| u["is_synthetic"] == true)
            .collect();
        assert_eq!(feedback.len(), 1, "{name}");
        assert_eq!(
            feedback[0]["text"],
            "Stop hook feedback:\nPlease also say goodbye."
        );
        assert_eq!(of_type(&ev, "notification")[0]["key"], "stop-hook-error");
        let texts: Vec<&Value> = of_type(&ev, "text").iter().map(|t| &t["text"]).collect();
        assert_eq!(
            texts,
            [
                "The first command printed allowed; the second was blocked.",
                "Goodbye."
            ],
            "{name}"
        );
    }
    let ev = envelope("hook_events.ndjson");
    let started = of_type(&ev, "hook.started");
    let responses = of_type(&ev, "hook.response");
    let events: Vec<&Value> = started.iter().map(|h| &h["hook_event"]).collect();
    assert_eq!(
        events,
        [
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PreToolUse",
            "Stop",
            "Stop"
        ]
    );
    for (s, r) in started.iter().zip(&responses) {
        assert_eq!(s["hook_id"], r["hook_id"]);
        assert_eq!(r["exit_code"], 0);
    }
    assert!(
        responses[3]["stdout"]
            .as_str()
            .unwrap()
            .contains("\"permissionDecision\":\"deny\"")
    );
    assert!(
        responses[4]["stdout"]
            .as_str()
            .unwrap()
            .contains("\"decision\":\"block\"")
    );
    assert_eq!(responses[2]["stderr"], "post-tool-use-ran\n");
}

/// `--fallback-model` with the main model answering 529 overloaded (both modes): the CLI
/// retries twice, writes `system/model_fallback` and the fallback model answers. The envelope
/// keeps the switch; in the trace it is a root span event and every chat span requests the
/// fallback model (in plain mode the first chat's first event names no model: it must not take
/// the session's).
#[test]
fn a_model_fallback_reaches_the_envelope_and_the_trace() {
    for name in ["fallback_model.ndjson", "fallback_model.partial.ndjson"] {
        let ev = envelope(name);
        assert_eq!(of_type(&ev, "api.retry").len(), 2, "{name}");
        let f = of_type(&ev, "model.fallback")[0];
        assert_eq!(f["original_model"], "claude-opus-5-5", "{name}");
        assert_eq!(f["fallback_model"], "claude-sonnet-4-5", "{name}");
        assert_eq!(f["trigger"], "overloaded", "{name}");
        for u in of_type(&ev, "usage") {
            assert_eq!(u["model"], "claude-sonnet-4-5", "{name}");
        }
        let sp = spans(name);
        let chats: Vec<&Value> = sp
            .iter()
            .filter(|s| attr(s, "gen_ai.operation.name") == Some("chat"))
            .collect();
        assert_eq!(chats.len(), 2, "{name}");
        for c in chats {
            assert_eq!(c["name"], "chat claude-sonnet-4-5", "{name}");
            assert_eq!(attr(c, "gen_ai.request.model"), Some("claude-sonnet-4-5"));
        }
        let root = sp.iter().find(|s| s["parentSpanId"] == "").unwrap();
        let e = root["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "boo_normalize.model_fallback")
            .unwrap_or_else(|| panic!("{name}: no model_fallback span event"));
        assert_eq!(
            attr(e, "boo_normalize.fallback.fallback_model"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(
            attr(e, "boo_normalize.fallback.original_model"),
            Some("claude-opus-5-5")
        );
        assert_eq!(
            attr(e, "boo_normalize.fallback.trigger"),
            Some("overloaded")
        );
    }
}

/// `--max-budget-usd` below the cost of one request (both modes): the CLI stops after the first
/// reply, before running its Bash call, with `error_max_budget_usd` and a result whose usage
/// is all zeros. The turn says so, and the run's totals keep the message's own counts (final
/// with partial messages, provisional without) instead of the result's zeros.
#[test]
fn a_budget_stop_keeps_its_message_counts_in_the_run_totals() {
    for (name, output, provisional) in [
        ("max_budget.ndjson", 1, true),
        ("max_budget.partial.ndjson", 43, false),
    ] {
        let ev = envelope(name);
        let end = of_type(&ev, "turn.end")[0];
        assert_eq!(end["outcome"], "max_budget", "{name}");
        assert_eq!(end["terminal_reason"], "budget_exhausted", "{name}");
        assert_eq!(end["errors"][0], "Reached maximum budget ($0.005)");
        assert_eq!(end["usage"]["output_tokens"], 0, "{name}: the result's own");
        let run_end = ev.last().unwrap();
        assert_eq!(
            (
                run_end["tool_calls"].as_u64(),
                run_end["tool_results"].as_u64()
            ),
            (Some(1), Some(0))
        );
        let u = &run_end["usage"];
        assert_eq!(u["input_tokens"], 4, "{name}");
        assert_eq!(u["cache_read_input_tokens"], 12288, "{name}");
        assert_eq!(u["cache_creation_input_tokens"], 2048, "{name}");
        assert_eq!(u["output_tokens"], output, "{name}");
        assert_eq!(u["provisional"], provisional, "{name}");
        assert_eq!(run_end["cost_usd"], 0.0135736, "{name}");
    }
}

/// `--json-schema` (both modes): the model answers in text first, the CLI asks for the
/// StructuredOutput tool in a synthetic user line, the model calls it. The result's
/// `structured_output` is a named field of `turn.end` (what a caller of a `--json-schema` run
/// acts on), equal to the tool call's input.
#[test]
fn structured_output_is_a_named_field_of_turn_end() {
    for name in ["json_schema.ndjson", "json_schema.partial.ndjson"] {
        let ev = envelope(name);
        let end = of_type(&ev, "turn.end")[0];
        let raw = &lines(name, "result")[0]["structured_output"];
        assert_eq!(raw["answer"], "42", "{name}");
        assert_eq!(&end["structured_output"], raw, "{name}");
        assert!(end["extra"].get("structured_output").is_none(), "{name}");
        assert_eq!(end["result"], r#"{"answer":"42","confidence":0.9}"#);
        let call = of_type(&ev, "tool.call")[0];
        assert_eq!(call["name"], "StructuredOutput", "{name}");
        assert_eq!(&call["input"], raw, "{name}");
        let asked: Vec<&Value> = of_type(&ev, "user.text")
            .into_iter()
            .filter(|u| u["is_synthetic"] == true)
            .collect();
        assert_eq!(asked.len(), 1, "{name}");
        assert!(
            asked[0]["text"]
                .as_str()
                .unwrap()
                .starts_with("[structured-output-enforce]")
        );
    }
    // Without --json-schema the field is null.
    let ev = envelope("hooks.ndjson");
    assert!(of_type(&ev, "turn.end")[0]["structured_output"].is_null());
}

/// `--permission-prompt-tool stdio` with stream-json input, as the Agent SDKs run the CLI
/// (both modes): each permission prompt is a `control_request` `can_use_tool` on stdout,
/// answered on stdin. Each becomes a `control.request` naming its call's `tool_use_id`, between
/// the call and its result; the denied call's result carries the host's message.
#[test]
fn stdio_permission_prompts_are_control_requests_between_call_and_result() {
    for name in ["permission_stdio.ndjson", "permission_stdio.partial.ndjson"] {
        let ev = envelope(name);
        let seq = |e: &Value| e["seq"].as_u64().unwrap();
        let calls = of_type(&ev, "tool.call");
        let results = of_type(&ev, "tool.result");
        let asks = of_type(&ev, "control.request");
        assert_eq!(
            (calls.len(), results.len(), asks.len()),
            (2, 2, 2),
            "{name}"
        );
        for ((call, result), ask) in calls.iter().zip(&results).zip(&asks) {
            let req = &ask["request"];
            assert_eq!(req["subtype"], "can_use_tool", "{name}");
            assert_eq!(req["tool_use_id"], call["tool_use_id"], "{name}");
            assert_eq!(req["input"], call["input"], "{name}");
            assert!(seq(call) < seq(ask) && seq(ask) < seq(result), "{name}");
            assert_eq!(result["tool_use_id"], call["tool_use_id"], "{name}");
        }
        assert_eq!(results[0]["is_error"], false, "{name}");
        assert_eq!(results[1]["is_error"], true, "{name}");
        assert_eq!(
            results[1]["content"],
            "denied by the host: the input contains 'denied'"
        );
        let end = of_type(&ev, "turn.end")[0];
        assert_eq!(
            end["permission_denials"][0]["tool_use_id"], calls[1]["tool_use_id"],
            "{name}"
        );
    }
}

/// An interrupt control request while a reply streams (`--input-format stream-json`, partial
/// messages): the CLI closes the message itself (`message_delta`, then `message_stop` with
/// `abandoned_blocks` beside `event` on the line) and writes "[Request interrupted by user]".
/// The abandonment reaches `message.stop` and the message's record; the tool call whose input
/// was still streaming says the CLI abandoned it and gets no result; the run's totals keep the
/// message's counts (the result's usage is all zeros).
#[test]
fn an_interrupt_mid_stream_keeps_the_abandoned_blocks() {
    let name = "stream_interrupt.partial.ndjson";
    let ev = envelope(name);
    let stop_line = lines(name, "stream_event")
        .into_iter()
        .find(|l| l["event"]["type"] == "message_stop")
        .unwrap();
    let abandoned = &stop_line["abandoned_blocks"];
    assert_eq!(abandoned["from_block_index"], 1);
    let stop = of_type(&ev, "message.stop")[0];
    assert_eq!(&stop["abandoned_blocks"], abandoned);
    assert!(stop["extra"].get("abandoned_blocks").is_none(), "{stop}");
    let record = of_type(&ev, "usage")[0];
    assert_eq!(&record["extra"]["abandoned_blocks"], abandoned);
    let call = of_type(&ev, "tool.call")[0];
    assert!(call["input"].is_null());
    assert!(
        call["input_error"]
            .as_str()
            .unwrap()
            .contains("the CLI abandoned the message"),
        "{call}"
    );
    assert!(of_type(&ev, "tool.result").is_empty());
    assert_eq!(
        of_type(&ev, "control.response")[0]["response"]["request_id"],
        "req_int_1"
    );
    assert_eq!(
        of_type(&ev, "user.text")[0]["text"],
        "[Request interrupted by user]"
    );
    assert_eq!(of_type(&ev, "turn.end")[0]["outcome"], "during_execution");
    assert_eq!(ev.last().unwrap()["usage"]["input_tokens"], 4);
    // Without partial messages the CLI writes the text block's assistant line only.
    let ev = envelope("stream_interrupt.ndjson");
    assert!(of_type(&ev, "tool.call").is_empty());
    assert_eq!(
        of_type(&ev, "text")[0]["text"],
        "Let me run a long command."
    );
    assert_eq!(ev.last().unwrap()["usage"]["input_tokens"], 4);
}

/// The SDKs' other control requests over stdin (set_permission_mode, set_model, mcp_status,
/// set_max_thinking_tokens, an unsupported subtype) before a user message: every answer is a
/// `control.response` with its request id (the unsupported one an error with its code, as
/// written), the mode change a `status` event, and the run uses the model set.
#[test]
fn control_requests_over_stdin_keep_their_answers() {
    let ev = envelope("stream_control.ndjson");
    let mut ids: Vec<&str> = of_type(&ev, "control.response")
        .iter()
        .map(|e| e["response"]["request_id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["req_0", "req_1", "req_2", "req_3", "req_4"]);
    let refused = of_type(&ev, "control.response")
        .into_iter()
        .find(|e| e["response"]["request_id"] == "req_4")
        .unwrap();
    assert_eq!(refused["response"]["subtype"], "error");
    assert_eq!(refused["response"]["error_code"], "unsupported_request");
    assert_eq!(of_type(&ev, "status")[0]["permission_mode"], "plan");
    let init = of_type(&ev, "session.init")[0];
    assert_eq!(init["model"], "claude-sonnet-4-5");
    assert_eq!(init["permission_mode"], "plan");
    assert_eq!(of_type(&ev, "usage")[0]["model"], "claude-sonnet-4-5");
}
