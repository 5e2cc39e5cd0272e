//! The noise policy of profiles: which string fields are enums, which values are enum-like,
//! which object keys are data (collapsed to `{*}`), which subtrees are opaque, and where a nested
//! object becomes its own kind.
//!
//! Everything here is a pure function of a kind name, a field path and a key or value, so the
//! profile of a set of inputs never depends on the order they were read in.

/// Largest enum value set kept per field; beyond it the set is "open" and not compared.
pub const MAX_VALUES: usize = 16;

/// Longest string kept as an enum value.
const MAX_VALUE_LEN: usize = 40;

/// Field names (last path segment) whose string values are recorded as enum values.
/// Free text, ids, paths, model names and numbers are never in this list.
pub const ENUM_FIELDS: &[&str] = &[
    "apiKeySource",
    "api_error_type",
    "decision",
    "decision_reason_type",
    "direction",
    "display",
    "effort",
    "error",
    "fast_mode_state",
    "hook_event",
    "inference_geo",
    "kind",
    "level",
    "media_type",
    "mode",
    "outcome",
    "output_style",
    "overageStatus",
    "permissionMode",
    "priority",
    "rateLimitType",
    "reason_type",
    "resume_reason",
    "retrieval_status",
    "role",
    "scope",
    "service_tier",
    "source",
    "speed",
    "state",
    "status",
    "stop_reason",
    "subtype",
    "task_type",
    "terminal_reason",
    "thinking_display",
    "trigger",
    "type",
    "view_mode",
];

/// Permission modes (`init.permissionMode`, `status.permission_mode`, the `--permission-mode` choices).
const PERMISSION_MODES: &[&str] = &[
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "default",
    "delegate",
    "dontAsk",
    "plan",
];

/// Documented values of enum-like fields (by last path segment), from the Messages API and the
/// CLI's own type definitions. A sample that shows one for the first time (or stops showing one)
/// says only what the sampled runs happened to do, so `diff` does not call it drift.
pub const DOCUMENTED: &[(&str, &[&str])] = &[
    (
        "apiKeySource",
        &[
            "ANTHROPIC_API_KEY",
            "apiKeyHelper",
            "none",
            "org",
            "project",
            "temporary",
            "user",
            "/login managed key",
        ],
    ),
    (
        "error",
        &[
            "authentication_failed",
            "billing_error",
            "invalid_request",
            "max_output_tokens",
            "rate_limit",
            "server_error",
            "unknown",
        ],
    ),
    ("permissionMode", PERMISSION_MODES),
    ("permission_mode", PERMISSION_MODES),
    ("service_tier", &["batch", "priority", "standard"]),
    (
        "status",
        &[
            "completed",
            "failed",
            "killed",
            "pending",
            "requesting",
            "running",
            "stopped",
            "compacting",
        ],
    ),
    (
        "stop_reason",
        &[
            "end_turn",
            "max_tokens",
            "model_context_window_exceeded",
            "pause_turn",
            "refusal",
            "stop_sequence",
            "tool_use",
        ],
    ),
    (
        "terminal_reason",
        &["aborted", "completed", "error", "max_budget", "max_turns"],
    ),
];

/// True if `value` is a documented value of the field named `key`.
pub fn documented(key: &str, value: &str) -> bool {
    DOCUMENTED
        .iter()
        .any(|(k, vs)| *k == key && vs.contains(&value))
}

/// Fields (by last path segment) holding open lists of names: the set of strings they held is
/// recorded and a name added or removed is reported at `info` level.
pub const OPEN_LISTS: &[&str] = &[
    "agents",
    "betas",
    "capabilities",
    "skills",
    "slash_commands",
];

/// Most names kept per open list.
pub const MAX_ITEMS: usize = 512;

/// Paths whose last segment is in [`ENUM_FIELDS`] but whose values are names, not enums.
const NOT_ENUM_PATHS: &[&str] = &["plugins[].source"];

/// Object keys whose values are maps keyed by data (model names, agent types): keys become `{*}`.
const MAP_FIELDS: &[&str] = &["by_type", "modelUsage", "model_usage_since_last_result"];

/// True if the string field `key` at `path` is enum-like.
pub fn enum_field(path: &str, key: &str) -> bool {
    ENUM_FIELDS.binary_search(&key).is_ok() && !NOT_ENUM_PATHS.contains(&path)
}

/// True if `s` can be an enum value: short, one line, not an id, a path, a number or prose.
pub fn enum_value(s: &str) -> bool {
    if s.len() > MAX_VALUE_LEN || s.chars().any(|c| c.is_control()) {
        return false;
    }
    if s.contains(['{', '}', '[', ']', '"', '\\', '<', '>']) {
        return false;
    }
    // Absolute or home paths (a single leading slash is allowed: "/login managed key").
    if (s.starts_with('/') && s[1..].contains('/')) || s.starts_with("~/") || s.contains(":\\") {
        return false;
    }
    if s.matches(' ').count() > 3 {
        return false;
    }
    !looks_like_id(s)
        && !s
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
        || s.is_empty()
}

/// Ids, hashes, timestamps: a run of 8+ hex digits containing a digit, or 4+ decimal digits.
pub fn looks_like_id(s: &str) -> bool {
    let mut hex_run = 0;
    let mut hex_has_digit = false;
    let mut dec_run = 0;
    for c in s.chars() {
        if c.is_ascii_hexdigit() {
            hex_run += 1;
            hex_has_digit |= c.is_ascii_digit();
            if hex_run >= 8 && hex_has_digit {
                return true;
            }
        } else {
            hex_run = 0;
            hex_has_digit = false;
        }
        if c.is_ascii_digit() {
            dec_run += 1;
            if dec_run >= 4 {
                return true;
            }
        } else {
            dec_run = 0;
        }
    }
    false
}

/// True if an object key is data rather than a field name (paths, ids, model names, prose),
/// so it is collapsed to `{*}`.
pub fn data_key(key: &str) -> bool {
    let mut chars = key.chars();
    let Some(first) = chars.next() else {
        return true;
    };
    if key.len() > 64 || !(first.is_ascii_alphabetic() || first == '_' || first == '$') {
        return true;
    }
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
    {
        return true;
    }
    looks_like_id(key)
}

/// True if `s` can name a kind, a block type or a tool: a short identifier-like token.
pub fn token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:*".contains(c))
}

/// How a value at some path of a kind is profiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Descend normally.
    Walk,
    /// Record the value's type, nothing below it (tool inputs, structured output, MCP results).
    Opaque,
    /// An object whose keys are data: its entries are profiled under `{*}`.
    Map,
    /// Array of typed blocks: each element with a token `type` becomes its own kind
    /// `<prefix>/<type>`.
    Blocks(&'static str),
    /// A typed object that becomes its own kind `<prefix>/<type>`.
    Typed(&'static str),
    /// `tool_use_result`: its own kind per tool name.
    ToolUseResult,
}

/// The rule for the value at `path` (relative to the root of kind `kind`).
pub fn rule(kind: &str, path: &str) -> Rule {
    let family = kind.split('/').next().unwrap_or(kind);
    let last = super::last_segment(path);
    if MAP_FIELDS.contains(&last) {
        return Rule::Map;
    }
    match (family, path) {
        ("assistant", "message.content") => Rule::Blocks("assistant.content"),
        ("user", "message.content") => Rule::Blocks("user.content"),
        ("user", "tool_use_result") => Rule::ToolUseResult,
        ("stream_event", "event.message.content") => Rule::Blocks("stream_event.message.content"),
        ("stream_event", "event.content_block") => Rule::Typed("stream_event.content_block"),
        ("stream_event", "event.delta") if kind == "stream_event/content_block_delta" => {
            Rule::Typed("stream_event.delta")
        }
        ("result", "structured_output") => Rule::Opaque,
        ("result", "permission_denials[].tool_input") => Rule::Opaque,
        ("result", "deferred_tool_use.input") => Rule::Opaque,
        ("control_request", "request.input") => Rule::Opaque,
        ("tool_use_result", "$") if kind.starts_with("tool_use_result/mcp__") => Rule::Opaque,
        _ if is_tool_call_block(kind) && path == "input" => Rule::Opaque,
        _ if kind.ends_with("/tool_result") && path == "content" => {
            Rule::Blocks("tool_result.content")
        }
        _ => Rule::Walk,
    }
}

/// Block kinds that carry a tool call's `input` (arguments chosen by the model).
fn is_tool_call_block(kind: &str) -> bool {
    kind.ends_with("/tool_use")
        || kind.ends_with("/server_tool_use")
        || kind.ends_with("/mcp_tool_use")
}

/// The kind of `tool_use_result` values whose `tool_result` has `is_error: true` (error text,
/// whatever the tool): errors depend on the run, not on the tool's output shape.
pub const TOOL_ERROR_KIND: &str = "tool_use_result.error";

/// The `tool_use_result` kind name for a tool (MCP tools share one opaque kind).
pub fn tool_result_kind(tool: Option<&str>) -> String {
    match tool {
        Some(t) if t.starts_with("mcp__") => "tool_use_result/mcp__*".to_owned(),
        Some(t) if token(t) => format!("tool_use_result/{t}"),
        _ => "tool_use_result/?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_fields_sorted_for_binary_search() {
        let mut v = ENUM_FIELDS.to_vec();
        v.sort_unstable();
        assert_eq!(v, ENUM_FIELDS);
    }

    #[test]
    fn enum_values() {
        for ok in [
            "end_turn",
            "/login managed key",
            "",
            "image/png",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(enum_value(ok), "{ok}");
        }
        for bad in [
            "/tmp/boo/x.txt",
            "C:\\Users\\a",
            "2026-11-22T15:32:31.607Z",
            "3dabdb12-a6e9-4909-a27d-294d04f8d0e1",
            "API Error: 500 {\"type\":\"error\"}",
            "this is a long free text sentence here",
            "42",
        ] {
            assert!(!enum_value(bad), "{bad}");
        }
    }

    #[test]
    fn data_keys() {
        for k in [
            "claude-sonnet-4-20250514",
            "/tmp/x",
            "a b",
            "",
            "toolu_01ABCDEF12",
        ] {
            assert!(data_key(k), "{k}");
        }
        for k in [
            "inputTokens",
            "ephemeral_5m_input_tokens",
            "claude_code_version",
        ] {
            assert!(!data_key(k), "{k}");
        }
    }
}
