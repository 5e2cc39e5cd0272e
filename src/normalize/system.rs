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
    ($t:literal / $s:literal => $e:path { $($f:literal : $p:literal),* $(,)? }) => {
        Mapping { source: ($t, $s), event: $e, fields: &[$(($f, $p)),*] }
    };
}

/// Every mapped type and subtype besides init, assistant, user, stream_event and result.
pub static MAPPINGS: &[Mapping] = &[
    map!("system"/"compact_boundary" => kind::COMPACT_BOUNDARY {"trigger": "compact_metadata.trigger", "pre_tokens": "compact_metadata.pre_tokens"}),
    map!("system"/"microcompact_boundary" => kind::COMPACT_BOUNDARY {"trigger": "compact_metadata.trigger", "pre_tokens": "compact_metadata.pre_tokens"}),
    map!("system"/"status" => kind::STATUS {"status": "status", "permission_mode": "permissionMode"}),
    map!("system"/"hook_started" => kind::HOOK_STARTED {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event"}),
    map!("system"/"hook_progress" => kind::HOOK_PROGRESS {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event", "stdout": "stdout", "stderr": "stderr", "output": "output"}),
    map!("system"/"hook_response" => kind::HOOK_RESPONSE {"hook_id": "hook_id", "hook_name": "hook_name", "hook_event": "hook_event", "stdout": "stdout", "stderr": "stderr", "output": "output", "exit_code": "exit_code", "outcome": "outcome"}),
    map!("system"/"task_started" => kind::TASK_STARTED {"task_id": "task_id", "tool_use_id": "tool_use_id", "description": "description", "task_type": "task_type", "subagent_type": "subagent_type", "prompt": "prompt"}),
    map!("system"/"task_progress" => kind::TASK_PROGRESS {"task_id": "task_id", "tool_use_id": "tool_use_id", "description": "description", "usage": "usage", "last_tool_name": "last_tool_name", "summary": "summary"}),
    map!("system"/"task_notification" => kind::TASK_NOTIFICATION {"task_id": "task_id", "tool_use_id": "tool_use_id", "status": "status", "summary": "summary", "output_file": "output_file", "usage": "usage"}),
    map!("system"/"task_updated" => kind::TASK_UPDATED {"task_id": "task_id", "patch": "patch"}),
    map!("system"/"background_tasks_changed" => kind::TASK_LIST {"tasks": "tasks"}),
    map!("system"/"api_retry" => kind::API_RETRY {"attempt": "attempt", "max_retries": "max_retries", "retry_delay_ms": "retry_delay_ms", "error_status": "error_status", "error": "error"}),
    map!("system"/"thinking_tokens" => kind::THINKING_TOKENS {"estimated_tokens": "estimated_tokens", "estimated_tokens_delta": "estimated_tokens_delta"}),
    map!("system"/"local_command_output" => kind::LOCAL_COMMAND_OUTPUT {"content": "content"}),
    map!("system"/"informational" => kind::INFORMATIONAL {"content": "content", "level": "level", "tool_use_id": "tool_use_id"}),
    map!("system"/"notification" => kind::NOTIFICATION {"key": "key", "text": "text", "priority": "priority"}),
    map!("system"/"files_persisted" => kind::FILES_PERSISTED {"files": "files", "failed": "failed"}),
    map!("system"/"session_state_changed" => kind::SESSION_STATE {"state": "state"}),
    map!("system"/"permission_denied" => kind::PERMISSION_DENIED {"tool_name": "tool_name", "tool_use_id": "tool_use_id", "message": "message", "decision_reason": "decision_reason"}),
    map!("system"/"memory_recall" => kind::MEMORY_RECALL {"mode": "mode", "memories": "memories"}),
    map!("system"/"elicitation_complete" => kind::ELICITATION_COMPLETE {"mcp_server_name": "mcp_server_name", "elicitation_id": "elicitation_id"}),
    map!("system"/"commands_changed" => kind::COMMANDS_CHANGED {"commands": "commands"}),
    map!("system"/"model_refusal_fallback" => kind::MODEL_FALLBACK {"original_model": "original_model", "fallback_model": "fallback_model", "trigger": "trigger"}),
    map!("system"/"model_fallback" => kind::MODEL_FALLBACK {"original_model": "original_model", "fallback_model": "fallback_model", "trigger": "trigger"}),
    map!("system"/"model_refusal_no_fallback" => kind::MODEL_REFUSAL {"original_model": "original_model", "trigger": "trigger"}),
    map!("system"/"plugin_install" => kind::PLUGIN_INSTALL {}),
    map!("system"/"worker_shutting_down" => kind::WORKER_SHUTDOWN {}),
    map!("system"/"control_request_progress" => kind::CONTROL_PROGRESS {"request_id": "request_id"}),
    map!("system"/"mirror_error" => kind::MIRROR_ERROR {"key": "key", "error": "error"}),
    // CLI 2.1.2xx–2.1.331 (`--bare`, `--safe-mode`, `--name`, `/rename`, remote and VCS features);
    // members beyond the promoted ones stay under `extra`.
    map!("system"/"ui_invalidate" => kind::UI_INVALIDATE {}),
    map!("system"/"session_title_changed" => kind::SESSION_TITLE {"title": "title"}),
    map!("system"/"post_turn_summary" => kind::TURN_SUMMARY {}),
    map!("system"/"cloud_session_delta" => kind::CLOUD_SESSION_DELTA {}),
    map!("system"/"code_change_published" => kind::CODE_CHANGE_PUBLISHED {}),
    map!("system"/"dev_intent" => kind::DEV_INTENT {}),
    map!("system"/"feedback_draft_queued" => kind::FEEDBACK_DRAFT_QUEUED {}),
    map!("system"/"peer_message_hold" => kind::PEER_MESSAGE_HOLD {}),
    map!("system"/"per_turn_effort_changed" => kind::EFFORT_CHANGED {}),
    map!("system"/"turn_handoff_available" => kind::TURN_HANDOFF_AVAILABLE {}),
    map!("system"/"turn_preempted" => kind::TURN_PREEMPTED {}),
    map!("system"/"vcs_state_changed" => kind::VCS_STATE {}),
    map!("rate_limit_event"/"" => kind::RATE_LIMIT {"status": "rate_limit_info.status", "resets_at": "rate_limit_info.resetsAt", "rate_limit_type": "rate_limit_info.rateLimitType", "utilization": "rate_limit_info.utilization", "info": "rate_limit_info"}),
    map!("tool_progress"/"" => kind::TOOL_PROGRESS {"tool_use_id": "tool_use_id", "name": "tool_name", "elapsed_time_seconds": "elapsed_time_seconds", "task_id": "task_id"}),
    map!("tool_use_summary"/"" => kind::TOOL_SUMMARY {"summary": "summary", "preceding_tool_use_ids": "preceding_tool_use_ids"}),
    map!("auth_status"/"" => kind::AUTH_STATUS {"is_authenticating": "isAuthenticating", "output": "output", "error": "error"}),
    map!("prompt_suggestion"/"" => kind::PROMPT_SUGGESTION {"suggestion": "suggestion"}),
    map!("conversation_reset"/"" => kind::SESSION_RESET {"new_session_id": "new_conversation_id", "trigger": "trigger"}),
    map!("command_lifecycle"/"" => kind::COMMAND_LIFECYCLE {"command_uuid": "command_uuid", "state": "state"}),
    map!("control_request"/"" => kind::CONTROL_REQUEST {"request_id": "request_id", "request": "request"}),
    map!("control_response"/"" => kind::CONTROL_RESPONSE {"response": "response"}),
    map!("control_cancel_request"/"" => kind::CONTROL_CANCEL {"request_id": "request_id"}),
    map!("keep_alive"/"" => kind::KEEP_ALIVE {}),
    // Session transcripts (~/.claude/projects/*/*.jsonl, read through crate::transcript): line
    // types stream-json never prints, CLI 1.0.x to 2.1.332.
    map!("summary"/"" => kind::SESSION_SUMMARY {"summary": "summary", "leaf_uuid": "leafUuid"}),
    map!("custom-title"/"" => kind::SESSION_TITLE {"title": "customTitle"}),
    map!("last-prompt"/"" => kind::SESSION_LAST_PROMPT {"prompt": "lastPrompt", "leaf_uuid": "leafUuid"}),
    map!("mode"/"" => kind::SESSION_MODE {"mode": "mode"}),
    map!("file-history-snapshot"/"" => kind::FILE_HISTORY_SNAPSHOT {"message_id": "messageId", "is_snapshot_update": "isSnapshotUpdate"}),
    map!("queue-operation"/"" => kind::QUEUE_OPERATION {"operation": "operation", "content": "content"}),
    map!("attachment"/"" => kind::ATTACHMENT {"attachment": "attachment"}),
    map!("tools-used"/"" => kind::TOOLS_USED {"tools": "tools"}),
    map!("cost-state"/"" => kind::COST_STATE {"total_cost_usd": "totalCostUSD", "model_usage": "modelUsage"}),
    map!("api-request"/"" => kind::API_REQUEST {"request_id": "id", "params": "params"}),
    map!("api-request-shape"/"" => kind::API_REQUEST_SHAPE {"shape_hash": "shapeHash", "shape": "shape"}),
    map!("api-request-blob"/"" => kind::API_REQUEST_BLOB {"hash": "hash", "message": "message"}),
    map!("atis-latch"/"" => kind::ATIS_LATCH {"atis": "atis"}),
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
        if kind == crate::dialect::emit::SKIP_TYPE {
            // A dialect line that says nothing the envelope shows (see crate::dialect).
            let o = ev.begin(kind::SKIPPED, ctx);
            o.key("reason");
            o.opt_str(get_str(v, "reason"));
            ev.end();
            return;
        }
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
        // The messages after this init are a new turn's (the previous turn's result may still
        // come: see `Totals::open`).
        self.totals.new_turn();
        // A dialect's version is its init's `agent_version` (see crate::dialect).
        let version_key = match self.agent {
            Some(_) => "agent_version",
            None => "claude_code_version",
        };
        let version = get_str(v, version_key);
        if let Some(ver) = version {
            self.cli_version = Some(ver.to_owned());
        }
        let o = ev.begin(kind::SESSION_INIT, ctx);
        promote(o, v, INIT_FIELDS);
        o.key("cli_version");
        o.opt_str(version);
        if let Some(agent) = self.agent {
            o.key("agent");
            o.str(agent);
        }
        promote(o, v, &[("api_key_source", "apiKeySource")]);
        let promoted = INIT_FIELDS.iter().map(|(_, p)| *p);
        let skip: Vec<&str> = promoted.chain([version_key, "apiKeySource"]).collect();
        write_extra(o, v, &skip);
        ev.end();
    }
}
