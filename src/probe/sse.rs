//! The Messages API's wire shapes the probe API answers with: the `message` object with fixed
//! usage, its server-sent event stream (`message_start` … `message_stop`), error bodies, and the
//! deterministic ids (`msg_01…`, `toolu_01…`, `req_01…`) derived from what answered.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The model reported when neither the reply nor the request names one.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5-20250929";

const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// An id shaped like the API's (`prefix` + `01` + 22 base-62 characters), the same for the same
/// `parts` on every run.
pub fn fake_id(prefix: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(prefix.as_bytes());
    for p in parts {
        h.update([0u8]);
        h.update(p.as_bytes());
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(prefix.len() + 24);
    out.push_str(prefix);
    out.push_str("01");
    for b in digest.iter().take(22) {
        out.push(B62[usize::from(*b) % B62.len()] as char);
    }
    out
}

/// A thinking block's signature: base64 of a fixed-size digest of the text (the CLI only keeps
/// and resends it).
pub fn fake_signature(text: &str) -> String {
    use base64::Engine as _;
    let d = Sha256::digest(text.as_bytes());
    let mut raw = b"\x12\x08probe-sig".to_vec();
    for _ in 0..4 {
        raw.extend_from_slice(&d);
    }
    base64::engine::general_purpose::STANDARD.encode(raw)
}

/// A rough token count (4 bytes a token, at least 1), as usage estimates need.
pub fn est_tokens(s: &str) -> u64 {
    (s.len() as u64 / 4).max(1)
}

/// The fixed usage of a reply: a main request reports cache creation and reads, a side request
/// none; output tokens follow the content. Fixed numbers keep `total_cost_usd` and `modelUsage`
/// the same from run to run.
pub fn usage(main: bool, content: &[Value], overrides: Option<&Map<String, Value>>) -> Value {
    let out: u64 = content.iter().map(|b| est_tokens(&b.to_string())).sum();
    let (create, read) = if main { (2048, 12288) } else { (0, 0) };
    let mut u = json!({
        "input_tokens": 4,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    });
    if let (Some(o), Some(m)) = (overrides, u.as_object_mut()) {
        for (k, v) in o {
            m.insert(k.clone(), v.clone());
        }
    }
    u
}

/// The error `type` the API uses for an HTTP status.
pub fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn error_message(status: u16) -> &'static str {
    match status {
        400 => "Invalid request",
        401 => "invalid x-api-key",
        403 => "Your API key does not have permission to use the specified resource.",
        404 => "Not found",
        413 => "Request exceeds the maximum allowed number of bytes.",
        429 => "Number of request tokens has exceeded your per-minute rate limit",
        529 => "Overloaded",
        500..=599 => "Internal server error",
        _ => "Error",
    }
}

/// The API's error body for `status`: `{"type":"error","error":{type,message},"request_id"}`.
pub fn error_body(status: u16, request_id: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": error_type(status), "message": error_message(status)},
        "request_id": request_id,
    })
}

/// Whether the API tells clients to retry this status (`x-should-retry`).
pub fn should_retry(status: u16) -> bool {
    status >= 500 || status == 429 || status == 408
}

/// The server-sent event stream of `message` (a complete `message` object), as the streaming
/// Messages API sends it: `message_start` (no content, `output_tokens: 1`), `ping`, per block
/// `content_block_start` / deltas / `content_block_stop`, `message_delta` (stop reason, usage),
/// `message_stop`. Text and thinking are split on word boundaries, a thinking block ends with a
/// `signature_delta`, tool input comes as `input_json_delta` fragments (the first one empty).
pub fn events(message: &Value) -> Vec<u8> {
    event_list(message)
        .into_iter()
        .flat_map(|e| e.bytes)
        .collect()
}

/// One server-sent event of [`event_list`].
#[derive(Debug, Clone)]
pub struct Event {
    /// `event: NAME\ndata: JSON\n\n`.
    pub bytes: Vec<u8>,
    /// It carries a piece of a tool call's input (`input_json_delta`): a scripted `input_delay`
    /// is waited before it.
    pub input_piece: bool,
}

/// [`events`], one event at a time.
pub fn event_list(message: &Value) -> Vec<Event> {
    let mut out = Vec::with_capacity(32);
    let mut ev = |name: &str, data: Value| {
        let input_piece =
            data.pointer("/delta/type").and_then(Value::as_str) == Some("input_json_delta");
        let mut bytes = Vec::with_capacity(128);
        bytes.extend_from_slice(b"event: ");
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(b"\ndata: ");
        bytes.extend_from_slice(data.to_string().as_bytes());
        bytes.extend_from_slice(b"\n\n");
        out.push(Event { bytes, input_piece });
    };
    let usage = message.get("usage").cloned().unwrap_or_else(|| json!({}));
    let mut start = message.clone();
    if let Some(m) = start.as_object_mut() {
        m.insert("content".into(), json!([]));
        m.insert("stop_reason".into(), Value::Null);
        m.insert("stop_sequence".into(), Value::Null);
        let mut u = usage.clone();
        if let Some(u) = u.as_object_mut() {
            u.insert("output_tokens".into(), json!(1));
        }
        m.insert("usage".into(), u);
    }
    ev(
        "message_start",
        json!({"type": "message_start", "message": start}),
    );
    ev("ping", json!({"type": "ping"}));
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, b) in blocks.iter().enumerate() {
        let delta = |d: Value| json!({"type": "content_block_delta", "index": i, "delta": d});
        let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                ev(
                    "content_block_start",
                    block_start(i, json!({"type": "text", "text": ""})),
                );
                for piece in split_text(&text("text")) {
                    ev(
                        "content_block_delta",
                        delta(json!({"type": "text_delta", "text": piece})),
                    );
                }
            }
            Some("thinking") => {
                ev(
                    "content_block_start",
                    block_start(
                        i,
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                    ),
                );
                for piece in split_text(&text("thinking")) {
                    ev(
                        "content_block_delta",
                        delta(json!({"type": "thinking_delta", "thinking": piece})),
                    );
                }
                ev(
                    "content_block_delta",
                    delta(json!({"type": "signature_delta", "signature": text("signature")})),
                );
            }
            Some("tool_use") => {
                let head =
                    json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}});
                ev("content_block_start", block_start(i, head));
                let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                for piece in split_json(&input.to_string()) {
                    ev(
                        "content_block_delta",
                        delta(json!({"type": "input_json_delta", "partial_json": piece})),
                    );
                }
            }
            _ => ev("content_block_start", block_start(i, b.clone())),
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    let mut end_usage = Map::new();
    for k in [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    ] {
        if let Some(v) = usage.get(k) {
            end_usage.insert(k.into(), v.clone());
        }
    }
    ev(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
               "usage": end_usage}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}

fn block_start(index: usize, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

/// Text cut into deltas of about `24` bytes on word boundaries (deterministic).
pub fn split_text(s: &str) -> Vec<String> {
    const SIZE: usize = 24;
    if s.is_empty() {
        return vec![String::new()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for (n, word) in s.split(' ').enumerate() {
        if n > 0 && !cur.is_empty() && cur.len() + 1 + word.len() > SIZE {
            out.push(std::mem::take(&mut cur));
            cur.push(' ');
            cur.push_str(word);
        } else {
            if n > 0 {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    out.push(cur);
    out
}

/// JSON text cut into an empty first fragment and then 12-character slices, as the API streams
/// tool input.
pub fn split_json(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = vec![String::new()];
    out.extend(chars.chunks(12).map(|c| c.iter().collect::<String>()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_shaped_like_the_apis() {
        let a = fake_id("msg_", &["seed", "entry:0#1"]);
        assert_eq!(a, fake_id("msg_", &["seed", "entry:0#1"]));
        assert_ne!(a, fake_id("msg_", &["seed", "entry:0#2"]));
        assert!(a.starts_with("msg_01") && a.len() == 4 + 2 + 22, "{a}");
    }

    #[test]
    fn text_splits_back_to_the_text() {
        let s = "one two three four five six seven eight nine ten eleven twelve";
        let parts = split_text(s);
        assert!(parts.len() > 2);
        assert_eq!(parts.concat(), s);
        assert_eq!(split_json("{\"a\":1}").concat(), "{\"a\":1}");
        assert_eq!(split_json("{}")[0], "");
    }

    #[test]
    fn a_stream_has_every_event_in_order() {
        let msg = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"},
                        {"type": "text", "text": "hi"},
                        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": usage(true, &[], None)});
        let text = String::from_utf8(events(&msg)).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        assert_eq!(
            names
                .iter()
                .filter(|n| **n == "content_block_start")
                .count(),
            3
        );
        assert!(text.contains("signature_delta") && text.contains("input_json_delta"));
        assert!(text.contains("\"stop_reason\":\"tool_use\""));
        for l in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
            serde_json::from_str::<Value>(l).unwrap();
        }
    }
}
