//! One sentence for every field of every envelope event, read by the JSON Schema (each
//! property's `description`), hence the generated TypeScript types, and by the man page. A field
//! is looked up for its event first, then by its name alone; a field promoted from a mapped
//! source line (see `normalize::MAPPINGS`) also says which source member it comes from.

/// Descriptions of one event's own field: `(event, field, description)`; `common` is the
/// members every event carries.
static BY_EVENT: &[(&str, &str, &str)] = &[
    (
        "common",
        "v",
        "Envelope version: always 1 (see Versioning).",
    ),
    (
        "common",
        "seq",
        "Event number: 0 for a run's first event (a continued run goes on from its last), +1 per event, no gaps.",
    ),
    (
        "common",
        "type",
        "The event type: the name of its definition in $defs.",
    ),
    (
        "common",
        "session_id",
        "The Claude Code session id of the source line, or of the current session for lines without one; null before any line named one.",
    ),
    (
        "common",
        "parent_tool_use_id",
        "Inside a subagent: the tool_use id of the Task/Agent call that started it (the tool.call with subagent true); null on the main thread.",
    ),
    (
        "common",
        "line",
        "The 1-based input line the event comes from; null for events no single line caused (run.error, run.end, state flushed at the end).",
    ),
    ("common", "uuid", "The source line's uuid, when it has one."),
    (
        "common",
        "ephemeral",
        "true on live-only events (deltas, stream lifecycle, progress): drop them to keep only final state.",
    ),
    (
        "session.init",
        "model",
        "The model the run uses, as system/init names it.",
    ),
    ("session.init", "cwd", "The CLI's working directory."),
    (
        "session.init",
        "tools",
        "The tool names available to the model.",
    ),
    (
        "session.init",
        "mcp_servers",
        "The MCP servers with their connection status, as system/init lists them.",
    ),
    (
        "session.init",
        "permission_mode",
        "The permission mode (default, acceptEdits, bypassPermissions, plan, …), from permissionMode.",
    ),
    (
        "session.init",
        "cli_version",
        "The CLI's version (claude_code_version), null for CLIs that do not write it.",
    ),
    (
        "session.init",
        "api_key_source",
        "Where the CLI got its API credentials (apiKeySource: none, ANTHROPIC_API_KEY, …).",
    ),
    (
        "text",
        "text",
        "The block's text; null when the block had no string text (violation says why).",
    ),
    (
        "text",
        "synthetic",
        "true for text the CLI wrote itself as the assistant (e.g. an API error message), not the model.",
    ),
    (
        "text",
        "error",
        "The assistant line's error member (e.g. an API error kind) when it has one.",
    ),
    (
        "text",
        "source",
        "\"message\" (an assistant line) or \"deltas\" (assembled from text_delta fragments when no assistant line came).",
    ),
    (
        "thinking",
        "thinking",
        "The thinking text; null for a redacted_thinking block.",
    ),
    (
        "thinking",
        "redacted",
        "true for a redacted_thinking block (its data is under block_extra).",
    ),
    (
        "thinking",
        "source",
        "\"message\" (an assistant line) or \"deltas\" (assembled from thinking_delta fragments).",
    ),
    ("text.delta", "text", "This fragment of the block's text."),
    (
        "thinking.delta",
        "thinking",
        "This fragment of the block's thinking.",
    ),
    (
        "tool.input.delta",
        "partial_json",
        "This fragment of the call's input JSON, as streamed (not valid JSON on its own).",
    ),
    (
        "tool.call",
        "input",
        "The call's input, parsed; null when assembled fragments did not parse (input_error says why).",
    ),
    (
        "tool.call",
        "input_error",
        "Why input is null: the assembled fragments did not parse, or the CLI abandoned the block; null otherwise.",
    ),
    (
        "tool.call",
        "subagent",
        "true when the tool starts a subagent (a Task or Agent call, the name across CLI releases): the subagent's events follow with parent_tool_use_id set to this call's tool_use_id. It says what this call does; whether this event is itself inside a subagent is parent_tool_use_id.",
    ),
    (
        "tool.call",
        "server",
        "true for a tool the API ran itself (a server_tool_use or mcp_tool_use block: web search, code execution, an MCP connector), not the CLI.",
    ),
    (
        "tool.call",
        "source",
        "\"message\" (a tool_use block of an assistant line) or \"deltas\" (assembled from input_json_delta fragments).",
    ),
    (
        "tool.call",
        "partial_json",
        "With input null: the assembled fragments that did not parse.",
    ),
    (
        "tool.result",
        "name",
        "The paired call's tool name; null when no call with this tool_use_id was seen.",
    ),
    (
        "tool.result",
        "is_error",
        "The block's is_error: the tool failed or was refused.",
    ),
    (
        "tool.result",
        "server",
        "true for the result of a tool the API ran (a *_tool_result block).",
    ),
    (
        "tool.result",
        "content",
        "The result: a string where the source is text, the content blocks otherwise (base64 data elided unless --keep-blobs).",
    ),
    (
        "tool.result",
        "structured",
        "The CLI's tool_use_result for this result (the tool's structured output), as written; null when the line has none.",
    ),
    (
        "tool.call.revised",
        "input",
        "The later input the repeated tool_use id came with.",
    ),
    (
        "user.text",
        "text",
        "The text; null when the block had no string text (violation says why).",
    ),
    (
        "user.text",
        "replay",
        "true for a prompt the CLI replays (--replay-user-messages) rather than one it adds.",
    ),
    (
        "user.block",
        "block",
        "The image or document block, base64 data elided unless --keep-blobs.",
    ),
    (
        "usage",
        "usage",
        "The message's token usage as the API reported it (input_tokens, output_tokens, cache_* …), last values winning.",
    ),
    (
        "usage",
        "provisional",
        "true when no final count arrived for the message (see the event's description).",
    ),
    (
        "usage",
        "stop_reason",
        "Why the message ended (end_turn, tool_use, max_tokens, refusal, pause_turn, …); null when the CLI wrote it on no line.",
    ),
    (
        "usage",
        "stop_sequence",
        "The stop sequence that ended the message, if any.",
    ),
    (
        "turn.end",
        "outcome",
        "How the turn ended: success, error, max_turns, max_budget, during_execution, structured_output_retries, or the raw subtype.",
    ),
    (
        "turn.end",
        "subtype",
        "The result line's subtype, as written.",
    ),
    ("turn.end", "is_error", "The result line's is_error."),
    (
        "turn.end",
        "result",
        "The result line's result: the final text of a successful turn.",
    ),
    (
        "turn.end",
        "cost_usd",
        "The turn's cost in USD (total_cost_usd, or cost_usd of older CLIs); null when absent.",
    ),
    (
        "turn.end",
        "duration_ms",
        "Wall time of the turn in milliseconds, as the CLI reports it.",
    ),
    (
        "turn.end",
        "duration_api_ms",
        "Time spent in API calls in milliseconds, as the CLI reports it.",
    ),
    (
        "turn.end",
        "num_turns",
        "The number of agentic turns (API round trips) the CLI counted.",
    ),
    (
        "turn.end",
        "usage",
        "The result line's token usage (the turn's final counts).",
    ),
    (
        "turn.end",
        "model_usage",
        "Usage and cost per model (modelUsage), as written.",
    ),
    (
        "turn.end",
        "permission_denials",
        "The tool calls the permission system denied during the turn, as written.",
    ),
    (
        "turn.end",
        "stop_reason",
        "The last API message's stop_reason, from the result line (or that message's own lines); null when no line gave it.",
    ),
    (
        "turn.end",
        "terminal_reason",
        "Why the CLI stopped (completed, max_turns, max_budget, aborted, error), for CLIs that write it.",
    ),
    (
        "turn.end",
        "errors",
        "The result line's errors list (error subtypes), as written.",
    ),
    (
        "turn.end",
        "structured_output",
        "What a --json-schema run returned, as written; null otherwise.",
    ),
    (
        "message.delta",
        "stop_reason",
        "Why the message ended (end_turn, tool_use, max_tokens, …), from the message_delta.",
    ),
    (
        "message.delta",
        "usage",
        "The message_delta's usage (final output_tokens), as written.",
    ),
    (
        "message.stop",
        "abandoned_blocks",
        "The blocks the CLI abandoned with this message ({api_message_id, from_block_index}), when it says so.",
    ),
    (
        "block.start",
        "block_type",
        "The content block's type (text, thinking, tool_use, server_tool_use, …).",
    ),
    ("block.delta", "delta", "The delta object, as written."),
    (
        "stream.error",
        "error",
        "The API error object of the stream's error event.",
    ),
    (
        "unknown",
        "kind",
        "What was not mapped: a whole line's type or subtype, a content block, a stream event, a shape, or a lookalike format (a session transcript line).",
    ),
    (
        "unknown",
        "name",
        "The unmapped type, subtype, block or event name.",
    ),
    ("unknown", "raw", "The original object, every member kept."),
    (
        "diagnostic",
        "text",
        "A lossy, capped excerpt of the line (at most 240 bytes).",
    ),
    (
        "diagnostic",
        "bytes",
        "The line's length in bytes (its real length when --max-line-bytes cut it).",
    ),
    (
        "diagnostic",
        "truncated",
        "true when text is shorter than the line.",
    ),
    (
        "diagnostic",
        "detail",
        "The parser's message, when there is one.",
    ),
    (
        "run.error",
        "cause",
        "Why the run failed: no_result (no result line after the last system/init).",
    ),
    ("run.error", "end_cause", "run.end's cause, which follows."),
    (
        "run.error",
        "exit_code",
        "The child's exit status (spawn); null otherwise.",
    ),
    (
        "run.error",
        "last_event",
        "The type and seq of the last event before this one, null when there was none.",
    ),
    (
        "stall",
        "quiet_ms",
        "How long the child wrote nothing, in milliseconds.",
    ),
    (
        "line.repaired",
        "kind",
        "What was repaired: lone_surrogate.",
    ),
    ("line.repaired", "count", "The number of escapes replaced."),
    ("line.repaired", "detail", "What was done, in words."),
    (
        "api.error",
        "error",
        "The assistant line's error member (overloaded, rate_limit, authentication_failed, …).",
    ),
    (
        "api.error",
        "details",
        "The line's is_api_error_message and api_error_* members, as written.",
    ),
    (
        "api.error",
        "text",
        "The message's text; null when it has none.",
    ),
    ("skipped", "reason", "What happened to the line, in words."),
    (
        "run.end",
        "cause",
        "How the run ended: eof, output_closed, exit, signal, timeout, idle_timeout, interrupted, killed, spawn_failed or sink_failed (see the event's description).",
    ),
    (
        "run.end",
        "terminal_seen",
        "Whether a result line came after the last system/init.",
    ),
    (
        "run.end",
        "turns",
        "The number of result lines (turns) seen.",
    ),
    (
        "run.end",
        "cli_version",
        "The CLI's version from the last system/init that named one; null otherwise.",
    ),
    (
        "run.end",
        "usage",
        "The run's token totals: the result lines' final counts plus every message no result covers (subagents, messages after the last result); provisional when some count was not final.",
    ),
    (
        "run.end",
        "cost_usd",
        "The run's cost in USD: the sum of the result lines' costs; null when none gave one.",
    ),
    (
        "run.end",
        "api_messages",
        "The number of distinct API messages (usage records).",
    ),
    ("run.end", "tool_calls", "The number of tool.call events."),
    (
        "run.end",
        "tool_results",
        "The number of tool.result events.",
    ),
    (
        "run.end",
        "exit_code",
        "spawn: the child's exit status; null when it died by a signal or did not start.",
    ),
    (
        "run.end",
        "signal",
        "spawn: the signal that killed the child (e.g. \"SIGKILL\"), else null.",
    ),
    (
        "run.end",
        "reason",
        "spawn: the signal boo-normalize got when interrupted; policy, stdout_closed or output_closed when it killed the child.",
    ),
    (
        "run.end",
        "signals_sent",
        "spawn: the signals sent to the child's process group, in order.",
    ),
    (
        "run.end",
        "descendants_killed",
        "spawn: processes the run left behind that were killed.",
    ),
    (
        "run.end",
        "background_left",
        "spawn --keep-background: processes the run started that were left running.",
    ),
    (
        "run.end",
        "elapsed_ms",
        "spawn: the child's run time in milliseconds.",
    ),
    (
        "run.end",
        "sink",
        "sink_failed: the file sink that failed (--audit, --record, …).",
    ),
    (
        "run.end",
        "error",
        "spawn_failed: why the child could not start; sink_failed: the OS error.",
    ),
    (
        "run.end",
        "stderr_dropped",
        "spawn: child stderr lines dropped because they came faster than they could be passed on.",
    ),
    (
        "run.end",
        "env_removed",
        "spawn: the names (never the values) of provider variables that were set but not passed to claude; [] when none.",
    ),
    (
        "run.end",
        "otlp",
        "--otlp-endpoint: the trace's spans handed to the exporter, exported and failed.",
    ),
    (
        "run.end",
        "stats",
        "Input accounting: lines (equals the input's line count), bytes, json_lines, events, unknown, diagnostics, repaired and events by type.",
    ),
    ("policy.violation", "rule", "The guard that fired."),
    ("policy.violation", "detail", "What happened, in words."),
    (
        "policy.violation",
        "name",
        "The offending call's tool name; null for max_output_bytes.",
    ),
    (
        "policy.violation",
        "tool_use_id",
        "The offending call's tool_use id; null for max_output_bytes.",
    ),
    (
        "policy.violation",
        "limit",
        "The configured limit, when the guard has one.",
    ),
    ("policy.violation", "count", "The observed number."),
    (
        "policy.violation",
        "enforced",
        "true when the child is being stopped (--enforce).",
    ),
    (
        "child.stderr",
        "text",
        "One line of the child's stderr (lossy UTF-8, at most 64 KiB).",
    ),
    (
        "child.stderr",
        "truncated",
        "true when the line was cut at 64 KiB.",
    ),
    (
        "compact.boundary",
        "trigger",
        "What started the compaction (manual, auto).",
    ),
    (
        "compact.boundary",
        "pre_tokens",
        "The context's token count before compaction.",
    ),
    (
        "status",
        "status",
        "The session's status (e.g. compacting), null when it cleared.",
    ),
    (
        "task.started",
        "description",
        "The task's short description.",
    ),
    (
        "task.started",
        "task_type",
        "The task's kind (local_agent, local_bash, local_workflow, mcp_task).",
    ),
    ("task.started", "prompt", "The prompt the task runs with."),
    (
        "task.progress",
        "description",
        "The task's short description.",
    ),
    (
        "task.progress",
        "last_tool_name",
        "The tool the task used last.",
    ),
    (
        "task.notification",
        "status",
        "The task's final status (completed, failed, stopped, …).",
    ),
    (
        "task.notification",
        "output_file",
        "Where the task's output was written.",
    ),
    (
        "task.updated",
        "patch",
        "The members of the task that changed, as written.",
    ),
    (
        "task.list",
        "tasks",
        "The background tasks now running, as written.",
    ),
    (
        "api.retry",
        "attempt",
        "This retry's number (1 for the first retry).",
    ),
    (
        "api.retry",
        "max_retries",
        "How many retries the CLI allows.",
    ),
    (
        "api.retry",
        "retry_delay_ms",
        "How long the CLI waits before this retry, in milliseconds.",
    ),
    (
        "api.retry",
        "error_status",
        "The failed call's HTTP status, when there was one.",
    ),
    ("api.retry", "error", "The failed call's error kind."),
    (
        "thinking.tokens",
        "estimated_tokens",
        "The thinking tokens so far (an estimate).",
    ),
    (
        "thinking.tokens",
        "estimated_tokens_delta",
        "The increase since the previous estimate.",
    ),
    (
        "local_command.output",
        "content",
        "The local (slash) command's output text.",
    ),
    ("informational", "content", "The message's text."),
    (
        "informational",
        "level",
        "How important it is (info, notice, suggestion, warning).",
    ),
    (
        "notification",
        "key",
        "The notification's key (the same key replaces an earlier one).",
    ),
    ("notification", "text", "The notification's text."),
    (
        "notification",
        "priority",
        "How prominent the CLI shows it.",
    ),
    ("files.persisted", "files", "The files saved."),
    (
        "files.persisted",
        "failed",
        "The files that could not be saved.",
    ),
    (
        "session.state",
        "state",
        "The session's new state (idle, running, requires_action).",
    ),
    (
        "permission.denied",
        "message",
        "Why, as the CLI tells the model.",
    ),
    (
        "permission.denied",
        "decision_reason",
        "What decided (a rule, a mode, a hook, the user), as written.",
    ),
    ("memory.recall", "mode", "How memories were recalled."),
    (
        "memory.recall",
        "memories",
        "The memories recalled, as written.",
    ),
    (
        "elicitation.complete",
        "mcp_server_name",
        "The MCP server that asked for input.",
    ),
    (
        "elicitation.complete",
        "elicitation_id",
        "The elicitation's id.",
    ),
    (
        "commands.changed",
        "commands",
        "The slash commands now available, as written.",
    ),
    (
        "model.fallback",
        "fallback_model",
        "The model the CLI switched to.",
    ),
    (
        "model.fallback",
        "trigger",
        "What made the CLI switch, as written.",
    ),
    (
        "model.refusal",
        "trigger",
        "What the refusal came from, as written.",
    ),
    (
        "mirror.error",
        "key",
        "What failed to mirror (written by the Python SDK, not the CLI).",
    ),
    ("mirror.error", "error", "The error, as written."),
    ("session.title", "title", "The session's new title."),
    (
        "rate_limit",
        "status",
        "The rate limit's status (allowed, allowed_warning, rejected).",
    ),
    (
        "rate_limit",
        "resets_at",
        "When the limit resets (Unix seconds), from resetsAt.",
    ),
    (
        "rate_limit",
        "rate_limit_type",
        "Which limit (five_hour, seven_day, …), from rateLimitType.",
    ),
    (
        "rate_limit",
        "utilization",
        "How much of the limit is used (0–1).",
    ),
    (
        "rate_limit",
        "info",
        "The whole rate_limit_info object, as written.",
    ),
    (
        "tool.progress",
        "name",
        "The running tool's name (tool_name).",
    ),
    (
        "tool.progress",
        "elapsed_time_seconds",
        "How long the tool has been running, in seconds.",
    ),
    (
        "tool.summary",
        "summary",
        "The CLI's summary of the preceding tool calls.",
    ),
    (
        "tool.summary",
        "preceding_tool_use_ids",
        "The tool_use ids the summary covers.",
    ),
    (
        "auth.status",
        "is_authenticating",
        "Whether a login is in progress (isAuthenticating).",
    ),
    ("auth.status", "output", "The login's output lines."),
    ("auth.status", "error", "The login's error, if any."),
    (
        "prompt.suggestion",
        "suggestion",
        "The prompt the CLI suggests next.",
    ),
    (
        "session.reset",
        "new_session_id",
        "The new session's id (new_conversation_id).",
    ),
    (
        "session.reset",
        "trigger",
        "What reset the session, as written.",
    ),
    (
        "command.lifecycle",
        "command_uuid",
        "The queued command's id.",
    ),
    (
        "command.lifecycle",
        "state",
        "The command's new state (queued, started, completed, cancelled, discarded, refused).",
    ),
    (
        "control.request",
        "request",
        "The request (subtype and its members), as written.",
    ),
    (
        "control.response",
        "response",
        "The response (its request_id, subtype and members), as written.",
    ),
];

/// Descriptions by field name alone, for every event that has no entry of its own.
static BY_NAME: &[(&str, &str)] = &[
    (
        "message_id",
        "The API message id (message.id); null for a message without one.",
    ),
    ("model", "The model that wrote the message."),
    ("index", "The content block's index within its message."),
    (
        "tool_use_id",
        "The tool call's id (a tool_use block's id), pairing calls, deltas, results and progress.",
    ),
    (
        "name",
        "The tool's name; null when the source block has none.",
    ),
    (
        "violation",
        "How the source broke its schema (a missing or mistyped member), when it did.",
    ),
    (
        "raw",
        "The source block as written, when a member had the wrong type.",
    ),
    (
        "block_extra",
        "The block's members no field maps, when it has any.",
    ),
    ("extra", "The source line's members no field maps."),
    ("error", "The error, as written."),
    ("detail", "What happened, in words."),
    ("hook_id", "The hook run's id."),
    ("hook_name", "The hook's name."),
    (
        "hook_event",
        "The event the hook runs on (PreToolUse, Stop, …).",
    ),
    ("stdout", "The hook's standard output."),
    ("stderr", "The hook's standard error."),
    ("output", "The hook's combined output."),
    ("exit_code", "The hook's exit status."),
    (
        "outcome",
        "How the hook ended (success, error, cancelled, …).",
    ),
    ("task_id", "The background task's id."),
    ("subagent_type", "The subagent's type (its agent name)."),
    ("usage", "Token usage so far, as written."),
    ("summary", "A summary of the task's progress or result."),
    (
        "permission_mode",
        "The permission mode (default, acceptEdits, bypassPermissions, plan, …).",
    ),
    ("tool_name", "The denied tool's name."),
    ("original_model", "The model that was asked first."),
    ("request_id", "The control request's id."),
    ("state", "The new state."),
];

/// The description of `field` of `event`, if it has one.
pub fn doc(event: &str, field: &str) -> Option<&'static str> {
    BY_EVENT
        .iter()
        .find(|(e, f, _)| *e == event && *f == field)
        .map(|r| r.2)
        .or_else(|| {
            BY_NAME
                .iter()
                .find(|(f, d)| *f == field && !d.is_empty())
                .map(|r| r.1)
        })
}
