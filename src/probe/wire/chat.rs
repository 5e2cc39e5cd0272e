//! OpenAI Chat Completions (`POST …/chat/completions`): the request's `messages` (system, user,
//! assistant `tool_calls`, `tool` results) and `tools` read as a Messages API body, and a reply
//! written as `chat.completion.chunk` events (role, `reasoning_content`, text, streamed
//! `tool_calls`, the finish reason, then a usage chunk with no choices, then `[DONE]`) or as one
//! `chat.completion` object.

use serde_json::{Value, json};

use super::{CREATED, Tokens, each_tool, openai_neutral, parts_text, push_block, sse};
use crate::probe::sse::{fake_id, split_json, split_text};

/// The request in the Messages API's shape.
pub fn to_messages(body: &Value) -> Value {
    let mut system: Vec<String> = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = parts_text(m.get("content").unwrap_or(&Value::Null));
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" | "developer" => system.push(text),
            "assistant" => {
                if !text.is_empty() {
                    push_block(
                        &mut messages,
                        "assistant",
                        json!({"type": "text", "text": text}),
                    );
                }
                for c in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let input = c
                        .pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or_else(|| json!({}));
                    push_block(
                        &mut messages,
                        "assistant",
                        json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": input}),
                    );
                }
            }
            "tool" => push_block(
                &mut messages,
                "user",
                json!({"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": text}),
            ),
            _ => push_block(&mut messages, "user", json!({"type": "text", "text": text})),
        }
    }
    let tools = each_tool(body, |t| {
        json!({"name": t.pointer("/function/name").cloned().unwrap_or(Value::Null),
               "input_schema": t.pointer("/function/parameters").cloned().unwrap_or(Value::Null)})
    });
    openai_neutral(body, &system, messages, tools)
}

fn usage(message: &Value) -> Value {
    let t = Tokens::of(message);
    json!({
        "prompt_tokens": t.input,
        "completion_tokens": t.output,
        "total_tokens": t.input + t.output,
        "prompt_tokens_details": {"cached_tokens": t.cached},
        "completion_tokens_details": {"reasoning_tokens": t.reasoning},
    })
}

fn finish_reason(message: &Value) -> &'static str {
    let tool = message["content"]
        .as_array()
        .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use"));
    if tool { "tool_calls" } else { "stop" }
}

fn tool_calls(message: &Value) -> Vec<Value> {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            json!({"id": b["id"], "type": "function",
                   "function": {"name": b["name"], "arguments": b["input"].to_string()}})
        })
        .collect()
}

fn joined(message: &Value, kind: &str, key: &str) -> Option<String> {
    let parts: Vec<&str> = message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b[key].as_str())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

fn id(message: &Value) -> String {
    fake_id("chatcmpl-", &[message["id"].as_str().unwrap_or("")])
}

/// `message` as one `chat.completion` object.
pub fn json_reply(message: &Value) -> Value {
    let mut msg = json!({"role": "assistant", "content": joined(message, "text", "text")});
    if let Some(r) = joined(message, "thinking", "thinking") {
        msg["reasoning_content"] = json!(r);
    }
    let calls = tool_calls(message);
    if !calls.is_empty() {
        msg["tool_calls"] = json!(calls);
    }
    json!({"id": id(message), "object": "chat.completion", "created": CREATED,
           "model": message["model"],
           "choices": [{"index": 0, "message": msg, "finish_reason": finish_reason(message)}],
           "usage": usage(message)})
}

/// `message` as the Chat Completions event stream.
pub fn events(message: &Value) -> Vec<u8> {
    let id = id(message);
    let mut out = Vec::new();
    let mut chunk = |delta: Value, finish: Value| {
        out.extend(sse(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": CREATED,
                    "model": message["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        ));
    };
    chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    let mut call = 0usize;
    for b in message["content"].as_array().into_iter().flatten() {
        match b["type"].as_str() {
            Some("thinking") => {
                for d in split_text(b["thinking"].as_str().unwrap_or("")) {
                    chunk(json!({"reasoning_content": d}), Value::Null);
                }
            }
            Some("text") => {
                for d in split_text(b["text"].as_str().unwrap_or("")) {
                    chunk(json!({"content": d}), Value::Null);
                }
            }
            Some("tool_use") => {
                let args = b["input"].to_string();
                let mut pieces = split_json(&args).into_iter().skip(1);
                let first = pieces.next().unwrap_or_default();
                chunk(
                    json!({"tool_calls": [{"index": call, "id": b["id"], "type": "function",
                        "function": {"name": b["name"], "arguments": first}}]}),
                    Value::Null,
                );
                for p in pieces {
                    chunk(
                        json!({"tool_calls": [{"index": call, "function": {"arguments": p}}]}),
                        Value::Null,
                    );
                }
                call += 1;
            }
            _ => {}
        }
    }
    chunk(json!({}), json!(finish_reason(message)));
    out.extend(sse(
        None,
        &json!({"id": id, "object": "chat.completion.chunk", "created": CREATED,
                "model": message["model"], "choices": [], "usage": usage(message)}),
    ));
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_as_messages() {
        let body = json!({"model": "m", "stream": true, "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "run_shell_command", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}],
            "tools": [{"type": "function", "function": {"name": "run_shell_command", "parameters": {}}}]});
        let m = to_messages(&body);
        assert_eq!(m["system"], "sys");
        assert_eq!(m["messages"][1]["content"][0]["input"]["command"], "ls");
        assert_eq!(m["messages"][2]["content"][0]["tool_use_id"], "c1");
        assert_eq!(m["tools"][0]["name"], "run_shell_command");
    }

    #[test]
    fn a_reply_streams_tool_calls_and_a_usage_chunk() {
        let msg = json!({"id": "msg_1", "model": "m",
            "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "hi"},
                        {"type": "tool_use", "id": "c1", "name": "a", "input": {"x": 1}},
                        {"type": "tool_use", "id": "c2", "name": "b", "input": {}}],
            "usage": {"input_tokens": 3, "output_tokens": 5}});
        let text = String::from_utf8(events(&msg)).unwrap();
        assert!(text.ends_with("data: [DONE]\n\n"));
        let data: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|l| *l != "[DONE]")
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let last = data.last().unwrap();
        assert_eq!(last["choices"], json!([]));
        assert_eq!(last["usage"]["prompt_tokens"], 3);
        assert!(text.contains("\"index\":1") && text.contains("reasoning_content"));
        assert_eq!(
            data[data.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
        let j = json_reply(&msg);
        assert_eq!(j["choices"][0]["message"]["tool_calls"][1]["id"], "c2");
    }
}
