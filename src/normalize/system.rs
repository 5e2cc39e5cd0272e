//! `system/init`, the typed table of other system subtypes and non-message top-level types, and
//! the `unknown` fallback for everything else.

use super::State;
use super::write::promote;
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::{Out, Val, get_str};

/// A typed event: its envelope `type`, and `(field, source path)` pairs promoted to the top of the
/// event (dotted paths reach into objects). Every other member of the line goes under `extra`.
pub struct Mapping {
    /// `(type, subtype)` of the source line; subtype `""` for types without one.
    pub source: (&'static str, &'static str),
    /// The envelope event type.
    pub event: &'static str,
    /// Promoted fields.
    pub fields: &'static [(&'static str, &'static str)],
}

macro_rules! map {
    ($t:literal / $s:literal => $e:literal { $($f:literal : $p:literal),* $(,)? }) => {
        Mapping { source: ($t, $s), event: $e, fields: &[$(($f, $p)),*] }
    };
}

/// Every mapped type and subtype besides init, assistant, user, stream_event and result.
pub static MAPPINGS: &[Mapping] = &[
    map!("system"/"compact_boundary" => "compact.boundary" {"trigger": "compact_metadata.trigger", "pre_tokens": "compact_metadata.pre_tokens"}),
    map!("system"/"microcompact_boundary" => "compact.boundary" {"trigger": "compact_metadata.trigger", "pre_tokens": "compact_metadata.pre_tokens"}),
    map!("system"/"status" => "status" {"status": "status", "permission_mode": "permissionMode"}),
    map!("system"/"hook_started" => "hook.started" {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event"}),
    map!("system"/"hook_progress" => "hook.progress" {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event", "stdout": "stdout", "stderr": "stderr", "output": "output"}),
    map!("system"/"hook_response" => "hook.response" {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event", "stdout": "stdout", "stderr": "stderr", "output": "output", "exit_code": "exit_code", "outcome": "outcome"}),
    map!("system"/"task_started" => "task.started" {"task_id": "task_id", "tool_use_id": "tool_use_id", "description": "description", "task_type": "task_type", "subagent_type": "subagent_type", "prompt": "prompt"}),
    map!("system"/"task_progress" => "task.progress" {"task_id": "task_id", "tool_use_id": "tool_use_id", "description": "description", "usage": "usage", "last_tool_name": "last_tool_name", "summary": "summary"}),
    map!("system"/"task_notification" => "task.notification" {"task_id": "task_id", "tool_use_id": "tool_use_id", "status": "status", "summary": "summary", "output_file": "output_file", "usage": "usage"}),
    map!("system"/"task_updated" => "task.updated" {"task_id": "task_id", "patch": "patch"}),
    map!("system"/"background_tasks_changed" => "task.list" {"tasks": "tasks"}),
    map!("system"/"api_retry" => "api.retry" {"attempt": "attempt", "max_retries": "max_retries", "retry_delay_ms": "retry_delay_ms", "error_status": "error_status", "error": "error"}),
    map!("system"/"thinking_tokens" => "thinking.tokens" {"estimated_tokens": "estimated_tokens", "estimated_tokens_delta": "estimated_tokens_delta"}),
    map!("system"/"local_command_output" => "local_command.output" {"content": "content"}),
    map!("system"/"informational" => "informational" {"content": "content", "level": "level", "tool_use_id": "tool_use_id"}),
    map!("system"/"notification" => "notification" {"key": "key", "text": "text", "priority": "priority"}),
    map!("system"/"files_persisted" => "files.persisted" {"files": "files", "failed": "failed"}),
    map!("system"/"session_state_changed" => "session.state" {"state": "state"}),
    map!("system"/"permission_denied" => "permission.denied" {"tool_name": "tool_name", "tool_use_id": "tool_use_id", "message": "message", "decision_reason": "decision_reason"}),
    map!("system"/"memory_recall" => "memory.recall" {"mode": "mode", "memories": "memories"}),
    map!("system"/"elicitation_complete" => "elicitation.complete" {"mcp_server_name": "mcp_server_name", "elicitation_id": "elicitation_id"}),
    map!("system"/"commands_changed" => "commands.changed" {"commands": "commands"}),
    map!("system"/"model_refusal_fallback" => "model.fallback" {"original_model": "original_model", "fallback_model": "fallback_model", "trigger": "trigger"}),
    map!("system"/"model_fallback" => "model.fallback" {"original_model": "original_model", "fallback_model": "fallback_model", "trigger": "trigger"}),
    map!("system"/"model_refusal_no_fallback" => "model.refusal" {"original_model": "original_model", "trigger": "trigger"}),
    map!("system"/"plugin_install" => "plugin.install" {}),
    map!("system"/"worker_shutting_down" => "worker.shutdown" {}),
    map!("system"/"control_request_progress" => "control.progress" {"request_id": "request_id"}),
    map!("system"/"mirror_error" => "mirror.error" {"key": "key", "error": "error"}),
    // CLI 2.1.2xx–2.1.331 (`--bare`, `--safe-mode`, `--name`, `/rename`, remote and VCS features);
    // members beyond the promoted ones stay under `extra`.
    map!("system"/"ui_invalidate" => "ui.invalidate" {}),
    map!("system"/"session_title_changed" => "session.title" {"title": "title"}),
    map!("system"/"post_turn_summary" => "turn.summary" {}),
    map!("system"/"cloud_session_delta" => "cloud_session.delta" {}),
    map!("system"/"code_change_published" => "code_change.published" {}),
    map!("system"/"dev_intent" => "dev.intent" {}),
    map!("system"/"feedback_draft_queued" => "feedback.draft_queued" {}),
    map!("system"/"peer_message_hold" => "peer_message.hold" {}),
    map!("system"/"per_turn_effort_changed" => "effort.changed" {}),
    map!("system"/"turn_handoff_available" => "turn.handoff_available" {}),
    map!("system"/"turn_preempted" => "turn.preempted" {}),
    map!("system"/"vcs_state_changed" => "vcs.state" {}),
    map!("rate_limit_event"/"" => "rate_limit" {"status": "rate_limit_info.status", "resets_at": "rate_limit_info.resetsAt", "rate_limit_type": "rate_limit_info.rateLimitType", "utilization": "rate_limit_info.utilization", "info": "rate_limit_info"}),
    map!("tool_progress"/"" => "tool.progress" {"tool_use_id": "tool_use_id", "name": "tool_name", "elapsed_time_seconds": "elapsed_time_seconds", "task_id": "task_id"}),
    map!("tool_use_summary"/"" => "tool.summary" {"summary": "summary", "preceding_tool_use_ids": "preceding_tool_use_ids"}),
    map!("auth_status"/"" => "auth.status" {"is_authenticating": "isAuthenticating", "output": "output", "error": "error"}),
    map!("prompt_suggestion"/"" => "prompt.suggestion" {"suggestion": "suggestion"}),
    map!("conversation_reset"/"" => "session.reset" {"new_session_id": "new_conversation_id", "trigger": "trigger"}),
    map!("command_lifecycle"/"" => "command.lifecycle" {"command_uuid": "command_uuid", "state": "state"}),
    map!("control_request"/"" => "control.request" {"request_id": "request_id", "request": "request"}),
    map!("control_response"/"" => "control.response" {"response": "response"}),
    map!("control_cancel_request"/"" => "control.cancel" {"request_id": "request_id"}),
    map!("keep_alive"/"" => "keep_alive" {}),
    // Session transcripts (~/.claude/projects/*/*.jsonl, read through crate::transcript): line
    // types stream-json never prints, CLI 1.0.x to 2.1.332.
    map!("summary"/"" => "session.summary" {"summary": "summary", "leaf_uuid": "leafUuid"}),
    map!("custom-title"/"" => "session.title" {"title": "customTitle"}),
    map!("last-prompt"/"" => "session.last_prompt" {"prompt": "lastPrompt", "leaf_uuid": "leafUuid"}),
    map!("mode"/"" => "session.mode" {"mode": "mode"}),
    map!("file-history-snapshot"/"" => "file_history.snapshot" {"message_id": "messageId", "is_snapshot_update": "isSnapshotUpdate"}),
    map!("queue-operation"/"" => "queue.operation" {"operation": "operation", "content": "content"}),
    map!("attachment"/"" => "attachment" {"attachment": "attachment"}),
    map!("tools-used"/"" => "tools.used" {"tools": "tools"}),
    map!("cost-state"/"" => "cost.state" {"total_cost_usd": "totalCostUSD", "model_usage": "modelUsage"}),
    map!("api-request"/"" => "api.request" {"request_id": "id", "params": "params"}),
    map!("api-request-shape"/"" => "api.request_shape" {"shape_hash": "shapeHash", "shape": "shape"}),
    map!("api-request-blob"/"" => "api.request_blob" {"hash": "hash", "message": "message"}),
    map!("atis-latch"/"" => "atis.latch" {"atis": "atis"}),
];

/// `session.init`'s members promoted as they are (before `cli_version`, which must be a string).
const INIT_FIELDS: &[(&str, &str)] = &[
    ("model", "model"),
    ("cwd", "cwd"),
    ("tools", "tools"),
    ("mcp_servers", "mcp_servers"),
    ("permission_mode", "permissionMode"),
];

/// Members that are already in the common keys and never repeated under `extra`.
const COMMON: &[&str] = &[
    "type",
    "subtype",
    "session_id",
    "uuid",
    "parent_tool_use_id",
];

/// Write `"extra":{…}` with every member of `v` not in `skip` nor in [`COMMON`].
pub fn write_extra(o: &mut Out, v: Val<'_, '_>, skip: &[&str]) {
    o.key("extra");
    o.members_where(v, |k, _| !COMMON.contains(&k) && !skip.contains(&k));
}

impl State {
    pub(super) fn system(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        let subtype = get_str(v, "subtype").unwrap_or("");
        if subtype == "init" {
            return self.init(v, ctx, ev);
        }
        self.mapped_or_unknown(v, "system", subtype, ctx, ev);
    }

    pub(super) fn other_type(
        &mut self,
        v: Val<'_, '_>,
        kind: &str,
        ctx: &Ctx<'_>,
        ev: &mut Events,
    ) {
        if kind == "conversation_reset"
            && let Some(new) = get_str(v, "new_conversation_id")
        {
            self.flush_all(ev, "the conversation was reset");
            self.session = Some(new.to_owned());
        }
        self.mapped_or_unknown(v, kind, "", ctx, ev);
    }

    fn mapped_or_unknown(
        &mut self,
        v: Val<'_, '_>,
        kind: &str,
        subtype: &str,
        ctx: &Ctx<'_>,
        ev: &mut Events,
    ) {
        let Some(m) = MAPPINGS.iter().find(|m| m.source == (kind, subtype)) else {
            let (k, name) = if kind == "system" {
                ("subtype", format!("system.{subtype}"))
            } else {
                ("type", kind.to_owned())
            };
            return self.unknown(v, ctx, ev, k, &name);
        };
        let o = ev.begin(m.event, ctx);
        promote(o, v, m.fields);
        // Members promoted from the top level are not repeated under `extra`.
        let skip: Vec<&str> = m
            .fields
            .iter()
            .map(|(_, p)| *p)
            .filter(|p| !p.contains('.'))
            .collect();
        write_extra(o, v, &skip);
        ev.end();
    }

    fn init(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events) {
        // A new run (another session's init) ends whatever the previous one left pending.
        self.flush_all(
            ev,
            "a new session started before the tool input was complete",
        );
        self.init_seen = true;
        self.terminal_seen = false;
        // Each init opens a new scope for the one-call-per-id rule: a replayed or appended copy of
        // a run repeats its tool use ids, and those calls are new. Names stay known, so a result
        // that arrives after the next init (a background subagent) still names its call.
        self.scope += 1;
        // A result after this init covers only the messages after it.
        self.totals.close_open();
        if let Some(ver) = get_str(v, "claude_code_version") {
            self.cli_version = Some(ver.to_owned());
        }
        let o = ev.begin(kind::SESSION_INIT, ctx);
        promote(o, v, INIT_FIELDS);
        o.key("cli_version");
        o.opt_str(get_str(v, "claude_code_version"));
        promote(o, v, &[("api_key_source", "apiKeySource")]);
        let promoted = INIT_FIELDS.iter().map(|(_, p)| *p);
        let skip: Vec<&str> = promoted
            .chain(["claude_code_version", "apiKeySource"])
            .collect();
        write_extra(o, v, &skip);
        ev.end();
    }
}
