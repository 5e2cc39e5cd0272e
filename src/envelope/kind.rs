//! The envelope's vocabulary: the name of every event type, once. The normalizer (its
//! `normalize::MAPPINGS` table of `system/*` subtypes and other typed lines included), the
//! guards, the sinks, the report and the schema use these constants. The schema
//! ([`crate::schema`]) documents each of them, and the man page's and the README's event
//! tables are checked against the schema.

/// `system/init`: the run's configuration.
pub const SESSION_INIT: &str = "session.init";
/// A complete assistant text block.
pub const TEXT: &str = "text";
/// A complete thinking block.
pub const THINKING: &str = "thinking";
/// Live text as it streams.
pub const TEXT_DELTA: &str = "text.delta";
/// Live thinking as it streams.
pub const THINKING_DELTA: &str = "thinking.delta";
/// Live tool input JSON as it streams.
pub const TOOL_INPUT_DELTA: &str = "tool.input.delta";
/// A complete tool call.
pub const TOOL_CALL: &str = "tool.call";
/// A tool call whose id came again with a different input.
pub const TOOL_CALL_REVISED: &str = "tool.call.revised";
/// A tool's result, paired with its call.
pub const TOOL_RESULT: &str = "tool.result";
/// A user (or subagent prompt) text.
pub const USER_TEXT: &str = "user.text";
/// Any other user content block.
pub const USER_BLOCK: &str = "user.block";
/// One API message's usage.
pub const USAGE: &str = "usage";
/// The end of a turn (the `result` line).
pub const TURN_END: &str = "turn.end";
/// Stream lifecycle: a message starts.
pub const MESSAGE_START: &str = "message.start";
/// Stream lifecycle: stop reason and usage so far.
pub const MESSAGE_DELTA: &str = "message.delta";
/// Stream lifecycle: a message stops.
pub const MESSAGE_STOP: &str = "message.stop";
/// Stream lifecycle: a content block starts.
pub const BLOCK_START: &str = "block.start";
/// Stream lifecycle: any other block delta.
pub const BLOCK_DELTA: &str = "block.delta";
/// Stream lifecycle: a content block stops.
pub const BLOCK_STOP: &str = "block.stop";
/// A stream keep-alive ping.
pub const STREAM_PING: &str = "stream.ping";
/// An error event inside the stream.
pub const STREAM_ERROR: &str = "stream.error";
/// A line of a type the normalizer does not know (passed through).
pub const UNKNOWN: &str = "unknown";
/// A line that could not be used, and why.
pub const DIAGNOSTIC: &str = "diagnostic";
/// The run ended without what it needed (no `result`).
pub const RUN_ERROR: &str = "run.error";
/// `spawn --idle-action warn`: the child went quiet.
pub const STALL: &str = "stall";
/// A line was repaired before parsing.
pub const LINE_REPAIRED: &str = "line.repaired";
/// An assistant API error.
pub const API_ERROR: &str = "api.error";
/// A line that yields no other event, and why.
pub const SKIPPED: &str = "skipped";
/// The last event of every run.
pub const RUN_END: &str = "run.end";
/// A spawn guard fired.
pub const POLICY_VIOLATION: &str = "policy.violation";
/// A line of the child's stderr (`spawn --stderr-events`).
pub const CHILD_STDERR: &str = "child.stderr";

// The table-driven events: `normalize::MAPPINGS` maps each from its source line (a transcript's
// own line types too).
/// From `system/compact_boundary`, `system/microcompact_boundary`.
pub const COMPACT_BOUNDARY: &str = "compact.boundary";
/// From `system/status`.
pub const STATUS: &str = "status";
/// From `system/hook_started`.
pub const HOOK_STARTED: &str = "hook.started";
/// From `system/hook_progress`.
pub const HOOK_PROGRESS: &str = "hook.progress";
/// From `system/hook_response`.
pub const HOOK_RESPONSE: &str = "hook.response";
/// From `system/task_started`.
pub const TASK_STARTED: &str = "task.started";
/// From `system/task_progress`.
pub const TASK_PROGRESS: &str = "task.progress";
/// From `system/task_notification`.
pub const TASK_NOTIFICATION: &str = "task.notification";
/// From `system/task_updated`.
pub const TASK_UPDATED: &str = "task.updated";
/// From `system/background_tasks_changed`.
pub const TASK_LIST: &str = "task.list";
/// From `system/api_retry`.
pub const API_RETRY: &str = "api.retry";
/// From `system/thinking_tokens`.
pub const THINKING_TOKENS: &str = "thinking.tokens";
/// From `system/local_command_output`.
pub const LOCAL_COMMAND_OUTPUT: &str = "local_command.output";
/// From `system/informational`.
pub const INFORMATIONAL: &str = "informational";
/// From `system/notification`.
pub const NOTIFICATION: &str = "notification";
/// From `system/files_persisted`.
pub const FILES_PERSISTED: &str = "files.persisted";
/// From `system/session_state_changed`.
pub const SESSION_STATE: &str = "session.state";
/// From `system/permission_denied`.
pub const PERMISSION_DENIED: &str = "permission.denied";
/// From `system/memory_recall`.
pub const MEMORY_RECALL: &str = "memory.recall";
/// From `system/elicitation_complete`.
pub const ELICITATION_COMPLETE: &str = "elicitation.complete";
/// From `system/commands_changed`.
pub const COMMANDS_CHANGED: &str = "commands.changed";
/// From `system/model_refusal_fallback`, `system/model_fallback`.
pub const MODEL_FALLBACK: &str = "model.fallback";
/// From `system/model_refusal_no_fallback`.
pub const MODEL_REFUSAL: &str = "model.refusal";
/// From `system/plugin_install`.
pub const PLUGIN_INSTALL: &str = "plugin.install";
/// From `system/worker_shutting_down`.
pub const WORKER_SHUTDOWN: &str = "worker.shutdown";
/// From `system/control_request_progress`.
pub const CONTROL_PROGRESS: &str = "control.progress";
/// From `system/mirror_error`.
pub const MIRROR_ERROR: &str = "mirror.error";
/// From `system/ui_invalidate`.
pub const UI_INVALIDATE: &str = "ui.invalidate";
/// From `system/session_title_changed`, `custom-title`.
pub const SESSION_TITLE: &str = "session.title";
/// From `system/post_turn_summary`.
pub const TURN_SUMMARY: &str = "turn.summary";
/// From `system/cloud_session_delta`.
pub const CLOUD_SESSION_DELTA: &str = "cloud_session.delta";
/// From `system/code_change_published`.
pub const CODE_CHANGE_PUBLISHED: &str = "code_change.published";
/// From `system/dev_intent`.
pub const DEV_INTENT: &str = "dev.intent";
/// From `system/feedback_draft_queued`.
pub const FEEDBACK_DRAFT_QUEUED: &str = "feedback.draft_queued";
/// From `system/peer_message_hold`.
pub const PEER_MESSAGE_HOLD: &str = "peer_message.hold";
/// From `system/per_turn_effort_changed`.
pub const EFFORT_CHANGED: &str = "effort.changed";
/// From `system/turn_handoff_available`.
pub const TURN_HANDOFF_AVAILABLE: &str = "turn.handoff_available";
/// From `system/turn_preempted`.
pub const TURN_PREEMPTED: &str = "turn.preempted";
/// From `system/vcs_state_changed`.
pub const VCS_STATE: &str = "vcs.state";
/// From `rate_limit_event`.
pub const RATE_LIMIT: &str = "rate_limit";
/// From `tool_progress`.
pub const TOOL_PROGRESS: &str = "tool.progress";
/// From `tool_use_summary`.
pub const TOOL_SUMMARY: &str = "tool.summary";
/// From `auth_status`.
pub const AUTH_STATUS: &str = "auth.status";
/// From `prompt_suggestion`.
pub const PROMPT_SUGGESTION: &str = "prompt.suggestion";
/// From `conversation_reset`.
pub const SESSION_RESET: &str = "session.reset";
/// From `command_lifecycle`.
pub const COMMAND_LIFECYCLE: &str = "command.lifecycle";
/// From `control_request`.
pub const CONTROL_REQUEST: &str = "control.request";
/// From `control_response`.
pub const CONTROL_RESPONSE: &str = "control.response";
/// From `control_cancel_request`.
pub const CONTROL_CANCEL: &str = "control.cancel";
/// From `keep_alive`.
pub const KEEP_ALIVE: &str = "keep_alive";
/// From `summary`.
pub const SESSION_SUMMARY: &str = "session.summary";
/// From `mode`.
pub const SESSION_MODE: &str = "session.mode";
/// From `attachment`.
pub const ATTACHMENT: &str = "attachment";

/// From `last-prompt`.
pub const SESSION_LAST_PROMPT: &str = "session.last_prompt";
/// From `file-history-snapshot`.
pub const FILE_HISTORY_SNAPSHOT: &str = "file_history.snapshot";
/// From `queue-operation`.
pub const QUEUE_OPERATION: &str = "queue.operation";
/// From `tools-used`.
pub const TOOLS_USED: &str = "tools.used";
/// From `cost-state`.
pub const COST_STATE: &str = "cost.state";
/// From `api-request`.
pub const API_REQUEST: &str = "api.request";
/// From `api-request-shape`.
pub const API_REQUEST_SHAPE: &str = "api.request_shape";
/// From `api-request-blob`.
pub const API_REQUEST_BLOB: &str = "api.request_blob";
/// From `atis-latch`.
pub const ATIS_LATCH: &str = "atis.latch";
/// Every name above but the table-driven ones.
pub const ALL: &[&str] = &[
    SESSION_INIT,
    TEXT,
    THINKING,
    TEXT_DELTA,
    THINKING_DELTA,
    TOOL_INPUT_DELTA,
    TOOL_CALL,
    TOOL_CALL_REVISED,
    TOOL_RESULT,
    USER_TEXT,
    USER_BLOCK,
    USAGE,
    TURN_END,
    MESSAGE_START,
    MESSAGE_DELTA,
    MESSAGE_STOP,
    BLOCK_START,
    BLOCK_DELTA,
    BLOCK_STOP,
    STREAM_PING,
    STREAM_ERROR,
    UNKNOWN,
    DIAGNOSTIC,
    RUN_ERROR,
    STALL,
    LINE_REPAIRED,
    API_ERROR,
    SKIPPED,
    RUN_END,
    POLICY_VIOLATION,
    CHILD_STDERR,
];

/// Every `kind` of a `diagnostic`, as the schema and the README list them.
pub const DIAGNOSTIC_KINDS: &[&str] = &[
    "not_json",
    "not_object",
    "missing_type",
    "invalid_utf8",
    "truncated_line",
    "line_too_long",
    "too_deep",
    "number_out_of_range",
    "empty_line",
];
