//! Qwen Code, `qwen -p … --output-format stream-json [--include-partial-messages]`: Claude's
//! stream-json with small changes (`QwenLM/qwen-code:packages/cli/src/nonInteractive/types.ts`),
//! read as stream-json after these:
//!
//! - the system line's subtype is `init` in current releases and `session_start` in its docs and
//!   older fixtures: both are the run's `system/init`; `qwen_code_version` is the agent's version;
//! - an assistant line holds one content-block type (a new type starts a new line of the same
//!   message id): the normalizer counts the message's usage once by its id;
//! - a failed `result` carries `error` as an object (`{type, message}`), kept under its extra;
//! - `stream_event` `tool_progress` (a running tool's progress) is `skipped` with its reason;
//! - an API error arrives as assistant text (`[API Error: 500 …]`): the line gets `error`
//!   (`api_error`), so the envelope has an `api.error` beside its text.
//!
//! - usage counts are OpenAI's (`input_tokens` is the prompt's, cached tokens included, as the
//!   `total_tokens` beside them shows): the envelope's `input_tokens` is the uncached part
//!   (`input_tokens` − `cache_read_input_tokens`), the CLI's figure kept as `qwen_input_tokens`;
//!   each assistant line of one response has its own id, the first ones with zero usage, so
//!   counting once per id counts the response once.
//!
//! Every other line is Claude's shape and passes as it is.

use serde_json::{Map, Value};

use super::{Emit, Reader, s};

/// See the module docs.
#[derive(Default)]
pub struct Qwen;

/// Marks of the lines [`Qwen`] rewrites (any other line passes unparsed).
const REWRITTEN: &[&str] = &[
    "\"cache_read_input_tokens\"",
    "[API Error",
    "\"system\"",
    "tool_progress",
];

impl Reader for Qwen {
    fn needs(&self, raw: &[u8]) -> bool {
        REWRITTEN
            .iter()
            .any(|m| memchr::memmem::find(raw, m.as_bytes()).is_some())
    }

    fn line(&mut self, mut v: Map<String, Value>, e: &mut Emit<'_>) {
        match s(&v, "type").unwrap_or("") {
            "system" if matches!(s(&v, "subtype"), Some("init" | "session_start")) => {
                if s(&v, "session_id").is_none() {
                    e.violation("the system line has no \"session_id\"");
                }
                let version = s(&v, "qwen_code_version").map(str::to_owned);
                v.remove("type");
                // The subtype as Qwen wrote it is kept under extra.
                if let Some(sub) = v.remove("subtype") {
                    v.insert("qwen_subtype".into(), sub);
                }
                e.init(version.as_deref(), v);
            }
            "stream_event"
                if v.get("event")
                    .and_then(|x| x.get("type"))
                    .and_then(Value::as_str)
                    == Some("tool_progress") =>
            {
                e.skip("a running tool's progress (tool_progress)")
            }
            "assistant" => {
                let mut changed = false;
                if let Some(u) = v
                    .get_mut("message")
                    .and_then(|m| m.get_mut("usage"))
                    .and_then(Value::as_object_mut)
                {
                    changed |= uncached(u);
                }
                if api_error_text(&v) && !v.contains_key("error") {
                    v.insert("error".into(), Value::from("api_error"));
                    changed = true;
                }
                match changed {
                    true => e.line(&Value::Object(v)),
                    false => e.keep(),
                }
            }
            "result" => {
                let changed = v
                    .get_mut("usage")
                    .and_then(Value::as_object_mut)
                    .is_some_and(uncached);
                match changed {
                    true => e.line(&Value::Object(v)),
                    false => e.keep(),
                }
            }
            _ => e.keep(),
        }
    }
}

/// Whether an assistant line's message is an API error written as its text.
fn api_error_text(v: &Map<String, Value>) -> bool {
    let blocks = v
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array);
    blocks.is_some_and(|b| {
        b.iter().any(|b| {
            b.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with("[API Error"))
        })
    })
}

/// Make `u`'s `input_tokens` the uncached part (see the module docs); whether it changed.
fn uncached(u: &mut Map<String, Value>) -> bool {
    let read = u
        .get("cache_read_input_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let Some(input) = u.get("input_tokens").and_then(Value::as_u64) else {
        return false;
    };
    if read == 0 || read > input {
        return false;
    }
    u.insert("qwen_input_tokens".into(), Value::from(input));
    u.insert("input_tokens".into(), Value::from(input - read));
    true
}
