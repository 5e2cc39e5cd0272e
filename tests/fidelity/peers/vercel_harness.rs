//! Vercel's Claude Code harness: the SDK message recordings its bridge tests replay (tool results
//! with `tool_use_result`, several results in one stream, per-step usage, a step's final usage in
//! a `message_delta`, a streamed tool input, a background subagent).

use super::{normalize, of_type, on_line};
use serde_json::{Value, json};

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": id,
        "name": name, "input": input, "caller": {"type": "direct"}}]}})
}

fn tool_result(id: &str, content: &str, is_error: Option<bool>, structured: Value) -> Value {
    let mut b = json!({"tool_use_id": id, "type": "tool_result", "content": content});
    if let Some(e) = is_error {
        b["is_error"] = json!(e);
    }
    json!({"type": "user", "message": {"content": [b]}, "tool_use_result": structured})
}

/// Items 1 and 9: `tool_use_result` in its shapes (a file read, a task, a string on an error
/// result, a shell's stdout/stderr) reaches the result it belongs to; results arriving in
/// another order than their calls are paired by id; each call's `caller` is kept.
#[test]
fn tool_use_results_reach_their_results() {
    let file = json!({"type": "text", "file": {"filePath": "/work/tool-use-result-input.txt",
        "content": "alpha\nbeta\ngamma\n", "numLines": 4, "startLine": 1, "totalLines": 4}});
    let task = json!({"task": {"id": "1", "subject": "probe-task"}});
    let err = "Error: Exit code 2\nls: cannot access '/definitely-not-here-issue-19894': No such file or directory";
    let shell = json!({"stdout": "hello-stdouthello-stderr", "stderr": "", "interrupted": false,
        "isImage": false, "noOutputExpected": false});
    let ev = normalize(&[
        call(
            "toolu_01CzerpW7U9o3KGCY6R51Ytd",
            "Read",
            json!({"file_path": "/work/tool-use-result-input.txt"}),
        ),
        call(
            "toolu_0117Edzdd3w14bFgA69WKiNL",
            "TaskCreate",
            json!({"subject": "probe-task", "description": "Probe task created as requested."}),
        ),
        tool_result(
            "toolu_01CzerpW7U9o3KGCY6R51Ytd",
            "1\talpha\n2\tbeta\n3\tgamma\n4\t",
            None,
            file.clone(),
        ),
        tool_result(
            "toolu_0117Edzdd3w14bFgA69WKiNL",
            "Task #1 created successfully: probe-task",
            None,
            task.clone(),
        ),
        call(
            "toolu_01PN3kPDaUbWD3xBH22YnrLM",
            "Bash",
            json!({"command": "printf hello-stdout; printf hello-stderr >&2"}),
        ),
        call(
            "toolu_01AmgDXpXZyKM2EzUdnfbsYf",
            "Bash",
            json!({"command": "ls /definitely-not-here-issue-19894"}),
        ),
        tool_result(
            "toolu_01AmgDXpXZyKM2EzUdnfbsYf",
            "Exit code 2\nls: cannot access '/definitely-not-here-issue-19894': No such file or directory",
            Some(true),
            json!(err),
        ),
        tool_result(
            "toolu_01PN3kPDaUbWD3xBH22YnrLM",
            "hello-stdouthello-stderr",
            Some(false),
            shell.clone(),
        ),
    ]);
    let r = of_type(&ev, "tool.result");
    let facts = [
        ("Read", false, file["file"]["numLines"].clone(), &file),
        ("TaskCreate", false, json!("1"), &task),
        ("Bash", true, json!(err), &json!(err)),
        ("Bash", false, json!(false), &shell),
    ];
    for (e, (name, is_error, _, structured)) in r.iter().zip(facts.iter()) {
        assert_eq!(e["name"], *name, "{e}");
        assert_eq!(e["is_error"], *is_error, "{e}");
        assert_eq!(&e["structured"], *structured, "{e}");
    }
    assert_eq!(r[0]["structured"]["file"]["numLines"], 4);
    assert_eq!(r[1]["structured"]["task"]["id"], "1");
    assert_eq!(r[3]["structured"]["stdout"], "hello-stdouthello-stderr");
    let calls = of_type(&ev, "tool.call");
    assert_eq!(calls.len(), 4);
    for c in calls {
        assert_eq!(
            c["block_extra"],
            json!({"caller": {"type": "direct"}}),
            "{c}"
        );
    }
}

/// Several results in one stream (a second prompt after the first result): each is a
/// `turn.end` with its own text, cost and usage (the `iterations` included), and the
/// `command_lifecycle` lines around them are typed events with their states.
#[test]
fn every_result_of_a_stream_is_a_turn() {
    let usage = |cc: u64, cr: u64| {
        json!({"input_tokens": 2, "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": cr, "output_tokens": 6,
            "output_tokens_details": {"thinking_tokens": 0},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": cc},
            "inference_geo": "global",
            "iterations": [{"input_tokens": 2, "output_tokens": 6,
                "cache_read_input_tokens": cr, "cache_creation_input_tokens": cc,
                "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
                "type": "message"}],
            "speed": "standard"})
    };
    let life = |id: &str, state: &str| json!({"type": "command_lifecycle", "command_uuid": id, "state": state});
    let result = |cost: f64, text: &str, u: Value| {
        json!({"type": "result", "subtype": "success",
            "session_id": "63ffc1fe-8f3a-4002-b06c-bf1b1dc5f4dc", "total_cost_usd": cost,
            "result": text, "usage": u})
    };
    let (first, second) = (usage(9282, 9742), usage(50, 19024));
    let ev = normalize(&[
        life("live-cost-first", "queued"),
        life("live-cost-first", "started"),
        result(0.0494524, "FIRST", first.clone()),
        life("live-cost-first", "completed"),
        life("live-cost-second", "queued"),
        life("live-cost-second", "started"),
        result(0.0536352, "SECOND", second.clone()),
    ]);
    let ends = of_type(&ev, "turn.end");
    assert_eq!(ends.len(), 2);
    assert_eq!(
        (&ends[0]["result"], &ends[0]["cost_usd"]),
        (&json!("FIRST"), &json!(0.0494524))
    );
    assert_eq!(
        (&ends[1]["result"], &ends[1]["cost_usd"]),
        (&json!("SECOND"), &json!(0.0536352))
    );
    assert_eq!(ends[0]["usage"], first);
    assert_eq!(ends[1]["usage"], second);
    let states: Vec<Value> = of_type(&ev, "command.lifecycle")
        .iter()
        .map(|e| json!([e["command_uuid"], e["state"]]))
        .collect();
    assert_eq!(states.len(), 5);
    assert_eq!(states[2], json!(["live-cost-first", "completed"]));
    let run = of_type(&ev, "run.end")[0];
    assert_eq!(run["turns"], 2);
    // The CLI's total_cost_usd is the session's so far: the run's is the last result's.
    assert_eq!(run["cost_usd"], 0.0536352);
}

/// Item 2: each step's usage (no message ids in the recording) is a record of its own; the
/// result's totals are the turn's.
#[test]
fn each_step_keeps_its_usage() {
    let step1 = json!({"input_tokens": 2, "cache_creation_input_tokens": 6323,
        "cache_read_input_tokens": 0, "output_tokens": 20});
    let step2 = json!({"input_tokens": 2, "cache_creation_input_tokens": 85,
        "cache_read_input_tokens": 6323, "output_tokens": 1});
    let total = json!({"input_tokens": 4, "cache_creation_input_tokens": 6408,
        "cache_read_input_tokens": 6323, "output_tokens": 81});
    let ev = normalize(&[
        json!({"type": "system", "subtype": "init", "model": "claude-opus-4-8[1m]"}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
            "id": "toolu_01KXafZqWK3Uvydo9sMXqoSz", "name": "Bash",
            "input": {"command": "printf 19068", "description": "Print the number 19068"}}],
            "usage": step1}, "parent_tool_use_id": null}),
        json!({"type": "user", "message": {"content": [{"tool_use_id": "toolu_01KXafZqWK3Uvydo9sMXqoSz",
            "type": "tool_result", "content": "19068", "is_error": false}]}, "parent_tool_use_id": null}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}],
            "usage": step2}, "parent_tool_use_id": null}),
        json!({"type": "result", "subtype": "success", "result": "done",
            "total_cost_usd": 0.045855499999999993_f64, "usage": total}),
    ]);
    assert_eq!(
        of_type(&ev, "session.init")[0]["model"],
        "claude-opus-4-8[1m]"
    );
    let u = of_type(&ev, "usage");
    assert_eq!(u.len(), 2, "{ev:#?}");
    assert_eq!((&u[0]["usage"], &u[0]["line"]), (&step1, &json!(2)));
    assert_eq!((&u[1]["usage"], &u[1]["line"]), (&step2, &json!(4)));
    assert_eq!(of_type(&ev, "turn.end")[0]["usage"], total);
    let run = of_type(&ev, "run.end")[0];
    assert_eq!(run["usage"]["output_tokens"], 81);
    assert_eq!(run["usage"]["cache_creation_input_tokens"], 6408);
    assert_eq!(run["api_messages"], 2);
}

/// A background subagent: its lines keep the parent `Agent` call's id; the task lifecycle
/// lines (`background_tasks_changed`, `task_started`, `task_progress`, `task_updated`,
/// `task_notification`) keep their members.
#[test]
fn a_background_subagent_keeps_its_parent_and_task_facts() {
    let parent = "toolu_parent_agent";
    let ev = normalize(&[
        json!({"type": "assistant", "parent_tool_use_id": null, "message": {"content": [
            {"type": "tool_use", "id": parent, "name": "Agent", "input": {
                "description": "Run a background command",
                "prompt": "Run a command and report its output.",
                "subagent_type": "general-purpose", "run_in_background": true}}]}}),
        json!({"type": "system", "subtype": "background_tasks_changed", "tasks": [{
            "task_id": "task_subagent", "task_type": "local_agent",
            "description": "Run a background command"}]}),
        json!({"type": "system", "subtype": "task_started", "task_id": "task_subagent",
            "tool_use_id": parent, "description": "Run a background command",
            "subagent_type": "general-purpose", "is_backgrounded": true}),
        json!({"type": "assistant", "parent_tool_use_id": parent, "message": {"content": [
            {"type": "tool_use", "id": "toolu_subagent_bash", "name": "Bash",
             "input": {"command": "printf subagent-output"}}]}}),
        json!({"type": "system", "subtype": "task_progress", "task_id": "task_subagent",
            "tool_use_id": parent, "description": "Running command",
            "subagent_type": "general-purpose",
            "usage": {"total_tokens": 8922, "tool_uses": 1, "duration_ms": 2870},
            "last_tool_name": "Bash", "summary": "Running the requested command"}),
        json!({"type": "user", "parent_tool_use_id": parent, "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_subagent_bash",
             "content": "subagent-output", "is_error": false}]}}),
        json!({"type": "system", "subtype": "task_updated", "task_id": "task_subagent",
            "patch": {"status": "running", "is_backgrounded": true}}),
        json!({"type": "system", "subtype": "task_notification", "task_id": "task_subagent",
            "tool_use_id": parent, "status": "completed",
            "output_file": "/tmp/task_subagent.output",
            "summary": "The command printed subagent-output.",
            "usage": {"total_tokens": 9641, "tool_uses": 1, "duration_ms": 9089}}),
        json!({"type": "user", "parent_tool_use_id": null, "message": {"content": [
            {"type": "tool_result", "tool_use_id": parent,
             "content": "The background agent completed.", "is_error": false}]}}),
    ]);
    let agent = of_type(&ev, "tool.call")[0];
    assert_eq!(
        (&agent["name"], &agent["subagent"]),
        (&json!("Agent"), &json!(true))
    );
    for line in [4, 6] {
        for e in on_line(&ev, line) {
            assert_eq!(e["parent_tool_use_id"], parent, "{e}");
        }
    }
    let inner = &on_line(&ev, 6)[0];
    assert_eq!(
        (&inner["name"], &inner["content"]),
        (&json!("Bash"), &json!("subagent-output"))
    );
    assert_eq!(on_line(&ev, 2)[0]["tasks"][0]["task_type"], "local_agent");
    let started = on_line(&ev, 3)[0];
    assert_eq!(started["subagent_type"], "general-purpose");
    assert!(
        super::contains(started, &json!(true)),
        "is_backgrounded lost: {started}"
    );
    let progress = on_line(&ev, 5)[0];
    assert_eq!(progress["usage"]["total_tokens"], 8922);
    assert!(super::contains(
        progress,
        &json!("Running the requested command")
    ));
    assert_eq!(on_line(&ev, 7)[0]["patch"]["is_backgrounded"], true);
    let done = on_line(&ev, 8)[0];
    assert_eq!(
        (&done["status"], &done["usage"]["total_tokens"]),
        (&json!("completed"), &json!(9641))
    );
    let last = on_line(&ev, 9)[0];
    assert_eq!(
        (&last["name"], &last["tool_use_id"]),
        (&json!("Agent"), &json!(parent))
    );
}

/// Items 2 and 4: the step's assistant line carries the placeholder count (7 output tokens); the
/// `message_delta` after it has the final one (115) and the stop reason. The per-message record
/// keeps the final values, also without a `message_start` (no message id).
#[test]
fn a_message_delta_finishes_the_steps_record() {
    let counts = |out: u64| {
        json!({"input_tokens": 10, "cache_creation_input_tokens": 7260,
            "cache_read_input_tokens": 0, "output_tokens": out})
    };
    let ev = normalize(&[
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
            "id": "toolu_01W2CmYa1N9rxWbXuZSuPigh", "name": "Bash",
            "input": {"command": "printf issue-20633"}}], "usage": counts(7)}}),
        json!({"type": "stream_event", "event": {"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": counts(115)}}),
        tool_result(
            "toolu_01W2CmYa1N9rxWbXuZSuPigh",
            "issue-20633",
            Some(false),
            json!({"stdout": "issue-20633", "stderr": "", "interrupted": false, "isImage": false,
                "noOutputExpected": false}),
        ),
    ]);
    let u = of_type(&ev, "usage");
    assert_eq!(u.len(), 1, "{ev:#?}");
    assert_eq!(u[0]["usage"], counts(115));
    assert_eq!(
        (&u[0]["stop_reason"], &u[0]["provisional"]),
        (&json!("tool_use"), &json!(false))
    );
    let run = of_type(&ev, "run.end")[0];
    assert_eq!(run["usage"]["output_tokens"], 115);
    assert_eq!(run["usage"]["provisional"], false);
    assert_eq!(
        of_type(&ev, "tool.result")[0]["structured"]["stdout"],
        "issue-20633"
    );
}

/// A tool call streamed as `input_json_delta` fragments (an empty one first) is assembled into
/// its input, and its `content_block`'s `caller` is kept.
#[test]
fn a_streamed_tool_input_is_assembled_and_keeps_its_caller() {
    let frag = |uuid: &str, json: &str| {
        json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": json}},
            "session_id": "c796f522-30ed-49ff-a6e9-e76a7b4fdb77", "parent_tool_use_id": null,
            "uuid": uuid})
    };
    // The fragments carry JSON text: a newline in the content is the two characters `\n`.
    let content =
        r"1. The cat slept on the windowsill.\n2. Birds sang cheerfully in the morning.\n";
    let ev = normalize(&[
        json!({"type": "stream_event", "event": {"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_01844wW4nkwSTXm5fD6si35A",
                "name": "Write", "input": {}, "caller": {"type": "direct"}}},
            "session_id": "c796f522-30ed-49ff-a6e9-e76a7b4fdb77", "parent_tool_use_id": null,
            "uuid": "e93fed1c-f43e-4606-b394-7f601f22dcad"}),
        frag("43c3", ""),
        frag(
            "0ec6",
            "{\"file_path\": \"/work/.tmp-issue-19695/sample.txt",
        ),
        frag("f196", &format!("\", \"content\": \"{}", &content[..20])),
        frag("25e7", &content[20..]),
        frag("cbde", "\"}"),
        json!({"type": "stream_event", "event": {"type": "content_block_stop", "index": 1},
            "session_id": "c796f522-30ed-49ff-a6e9-e76a7b4fdb77", "parent_tool_use_id": null,
            "uuid": "23f9cf89-878a-4c18-b373-8cc1cf58c60a"}),
    ]);
    let deltas = of_type(&ev, "tool.input.delta");
    assert!(deltas.len() >= 4, "{ev:#?}");
    assert!(
        deltas
            .iter()
            .all(|d| d["tool_use_id"] == "toolu_01844wW4nkwSTXm5fD6si35A")
    );
    let c = of_type(&ev, "tool.call")[0];
    assert_eq!(c["source"], "deltas");
    assert_eq!(c["name"], "Write");
    assert_eq!(c["input"]["file_path"], "/work/.tmp-issue-19695/sample.txt");
    assert_eq!(c["input"]["content"], content.replace(r"\n", "\n"));
    assert_eq!(c["block_extra"], json!({"caller": {"type": "direct"}}));
}
