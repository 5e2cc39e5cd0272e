//! Building the planted-set input: every plant in every position of a stream-json run, and
//! where to find each case's redacted text in the output.

use serde_json::{Value, json};

use super::Plant;

/// How to find a case's redacted text in the output.
pub enum Find {
    /// The string at a JSON pointer of the line with this uuid.
    At(String, &'static str),
    /// The text/thinking deltas of stream `parent`, concatenated.
    Deltas(String),
    /// The `input_json_delta`s of stream `parent`, concatenated, parsed, at a pointer.
    JsonDeltas(String, String),
    /// The text lines with these input line indexes (text lines carry no uuid).
    TextLines(usize, usize),
}

pub struct Case {
    pub label: String,
    pub plant: Plant,
    pub find: Find,
}

pub struct Input {
    pub lines: Vec<String>,
    pub cases: Vec<Case>,
}

impl Input {
    fn push(&mut self, v: Value) {
        self.lines.push(v.to_string());
    }
}

fn assistant(uuid: &str, block: Value) -> Value {
    json!({"type": "assistant", "message": {"id": format!("msg_{uuid}"), "type": "message",
        "role": "assistant", "model": "claude-test", "content": [block]},
        "session_id": "sess", "parent_tool_use_id": null, "uuid": uuid})
}

fn user(uuid: &str, content: Value) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": content},
        "session_id": "sess", "parent_tool_use_id": null, "uuid": uuid})
}

fn delta(parent: &str, kind: &str, field: &str, frag: &str, n: usize) -> Value {
    json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
        "delta": {"type": kind, field: frag}}, "session_id": "sess",
        "parent_tool_use_id": parent, "uuid": format!("{parent}-{n}")})
}

/// A block streamed in `pieces` (start, deltas, stop).
fn stream(inp: &mut Input, parent: &str, kind: &str, field: &str, pieces: &[String]) {
    let bt = match kind {
        "text_delta" => json!({"type": "text", "text": ""}),
        "thinking_delta" => json!({"type": "thinking", "thinking": ""}),
        _ => {
            json!({"type": "tool_use", "id": format!("toolu_{parent}"), "name": "Bash", "input": {}})
        }
    };
    inp.push(
        json!({"type": "stream_event", "event": {"type": "content_block_start",
        "index": 0, "content_block": bt}, "session_id": "sess", "parent_tool_use_id": parent,
        "uuid": format!("{parent}-s")}),
    );
    for (n, p) in pieces.iter().enumerate() {
        inp.push(delta(parent, kind, field, p, n));
    }
    inp.push(
        json!({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0},
        "session_id": "sess", "parent_tool_use_id": parent, "uuid": format!("{parent}-e")}),
    );
}

/// `s` cut at byte offset `i` (plants are ASCII).
fn split2(s: &str, i: usize) -> Vec<String> {
    vec![s[..i].to_owned(), s[i..].to_owned()]
}

fn chars(s: &str) -> Vec<String> {
    s.chars().map(String::from).collect()
}

/// A JSON string literal with every ASCII letter and digit as `\u00XX` and `/` as `\/`.
fn escaped_literal(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => o.push_str(&format!("\\u{:04x}", c as u32)),
            '/' => o.push_str("\\/"),
            _ => {
                let e = serde_json::to_string(&c.to_string()).unwrap();
                o.push_str(&e[1..e.len() - 1]);
            }
        }
    }
    o.push('"');
    o
}

pub fn build(plants: &[Plant], keyed: &[(String, Plant)]) -> Input {
    let mut inp = Input {
        lines: Vec::new(),
        cases: Vec::new(),
    };
    let case = |inp: &mut Input, label: String, plant: &Plant, find: Find| {
        inp.cases.push(Case {
            label,
            plant: plant.clone(),
            find,
        });
    };
    for (i, p) in plants.iter().enumerate() {
        let t = &p.text;
        let u = |pos: &str| format!("p{i}-{pos}");
        inp.push(assistant(&u("text"), json!({"type": "text", "text": t})));
        case(
            &mut inp,
            u("text"),
            p,
            Find::At(u("text"), "/message/content/0/text"),
        );
        inp.push(assistant(
            &u("thinking"),
            json!({"type": "thinking", "thinking": t, "signature": "c2ln"}),
        ));
        case(
            &mut inp,
            u("thinking"),
            p,
            Find::At(u("thinking"), "/message/content/0/thinking"),
        );
        inp.push(assistant(
            &u("tool"),
            json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                "input": {"command": t, "description": "run it"}}),
        ));
        case(
            &mut inp,
            u("tool"),
            p,
            Find::At(u("tool"), "/message/content/0/input/command"),
        );
        inp.push(user(
            &u("result"),
            json!([{"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": t}]),
        ));
        case(
            &mut inp,
            u("result"),
            p,
            Find::At(u("result"), "/message/content/0/content"),
        );
        inp.push(user(
            &u("blocks"),
            json!([{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
                "content": [{"type": "text", "text": t}]}]),
        ));
        case(
            &mut inp,
            u("blocks"),
            p,
            Find::At(u("blocks"), "/message/content/0/content/0/text"),
        );
        inp.push(
            json!({"type": "system", "subtype": "init", "session_id": "sess",
            "cwd": t, "tools": ["Bash", t], "model": "claude-test",
            "mcp_servers": [{"name": t, "status": "connected"}], "uuid": u("init")}),
        );
        for ptr in ["/cwd", "/tools/1", "/mcp_servers/0/name"] {
            case(
                &mut inp,
                format!("{}{ptr}", u("init")),
                p,
                Find::At(u("init"), ptr),
            );
        }
        inp.push(user(&u("prompt"), json!(t)));
        case(
            &mut inp,
            u("prompt"),
            p,
            Find::At(u("prompt"), "/message/content"),
        );
        inp.push(
            json!({"type": "result", "subtype": "success", "is_error": false,
            "result": t, "session_id": "sess", "uuid": u("final")}),
        );
        case(&mut inp, u("final"), p, Find::At(u("final"), "/result"));
        // JSON escapes hiding every letter.
        inp.lines.push(format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":{}}}]}},"session_id":"sess","parent_tool_use_id":null,"uuid":"{}"}}"#,
            escaped_literal(t),
            u("escaped")
        ));
        case(
            &mut inp,
            u("escaped"),
            p,
            Find::At(u("escaped"), "/message/content/0/content"),
        );
        // Text lines (stderr, a wrapper's log).
        let first = inp.lines.len();
        for l in t.split('\n') {
            inp.lines
                .push(format!("[stderr] {}", l.trim_end_matches('\r')));
        }
        let last = inp.lines.len();
        case(&mut inp, u("stderr"), p, Find::TextLines(first, last));
        // Deltas: split at every offset, and one character per delta.
        for (kind, field) in [("text_delta", "text"), ("thinking_delta", "thinking")] {
            for cut in 1..t.len() {
                let parent = u(&format!("{field}-{cut}"));
                stream(&mut inp, &parent, kind, field, &split2(t, cut));
                case(&mut inp, parent.clone(), p, Find::Deltas(parent));
            }
        }
        let parent = u("text-chars");
        stream(&mut inp, &parent, "text_delta", "text", &chars(t));
        case(&mut inp, parent.clone(), p, Find::Deltas(parent));
        let js = json!({"command": t}).to_string();
        for cut in 1..js.len() {
            let parent = u(&format!("json-{cut}"));
            stream(
                &mut inp,
                &parent,
                "input_json_delta",
                "partial_json",
                &split2(&js, cut),
            );
            case(
                &mut inp,
                parent.clone(),
                p,
                Find::JsonDeltas(parent, "/command".into()),
            );
        }
        let parent = u("json-chars");
        stream(
            &mut inp,
            &parent,
            "input_json_delta",
            "partial_json",
            &chars(&js),
        );
        case(
            &mut inp,
            parent.clone(),
            p,
            Find::JsonDeltas(parent, "/command".into()),
        );
    }
    for (i, (k, p)) in keyed.iter().enumerate() {
        let u = |pos: &str| format!("k{i}-{pos}");
        let ptr = format!("/{k}");
        inp.push(assistant(
            &u("tool"),
            json!({"type": "tool_use", "id": format!("toolu_k{i}"), "name": "Api",
                "input": {k.as_str(): p.text, "note": "call"}}),
        ));
        case(
            &mut inp,
            u("tool"),
            p,
            Find::At(
                u("tool"),
                Box::leak(format!("/message/content/0/input{ptr}").into_boxed_str()),
            ),
        );
        inp.push(
            json!({"type": "system", "subtype": "init", "session_id": "sess",
            "cwd": "/w", "env": {k.as_str(): p.text}, "uuid": u("init")}),
        );
        case(
            &mut inp,
            u("init"),
            p,
            Find::At(u("init"), Box::leak(format!("/env{ptr}").into_boxed_str())),
        );
        let js = json!({k.as_str(): p.text}).to_string();
        for cut in 1..js.len() {
            let parent = u(&format!("json-{cut}"));
            stream(
                &mut inp,
                &parent,
                "input_json_delta",
                "partial_json",
                &split2(&js, cut),
            );
            case(
                &mut inp,
                parent.clone(),
                p,
                Find::JsonDeltas(parent, ptr.clone()),
            );
        }
    }
    inp
}
