//! OpenAI Responses API (`POST …/responses`): the request's `instructions`, `input` items and
//! `tools` read as a Messages API body, and a reply written as the Responses event stream
//! (`response.created` … output items with their deltas … `response.completed` with usage) or
//! as one `response` object. A `tool_use` whose input is a string becomes a `custom_tool_call`
//! (Codex's freeform `apply_patch`), any other a `function_call`; `thinking` a `reasoning` item
//! with a summary.

use serde_json::{Map, Value, json};

use super::{CREATED, Tokens, each_tool, openai_neutral, parts_text, push_block, sse};
use crate::probe::sse::{fake_id, split_json, split_text};

/// The request in the Messages API's shape.
pub fn to_messages(body: &Value) -> Value {
    let mut system: Vec<String> = Vec::new();
    if let Some(s) = body.get("instructions").and_then(Value::as_str) {
        system.push(s.to_owned());
    }
    let mut messages: Vec<Value> = Vec::new();
    let input = match body.get("input") {
        Some(Value::String(s)) => vec![json!({"type": "message", "role": "user", "content": s})],
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    for item in &input {
        let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        match item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message")
        {
            "message" => {
                let text = parts_text(item.get("content").unwrap_or(&Value::Null));
                match s("role").as_str() {
                    "system" | "developer" => system.push(text),
                    "assistant" => push_block(
                        &mut messages,
                        "assistant",
                        json!({"type": "text", "text": text}),
                    ),
                    _ => push_block(&mut messages, "user", json!({"type": "text", "text": text})),
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let input = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .and_then(|a| serde_json::from_str(a).ok())
                    .or_else(|| item.get("input").cloned())
                    .unwrap_or_else(|| json!({}));
                push_block(
                    &mut messages,
                    "assistant",
                    json!({"type": "tool_use", "id": s("call_id"), "name": s("name"), "input": input}),
                );
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let out = match item.get("output") {
                    Some(Value::String(o)) => o.clone(),
                    Some(o) => parts_text(o),
                    None => String::new(),
                };
                push_block(
                    &mut messages,
                    "user",
                    json!({"type": "tool_result", "tool_use_id": s("call_id"), "content": out}),
                );
            }
            _ => {}
        }
    }
    let tools = each_tool(body, |t| {
        let kind = t.get("type").and_then(Value::as_str).unwrap_or("function");
        let name = t.get("name").and_then(Value::as_str).unwrap_or(kind);
        json!({"name": name, "kind": kind,
               "input_schema": t.get("parameters").cloned().unwrap_or(Value::Null)})
    });
    openai_neutral(body, &system, messages, tools)
}

/// The output items of `message` (ids from its id), each with the events that stream it.
fn items(message: &Value) -> Vec<(Value, Vec<(String, Value)>)> {
    let seed = message["id"].as_str().unwrap_or("");
    let mut out = Vec::new();
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    for (i, b) in blocks.iter().enumerate() {
        let n = i.to_string();
        let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let mut ev: Vec<(String, Value)> = Vec::new();
        let item = match b["type"].as_str() {
            Some("thinking") => {
                let id = fake_id("rs_", &[seed, &n]);
                let t = text("thinking");
                let part = json!({"type": "summary_text", "text": ""});
                ev.push((
                    "response.reasoning_summary_part.added".into(),
                    json!({"item_id": id, "summary_index": 0, "part": part}),
                ));
                for d in split_text(&t) {
                    ev.push((
                        "response.reasoning_summary_text.delta".into(),
                        json!({"item_id": id, "summary_index": 0, "delta": d}),
                    ));
                }
                ev.push((
                    "response.reasoning_summary_text.done".into(),
                    json!({"item_id": id, "summary_index": 0, "text": t}),
                ));
                ev.push((
                    "response.reasoning_summary_part.done".into(),
                    json!({"item_id": id, "summary_index": 0,
                           "part": {"type": "summary_text", "text": t}}),
                ));
                json!({"id": id, "type": "reasoning",
                       "summary": [{"type": "summary_text", "text": t}],
                       "encrypted_content": text("signature")})
            }
            Some("text") => {
                let id = fake_id("msg_", &[seed, &n]);
                let t = text("text");
                let part = |t: &str| json!({"type": "output_text", "text": t, "annotations": []});
                ev.push((
                    "response.content_part.added".into(),
                    json!({"item_id": id, "content_index": 0, "part": part("")}),
                ));
                for d in split_text(&t) {
                    ev.push((
                        "response.output_text.delta".into(),
                        json!({"item_id": id, "content_index": 0, "delta": d, "logprobs": []}),
                    ));
                }
                ev.push((
                    "response.output_text.done".into(),
                    json!({"item_id": id, "content_index": 0, "text": t, "logprobs": []}),
                ));
                ev.push((
                    "response.content_part.done".into(),
                    json!({"item_id": id, "content_index": 0, "part": part(&t)}),
                ));
                json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
                       "content": [part(&t)]})
            }
            Some("tool_use") => {
                let call_id = b["id"].as_str().unwrap_or("").to_owned();
                if let Some(raw) = b["input"].as_str() {
                    let id = fake_id("ctc_", &[seed, &n]);
                    for d in split_json(raw).into_iter().skip(1) {
                        ev.push((
                            "response.custom_tool_call_input.delta".into(),
                            json!({"item_id": id, "delta": d}),
                        ));
                    }
                    ev.push((
                        "response.custom_tool_call_input.done".into(),
                        json!({"item_id": id, "input": raw}),
                    ));
                    json!({"id": id, "type": "custom_tool_call", "status": "completed",
                           "call_id": call_id, "name": b["name"], "input": raw})
                } else {
                    let id = fake_id("fc_", &[seed, &n]);
                    let args = b["input"].to_string();
                    for d in split_json(&args).into_iter().skip(1) {
                        ev.push((
                            "response.function_call_arguments.delta".into(),
                            json!({"item_id": id, "delta": d}),
                        ));
                    }
                    ev.push((
                        "response.function_call_arguments.done".into(),
                        json!({"item_id": id, "arguments": args}),
                    ));
                    json!({"id": id, "type": "function_call", "status": "completed",
                           "arguments": args, "call_id": call_id, "name": b["name"]})
                }
            }
            _ => continue,
        };
        out.push((item, ev));
    }
    out
}

fn usage(message: &Value) -> Value {
    let t = Tokens::of(message);
    json!({
        "input_tokens": t.input,
        "input_tokens_details": {"cached_tokens": t.cached},
        "output_tokens": t.output,
        "output_tokens_details": {"reasoning_tokens": t.reasoning},
        "total_tokens": t.input + t.output,
    })
}

fn response(message: &Value, status: &str, output: Vec<Value>, usage: Value) -> Value {
    let id = fake_id("resp_", &[message["id"].as_str().unwrap_or("")]);
    json!({"id": id, "object": "response", "created_at": CREATED, "status": status,
           "model": message["model"], "output": output, "usage": usage,
           "parallel_tool_calls": true, "error": null, "incomplete_details": null})
}

/// `message` as one `response` object (a request that does not stream).
pub fn json_reply(message: &Value) -> Value {
    let output = items(message).into_iter().map(|(i, _)| i).collect();
    response(message, "completed", output, usage(message))
}

/// `message` as the Responses event stream.
pub fn events(message: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = 0u64;
    let mut ev = |name: &str, data: Value| {
        let mut m: Map<String, Value> = Map::new();
        m.insert("type".into(), json!(name));
        m.insert("sequence_number".into(), json!(seq));
        if let Value::Object(d) = data {
            m.extend(d);
        }
        seq += 1;
        out.extend(sse(Some(name), &Value::Object(m)));
    };
    let start = response(message, "in_progress", Vec::new(), Value::Null);
    ev("response.created", json!({"response": start}));
    ev("response.in_progress", json!({"response": start}));
    let mut done = Vec::new();
    for (index, (item, events)) in items(message).into_iter().enumerate() {
        let mut head = item.clone();
        if let Some(h) = head.as_object_mut() {
            h.insert("status".into(), json!("in_progress"));
            match item["type"].as_str() {
                Some("message") => {
                    h.insert("content".into(), json!([]));
                }
                Some("reasoning") => {
                    h.insert("summary".into(), json!([]));
                }
                Some("function_call") => {
                    h.insert("arguments".into(), json!(""));
                }
                Some("custom_tool_call") => {
                    h.insert("input".into(), json!(""));
                }
                _ => {}
            }
            if item["type"] == "reasoning" {
                h.remove("status");
            }
        }
        ev(
            "response.output_item.added",
            json!({"output_index": index, "item": head}),
        );
        for (name, mut data) in events {
            if let Some(d) = data.as_object_mut() {
                d.insert("output_index".into(), json!(index));
            }
            ev(&name, data);
        }
        ev(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        done.push(item);
    }
    let end = response(message, "completed", done, usage(message));
    ev("response.completed", json!({"response": end}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_as_messages() {
        let body = json!({"model": "gpt-5.5", "instructions": "be brief", "stream": true,
            "tools": [{"type": "function", "name": "shell", "parameters": {"properties": {"command": {}}}},
                      {"type": "custom", "name": "apply_patch"}, {"type": "web_search"}],
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}]});
        let m = to_messages(&body);
        assert_eq!(m["system"], "be brief\ndev");
        assert_eq!(m["messages"][0]["content"][0]["text"], "go");
        assert_eq!(m["messages"][1]["content"][0]["input"]["command"][0], "ls");
        assert_eq!(m["messages"][2]["content"][0]["content"], "a.txt");
        assert_eq!(m["tools"][2]["name"], "web_search");
        assert_eq!(m["stream"], true);
    }

    #[test]
    fn a_reply_streams_every_item_and_the_usage() {
        let msg = json!({"id": "msg_1", "model": "gpt-5.5",
            "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "text", "text": "hi"},
                        {"type": "tool_use", "id": "call_1", "name": "shell", "input": {"command": ["ls"]}},
                        {"type": "tool_use", "id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"}],
            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 6, "cache_read_input_tokens": 10, "output_tokens": 7}});
        let text = String::from_utf8(events(&msg)).unwrap();
        let data: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(data[0]["type"], "response.created");
        let last = data.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        assert_eq!(last["response"]["usage"]["input_tokens"], 20);
        assert_eq!(
            last["response"]["usage"]["input_tokens_details"]["cached_tokens"],
            10
        );
        let kinds: Vec<&str> = last["response"]["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["reasoning", "message", "function_call", "custom_tool_call"]
        );
        let seqs: Vec<u64> = data
            .iter()
            .map(|d| d["sequence_number"].as_u64().unwrap())
            .collect();
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
        assert_eq!(text, String::from_utf8(events(&msg)).unwrap());
    }
}
