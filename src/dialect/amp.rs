//! Amp, `amp -x … --stream-json [--stream-json-thinking]`: Claude-compatible stream-json
//! (https://ampcode.com/manual/appendix, "Stream JSON Output"), read as stream-json after one
//! change: a `tool_result` block's `content` is the tool's output **JSON-stringified**
//! (`{"output":"…","exitCode":1}`). It is decoded into the result's `structured` field
//! (`tool_use_result`), its `output` becomes the result's content, and `is_error` stays what
//! Amp says (false for a failed shell command: the exit code in `structured` tells). Amp
//! reports no cost; thread ids (`T-…`) are its session ids.

use serde_json::{Map, Value};

use super::{Emit, Reader, s};

/// See the module docs.
#[derive(Default)]
pub struct Amp;

/// Decode the JSON-string contents of `user`'s tool_result blocks; the decoded objects.
fn decode(v: &mut Map<String, Value>) -> Vec<Value> {
    let mut decoded = Vec::new();
    let blocks = v
        .get_mut("message")
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut);
    for b in blocks.into_iter().flatten() {
        if b.get("type").and_then(Value::as_str) != Some("tool_result") {
            continue;
        }
        let Some(text) = b.get("content").and_then(Value::as_str) else {
            continue;
        };
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if let Some(out) = o.get("output").and_then(Value::as_str) {
            b["content"] = Value::from(out);
        }
        decoded.push(Value::Object(o));
    }
    decoded
}

impl Reader for Amp {
    /// Only lines with a tool result are rewritten.
    fn needs(&self, raw: &[u8]) -> bool {
        memchr::memmem::find(raw, b"\"tool_result\"").is_some()
    }

    fn line(&mut self, mut v: Map<String, Value>, e: &mut Emit<'_>) {
        if s(&v, "type") != Some("user") {
            return e.keep();
        }
        let mut decoded = decode(&mut v);
        match decoded.len() {
            0 => e.keep(),
            1 => {
                v.insert("tool_use_result".into(), decoded.remove(0));
                e.line(&Value::Object(v));
            }
            _ => {
                v.insert("tool_use_result".into(), Value::Array(decoded));
                e.line(&Value::Object(v));
            }
        }
    }
}
