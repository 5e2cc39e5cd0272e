//! Routing a `/v1/messages` request to a scripted reply: main versus side requests, `match`
//! tests, use counts, the side and exhausted defaults, and the reply's content made concrete for
//! the request (ids, signatures, `$SUBAGENT`, `?key` inputs, values the CLI made up).

use regex::Regex;
use serde_json::{Map, Value, json};

use super::scenario::{Match, Reply, Scenario};
use super::sse::{fake_id, fake_signature};

/// What the probe needs to know about one `/v1/messages` request.
#[derive(Debug)]
pub struct Incoming<'a> {
    /// The parsed body.
    pub body: &'a Value,
    /// The raw body text.
    pub raw: &'a str,
    /// The system prompt's text.
    pub system: String,
    /// The first user message's text.
    pub first_user: String,
    /// The last user message's text.
    pub last_user: String,
    /// The offered tools' names.
    pub tool_names: Vec<String>,
}

impl<'a> Incoming<'a> {
    /// Read what routing needs from a request body.
    pub fn new(body: &'a Value, raw: &'a str) -> Self {
        let users: Vec<&Value> = body
            .get("messages")
            .and_then(Value::as_array)
            .map(|m| {
                m.iter()
                    .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                    .collect()
            })
            .unwrap_or_default();
        let text = |m: Option<&&Value>| {
            m.and_then(|m| m.get("content"))
                .map(text_of)
                .unwrap_or_default()
        };
        Incoming {
            body,
            raw,
            system: body.get("system").map(text_of).unwrap_or_default(),
            first_user: text(users.first()),
            last_user: text(users.last()),
            tool_names: tools(body)
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect(),
        }
    }

    /// `main` when the request offers tools (the main conversation and subagents), else `side`
    /// (titles, topic checks, summaries, quota checks, warm-ups).
    pub fn is_main(&self) -> bool {
        !self.tool_names.is_empty()
    }
}

fn tools(body: &Value) -> &[Value] {
    body.get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The text of a message content or system prompt (a string, or blocks: text and tool results).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map(str::to_owned),
                Some("tool_result") => b.get("content").map(text_of),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

struct Entry {
    reply: Reply,
    /// Uses left (-1: unlimited).
    left: i64,
    uses: u32,
}

/// Which reply answered a request (for the log, the summary and the ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// Script entry `index`, its `use`-th use.
    Entry {
        /// Its index in `responses`.
        index: usize,
        /// 1 for its first use.
        use_no: u32,
    },
    /// `side_default` (the scenario's or the built-in one), the n-th time.
    Side(u32),
    /// Main request after the script ran out.
    Exhausted,
}

impl Answered {
    /// A short text (`entry:2#1`, `side#3`, `exhausted`), also the seed of the reply's ids.
    pub fn tag(&self) -> String {
        match self {
            Answered::Entry { index, use_no } => format!("entry:{index}#{use_no}"),
            Answered::Side(n) => format!("side#{n}"),
            Answered::Exhausted => "exhausted".into(),
        }
    }
}

/// The script of one run, with its use counts.
pub struct Router {
    entries: Vec<Entry>,
    side_default: Option<Reply>,
    exhausted: Option<Reply>,
    side_count: u32,
    /// Seeds the ids: the same scenario gives the same ids on every run.
    pub seed: String,
}

impl Router {
    /// The router of `s`'s script.
    pub fn new(s: &Scenario) -> Self {
        Router {
            entries: s
                .responses
                .iter()
                .map(|r| Entry {
                    reply: r.clone(),
                    left: r.repeat.unwrap_or(1),
                    uses: 0,
                })
                .collect(),
            side_default: s.side_default.clone(),
            exhausted: s.exhausted.clone(),
            side_count: 0,
            seed: s.name.clone(),
        }
    }

    /// The reply to `req`: the first entry with uses left whose `match` holds, else the side or
    /// exhausted default.
    pub fn pick(&mut self, req: &Incoming<'_>) -> (Reply, Answered) {
        let main = req.is_main();
        for (index, e) in self.entries.iter_mut().enumerate() {
            if e.left == 0 {
                continue;
            }
            let ok = match &e.reply.when {
                None => main,
                Some(m) => matches(m, req, main),
            };
            if ok {
                if e.left > 0 {
                    e.left -= 1;
                }
                e.uses += 1;
                let use_no = e.uses;
                return (e.reply.clone(), Answered::Entry { index, use_no });
            }
        }
        if main {
            let r = self
                .exhausted
                .clone()
                .unwrap_or_else(|| text_reply("Done."));
            return (r, Answered::Exhausted);
        }
        self.side_count += 1;
        let r = self
            .side_default
            .clone()
            .unwrap_or_else(|| builtin_side(req));
        (r, Answered::Side(self.side_count))
    }

    /// Labels (or `responses[i]`) of the entries that were never used and are not optional.
    pub fn unused(&self) -> Vec<String> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.uses == 0 && !e.reply.optional)
            .map(|(i, e)| {
                e.reply
                    .label
                    .clone()
                    .unwrap_or_else(|| format!("responses[{i}]"))
            })
            .collect()
    }
}

fn matches(m: &Match, req: &Incoming<'_>, main: bool) -> bool {
    let kind_ok = match m.kind.as_deref().unwrap_or("main") {
        "any" => true,
        "side" => !main,
        _ => main,
    };
    let sub = |want: &Option<String>, have: &str| want.as_ref().is_none_or(|w| have.contains(w));
    let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
    let streams = req
        .body
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    kind_ok
        && sub(&m.model, model)
        && sub(&m.system, &req.system)
        && sub(&m.last_user, &req.last_user)
        && sub(&m.first_user, &req.first_user)
        && sub(&m.any, req.raw)
        && m.tool.as_ref().is_none_or(|t| req.tool_names.contains(t))
        && m.stream.is_none_or(|s| s == streams)
}

fn text_reply(text: &str) -> Reply {
    Reply {
        content: Some(vec![json!({"type": "text", "text": text})]),
        stop_reason: Some("end_turn".into()),
        ..Reply::default()
    }
}

/// The built-in side answer: the topic check and Gemini CLI's model router get their JSON,
/// everything else `OK`.
fn builtin_side(req: &Incoming<'_>) -> Reply {
    if req.system.contains("isNewTopic") || req.last_user.contains("isNewTopic") {
        text_reply("{\"isNewTopic\": false, \"title\": null}")
    } else if req.raw.contains("complexity_score") || req.raw.contains("model_choice") {
        text_reply(
            "{\"complexity_reasoning\": \"A simple task.\", \"complexity_score\": 10, \"reasoning\": \"A simple task.\", \"model_choice\": \"flash\"}",
        )
    } else {
        text_reply("OK")
    }
}

/// `reply`'s content made concrete for `req`: ids and signatures added, `$SUBAGENT` resolved
/// to the subagent tool the request offers (`Agent` or `Task`), `?key` inputs kept only where
/// that tool's schema has `key`, `{"$match_last_user"|"$match_request": REGEX}` values filled in.
pub fn content(reply: &Reply, req: &Incoming<'_>, id_seed: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, b) in reply.content.iter().flatten().enumerate() {
        let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
        let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        match kind {
            "text" => out.push(json!({"type": "text", "text": s("text")})),
            "thinking" => {
                let th = s("thinking");
                let sig = b
                    .get("signature")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| fake_signature(&th));
                out.push(json!({"type": "thinking", "thinking": th, "signature": sig}));
            }
            "tool_use" => {
                let mut name = s("name");
                if name == "$SUBAGENT" {
                    name = ["Agent", "Task"]
                        .into_iter()
                        .find(|n| req.tool_names.iter().any(|t| t == n))
                        .unwrap_or("Task")
                        .to_owned();
                }
                let id = b
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| fake_id("toolu_", &[id_seed, &i.to_string()]));
                let input = resolve_input(b.get("input").unwrap_or(&json!({})), &name, req);
                out.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            _ => out.push(b.clone()),
        }
    }
    out
}

fn resolve_input(input: &Value, tool: &str, req: &Incoming<'_>) -> Value {
    let Some(obj) = input.as_object() else {
        return input.clone();
    };
    let props = tools(req.body)
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
        .and_then(|t| t.pointer("/input_schema/properties"))
        .and_then(Value::as_object);
    let mut out = Map::new();
    for (k, v) in obj {
        let v = made_up(v, req);
        match k.strip_prefix('?') {
            Some(key) => {
                if props.is_some_and(|p| p.contains_key(key)) {
                    out.insert(key.to_owned(), v);
                }
            }
            None => {
                out.insert(k.clone(), v);
            }
        }
    }
    Value::Object(out)
}

/// `{"$match_last_user": RE}` / `{"$match_request": RE}`: group 1 of RE in the last user
/// message's text / the whole request body, `""` when it does not match (or RE is invalid).
fn made_up(v: &Value, req: &Incoming<'_>) -> Value {
    let Some(m) = v.as_object().filter(|m| m.len() == 1) else {
        return v.clone();
    };
    for (key, hay) in [
        ("$match_last_user", req.last_user.as_str()),
        ("$match_request", req.raw),
    ] {
        if let Some(re) = m.get(key).and_then(Value::as_str) {
            let found = Regex::new(re)
                .ok()
                .and_then(|re| re.captures(hay))
                .and_then(|c| c.get(1))
                .map(|g| g.as_str().to_owned())
                .unwrap_or_default();
            return Value::String(found);
        }
    }
    v.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::scenario::parse_file;

    fn router(json: &str) -> Router {
        Router::new(&parse_file(json).unwrap()[0].scenario)
    }

    #[test]
    fn main_and_side_requests_take_different_paths() {
        let mut r = router(
            r#"{"name": "t", "prompt": "p", "responses": [
                {"label": "one", "content": [{"type": "text", "text": "a"}]},
                {"label": "sub", "match": {"first_user": "[sub]"}, "content": []}]}"#,
        );
        let side = json!({"messages": [{"role": "user", "content": "title please"}]});
        let main = json!({"tools": [{"name": "Bash"}, {"name": "Agent", "input_schema": {"properties": {"prompt": {}}}}],
                          "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]});
        let (_, a) = r.pick(&Incoming::new(&side, ""));
        assert_eq!(a, Answered::Side(1));
        let (rep, a) = r.pick(&Incoming::new(&main, ""));
        assert_eq!(a.tag(), "entry:0#1");
        assert_eq!(rep.label.as_deref(), Some("one"));
        assert_eq!(r.unused(), ["sub"]);
        assert_eq!(r.pick(&Incoming::new(&main, "")).1, Answered::Exhausted);
    }

    #[test]
    fn content_is_made_concrete_for_the_request() {
        let body = json!({"tools": [{"name": "Agent", "input_schema": {"properties": {"run_in_background": {}}}}],
                          "messages": [{"role": "user", "content": "output in /tmp/x/abc.output now"}]});
        let req = Incoming::new(&body, "");
        let reply: Reply = serde_json::from_value(json!({"content": [
            {"type": "thinking", "thinking": "hm"},
            {"type": "tool_use", "name": "$SUBAGENT", "input": {
                "?run_in_background": false, "?nope": 1,
                "file": {"$match_last_user": "(/tmp/\\S+\\.output)"}}}]}))
        .unwrap();
        let c = content(&reply, &req, "seed");
        assert!(c[0]["signature"].as_str().is_some_and(|s| !s.is_empty()));
        assert_eq!(c[1]["name"], "Agent");
        assert_eq!(
            c[1]["input"],
            json!({"run_in_background": false, "file": "/tmp/x/abc.output"})
        );
        assert!(c[1]["id"].as_str().unwrap().starts_with("toolu_01"));
        assert_eq!(c, content(&reply, &req, "seed"));
    }
}
