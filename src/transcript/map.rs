//! One transcript line → the stream-json line that says the same, which the normalizer then
//! turns into the same envelope events as the live stream.
//!
//! A transcript's `user`, `assistant` and `system` lines carry the same message objects as
//! stream-json; only some member names differ. The rewrite keeps every member, in order, with
//! its value byte for byte, and renames only these (to the names stream-json uses for the same
//! facts, so they reach the same envelope fields):
//!
//! | transcript | stream-json | envelope |
//! |---|---|---|
//! | `sessionId` | `session_id` | `session_id` |
//! | `toolUseResult` | `tool_use_result` | `tool.result` `structured` |
//! | `agentId` | `agent_id` | `agent_id` on every event of the line |
//! | `compactMetadata` (`preTokens`) | `compact_metadata` (`pre_tokens`) | `compact.boundary` `trigger`, `pre_tokens` |
//!
//! `user` and `assistant` lines get `parent_tool_use_id` as the live stream has it: `null` on
//! the main thread, and on a subagent's lines (`isSidechain: true`) the id of the `Task`/`Agent`
//! tool call that started the subagent. That id comes from the sidechain file's owner (see
//! [`super::session`]) or, for sidechains written inline (CLI 1.0.x) or whose owner is not
//! recorded, from the subagent's first prompt, which is the `prompt` of the tool call. A
//! sidechain with no such call (the "Warmup" agents of CLI 2.0.x) keeps `null`; its lines still
//! say `agent_id` and `isSidechain`.
//!
//! Every other member (`parentUuid`, `isSidechain`, `userType`, `cwd`, `version`, `gitBranch`,
//! `requestId`, `slug`, …) passes unchanged and reaches the envelope under `extra`; lines of
//! transcript-only types (`summary`, `file-history-snapshot`, `queue-operation`, …) pass
//! unchanged too (see the normalizer's table of mapped types). A line that is not a JSON object
//! is passed as it is, for the normalizer to report.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON object's members in order, values unparsed.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members<'a>, A::Error> {
                let mut v = Vec::with_capacity(m.size_hint().unwrap_or(16));
                while let Some((k, x)) = m.next_entry::<String, &'de RawValue>()? {
                    v.push((k, x));
                }
                Ok(Members(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The `message` members the mapper reads (to learn which tool call starts which subagent).
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A content block, as far as the mapper reads it.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct TaskInput {
    #[serde(default)]
    prompt: Option<String>,
}

/// What a mapped line said about itself.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LineFacts {
    /// The line's `timestamp`, when it is a string.
    pub timestamp: Option<String>,
}

/// Rewrites transcript lines (see the module docs). Holds what links subagent lines to the call
/// that started them, across the files of one session.
#[derive(Debug, Default)]
pub struct Mapper {
    /// A subagent tool call's prompt → the call's id.
    prompts: HashMap<String, String>,
    /// A sidechain line's uuid → the call its subagent belongs to.
    parents: HashMap<String, Option<String>>,
}

/// The raw JSON string `s` as a Rust string (`None` when it is not a string).
fn raw_str(v: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(v.get()).ok()
}

fn push_key(out: &mut Vec<u8>, k: &str) {
    serde_json::to_writer(&mut *out, k).expect("writing to a Vec never fails");
    out.push(b':');
}

impl Mapper {
    /// A mapper with nothing learnt yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remember that the subagent started with `prompt` belongs to the call `id` (learnt from
    /// elsewhere than the lines, e.g. a sidechain file's owner).
    pub fn learn_prompt(&mut self, prompt: &str, id: &str) {
        self.prompts.insert(prompt.to_owned(), id.to_owned());
    }

    /// Append the stream-json form of `line` to `out` (no newline). `owner`: the subagent call
    /// the line's file belongs to, when known.
    pub fn map_line(&mut self, line: &[u8], owner: Option<&str>, out: &mut Vec<u8>) -> LineFacts {
        let Ok(Members(members)) = serde_json::from_slice::<Members<'_>>(line) else {
            out.extend_from_slice(line);
            return LineFacts::default();
        };
        let get = |k: &str| members.iter().rev().find(|(n, _)| n == k).map(|(_, v)| *v);
        let facts = LineFacts {
            timestamp: get("timestamp").and_then(raw_str),
        };
        if get("session_id").is_some() {
            // Already stream-json (a stream pasted into a transcript, or a mislabelled input).
            out.extend_from_slice(line);
            return facts;
        }
        let kind = get("type").and_then(raw_str).unwrap_or_default();
        let message_line = kind == "user" || kind == "assistant";
        if kind == "assistant"
            && let Some(m) = get("message")
        {
            self.learn_calls(m);
        }
        // Every line of a subagent is linked (an attachment line can be the parent of the next
        // message line); message lines say it.
        let found = self.parent_of(&get, owner);
        let parent = (message_line && get("parent_tool_use_id").is_none()).then_some(found);
        out.push(b'{');
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match k.as_str() {
                "sessionId" => push_key(out, "session_id"),
                "toolUseResult" => push_key(out, "tool_use_result"),
                "agentId" => push_key(out, "agent_id"),
                "compactMetadata" if kind == "system" => {
                    push_key(out, "compact_metadata");
                    compact_metadata(v, out);
                    continue;
                }
                _ => push_key(out, k),
            }
            out.extend_from_slice(v.get().as_bytes());
        }
        if let Some(p) = parent {
            if !members.is_empty() {
                out.push(b',');
            }
            push_key(out, "parent_tool_use_id");
            match p {
                Some(id) => serde_json::to_writer(&mut *out, &id).expect("Vec"),
                None => out.extend_from_slice(b"null"),
            }
        }
        out.push(b'}');
        facts
    }

    /// Learn the subagent calls (`Task`/`Agent` tool uses with a `prompt`) of an assistant
    /// message.
    fn learn_calls(&mut self, message: &RawValue) {
        let Ok(m) = serde_json::from_str::<Message<'_>>(message.get()) else {
            return;
        };
        let Some(blocks) = m
            .content
            .and_then(|c| serde_json::from_str::<Vec<Block<'_>>>(c.get()).ok())
        else {
            return;
        };
        for b in blocks {
            let is_call = b.kind.as_deref() == Some("tool_use")
                && b.name
                    .as_deref()
                    .is_some_and(|n| crate::tool::is_subagent(crate::tool::Dialect::Claude, n));
            if let (true, Some(id), Some(input)) = (is_call, b.id, b.input)
                && let Ok(TaskInput {
                    prompt: Some(prompt),
                }) = serde_json::from_str::<TaskInput>(input.get())
            {
                self.prompts.insert(prompt, id);
            }
        }
    }

    /// The subagent call a `user`/`assistant` line belongs to (`None`: the main thread, or a
    /// sidechain whose call is unknown).
    fn parent_of<'a>(
        &mut self,
        get: &impl Fn(&str) -> Option<&'a RawValue>,
        owner: Option<&str>,
    ) -> Option<String> {
        let sidechain = get("isSidechain").is_some_and(|v| v.get() == "true");
        if !sidechain {
            return None;
        }
        let uuid = get("uuid").and_then(raw_str);
        let up = get("parentUuid").and_then(raw_str);
        let found = match (owner, &up) {
            (Some(o), _) => Some(o.to_owned()),
            (None, Some(u)) if self.parents.contains_key(u) => self.parents[u].clone(),
            // The subagent's first line: its prompt names the call.
            _ => first_text(get("message")).and_then(|t| self.prompts.get(&t).cloned()),
        };
        if let Some(u) = uuid {
            self.parents.insert(u, found.clone());
        }
        found
    }
}

/// The text of a user message: its `content` string, or its first text block.
pub fn first_text(message: Option<&RawValue>) -> Option<String> {
    let m = serde_json::from_str::<Message<'_>>(message?.get()).ok()?;
    let c = m.content?;
    if let Some(s) = raw_str(c) {
        return Some(s);
    }
    let blocks = serde_json::from_str::<Vec<Block<'_>>>(c.get()).ok()?;
    blocks
        .into_iter()
        .find(|b| b.kind.as_deref() == Some("text"))
        .and_then(|b| b.text)
}

/// `compactMetadata` in stream-json's spelling: `preTokens` → `pre_tokens` (other members kept).
fn compact_metadata(v: &RawValue, out: &mut Vec<u8>) {
    let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(v.get()) else {
        out.extend_from_slice(v.get().as_bytes());
        return;
    };
    out.push(b'{');
    for (i, (k, x)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_key(out, if k == "preTokens" { "pre_tokens" } else { k });
        out.extend_from_slice(x.get().as_bytes());
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(m: &mut Mapper, line: &str) -> String {
        let mut out = Vec::new();
        m.map_line(line.as_bytes(), None, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn renames_and_adds_the_parent() {
        let mut m = Mapper::new();
        let out = map(
            &mut m,
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","toolUseResult":"x"}"#,
        );
        assert_eq!(
            out,
            r#"{"parentUuid":null,"isSidechain":false,"session_id":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","tool_use_result":"x","parent_tool_use_id":null}"#
        );
    }

    #[test]
    fn inline_sidechains_find_their_call_by_prompt() {
        let mut m = Mapper::new();
        map(
            &mut m,
            r#"{"type":"assistant","sessionId":"s","isSidechain":false,"message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Task","input":{"prompt":"do it","description":"d"}}]}}"#,
        );
        let root = map(
            &mut m,
            r#"{"type":"user","sessionId":"s","isSidechain":true,"parentUuid":null,"uuid":"a","message":{"role":"user","content":"do it"}}"#,
        );
        assert!(
            root.ends_with(r#""parent_tool_use_id":"toolu_1"}"#),
            "{root}"
        );
        let next = map(
            &mut m,
            r#"{"type":"assistant","sessionId":"s","isSidechain":true,"parentUuid":"a","uuid":"b","message":{"content":[]}}"#,
        );
        assert!(
            next.ends_with(r#""parent_tool_use_id":"toolu_1"}"#),
            "{next}"
        );
        let orphan = map(
            &mut m,
            r#"{"type":"user","sessionId":"s","isSidechain":true,"parentUuid":null,"uuid":"c","message":{"role":"user","content":"Warmup"}}"#,
        );
        assert!(
            orphan.ends_with(r#""parent_tool_use_id":null}"#),
            "{orphan}"
        );
    }

    #[test]
    fn other_lines_pass_unchanged_but_for_names() {
        let mut m = Mapper::new();
        assert_eq!(map(&mut m, "not json"), "not json");
        assert_eq!(
            map(&mut m, r#"{"type":"summary","summary":"s","leafUuid":"u"}"#),
            r#"{"type":"summary","summary":"s","leafUuid":"u"}"#
        );
        assert_eq!(
            map(
                &mut m,
                r#"{"type":"system","subtype":"compact_boundary","sessionId":"s","compactMetadata":{"trigger":"manual","preTokens":5}}"#
            ),
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s","compact_metadata":{"trigger":"manual","pre_tokens":5}}"#
        );
        let stream = r#"{"type":"user","session_id":"s","sessionId":"t"}"#;
        assert_eq!(map(&mut m, stream), stream);
    }
}
