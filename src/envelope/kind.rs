//! The envelope's vocabulary: the name of every event type the code emits by name, once. The
//! normalizer, the guards, the sinks and the schema use these constants; the typed `system/*`
//! and other table-driven events are named in their tables (`normalize::MAPPINGS`). The schema
//! ([`super::schema`]) documents each of them, and the man page's and the README's event
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

/// Every name above.
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
    "empty_line",
];
