//! The scenario format (a prompt, CLI flags, files, and a script of model replies matched to the
//! CLI's requests), its parsing and checks, and the scenarios built into the binary.
//!
//! The script part (`responses`, `side_default`, `exhausted`) is the format of
//! `tests/support/fake_anthropic.py`; `docs/probe.md` documents both.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One scenario: what the CLI is asked and how the API answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name (file names: `<name>.<mode>.ndjson`).
    pub name: String,
    /// What it exercises (shown by `probe --list`).
    #[serde(default)]
    pub description: String,
    /// The `-p` prompt.
    pub prompt: String,
    /// Extra CLI flags (`@CWD@` is the working directory).
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment for the CLI.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `--permission-mode` (default `bypassPermissions`).
    #[serde(default = "bypass")]
    pub permission_mode: String,
    /// Files written into the working directory before the run: text, or `{"base64": …}`.
    #[serde(default)]
    pub files: BTreeMap<String, FileSpec>,
    /// The output modes it runs in (default: every mode asked for).
    #[serde(default)]
    pub modes: Option<Vec<String>>,
    /// What the run must end with.
    #[serde(default)]
    pub expect: Expect,
    /// The scripted replies, in order.
    #[serde(default)]
    pub responses: Vec<Reply>,
    /// The reply to side requests no entry matches (default: `OK`, or the topic JSON).
    #[serde(default)]
    pub side_default: Option<Reply>,
    /// The reply to main requests once the script ran out (default: "Done.", `end_turn`).
    #[serde(default)]
    pub exhausted: Option<Reply>,
    /// A second run of the CLI after the first, resuming its session with another prompt (same
    /// home, working directory and API; its output goes to the same capture).
    #[serde(default)]
    pub resume: Option<Resume>,
}

/// The resumed second run of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    /// Its prompt.
    pub prompt: String,
}

fn bypass() -> String {
    "bypassPermissions".into()
}

/// A file's content.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FileSpec {
    /// UTF-8 text (`@CWD@` replaced).
    Text(String),
    /// Bytes, base64-encoded.
    Base64 {
        /// The bytes.
        base64: String,
    },
}

/// The end a run must reach; anything else is a failure of the scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Allowed `subtype`s of the last `result` line (default `["success"]`).
    #[serde(default)]
    pub result: Option<Vec<String>>,
    /// The required `is_error` of the last `result` line (default: not checked).
    #[serde(default)]
    pub is_error: Option<bool>,
}

impl Expect {
    /// The allowed result subtypes.
    pub fn results(&self) -> Vec<String> {
        self.result
            .clone()
            .unwrap_or_else(|| vec!["success".to_owned()])
    }
}

/// One scripted reply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Which requests it may answer (none: any main request).
    #[serde(default, rename = "match")]
    pub when: Option<Match>,
    /// How many requests it answers (default 1; -1: every one).
    #[serde(default)]
    pub repeat: Option<i64>,
    /// Seconds to wait before answering.
    #[serde(default)]
    pub delay: Option<f64>,
    /// A name for the summary and the request log.
    #[serde(default)]
    pub label: Option<String>,
    /// Content blocks (text, thinking, tool_use, …).
    #[serde(default)]
    pub content: Option<Vec<Value>>,
    /// The stop reason (default: `tool_use` with a tool call, else `end_turn`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Answer with this HTTP error status instead.
    #[serde(default)]
    pub error: Option<u16>,
    /// The error body (default: the API's for the status).
    #[serde(default)]
    pub body: Option<Value>,
    /// The `retry-after` header of an error, in seconds.
    #[serde(default)]
    pub retry_after: Option<Value>,
    /// Never answer (the connection stays open until the run ends).
    #[serde(default)]
    pub hang: bool,
    /// Usage numbers to override.
    #[serde(default)]
    pub usage: Option<Map<String, Value>>,
    /// The model reported back (default: the request's).
    #[serde(default)]
    pub model: Option<String>,
    /// The run may end without using it (it is not reported as unused).
    #[serde(default)]
    pub optional: bool,
    /// Seconds to wait before each piece of a streamed tool input.
    #[serde(default)]
    pub input_delay: Option<f64>,
}

/// Which requests a reply may answer; every given test must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Substring of the request's model.
    pub model: Option<String>,
    /// Substring of the system prompt text.
    pub system: Option<String>,
    /// Substring of the last user message's text (tool results included).
    pub last_user: Option<String>,
    /// Substring of the first user message's text (tells a subagent's conversation apart).
    pub first_user: Option<String>,
    /// Substring of the raw request body.
    pub any: Option<String>,
    /// A tool name the request offers.
    pub tool: Option<String>,
    /// `main` (default: the request offers tools), `side` (it offers none) or `any`.
    pub kind: Option<String>,
    /// Whether the request streams.
    pub stream: Option<bool>,
}

/// The output modes (`json`: the one JSON mode of Codex, OpenCode and Copilot CLI).
pub const MODES: &[&str] = &["stream", "partial", "json"];

/// The CLI flags of an output mode.
pub fn mode_flags(mode: &str) -> &'static [&'static str] {
    match mode {
        "partial" => &[
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
        _ => &["--output-format", "stream-json", "--verbose"],
    }
}

/// The scenarios built into the binary, in run order: (name, JSON text).
const BUILTIN: &[(&str, &str)] = &[
    ("plain", include_str!("scenarios/plain.json")),
    ("bash", include_str!("scenarios/bash.json")),
    (
        "parallel_tools",
        include_str!("scenarios/parallel_tools.json"),
    ),
    ("write_edit", include_str!("scenarios/write_edit.json")),
    ("tool_error", include_str!("scenarios/tool_error.json")),
    ("subagent", include_str!("scenarios/subagent.json")),
    (
        "subagent_default",
        include_str!("scenarios/subagent_default.json"),
    ),
    ("thinking", include_str!("scenarios/thinking.json")),
    ("max_turns", include_str!("scenarios/max_turns.json")),
    ("retry", include_str!("scenarios/retry.json")),
    ("auth_error", include_str!("scenarios/auth_error.json")),
    ("big_output", include_str!("scenarios/big_output.json")),
    (
        "permission_denied",
        include_str!("scenarios/permission_denied.json"),
    ),
    ("image", include_str!("scenarios/image.json")),
];

/// A scenario with the JSON text it came from (re-read with `@CWD@` filled in for each run).
#[derive(Debug, Clone)]
pub struct Source {
    /// The parsed scenario.
    pub scenario: Scenario,
    /// Its JSON text.
    pub text: String,
}

impl Source {
    /// The scenario with `@CWD@` replaced by `cwd` everywhere (prompt, flags, files, script).
    pub fn with_cwd(&self, cwd: &str) -> Result<Scenario, String> {
        let escaped = serde_json::to_string(cwd).map_err(|e| e.to_string())?;
        let inner = &escaped[1..escaped.len() - 1];
        let v: Value = serde_json::from_str(&self.text).map_err(|e| e.to_string())?;
        let text = v.to_string().replace("@CWD@", inner);
        parse_one(serde_json::from_str(&text).map_err(|e| e.to_string())?)
    }
}

/// Every built-in scenario (Claude's; `probe::agent::Agent::scenarios` has every agent's).
pub fn builtin() -> Vec<Source> {
    BUILTIN
        .iter()
        .map(|(name, text)| parse_builtin(name, text))
        .collect()
}

/// A scenario built into the binary (it must parse and carry its own `name`).
pub fn parse_builtin(name: &str, text: &str) -> Source {
    let v: Value = serde_json::from_str(text).expect("built-in scenario is JSON");
    let scenario = parse_one(v).unwrap_or_else(|e| panic!("built-in {name}: {e}"));
    assert_eq!(scenario.name, name, "built-in scenario name");
    Source {
        scenario,
        text: text.to_owned(),
    }
}

/// The scenarios of a `--scenario-file`: one scenario object, a list of them, or
/// `{"scenarios": [...]}`.
pub fn parse_file(text: &str) -> Result<Vec<Source>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let list = match v {
        Value::Array(a) => a,
        Value::Object(mut m) if m.contains_key("scenarios") => match m.remove("scenarios") {
            Some(Value::Array(a)) => a,
            _ => return Err("\"scenarios\" must be a list".into()),
        },
        v @ Value::Object(_) => vec![v],
        _ => return Err("expected a scenario object or a list of them".into()),
    };
    if list.is_empty() {
        return Err("no scenarios in the file".into());
    }
    list.into_iter()
        .enumerate()
        .map(|(i, v)| {
            let text = v.to_string();
            let scenario = parse_one(v).map_err(|e| format!("scenario {}: {e}", i + 1))?;
            Ok(Source { scenario, text })
        })
        .collect()
}

/// A script to serve (`probe --serve-only`): a scenario, or a script of
/// `tests/support/fake_anthropic.py` (a list of replies, or an object with `responses`), which
/// needs no name or prompt.
pub fn parse_script(text: &str) -> Result<Source, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let mut m = match v {
        Value::Array(a) => {
            let mut m = Map::new();
            m.insert("responses".into(), Value::Array(a));
            m
        }
        Value::Object(m) => m,
        _ => return Err("expected a script object or a list of replies".into()),
    };
    m.entry("name")
        .or_insert_with(|| Value::String("serve".into()));
    m.entry("prompt")
        .or_insert_with(|| Value::String(String::new()));
    let v = Value::Object(m);
    let text = v.to_string();
    Ok(Source {
        scenario: parse_one(v)?,
        text,
    })
}

/// Parse and check one scenario object.
fn parse_one(v: Value) -> Result<Scenario, String> {
    let s: Scenario = serde_json::from_value(v).map_err(|e| e.to_string())?;
    if s.name.is_empty()
        || !s
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "name {:?}: use letters, digits, `_` and `-` (it names the output files)",
            s.name
        ));
    }
    if let Some(modes) = &s.modes
        && let Some(bad) = modes.iter().find(|m| !MODES.contains(&m.as_str()))
    {
        return Err(format!(
            "{}: unknown mode {bad:?} (stream, partial, json)",
            s.name
        ));
    }
    for (i, r) in s.responses.iter().enumerate() {
        check_reply(r).map_err(|e| format!("{}: responses[{i}]: {e}", s.name))?;
    }
    for (what, r) in [
        ("side_default", &s.side_default),
        ("exhausted", &s.exhausted),
    ] {
        if let Some(r) = r {
            check_reply(r).map_err(|e| format!("{}: {what}: {e}", s.name))?;
        }
    }
    for name in s.files.keys() {
        if name.starts_with('/') || name.split('/').any(|p| p == "..") {
            return Err(format!(
                "{}: file {name:?} must stay inside the working directory",
                s.name
            ));
        }
    }
    Ok(s)
}

fn check_reply(r: &Reply) -> Result<(), String> {
    let kinds = [r.content.is_some(), r.error.is_some(), r.hang]
        .iter()
        .filter(|b| **b)
        .count();
    if kinds > 1 {
        return Err("give only one of content, error and hang".into());
    }
    if let Some(s) = r.error
        && !(400..=599).contains(&s)
    {
        return Err(format!("error {s}: an HTTP error status is 400 to 599"));
    }
    if let Some(k) = r.when.as_ref().and_then(|m| m.kind.as_deref())
        && !["main", "side", "any"].contains(&k)
    {
        return Err(format!("match.kind {k:?}: main, side or any"));
    }
    if r.repeat.is_some_and(|n| n == 0 || n < -1) {
        return Err("repeat: a positive count, or -1 for every request".into());
    }
    for b in r.content.iter().flatten() {
        if b.get("type").and_then(Value::as_str).is_none() {
            return Err(format!("content block without a \"type\": {b}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_names_itself() {
        let all = builtin();
        assert_eq!(all.len(), BUILTIN.len());
        for s in &all {
            assert!(!s.scenario.description.is_empty(), "{}", s.scenario.name);
            s.with_cwd("/tmp/a \"b\"").unwrap();
        }
    }

    #[test]
    fn files_are_checked() {
        assert!(parse_file("[]").unwrap_err().contains("no scenarios"));
        assert!(parse_file("{\"name\": \"a b\", \"prompt\": \"x\"}").is_err());
        let e =
            parse_file("{\"name\": \"a\", \"prompt\": \"x\", \"responses\": [{\"contnet\": []}]}")
                .unwrap_err();
        assert!(e.contains("contnet"), "{e}");
        let e = parse_file("{\"name\": \"a\", \"prompt\": \"x\", \"files\": {\"../x\": \"\"}}")
            .unwrap_err();
        assert!(e.contains("inside"), "{e}");
        let ok = parse_file("{\"scenarios\": [{\"name\": \"a\", \"prompt\": \"@CWD@\"}]}").unwrap();
        assert_eq!(ok[0].with_cwd("/w").unwrap().prompt, "/w");
    }
}
