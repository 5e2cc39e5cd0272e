//! Real CLI 2.1.332 captures (loopback API) of session features adopters use: MCP servers, plan and auto
//! permission modes, local and custom slash commands, `/compact`, `--resume`/`--continue` and a
//! background Bash command. One test per situation: the facts the CLI wrote reach the envelope,
//! tool calls pair with their results, and the AI SDK profile neither loses nor invents them.

use crate::common;

use common::{bin, captured, of_type};
use serde_json::{Value, json};

/// The envelope of capture `name`, which must pass `--strict`.
fn envelope(name: &str) -> Vec<Value> {
    common::strict_envelope(&captured("2.1.332", name))
}

/// The AI SDK profile's chunks for capture `name` (without the final `[DONE]`).
fn ai_sdk(name: &str) -> Vec<Value> {
    let out = bin()
        .args(["--format", "sse", "--sse-profile", "ai-sdk"])
        .arg(captured("2.1.332", name))
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    common::sse_data(&out.stdout)
}

fn one<'a>(ev: &'a [Value], t: &str) -> &'a Value {
    let all = of_type(ev, t);
    assert_eq!(all.len(), 1, "{t}: {all:#?}");
    all[0]
}

#[test]
fn mcp_servers_and_calls_keep_their_facts() {
    for name in ["mcp.ndjson", "mcp.partial.ndjson"] {
        let ev = envelope(name);
        let init = one(&ev, "session.init");
        let servers = init["mcp_servers"].as_array().unwrap();
        assert!(
            servers.contains(&json!({"name": "echo", "status": "connected", "source": "dynamic"}))
        );
        assert!(
            servers.contains(&json!({"name": "broken", "status": "failed", "source": "dynamic"}))
        );
        assert!(
            init["tools"]
                .as_array()
                .unwrap()
                .contains(&json!("mcp__echo__echo"))
        );
        let calls = of_type(&ev, "tool.call");
        let results = of_type(&ev, "tool.result");
        assert_eq!((calls.len(), results.len()), (3, 3), "{name}");
        for (c, r) in calls.iter().zip(&results) {
            assert_eq!(c["tool_use_id"], r["tool_use_id"], "{name}");
            assert_eq!(c["name"], r["name"], "{name}");
        }
        // 2.1.332 defers MCP tools: ToolSearch loads the schema, its result a tool_reference.
        assert_eq!(calls[0]["name"], "ToolSearch");
        assert_eq!(
            results[0]["content"],
            json!([{"type": "tool_reference", "tool_name": "mcp__echo__echo"}])
        );
        assert_eq!(
            results[0]["structured"]["matches"],
            json!(["mcp__echo__echo"])
        );
        let (ok, refused) = (calls[1], calls[2]);
        assert_eq!(ok["name"], "mcp__echo__echo", "{name}");
        assert_eq!(ok["input"], json!({"text": "hello mcp"}));
        assert_eq!(
            ok["extra"]["tool_use_meta"][0]["display_name"], "Echo",
            "{name}: the MCP display name"
        );
        assert_eq!(results[1]["content"][0]["text"], "echo: hello mcp");
        assert_eq!(results[1]["is_error"], false);
        // The server's isError result is the call's error result.
        assert_eq!(
            refused["extra"]["tool_use_meta"][0]["server_display_name"],
            "echo"
        );
        assert_eq!(results[2]["is_error"], true);
        assert_eq!(results[2]["content"], "echo refused: fail on purpose");
        let chunks = ai_sdk(name);
        let part = |ty: &str, call: &Value| {
            chunks
                .iter()
                .filter(|c| c["type"] == ty && c["toolCallId"] == call["tool_use_id"])
                .count()
        };
        assert_eq!(part("tool-output-available", ok), 1, "{name}: {chunks:#?}");
        assert_eq!(part("tool-output-error", refused), 1, "{name}: {chunks:#?}");
    }
}

#[test]
fn plan_mode_refusal_of_exit_plan_mode_and_auto_mode_decisions_are_kept() {
    for name in ["plan.ndjson", "plan.partial.ndjson"] {
        let ev = envelope(name);
        assert_eq!(one(&ev, "session.init")["permission_mode"], "plan");
        let exit = of_type(&ev, "tool.call")
            .into_iter()
            .find(|c| c["name"] == "ExitPlanMode")
            .unwrap();
        assert!(
            exit["input"]["plan"]
                .as_str()
                .unwrap()
                .contains("echo hello")
        );
        let refused = of_type(&ev, "tool.result")
            .into_iter()
            .find(|r| r["tool_use_id"] == exit["tool_use_id"])
            .unwrap();
        assert_eq!(refused["is_error"], true);
        assert_eq!(refused["name"], "ExitPlanMode");
        assert!(
            refused["content"]
                .as_str()
                .unwrap()
                .contains("disabled for this session")
        );
        let chunks = ai_sdk(name);
        assert!(
            chunks
                .iter()
                .any(|c| c["type"] == "tool-output-error" && c["toolCallId"] == exit["tool_use_id"]),
            "{name}: {chunks:#?}"
        );
    }
    for name in ["auto.ndjson", "auto.partial.ndjson"] {
        let ev = envelope(name);
        assert_eq!(one(&ev, "session.init")["permission_mode"], "auto");
        let reasons: Vec<&Value> = of_type(&ev, "tool.result")
            .iter()
            .map(|r| &r["extra"]["tool_result_meta"][0]["permission_decision"]["reason_type"])
            .collect();
        assert_eq!(
            reasons,
            [
                &json!("subcommandResults"),
                &json!("mode"),
                &json!("classifier")
            ],
            "{name}"
        );
        // The deletion needs auto mode's safety check, which does not run in this session: the
        // CLI warns once, denies the call and lists it in the result's permission_denials.
        let warning = one(&ev, "informational");
        assert_eq!(warning["level"], "warning");
        assert_eq!(warning["extra"]["tag"], "auto_mode_no_server_check");
        let denied = one(&ev, "permission.denied");
        let calls = of_type(&ev, "tool.call");
        assert_eq!(denied["tool_use_id"], calls[2]["tool_use_id"]);
        assert_eq!(
            denied["extra"]["decision_reason_code"],
            "auto_mode_no_check_in_session"
        );
        let results = of_type(&ev, "tool.result");
        assert_eq!(results[2]["is_error"], true);
        assert_eq!(
            results[2]["extra"]["tool_result_meta"][0]["non_execution_kind"],
            "automode-unavailable"
        );
        let denials = &one(&ev, "turn.end")["permission_denials"];
        assert_eq!(denials[0]["tool_use_id"], calls[2]["tool_use_id"], "{name}");
        let chunks = ai_sdk(name);
        assert!(
            chunks
                .iter()
                .any(|c| c["type"] == "tool-output-error"
                    && c["toolCallId"] == calls[2]["tool_use_id"]),
            "{name}"
        );
    }
}

#[test]
fn local_slash_commands_keep_their_output_and_what_ran() {
    for (name, command, ran) in [
        ("slash_context.ndjson", "context", "context"),
        ("slash_cost.ndjson", "cost", "usage"),
    ] {
        let ev = envelope(name);
        let text = one(&ev, "text");
        assert_eq!(
            text["synthetic"], true,
            "{name}: no API call made this text"
        );
        assert_eq!(text["extra"]["local_command_run"]["command"], ran);
        assert!(
            text["extra"]["local_command_source"]
                .as_str()
                .unwrap()
                .starts_with("<local-command-stdout>")
        );
        let end = one(&ev, "turn.end");
        assert_eq!(end["extra"]["local_command"], command);
        // The result repeats the text (/context's with two more newlines).
        assert_eq!(
            end["result"].as_str().unwrap().trim_end(),
            text["text"].as_str().unwrap()
        );
    }
    let ev = envelope("slash_context.ndjson");
    let usage = &one(&ev, "text")["extra"]["context_usage"];
    assert_eq!(usage["model"], "claude-opus-5-5");
    assert!(usage["total_tokens"].as_u64().unwrap() > 0);
    assert!(
        usage["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "greet"),
        "the custom command from .claude/commands counts as a skill"
    );
    for name in ["slash_custom.ndjson", "slash_custom.partial.ndjson"] {
        let ev = envelope(name);
        assert_eq!(one(&ev, "turn.end")["result"], one(&ev, "text")["text"]);
        let init = one(&ev, "session.init");
        assert!(
            init["extra"]["slash_commands"]
                .as_array()
                .unwrap()
                .contains(&json!("greet"))
        );
    }
}

/// Automatic compaction in the middle of a turn: the boundary (trigger auto, with the uuids of
/// the messages it keeps) and the synthetic summary come between the last tool result and the
/// answer; every call stays paired and the turn's usage covers the messages before and after.
#[test]
fn auto_compaction_mid_turn_keeps_its_boundary_and_pairs() {
    let ev = envelope("autocompact.ndjson");
    let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = |t: &str| kinds.iter().position(|k| *k == t).unwrap();
    let boundary = &ev[at("compact.boundary")];
    assert_eq!(boundary["trigger"], "auto");
    let meta = &boundary["extra"]["compact_metadata"];
    assert!(meta["pre_tokens"].as_u64().unwrap() > 100_000);
    assert_eq!(boundary["pre_tokens"], meta["pre_tokens"]);
    // The kept messages are the last reply's text and call and the call's result.
    let kept = meta["preserved_messages"]["uuids"].as_array().unwrap();
    let calls = of_type(&ev, "tool.call");
    let results = of_type(&ev, "tool.result");
    assert!(kept.contains(&calls[3]["uuid"]) && kept.contains(&results[3]["uuid"]));
    let summary = &ev[at("compact.boundary") + 1];
    assert_eq!(summary["type"], "user.text");
    assert_eq!(summary["is_synthetic"], true);
    assert_eq!(meta["preserved_messages"]["anchor_uuid"], summary["uuid"]);
    assert_eq!(calls.len(), 4);
    for (c, r) in calls.iter().zip(&results) {
        assert_eq!(c["tool_use_id"], r["tool_use_id"]);
    }
    assert!(at("status") < at("compact.boundary") && at("compact.boundary") < at("turn.end"));
    let run = one(&ev, "run.end");
    assert_eq!(run["turns"], 1);
    assert_eq!(
        run["usage"]["input_tokens"],
        one(&ev, "turn.end")["usage"]["input_tokens"]
    );
}

/// `/compact` writes two `system/status` lines before `system/init`: the AI SDK profile's
/// `start` then has no session, which a `message-metadata` chunk brings once init comes.
#[test]
fn compact_keeps_its_boundary_summary_and_session() {
    let ev = envelope("slash_compact.ndjson");
    let session = "0b0e0000-0000-4000-8000-000000000001";
    assert!(ev.iter().all(|e| e["session_id"] == session));
    let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[..3], ["status", "status", "session.init"]);
    assert_eq!(ev[0]["status"], "compacting");
    assert_eq!(ev[1]["extra"]["compact_result"], "success");
    let boundary = one(&ev, "compact.boundary");
    assert_eq!(boundary["trigger"], "manual");
    assert_eq!(boundary["extra"]["compact_metadata"]["post_tokens"], 2576);
    let texts = of_type(&ev, "user.text");
    assert_eq!(texts.len(), 2);
    assert_eq!(texts[0]["is_synthetic"], true);
    assert!(texts[0]["text"].as_str().unwrap().contains("Summary:"));
    assert_eq!(texts[0]["replay"], false);
    assert_eq!(texts[1]["replay"], true);
    assert!(texts[1].get("is_synthetic").is_none());
    assert_eq!(one(&ev, "turn.end")["extra"]["local_command"], "compact");
    let chunks = ai_sdk("slash_compact.ndjson");
    assert_eq!(chunks[0], json!({"type": "start"}));
    assert_eq!(
        chunks[1],
        json!({"type": "message-metadata",
               "messageMetadata": {"session_id": session, "model": "claude-opus-5-5"}})
    );
    assert_eq!(
        of_type(&chunks, "message-metadata").len(),
        1,
        "sent once: {chunks:#?}"
    );
    if let Some(meta) = real_client_metadata("slash_compact.ndjson") {
        assert_eq!(meta["session_id"], session);
        assert_eq!(meta["model"], "claude-opus-5-5");
        assert_eq!(meta["outcome"], "success");
    }
}

/// The message metadata the `ai` package's chat transport and `readUIMessageStream` rebuild
/// from capture `name` (every chunk validated against its schema); None when Node is missing.
fn real_client_metadata(name: &str) -> Option<Value> {
    use crate::sinks::clients::{Server, node, node_clients, skip};
    let dir = match node_clients() {
        Ok(d) => d,
        Err(e) => {
            skip(&e);
            return None;
        }
    };
    let server = Server::start(&captured("2.1.332", name), &["--timeout", "60"])?;
    let url = format!("http://127.0.0.1:{}/chat", server.port);
    let got = node(dir, &["ai-sdk-read.mjs", &url]);
    drop(server);
    assert_eq!(got["errors"], json!([]), "{name}: {got:#}");
    Some(got["message"]["metadata"].clone())
}

/// The second run prints only its own lines under the first run's session id; its result's
/// `total_cost_usd` is the session's (both runs), `model_usage_since_last_result` the run's own.
#[test]
fn resumed_runs_keep_the_session_and_both_cost_figures() {
    let first = "0b0e0000-0000-4000-8000-000000000002";
    for name in [
        "resume.ndjson",
        "resume.partial.ndjson",
        "continue.ndjson",
        "resume_fork.ndjson",
    ] {
        let ev = envelope(name);
        let sid = &ev[0]["session_id"];
        assert!(ev.iter().all(|e| &e["session_id"] == sid), "{name}");
        // --fork-session: a session id of its own, and nothing in the stream names the first.
        let forked = name.starts_with("resume_fork");
        assert_eq!(sid != first, forked, "{name}: {sid}");
        let end = one(&ev, "turn.end");
        let own = end["extra"]["model_usage_since_last_result"]["claude-opus-5-5"]["costUSD"]
            .as_f64()
            .unwrap();
        let session = end["cost_usd"].as_f64().unwrap();
        assert!(session > own * 1.5, "{name}: {session} {own}");
        let run = one(&ev, "run.end");
        assert_eq!(run["cost_usd"], end["cost_usd"]);
        assert_eq!(run["usage"]["output_tokens"], end["usage"]["output_tokens"]);
        assert_eq!(
            end["model_usage"]["claude-opus-5-5"]["outputTokens"]
                .as_u64()
                .unwrap(),
            end["usage"]["output_tokens"].as_u64().unwrap() + 46,
            "{name}: modelUsage counts the first run's 46 output tokens too"
        );
    }
}

/// A background Bash command: its task events name the call, the notification starts a second
/// turn, and the AI SDK profile's `finish` counts both turns (not the last one only).
#[test]
fn a_background_command_pairs_with_its_task_and_both_turns_count() {
    for name in ["bash_bg.ndjson", "bash_bg.partial.ndjson"] {
        let ev = envelope(name);
        let calls = of_type(&ev, "tool.call");
        let results = of_type(&ev, "tool.result");
        assert_eq!((calls.len(), results.len()), (2, 2), "{name}");
        let (call, read) = (calls[0], calls[1]);
        assert_eq!(call["input"]["run_in_background"], true);
        let id = &call["tool_use_id"];
        let started = one(&ev, "task.started");
        assert_eq!(&started["tool_use_id"], id);
        assert_eq!(started["task_type"], "local_bash");
        assert_eq!(started["extra"]["is_backgrounded"], true);
        assert_eq!(&results[0]["tool_use_id"], id);
        assert_eq!(
            results[0]["structured"]["backgroundTaskId"],
            started["task_id"]
        );
        let done = one(&ev, "task.notification");
        assert_eq!(
            (&done["tool_use_id"], &done["status"]),
            (id, &json!("completed"))
        );
        assert_eq!(one(&ev, "task.updated")["patch"]["status"], "completed");
        // 2.1.332 has no output tool: the follow-up turn reads the file the notification names.
        assert_eq!(read["name"], "Read");
        assert_eq!(read["input"]["file_path"], done["output_file"]);
        assert_eq!(results[1]["tool_use_id"], read["tool_use_id"]);
        let output = results[1]["content"].as_str().unwrap();
        assert!(output.contains("done-in-background"), "{output}");
        let turns = of_type(&ev, "turn.end");
        assert_eq!(turns.len(), 2);
        assert_eq!(
            turns[1]["extra"]["origin"]["kind"], "task-notification",
            "{name}"
        );
        let run = one(&ev, "run.end");
        assert_eq!(run["turns"], 2);
        let per_turn: u64 = turns
            .iter()
            .map(|t| t["usage"]["output_tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(run["usage"]["output_tokens"], per_turn);
        let chunks = ai_sdk(name);
        let finish = chunks.iter().find(|c| c["type"] == "finish").unwrap();
        let meta = &finish["messageMetadata"];
        assert_eq!(
            meta["usage"], run["usage"],
            "{name}: the run's usage, both turns"
        );
        assert_eq!(meta["cost_usd"], run["cost_usd"]);
        assert_eq!(meta["turns"], 2);
    }
    if let Some(meta) = real_client_metadata("bash_bg.ndjson") {
        assert_eq!(meta["turns"], 2);
        assert_eq!(meta["usage"]["output_tokens"], 155);
    }
}

/// A background command stopped with TaskStop (loaded with ToolSearch: deferred in 2.1.332):
/// the task is killed and notified as stopped between the TaskStop call and its result, both
/// naming the command's call; the run has a single turn (a stopped task starts none).
#[test]
fn a_stopped_background_command_says_so_and_names_its_call() {
    let ev = envelope("bash_bg_stop.ndjson");
    let calls = of_type(&ev, "tool.call");
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Bash", "ToolSearch", "TaskStop"]);
    let started = one(&ev, "task.started");
    assert_eq!(started["tool_use_id"], calls[0]["tool_use_id"]);
    assert_eq!(calls[2]["input"]["task_id"], started["task_id"]);
    assert_eq!(one(&ev, "task.updated")["patch"]["status"], "killed");
    let done = one(&ev, "task.notification");
    assert_eq!(
        (&done["status"], &done["tool_use_id"]),
        (&json!("stopped"), &calls[0]["tool_use_id"])
    );
    let results = of_type(&ev, "tool.result");
    let stop = results.iter().find(|r| r["name"] == "TaskStop").unwrap();
    assert_eq!(stop["structured"]["task_id"], started["task_id"]);
    let seq = |e: &Value| e["seq"].as_u64().unwrap();
    assert!(seq(calls[2]) < seq(done) && seq(done) < seq(stop));
    assert_eq!(one(&ev, "run.end")["turns"], 1);
}
