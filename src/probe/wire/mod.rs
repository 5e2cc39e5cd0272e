//! The model APIs other than Anthropic's Messages API that the probe API also speaks, for the
//! other agent CLIs: which route is which API, each request body read into the Messages API's
//! shape (so one [`super::script::Router`] answers them all), and each reply — a Messages API
//! `message` — written in the API's own wire shape (event stream or JSON) and error body.
//!
//! - [`responses`]: OpenAI Responses (`POST …/responses`), Codex and Copilot CLI;
//! - [`chat`]: OpenAI Chat Completions (`POST …/chat/completions`), Qwen Code and OpenCode;
//! - [`gemini`]: the Gemini API (`POST …/models/M:streamGenerateContent` and
//!   `:generateContent`), Gemini CLI.

pub mod chat;
pub mod gemini;
pub mod responses;

use serde_json::{Value, json};

/// A model API the probe API speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic Messages (`/v1/messages`), answered by `api.rs` itself.
    Messages,
    /// OpenAI Responses.
    Responses,
    /// OpenAI Chat Completions.
    Chat,
    /// Gemini `generateContent`, streamed (`stream: true`) or not.
    Gemini {
        /// `:streamGenerateContent`.
        stream: bool,
    },
}

impl Wire {
    /// The API a `POST` to `route` (path without query) is for.
    pub fn of_post(route: &str) -> Option<Wire> {
        if route == "/v1/messages" {
            Some(Wire::Messages)
        } else if route.ends_with("/responses") {
            Some(Wire::Responses)
        } else if route.ends_with("/chat/completions") {
            Some(Wire::Chat)
        } else if route.contains("/models/") && route.ends_with(":streamGenerateContent") {
            Some(Wire::Gemini { stream: true })
        } else if route.contains("/models/") && route.ends_with(":generateContent") {
            Some(Wire::Gemini { stream: false })
        } else {
            None
        }
    }

    /// `body` in the Messages API's shape: `model`, `system` (text), `messages` (role and
    /// content blocks: `text`, `tool_use`, `tool_result`), `tools` (`name`, `input_schema`) and
    /// `stream`. `route` names the Gemini model.
    pub fn to_messages(self, body: &Value, route: &str) -> Value {
        match self {
            Wire::Messages => body.clone(),
            Wire::Responses => responses::to_messages(body),
            Wire::Chat => chat::to_messages(body),
            Wire::Gemini { stream } => gemini::to_messages(body, route, stream),
        }
    }

    /// The API's error body for `status`.
    pub fn error_body(self, status: u16, request_id: &str) -> Value {
        let message = super::sse::error_body(status, request_id)
            .pointer("/error/message")
            .cloned()
            .unwrap_or(Value::Null);
        match self {
            Wire::Messages => super::sse::error_body(status, request_id),
            Wire::Responses | Wire::Chat => json!({"error": {
                "message": message,
                "type": openai_error_type(status),
                "param": null,
                "code": openai_error_code(status),
            }}),
            Wire::Gemini { .. } => json!({"error": {
                "code": status,
                "message": message,
                "status": gemini_status(status),
            }}),
        }
    }
}

fn openai_error_type(status: u16) -> &'static str {
    match status {
        400 | 404 | 413 => "invalid_request_error",
        401 | 403 => "authentication_error",
        429 => "rate_limit_exceeded",
        _ => "server_error",
    }
}

fn openai_error_code(status: u16) -> Value {
    match status {
        401 => json!("invalid_api_key"),
        429 => json!("rate_limit_exceeded"),
        400 => json!("invalid_request"),
        _ => Value::Null,
    }
}

fn gemini_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// The token counts of a reply in the terms the OpenAI and Gemini APIs use, from its Messages
/// API usage: the prompt is every input token (cache reads and writes included), `cached` the
/// cache reads, `reasoning` an estimate of the thinking blocks' tokens (part of `output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    /// Prompt tokens read from the cache.
    pub cached: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Reasoning tokens.
    pub reasoning: u64,
}

impl Tokens {
    /// The counts of `message` (a Messages API `message`).
    pub fn of(message: &Value) -> Tokens {
        let u = |k: &str| {
            message
                .pointer(&format!("/usage/{k}"))
                .and_then(Value::as_u64)
        };
        let reasoning: u64 = message
            .get("content")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter(|b| b["type"] == "thinking")
                    .map(|b| super::sse::est_tokens(b["thinking"].as_str().unwrap_or("")))
                    .sum()
            })
            .unwrap_or(0);
        let cached = u("cache_read_input_tokens").unwrap_or(0);
        let input =
            u("input_tokens").unwrap_or(0) + u("cache_creation_input_tokens").unwrap_or(0) + cached;
        Tokens {
            input,
            cached,
            output: u("output_tokens").unwrap_or(0) + reasoning,
            reasoning,
        }
    }
}

/// A request in the Messages API's shape (see [`Wire::to_messages`]), from its parts as each
/// API's reader found them.
pub fn neutral(
    model: Value,
    system: String,
    messages: Vec<Value>,
    tools: Vec<Value>,
    stream: bool,
) -> Value {
    json!({
        "model": model,
        "system": system,
        "messages": messages,
        "tools": tools,
        "stream": stream,
    })
}

/// [`neutral`] of an OpenAI API's request, which names its model and whether it streams.
pub fn openai_neutral(
    body: &Value,
    system: &[String],
    messages: Vec<Value>,
    tools: Vec<Value>,
) -> Value {
    neutral(
        body.get("model").cloned().unwrap_or(Value::Null),
        system.join("\n"),
        messages,
        tools,
        body.get("stream").and_then(Value::as_bool).unwrap_or(false),
    )
}

/// Add `block` to `messages`: to the last message when it is `role`'s (consecutive blocks of
/// one role are one message), else as a new message of `role`.
pub fn push_block(messages: &mut Vec<Value>, role: &str, block: Value) {
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(c) = last["content"].as_array_mut()
    {
        c.push(block);
        return;
    }
    messages.push(json!({"role": role, "content": [block]}));
}

/// Each of the request's `tools` (an OpenAI API's list) as `tool` reads it.
pub fn each_tool(body: &Value, tool: impl Fn(&Value) -> Value) -> Vec<Value> {
    body.get("tools")
        .and_then(Value::as_array)
        .map(|ts| ts.iter().map(tool).collect())
        .unwrap_or_default()
}

/// One server-sent event: `event: NAME` (when named) and `data: JSON`.
pub fn sse(name: Option<&str>, data: &Value) -> Vec<u8> {
    let mut b = Vec::with_capacity(128);
    if let Some(n) = name {
        b.extend_from_slice(b"event: ");
        b.extend_from_slice(n.as_bytes());
        b.push(b'\n');
    }
    b.extend_from_slice(b"data: ");
    b.extend_from_slice(data.to_string().as_bytes());
    b.extend_from_slice(b"\n\n");
    b
}

/// The text of an OpenAI content value: a string, or parts with `text`.
pub fn parts_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A fixed creation time (2026-01-01T00:00:00Z): captures stay the same from run to run.
pub const CREATED: u64 = 1_767_225_600;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::api::{Api, Kind};
    use crate::probe::scenario::parse_file;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn post(port: u16, path: &str, body: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn routes_pick_the_api() {
        assert_eq!(Wire::of_post("/v1/messages"), Some(Wire::Messages));
        assert_eq!(Wire::of_post("/v1/responses"), Some(Wire::Responses));
        assert_eq!(Wire::of_post("/api/v1/chat/completions"), Some(Wire::Chat));
        assert_eq!(
            Wire::of_post("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Some(Wire::Gemini { stream: true })
        );
        assert_eq!(
            Wire::of_post("/v1beta/models/m:generateContent"),
            Some(Wire::Gemini { stream: false })
        );
        assert_eq!(Wire::of_post("/v1/embeddings"), None);
    }

    /// One script answers every API in its own shape; side requests (no tools) and errors too.
    #[test]
    fn every_api_is_served_from_one_script() {
        let sc = parse_file(
            r#"{"name": "w", "prompt": "p", "responses": [
                {"label": "resp", "content": [{"type": "tool_use", "name": "shell", "input": {"command": "ls"}}]},
                {"label": "chat", "content": [{"type": "text", "text": "hi there"}]},
                {"label": "gem", "content": [{"type": "text", "text": "hello"}]},
                {"label": "err", "error": 400}]}"#,
        )
        .unwrap();
        let api = Api::start(&sc[0].scenario).unwrap();
        let port = api.port();
        let r = post(
            port,
            "/v1/responses",
            r#"{"model": "gpt-5.5", "stream": true, "tools": [{"type": "function", "name": "shell"}], "input": "go"}"#,
        );
        assert!(r.contains("text/event-stream"), "{r}");
        assert!(
            r.contains("event: response.completed") && r.contains("\"function_call\""),
            "{r}"
        );
        let r = post(
            port,
            "/v1/chat/completions",
            r#"{"model": "q", "stream": true, "tools": [{"type": "function", "function": {"name": "edit"}}], "messages": [{"role": "user", "content": "go"}]}"#,
        );
        assert!(
            r.contains("chat.completion.chunk") && r.contains("data: [DONE]"),
            "{r}"
        );
        let r = post(
            port,
            "/v1beta/models/g:streamGenerateContent?alt=sse",
            r#"{"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": [{"functionDeclarations": [{"name": "read_file"}]}]}"#,
        );
        assert!(
            r.contains("usageMetadata") && r.contains("\"hello\""),
            "{r}"
        );
        let r = post(
            port,
            "/v1beta/models/flash-lite:generateContent",
            r#"{"contents": [{"role": "user", "parts": [{"text": "give a complexity_score"}]}]}"#,
        );
        assert!(
            r.contains("complexity_score") && r.contains("candidates"),
            "{r}"
        );
        let r = post(
            port,
            "/v1/responses",
            r#"{"stream": true, "tools": [{"type": "function", "name": "shell"}], "input": "again"}"#,
        );
        assert!(
            r.starts_with("HTTP/1.1 400") && r.contains("invalid_request_error"),
            "{r}"
        );
        let done = api.finish();
        let kinds: Vec<Kind> = done.served.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [Kind::Main, Kind::Main, Kind::Main, Kind::Side, Kind::Main]
        );
        assert!(done.unused.is_empty(), "{:?}", done.unused);
    }
}
