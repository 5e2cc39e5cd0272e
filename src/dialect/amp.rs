//! Amp, `amp -x … --stream-json [--stream-json-thinking]`: Claude-compatible stream-json
//! (https://ampcode.com/manual/appendix, "Stream JSON Output"), read as stream-json after one
//! change: a `tool_result` block's `content` is the tool's output **JSON-stringified**
//! (`{"output":"…","exitCode":1}`). It is decoded into the result's `structured` field
//! (`tool_use_result`), its `output` becomes the result's content, and `is_error` stays what
//! Amp says (false for a failed shell command: the exit code in `structured` tells). Amp
//! reports no cost; thread ids (`T-…`) are its session ids.

use serde_json::Value;

use super::emit::{Obj, ObjWith, Raw, members_removing};
use super::{Emit, Reader, s, string};
use crate::json::{Val, get};

/// See the module docs.
#[derive(Default)]
pub struct Amp;

/// The JSON-string content of a `tool_result` block, decoded when it is an object.
fn decoded(b: Val<'_, '_>) -> Option<serde_json::Map<String, Value>> {
    if get(b, "type").and_then(string) != Some("tool_result") {
        return None;
    }
    let text = get(b, "content").and_then(string)?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Some(o),
        _ => None,
    }
}

impl Reader for Amp {
    /// Only lines with a tool result are rewritten.
    fn needs(&self, raw: &[u8]) -> bool {
        memchr::memmem::find(raw, b"\"tool_result\"").is_some()
    }

    fn line(&mut self, v: Val<'_, '_>, _raw: &[u8], e: &mut Emit<'_>) {
        if s(v, "type") != Some("user") {
            return e.keep();
        }
        let message = get(v, "message");
        let blocks: Vec<Val<'_, '_>> = message
            .and_then(|m| get(m, "content"))
            .and_then(|c| c.as_array().map(|a| a.iter().collect()))
            .unwrap_or_default();
        let decoded: Vec<(usize, serde_json::Map<String, Value>)> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| decoded(*b).map(|o| (i, o)))
            .collect();
        if decoded.is_empty() {
            return e.keep();
        }
        let json = |o: &serde_json::Map<String, Value>| serde_json::to_vec(o).unwrap_or_default();
        let structured = match decoded.len() {
            1 => json(&decoded[0].1),
            _ => {
                let all: Vec<&serde_json::Map<String, Value>> =
                    decoded.iter().map(|(_, o)| o).collect();
                serde_json::to_vec(&all).unwrap_or_default()
            }
        };
        let content = |w: &mut Obj<'_>| {
            w.key("content");
            let o = w.out();
            o.raw(b"[");
            for (i, b) in blocks.iter().enumerate() {
                if i > 0 {
                    o.raw(b",");
                }
                let output = decoded
                    .iter()
                    .find(|(j, _)| *j == i)
                    .and_then(|(_, d)| d.get("output").and_then(Value::as_str));
                match output {
                    Some(out) => super::emit::obj(o, |bw| {
                        for (k, x) in members_removing(*b, &[]) {
                            match k {
                                "content" => bw.m(k, out),
                                _ => bw.m(k, x),
                            };
                        }
                    }),
                    None => o.value(*b),
                }
            }
            o.raw(b"]");
        };
        e.line(|w| {
            let mut has = false;
            for (k, x) in members_removing(v, &[]) {
                match k {
                    "message" => {
                        let m = ObjWith(|mw: &mut Obj<'_>| {
                            for (mk, mx) in members_removing(x, &[]) {
                                match mk {
                                    "content" => content(mw),
                                    _ => {
                                        mw.m(mk, mx);
                                    }
                                }
                            }
                        });
                        w.m(k, m);
                    }
                    "tool_use_result" => {
                        has = true;
                        w.m(k, Raw(&structured));
                    }
                    _ => {
                        w.m(k, x);
                    }
                }
            }
            if !has {
                w.m("tool_use_result", Raw(&structured));
            }
        });
    }
}
