//! The Gemini API (`POST …/models/MODEL:streamGenerateContent?alt=sse` and
//! `:generateContent`): the request's `contents` (user and model turns, `functionCall` and
//! `functionResponse` parts), `systemInstruction` and `functionDeclarations` read as a Messages
//! API body, and a reply written as `GenerateContentResponse` chunks (thought parts, text,
//! `functionCall` parts, then the finish reason and `usageMetadata`) or as one such object.

use serde_json::{Value, json};

use super::{Tokens, neutral, sse};
use crate::probe::sse::{fake_id, split_text};

/// The model named in `route` (`/v1beta/models/M:…`).
fn model_of(route: &str) -> &str {
    route
        .rsplit("/models/")
        .next()
        .and_then(|m| m.split(':').next())
        .unwrap_or("")
}

fn parts(v: &Value) -> &[Value] {
    v.get("parts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The request in the Messages API's shape.
pub fn to_messages(body: &Value, route: &str, stream: bool) -> Value {
    let system: Vec<&str> = body
        .get("systemInstruction")
        .map(parts)
        .unwrap_or(&[])
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    let mut messages: Vec<Value> = Vec::new();
    for c in body
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = if c.get("role").and_then(Value::as_str) == Some("model") {
            "assistant"
        } else {
            "user"
        };
        let blocks: Vec<Value> = parts(c)
            .iter()
            .filter_map(|p| {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    if p.get("thought").and_then(Value::as_bool) == Some(true) {
                        return None;
                    }
                    Some(json!({"type": "text", "text": t}))
                } else if let Some(f) = p.get("functionCall") {
                    Some(json!({"type": "tool_use", "id": f.get("id").unwrap_or(&f["name"]),
                                "name": f["name"], "input": f.get("args").cloned().unwrap_or(json!({}))}))
                } else {
                    p.get("functionResponse").map(|f| {
                        json!({"type": "tool_result", "tool_use_id": f.get("id").unwrap_or(&f["name"]),
                               "content": f.get("response").map(|r| match r.get("output") {
                                   Some(Value::String(s)) => s.clone(),
                                   _ => r.to_string(),
                               }).unwrap_or_default()})
                    })
                }
            })
            .collect();
        messages.push(json!({"role": role, "content": blocks}));
    }
    let tools: Vec<Value> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .map(|d| {
            let schema = d
                .get("parametersJsonSchema")
                .or_else(|| d.get("parameters"))
                .cloned()
                .unwrap_or(Value::Null);
            json!({"name": d["name"], "input_schema": schema})
        })
        .collect();
    neutral(
        Value::from(model_of(route)),
        system.join("\n"),
        messages,
        tools,
        stream,
    )
}

fn usage(message: &Value) -> Value {
    let t = Tokens::of(message);
    json!({
        "promptTokenCount": t.input,
        "candidatesTokenCount": t.output - t.reasoning,
        "totalTokenCount": t.input + t.output,
        "cachedContentTokenCount": t.cached,
        "thoughtsTokenCount": t.reasoning,
    })
}

fn part_list(message: &Value) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for b in message["content"].as_array().into_iter().flatten() {
        match b["type"].as_str() {
            Some("thinking") => out.push(
                split_text(b["thinking"].as_str().unwrap_or(""))
                    .into_iter()
                    .map(|t| json!({"text": t, "thought": true}))
                    .collect(),
            ),
            Some("text") => out.push(
                split_text(b["text"].as_str().unwrap_or(""))
                    .into_iter()
                    .map(|t| json!({"text": t}))
                    .collect(),
            ),
            Some("tool_use") => out.push(vec![json!({"functionCall": {
                "id": b["id"], "name": b["name"], "args": b["input"]}})]),
            _ => {}
        }
    }
    out
}

fn chunk(message: &Value, parts: Vec<Value>, last: bool) -> Value {
    let mut cand = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let mut c = json!({"candidates": [], "modelVersion": message["model"],
        "responseId": fake_id("", &[message["id"].as_str().unwrap_or("")])});
    if last {
        cand["finishReason"] = json!("STOP");
        c["usageMetadata"] = usage(message);
    }
    c["candidates"] = json!([cand]);
    c
}

/// `message` as one `GenerateContentResponse`.
pub fn json_reply(message: &Value) -> Value {
    let all: Vec<Value> = part_list(message)
        .into_iter()
        .map(|ps| {
            let mut it = ps.into_iter();
            let mut first = it.next().unwrap_or(Value::Null);
            for p in it {
                if let (Some(a), Some(b)) = (
                    first.get("text").and_then(Value::as_str),
                    p["text"].as_str(),
                ) {
                    first["text"] = json!(format!("{a}{b}"));
                }
            }
            first
        })
        .collect();
    chunk(message, all, true)
}

/// `message` as the `alt=sse` event stream: one chunk per piece of text, one per call, the
/// last one with the finish reason and the usage.
pub fn events(message: &Value) -> Vec<u8> {
    let pieces: Vec<Value> = part_list(message).into_iter().flatten().collect();
    let mut out = Vec::new();
    let n = pieces.len();
    if n == 0 {
        out.extend(sse(None, &chunk(message, vec![json!({"text": ""})], true)));
        return out;
    }
    for (i, p) in pieces.into_iter().enumerate() {
        out.extend(sse(None, &chunk(message, vec![p], i + 1 == n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_as_messages() {
        let body = json!({"systemInstruction": {"parts": [{"text": "sys"}]},
            "contents": [{"role": "user", "parts": [{"text": "go"}]},
                         {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "a.txt"}}}]}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {}}]}]});
        let m = to_messages(
            &body,
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
            true,
        );
        assert_eq!(m["model"], "gemini-2.5-pro");
        assert_eq!(m["messages"][2]["content"][0]["content"], "a.txt");
        assert_eq!(m["tools"][0]["name"], "run_shell_command");
    }

    #[test]
    fn the_last_chunk_has_the_usage() {
        let msg = json!({"id": "msg_1", "model": "g",
            "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "hi"},
                        {"type": "tool_use", "id": "c1", "name": "a", "input": {"x": 1}}],
            "usage": {"input_tokens": 3, "output_tokens": 5}});
        let text = String::from_utf8(events(&msg)).unwrap();
        let data: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(data.len(), 3);
        assert!(data[0].get("usageMetadata").is_none());
        assert_eq!(data[2]["usageMetadata"]["promptTokenCount"], 3);
        assert_eq!(data[2]["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            json_reply(&msg)["candidates"][0]["content"]["parts"][2]["functionCall"]["name"],
            "a"
        );
    }
}
