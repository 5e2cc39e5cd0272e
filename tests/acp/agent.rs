//! A session's turns as an ACP client sees them: text, thinking, a Read, a Bash allowed and one
//! rejected, an Edit with its diff, TodoWrite as the plan, a subagent; protocol errors; two
//! sessions at once.

use std::fs;

use serde_json::json;

use super::env;

#[test]
fn a_session_streams_text_thinking_tools_a_plan_and_stop_reasons() {
    let Some(e) = env("acp_turns") else { return };
    fs::write(e.d.work.join("notes.txt"), "hello world\n").unwrap();
    let api = e.api(json!({"responses": [
        {"label": "p1", "delay": 0.2, "content": [
            {"type": "thinking", "thinking": "Let me think about the greeting."},
            {"type": "text", "text": "Hello from the model."}]},
        {"label": "p2 read", "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "@CWD@/notes.txt"}}]},
        {"label": "p2 end", "content": [{"type": "text", "text": "It says hello."}]},
        {"label": "p3 bash", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch allowed.txt", "description": "Create allowed.txt"}}]},
        {"label": "p3 end", "content": [{"type": "text", "text": "Created."}]},
        {"label": "p4 bash", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch denied.txt", "description": "Create denied.txt"}}]},
        {"label": "p4 end", "content": [{"type": "text", "text": "Not permitted."}]},
        {"label": "p5 edit", "content": [{"type": "tool_use", "name": "Edit", "input": {"file_path": "@CWD@/notes.txt", "old_string": "hello", "new_string": "goodbye"}}]},
        {"label": "p5 end", "content": [{"type": "text", "text": "Edited."}]},
        {"label": "p6 todo", "content": [{"type": "tool_use", "name": "TodoWrite", "input": {"todos": [
            {"content": "Write the test", "status": "completed", "activeForm": "Writing the test"},
            {"content": "Run it", "status": "in_progress", "activeForm": "Running it"}]}}]},
        {"label": "p6 end", "content": [{"type": "text", "text": "Planned."}]},
        {"label": "p7 exit", "content": [{"type": "tool_use", "name": "ExitPlanMode", "input": {"plan": "1. Run it"}}]},
        {"label": "p7 end", "content": [{"type": "text", "text": "Leaving plan mode."}]}
    ]}));
    let r = e.drive(
        &api,
        &[],
        json!(["allow", "reject", "allow", "allow"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "s"},
            {"op": "prompt", "session": "s", "text": "say hello", "as": "p1"},
            {"op": "prompt", "session": "s", "text": "read notes.txt", "as": "p2"},
            {"op": "prompt", "session": "s", "text": "create allowed.txt", "as": "p3"},
            {"op": "prompt", "session": "s", "text": "create denied.txt", "as": "p4"},
            {"op": "prompt", "session": "s", "text": "edit notes.txt", "as": "p5"},
            {"op": "prompt", "session": "s", "text": "make a plan", "as": "p6"},
            {"op": "request", "method": "session/set_mode", "params": {"sessionId": "$s", "modeId": "plan"}, "as": "plan"},
            {"op": "prompt", "session": "s", "text": "leave plan mode", "as": "p7"},
            {"op": "request", "method": "session/frobnicate", "params": {}, "as": "unknown"},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "$s"}, "as": "bad"},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}, "as": "nosession"}
        ]),
    );
    // The client got every update the agent wrote (none failed the SDK's own checks).
    let written = r
        .trace
        .iter()
        .filter(|m| m["method"] == "session/update")
        .count();
    assert_eq!(written, r.v["updates"].as_array().unwrap().len());
    let init = &r.result("initialize")["ok"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "boo-normalize");
    for p in ["p1", "p2", "p3", "p4", "p5", "p6", "p7"] {
        assert_eq!(r.stop(p), "end_turn", "{p}");
    }
    // Text and thinking, streamed from the run's deltas.
    assert!(
        r.text("s", "agent_thought_chunk")
            .contains("Let me think about the greeting.")
    );
    let said = r.text("s", "agent_message_chunk");
    for t in [
        "Hello from the model.",
        "It says hello.",
        "Created.",
        "Not permitted.",
        "Edited.",
    ] {
        assert!(said.contains(t), "{t:?} not in {said:?}");
    }
    // The Read: kind, location, result.
    let calls = r.updates("s", "tool_call");
    let read = calls
        .iter()
        .find(|c| c["kind"] == "read")
        .expect("a read tool_call");
    let notes = e.d.work.join("notes.txt").display().to_string();
    assert_eq!(read["locations"][0]["path"], notes.as_str());
    let done = r.updates("s", "tool_call_update");
    let read_done = done
        .iter()
        .find(|u| u["toolCallId"] == read["toolCallId"])
        .expect("the read's update");
    assert_eq!(read_done["status"], "completed");
    assert!(
        read_done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("hello world")
    );
    // Bash allowed and rejected: asked twice, the file exists only for the allowed one.
    let asked: Vec<_> = r
        .permissions()
        .iter()
        .map(|p| p["toolCall"]["title"].clone())
        .collect();
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert!(e.d.work.join("allowed.txt").exists());
    assert!(!e.d.work.join("denied.txt").exists());
    for o in ["allow_once", "allow_always", "reject_once"] {
        assert!(
            r.permissions()[0]["options"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["kind"] == o)
        );
    }
    let failed = done.iter().filter(|u| u["status"] == "failed").count();
    assert_eq!(failed, 1, "the rejected Bash is a failed tool call");
    // The Edit, as a diff, applied.
    let edit = calls
        .iter()
        .find(|c| c["kind"] == "edit")
        .expect("an edit tool_call");
    assert_eq!(
        edit["content"][0],
        json!({"type": "diff", "path": notes, "oldText": "hello", "newText": "goodbye"})
    );
    assert_eq!(
        fs::read_to_string(e.d.work.join("notes.txt")).unwrap(),
        "goodbye world\n"
    );
    // TodoWrite as the plan, not as a tool call.
    let plan = r.updates("s", "plan");
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["entries"][0]["content"], "Write the test");
    assert_eq!(plan[0]["entries"][0]["status"], "completed");
    assert_eq!(plan[0]["entries"][1]["status"], "in_progress");
    assert!(!calls.iter().any(|c| c["rawInput"].get("todos").is_some()));
    // Slash commands, described as the CLI's answer to `initialize` describes them.
    let cmds = r.updates("s", "available_commands_update");
    assert!(!cmds.is_empty());
    let compact = cmds[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "compact")
        .expect("/compact");
    assert!(
        compact["description"]
            .as_str()
            .unwrap()
            .starts_with("Clear conversation history"),
        "{compact}"
    );
    assert_eq!(
        compact["input"]["hint"],
        "<optional custom summarization instructions>"
    );
    // The mode the client set, then the one the CLI switched to itself (an approved
    // ExitPlanMode), each with the config options saying it.
    let modes: Vec<_> = r
        .updates("s", "current_mode_update")
        .iter()
        .map(|u| u["currentModeId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(modes, ["plan", "default"]);
    let opts = r.updates("s", "config_option_update");
    let mode_of = |u: &serde_json::Value| {
        u["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "mode")
            .unwrap()["currentValue"]
            .clone()
    };
    assert_eq!(mode_of(opts.last().unwrap()), "default");
    assert!(
        r.text("s", "agent_message_chunk")
            .contains("Leaving plan mode.")
    );
    let usage = r.updates("s", "usage_update");
    assert!(usage.iter().all(|u| u["size"].as_u64().unwrap() > 0));
    assert!(usage.last().unwrap()["used"].as_u64().unwrap() > 0);
    // Protocol errors.
    assert_eq!(r.result("unknown")["error"]["code"], -32601);
    assert_eq!(r.result("bad")["error"]["code"], -32602);
    let m = r.result("bad")["error"]["message"].as_str().unwrap();
    assert!(m.contains("prompt"), "{m}");
    assert_eq!(r.result("nosession")["error"]["code"], -32602);
    assert!(
        r.result("nosession")["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sessionId")
    );
    assert_eq!(r.result("exit")["code"], 0, "{}", r.stderr);
    super::super::spawn::common::assert_no_procs(&e.mark, std::time::Duration::from_secs(5));
}

#[test]
fn subagent_work_is_attributed_to_its_task_call() {
    let Some(e) = env("acp_subagent") else { return };
    let api = e.api(json!({"responses": [
        {"label": "task", "match": {"first_user": "delegate"}, "content": [
            {"type": "tool_use", "name": "$SUBAGENT", "input": {"description": "Look around", "prompt": "List the files, then report.", "subagent_type": "general-purpose"}}]},
        {"label": "sub", "match": {"first_user": "List the files"}, "content": [{"type": "text", "text": "Subagent report: nothing here."}]},
        {"label": "main end", "match": {"first_user": "delegate"}, "content": [{"type": "text", "text": "The subagent found nothing."}]}
    ]}));
    let r = e.one_prompt(
        &api,
        &["--", "--permission-mode", "bypassPermissions"],
        json!([]),
        "delegate this",
        "p",
    );
    assert_eq!(r.stop("p"), "end_turn");
    let task = r
        .updates("s", "tool_call")
        .into_iter()
        .find(|c| c["kind"] == "think")
        .expect("the Task call")
        .clone();
    let id = task["toolCallId"].as_str().unwrap();
    // The subagent's work comes attributed to the Task call (its prompt, at least: CLI 2.1.45
    // does not stream a subagent's text), and its report is the Task's result.
    let sub: Vec<_> = r.v["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["meta"]["claudeCode"]["parentToolUseId"] == id)
        .collect();
    assert!(
        sub.iter().any(|u| u["update"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("List the files"))),
        "{sub:?}"
    );
    let done = r
        .updates("s", "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == id)
        .expect("the Task's result");
    assert!(
        done["content"].to_string().contains("Subagent report"),
        "{done}"
    );
    assert!(
        r.text("s", "agent_message_chunk")
            .contains("The subagent found nothing.")
    );
}

#[test]
fn two_sessions_at_once_are_isolated() {
    let Some(e) = env("acp_two") else { return };
    let api = e.api(json!({"responses": [
        {"label": "alpha", "match": {"first_user": "alpha"}, "delay": 1.0, "content": [{"type": "text", "text": "Alpha answer."}]},
        {"label": "beta", "match": {"first_user": "beta"}, "delay": 1.0, "content": [{"type": "text", "text": "Beta answer."}]}
    ]}));
    let r = e.drive(
        &api,
        &[],
        json!([]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "a"},
            {"op": "new", "as": "b"},
            {"op": "prompt", "session": "a", "text": "alpha question", "as": "pa", "wait": false},
            {"op": "prompt", "session": "b", "text": "beta question", "as": "pb", "wait": false},
            {"op": "await", "prompt": "pa"},
            {"op": "await", "prompt": "pb"},
            {"op": "request", "method": "session/list", "params": {}, "as": "list"},
            {"op": "request", "method": "session/set_mode", "params": {"sessionId": "$a", "modeId": "acceptEdits"}, "as": "mode"},
            {"op": "request", "method": "session/set_mode", "params": {"sessionId": "$a", "modeId": "yolo"}, "as": "badmode"},
            {"op": "request", "method": "session/set_config_option", "params": {"sessionId": "$a", "configId": "model", "value": "sonnet"}, "as": "model"},
            {"op": "request", "method": "session/set_model", "params": {"sessionId": "$b", "modelId": "haiku"}, "as": "setmodel"},
            {"op": "request", "method": "session/close", "params": {"sessionId": "$b"}, "as": "close"},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "$b", "prompt": [{"type": "text", "text": "closed?"}]}, "as": "closed"},
            {"op": "request", "method": "session/list", "params": {}, "as": "list2"}
        ]),
    );
    // Modes and models.
    assert!(r.result("mode")["ok"].is_object(), "{}", r.result("mode"));
    let modes = r.updates("a", "current_mode_update");
    assert_eq!(modes.last().unwrap()["currentModeId"], "acceptEdits");
    assert_eq!(r.result("badmode")["error"]["code"], -32602);
    let opts = r.result("model")["ok"]["configOptions"]
        .as_array()
        .unwrap()
        .clone();
    let model = opts.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["currentValue"], "sonnet");
    let mode = opts.iter().find(|o| o["id"] == "mode").unwrap();
    assert_eq!(mode["currentValue"], "acceptEdits");
    assert!(
        r.result("setmodel")["ok"].is_object(),
        "{}",
        r.result("setmodel")
    );
    // Closing one session leaves the other; the closed one is still listed (from its
    // transcript on disk: it can be loaded again), but takes no prompt.
    assert!(r.result("close")["ok"].is_object());
    assert_eq!(r.result("closed")["error"]["code"], -32602);
    let left = r.result("list2")["ok"]["sessions"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(left.len(), 2, "{left:?}");
    assert_eq!(
        left[0]["sessionId"], r.v["sessions"]["a"],
        "the open one first"
    );
    assert_eq!(left[1]["sessionId"], r.v["sessions"]["b"]);
    assert_eq!(r.stop("pa"), "end_turn");
    assert_eq!(r.stop("pb"), "end_turn");
    assert_eq!(r.text("a", "agent_message_chunk"), "Alpha answer.");
    assert_eq!(r.text("b", "agent_message_chunk"), "Beta answer.");
    // Both ran at the same time: neither waited for the other's answer.
    let (a, b) = (&r.result("pa"), &r.result("pb"));
    let overlap = a["at"].as_u64().unwrap().min(b["at"].as_u64().unwrap())
        > (a["at"].as_u64().unwrap() - a["ms"].as_u64().unwrap())
            .max(b["at"].as_u64().unwrap() - b["ms"].as_u64().unwrap());
    assert!(overlap, "{a} {b}");
    assert_eq!(
        r.result("list")["ok"]["sessions"].as_array().unwrap().len(),
        2
    );
    assert_ne!(r.v["sessions"]["a"], r.v["sessions"]["b"]);
}

#[test]
fn session_load_after_a_restart_replays_the_conversation_then_resumes_it() {
    let Some(e) = env("acp_load") else { return };
    let api = e.api(json!({"responses": [
        {"label": "again", "match": {"last_user": "again"}, "content": [{"type": "text", "text": "Loaded and resumed."}]},
        {"label": "bash", "match": {"last_user": "first"}, "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch one.txt", "description": "Create one.txt"}}]},
        {"label": "first end", "content": [{"type": "text", "text": "First answer."}]}
    ]}));
    let r1 = e.one_prompt(&api, &[], json!(["allow"]), "first question", "p1");
    assert_eq!(r1.stop("p1"), "end_turn");
    let id = r1.v["sessions"]["s"].as_str().unwrap().to_owned();
    // A new agent process: the session from its transcript.
    let r2 = e.drive(
        &api,
        &[],
        json!([]),
        json!([
            {"op": "initialize"},
            {"op": "request", "method": "session/list", "params": {"cwd": e.d.work}, "as": "list"},
            {"op": "request", "method": "session/list", "params": {}, "as": "list_all"},
            {"op": "request", "method": "session/list", "params": {"cwd": e.d.path()}, "as": "list_other"},
            {"op": "request", "method": "session/load", "params": {"sessionId": id, "cwd": e.d.work, "mcpServers": []}, "as": "load"},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": id, "prompt": [{"type": "text", "text": "again please"}]}, "as": "p2"},
            {"op": "request", "method": "session/load", "params": {"sessionId": "0c6f0f5e-3f5e-4c8e-9d57-000000000000", "cwd": e.d.work, "mcpServers": []}, "as": "missing"}
        ]),
    );
    assert!(r2.result("initialize")["ok"]["agentCapabilities"]["loadSession"] == true);
    // A new process lists the session from the CLI's transcripts on disk, for its directory.
    for name in ["list", "list_all"] {
        let listed = r2.result(name)["ok"]["sessions"]
            .as_array()
            .unwrap()
            .clone();
        let s = listed
            .iter()
            .find(|s| s["sessionId"] == id.as_str())
            .unwrap_or_else(|| panic!("{name}: {listed:?}"));
        assert_eq!(s["cwd"], e.d.work.to_str().unwrap());
        assert!(
            s["updatedAt"].as_str().is_some_and(|t| t.starts_with("20")),
            "{s}"
        );
    }
    assert_eq!(r2.result("list_other")["ok"]["sessions"], json!([]));
    assert!(r2.result("load")["ok"].is_object(), "{}", r2.result("load"));
    assert!(
        r2.text(&id, "user_message_chunk")
            .contains("first question")
    );
    assert!(
        r2.text(&id, "agent_message_chunk")
            .contains("First answer.")
    );
    let calls = r2.updates(&id, "tool_call");
    assert!(
        calls
            .iter()
            .any(|c| c["rawInput"]["command"] == "touch one.txt"),
        "{calls:?}"
    );
    assert!(
        r2.updates(&id, "tool_call_update")
            .iter()
            .any(|u| u["status"] == "completed")
    );
    // Replayed before the answer to session/load.
    let answer = r2
        .trace
        .iter()
        .position(|m| {
            m["result"]["configOptions"].is_array() && m["result"].get("sessionId").is_none()
        })
        .expect("the load answer");
    let first_update = r2
        .trace
        .iter()
        .position(|m| {
            m["method"] == "session/update"
                && m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        })
        .expect("a replayed update");
    assert!(first_update < answer);
    // Then the session goes on in a CLI that resumed it.
    assert_eq!(
        r2.result("p2")["ok"]["stopReason"],
        "end_turn",
        "{}",
        r2.result("p2")
    );
    assert!(
        r2.text(&id, "agent_message_chunk")
            .contains("Loaded and resumed.")
    );
    let last = api
        .requests()
        .into_iter()
        .rfind(|q| q["label"] == "again")
        .expect("the prompt after the load reached the API");
    assert!(
        last["body"].to_string().contains("First answer."),
        "not resumed"
    );
    assert_eq!(r2.result("missing")["error"]["code"], -32602);
}
