//! claude-codes (the typed Rust SDK): its snapshot of the CLI's wire schema (every message type
//! and system subtype with its top-level keys) and its captured test cases.

use super::{contains, normalize, of_type, on_line};
use serde_json::{Map, Value, json};

/// The wire schema snapshots (both versions, merged): `(type[/subtype], its top-level keys)`,
/// 43 labels.
const WIRE: &[(&str, &str)] = &[
    (
        "assistant",
        "aborted, advisor_model, api_error, api_error_status, attribution_agent, attribution_mcp_server, attribution_mcp_tool, attribution_plugin, attribution_skill, batch_tool_uses, context_usage, error, error_details, is_api_error_message, is_meta, is_virtual, local_command_source, message, parent_tool_use_id, request_id, resumed_from_incomplete_thinking, session_id, subagent_type, supersedes, task_description, timestamp, tool_use_meta, type, user_message_uuid, uuid, wire_tool_inputs",
    ),
    (
        "auth_status",
        "error, isAuthenticating, output, session_id, type, uuid",
    ),
    (
        "command_lifecycle",
        "command_uuid, session_id, state, type, uuid",
    ),
    (
        "conversation_reset",
        "new_conversation_id, session_id, type, uuid",
    ),
    ("prompt_suggestion", "session_id, suggestion, type, uuid"),
    (
        "rate_limit_event",
        "rate_limit_info, session_id, type, uuid",
    ),
    (
        "result",
        "duration_api_ms, duration_ms, errors, fast_mode_disabled_reason, fast_mode_state, is_error, modelUsage, num_turns, origin, permission_denials, queued_turn_count, session_id, stop_reason, subagent_stats, subtype, terminal_reason, total_cost_usd, type, usage, user_message_uuid, uuid",
    ),
    (
        "result/success",
        "api_error_status, deferred_tool_use, duration_api_ms, duration_ms, fast_mode_disabled_reason, fast_mode_state, is_error, modelUsage, num_turns, origin, permission_denials, queued_turn_count, request_sent_wall_ms, result, session_id, stop_reason, structured_output, subagent_stats, subtype, terminal_reason, time_origin_ms, time_to_request_from_spawn_ms, time_to_request_ms, total_cost_usd, ttft_ms, ttft_stream_ms, type, usage, user_message_uuid, uuid, warm_spare_claimed",
    ),
    (
        "stream_event",
        "event, parent_tool_use_id, session_id, ttft_ms, type, user_message_uuid, uuid",
    ),
    (
        "system/api_retry",
        "attempt, error, error_status, max_retries, retry_delay_ms, session_id, subtype, type, uuid",
    ),
    (
        "system/background_tasks_changed",
        "session_id, subtype, tasks, type, uuid",
    ),
    (
        "system/code_change_published",
        "action, identifier, provider, repo, session_id, subtype, type, url, uuid",
    ),
    (
        "system/commands_changed",
        "commands, session_id, subtype, type, uuid",
    ),
    (
        "system/compact_boundary",
        "compact_metadata, logical_parent_uuid, session_id, subtype, type, uuid",
    ),
    (
        "system/control_request_progress",
        "attempt, error_status, max_retries, request_id, retry_delay_ms, session_id, status, subtype, type, uuid",
    ),
    (
        "system/elicitation_complete",
        "elicitation_id, mcp_server_name, session_id, subtype, type, uuid",
    ),
    (
        "system/feedback_draft_queued",
        "details_preview, draft_id, draft_type, session_id, subtype, title, type, uuid",
    ),
    (
        "system/files_persisted",
        "failed, files, processed_at, session_id, subtype, type, uuid",
    ),
    (
        "system/hook_progress",
        "hook_event, hook_id, hook_name, output, session_id, stderr, stdout, subtype, type, uuid",
    ),
    (
        "system/hook_response",
        "exit_code, hook_event, hook_id, hook_name, outcome, output, session_id, stderr, stdout, subtype, type, uuid",
    ),
    (
        "system/hook_started",
        "hook_event, hook_id, hook_name, session_id, subtype, type, uuid",
    ),
    (
        "system/informational",
        "content, level, prevent_continuation, session_id, subtype, tool_use_id, type, uuid",
    ),
    (
        "system/init",
        "agents, analytics_disabled, apiKeySource, betas, capabilities, claude_code_version, cloud_session, cwd, effort, fast_mode_disabled_reason, fast_mode_state, footer_indicator, mcp_server_errors, mcp_servers, memory_paths, model, output_style, permissionMode, plugin_errors, plugin_warnings, plugins, powershell_path, product_feedback_disabled, session_id, skills, slash_commands, subtype, terminal_slash_commands, tools, type, uuid, worker_epoch",
    ),
    (
        "system/local_command_output",
        "content, session_id, subtype, type, uuid",
    ),
    (
        "system/memory_recall",
        "memories, mode, session_id, subtype, type, uuid",
    ),
    (
        "system/mirror_error",
        "error, key, session_id, subtype, type, uuid",
    ),
    (
        "system/model_refusal_fallback",
        "api_refusal_category, api_refusal_explanation, content, direction, fallback_model, original_model, refused_user_message_uuid, request_id, retracted_message_uuids, saw_cyber_refusal, scope, session_id, subtype, trigger, type, uuid",
    ),
    (
        "system/model_refusal_no_fallback",
        "api_refusal_category, api_refusal_explanation, content, original_model, refused_user_message_uuid, request_id, session_id, subtype, type, uuid",
    ),
    (
        "system/notification",
        "color, key, priority, session_id, subtype, text, timeout_ms, type, uuid",
    ),
    (
        "system/permission_denied",
        "agent_id, decision_reason, decision_reason_type, message, session_id, subtype, tool_name, tool_use_id, type, uuid",
    ),
    (
        "system/plugin_install",
        "error, name, session_id, status, subtype, type, uuid",
    ),
    (
        "system/session_state_changed",
        "session_id, state, subtype, type, uuid",
    ),
    (
        "system/status",
        "compact_error, compact_result, permissionMode, session_id, status, subtype, type, uuid",
    ),
    (
        "system/task_notification",
        "ambient, output_file, resource_links, session_id, skip_transcript, status, subtype, summary, task_id, tool_use_id, type, usage, uuid",
    ),
    (
        "system/task_progress",
        "description, last_tool_name, session_id, subagent_type, subtype, summary, task_id, tool_use_id, type, usage, uuid",
    ),
    (
        "system/task_started",
        "ambient, description, is_backgrounded, prompt, session_id, skip_transcript, spawn_depth, subagent_type, subtype, task_id, task_type, tool_use_id, type, uuid, workflow_name",
    ),
    (
        "system/task_updated",
        "patch, session_id, subtype, task_id, type, uuid",
    ),
    (
        "system/thinking_tokens",
        "estimated_tokens, estimated_tokens_delta, session_id, subtype, type, uuid",
    ),
    (
        "system/vcs_state_changed",
        "branch, cwd, kind, session_id, subtype, type, uuid",
    ),
    (
        "system/worker_shutting_down",
        "reason, session_id, subtype, type, uuid",
    ),
    (
        "tool_progress",
        "elapsed_time_seconds, heartbeat, parent_tool_use_id, session_id, subagent_retry, subagent_type, task_id, tool_name, tool_use_id, type, uuid",
    ),
    (
        "tool_use_summary",
        "preceding_tool_use_ids, session_id, summary, timestamp, type, uuid",
    ),
    (
        "user",
        "client_composed, client_platform, image_paste_ids, inbound_origin, interrupted_message_id, isSynthetic, is_compact_summary, is_meta, is_virtual, is_visible_in_transcript_only, mcp_meta, message, origin, parent_tool_use_id, permission_mode, plan_content, priority, seeded_summon, shouldQuery, source_tool_assistant_uuid, source_tool_use_id, summarize_metadata, timestamp, tool_result_meta, tool_use_result, type",
    ),
];

/// A line of `label` with every key of the snapshot set: the structural keys to what their
/// mapping reads, every other key to a marker string naming it (a string where the CLI writes a
/// number, a flag or an object too: item 10 says such a value is kept as it is).
fn wire_line(label: &str, keys: &str) -> (Value, Vec<String>) {
    let (ty, sub) = label.split_once('/').unwrap_or((label, ""));
    let mut o = Map::new();
    let mut markers = Vec::new();
    for k in keys.split(", ") {
        let v = match k {
            "type" => json!(ty),
            "subtype" if !sub.is_empty() => json!(sub),
            "subtype" => json!("error_during_execution"),
            "session_id" => json!("s1"),
            "parent_tool_use_id" => Value::Null,
            "message" if ty == "assistant" => json!({"id": "msg_1", "type": "message",
                "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "a"}],
                "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 2}}),
            "message" => json!({"role": "user", "content": [{"type": "text", "text": "u"}]}),
            "event" => json!({"type": "ping"}),
            _ => {
                let m = format!("{label}.{k}");
                markers.push(m.clone());
                json!(m)
            }
        };
        o.insert(k.to_owned(), v);
    }
    if !sub.is_empty() {
        o.insert("subtype".into(), json!(sub));
    }
    (Value::Object(o), markers)
}

/// Items 1, 8 and 10: every type and subtype of the CLI's wire schema becomes a typed event (not
/// `unknown`), and every top-level key of every one of them reaches the envelope, even when its
/// value has a type the envelope does not expect.
#[test]
fn every_key_of_every_wire_type_reaches_the_envelope() {
    assert_eq!(WIRE.len(), 43);
    let (lines, markers): (Vec<Value>, Vec<Vec<String>>) =
        WIRE.iter().map(|(l, k)| wire_line(l, k)).unzip();
    let ev = normalize(&lines);
    for (i, ((label, _), markers)) in WIRE.iter().zip(&markers).enumerate() {
        let mine = on_line(&ev, i as u64 + 1);
        assert!(!mine.is_empty(), "{label}: no event");
        for e in &mine {
            assert_ne!(e["type"], "unknown", "{label}: {e}");
            assert_ne!(e["type"], "diagnostic", "{label}: {e}");
        }
        let all = Value::Array(mine.into_iter().cloned().collect());
        for m in markers {
            assert!(contains(&all, &json!(m)), "{label}: {m} is lost: {all:#}");
        }
    }
}

/// A tool's error result (`is_error`, `<tool_use_error>` text) and a result whose content is
/// text blocks keep both.
#[test]
fn captured_tool_results_keep_error_flag_and_blocks() {
    let err = "<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe parameter `offset` type is expected as `number` but provided as `string`</tool_use_error>";
    let blocks = json!([{"type": "text", "text": "     1\u{2192}import React from 'react';\n"}]);
    let ev = normalize(&[
        json!({"message": {"content": [{"content": err, "is_error": true,
            "tool_use_id": "toolu_01F5A3vbYenHhtdEV9Zt7arW", "type": "tool_result"}],
            "role": "user"}, "session_id": "08cd4ce5-1ce0-4dd4-8e7c-8b69712c514e", "type": "user"}),
        json!({"message": {"content": [{"content": blocks, "tool_use_id": "toolu_01ABC123def456",
            "type": "tool_result"}], "role": "user"},
            "session_id": "08cd4ce5-1ce0-4dd4-8e7c-8b69712c514e", "type": "user"}),
    ]);
    let r = of_type(&ev, "tool.result");
    assert_eq!(r[0]["is_error"], true);
    assert_eq!(r[0]["content"], err);
    assert_eq!(r[0]["tool_use_id"], "toolu_01F5A3vbYenHhtdEV9Zt7arW");
    assert_eq!(r[1]["is_error"], false);
    assert_eq!(r[1]["content"], blocks);
}

/// Item 2: a subagent's assistant line keeps its parent, and its usage record every count and
/// the nested `cache_creation` split and `service_tier`; a result keeps cost and usage.
#[test]
fn captured_usage_and_cost_are_kept() {
    let usage = json!({"cache_creation": {"ephemeral_1h_input_tokens": 0,
        "ephemeral_5m_input_tokens": 609}, "cache_creation_input_tokens": 609,
        "cache_read_input_tokens": 46428, "input_tokens": 5, "output_tokens": 250,
        "service_tier": "standard"});
    let result_usage = json!({"input_tokens": 4, "cache_creation_input_tokens": 3548,
        "cache_read_input_tokens": 11459, "output_tokens": 18,
        "server_tool_use": {"web_search_requests": 0}, "service_tier": "standard"});
    let ev = normalize(&[
        json!({"message": {"content": [{"id": "toolu_01RH6M7HUhJzH54sLuE4fgeo",
            "input": {"command": "grep -n DrawerWidth ADSBView.tsx",
                "description": "Find drawer width calculations"}, "name": "Bash",
            "type": "tool_use"}], "id": "msg_01YV5oPm3LyM8xCx4QfX9oBn",
            "model": "claude-haiku-4-5-20251001", "role": "assistant", "usage": usage},
            "parent_tool_use_id": "toolu_012hZhNyfdf6Y156ryHJSbxd",
            "session_id": "08cd4ce5-1ce0-4dd4-8e7c-8b69712c514e", "type": "assistant",
            "uuid": "3e240e12-d5ed-4ef3-98c7-e12bda04267b"}),
        json!({"type": "result", "subtype": "success", "is_error": false, "duration_ms": 2851,
            "duration_api_ms": 4647, "num_turns": 1,
            "result": "Why do programmers prefer dark mode?\n\nBecause light attracts bugs!",
            "session_id": "145cc619-8afc-49bd-8c24-81ce5bebe88d", "total_cost_usd": 0.0856259,
            "usage": result_usage, "permission_denials": [],
            "uuid": "a077d87d-f2cb-4824-b040-4cfec1a055b9"}),
    ]);
    let call = of_type(&ev, "tool.call")[0];
    assert_eq!(call["parent_tool_use_id"], "toolu_012hZhNyfdf6Y156ryHJSbxd");
    assert_eq!(call["subagent"], false);
    let u = of_type(&ev, "usage")[0];
    assert_eq!(u["usage"], usage);
    assert_eq!(u["parent_tool_use_id"], "toolu_012hZhNyfdf6Y156ryHJSbxd");
    assert_eq!(u["model"], "claude-haiku-4-5-20251001");
    let end = of_type(&ev, "turn.end")[0];
    assert_eq!(end["cost_usd"], 0.0856259);
    assert_eq!(end["usage"], result_usage);
    assert_eq!(
        (&end["duration_ms"], &end["duration_api_ms"]),
        (&json!(2851), &json!(4647))
    );
}

/// The captured `system/init` of CLI 2.1.15: version, model, tools, agents and plugins.
#[test]
fn captured_init_keeps_its_configuration() {
    let plugins = json!([{"name": "rust-analyzer-lsp",
        "path": "/home/u/.claude/plugins/cache/claude-plugins-official/rust-analyzer-lsp/1.0.0"}]);
    let ev = normalize(&[json!({"type": "system", "subtype": "init",
        "agents": ["Bash", "general-purpose", "statusline-setup", "Explore", "Plan"],
        "apiKeySource": "none", "claude_code_version": "2.1.15", "cwd": "/home/u/repos/x",
        "mcp_servers": [], "model": "claude-sonnet-4-5-20250929", "output_style": "default",
        "permissionMode": "default", "plugins": plugins,
        "session_id": "1f2f4a66-82a4-42e2-b93d-089998d779e6", "skills": [],
        "slash_commands": ["compact", "context", "cost"],
        "tools": ["Task", "TaskOutput", "Bash", "Glob"],
        "uuid": "7ded771e-9a47-45fd-b1e9-293476b8897d"})]);
    let init = of_type(&ev, "session.init")[0];
    let all = Value::Array(vec![init.clone()]);
    assert_eq!(init["session_id"], "1f2f4a66-82a4-42e2-b93d-089998d779e6");
    for fact in [
        json!("2.1.15"),
        json!("claude-sonnet-4-5-20250929"),
        plugins,
        json!(["Task", "TaskOutput", "Bash", "Glob"]),
        json!("statusline-setup"),
        json!("none"),
    ] {
        assert!(contains(&all, &fact), "{fact} lost: {init}");
    }
    assert_eq!(of_type(&ev, "run.end")[0]["cli_version"], "2.1.15");
}
