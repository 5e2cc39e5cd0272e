//! `tool.call` from a message's `tool_use` blocks: once per id; `tool.call.revised` when an id
//! comes again with a different input (never dropped silently); and blocks that break the schema
//! (no `id`, no `name`, a value of the wrong type) said so in `violation`, never papered over with
//! `""` nor paired on it.

use std::hash::BuildHasher;
use std::sync::LazyLock;

use super::{State, ToolInfo};
use crate::envelope::{Ctx, Events, kind};
use crate::json::{Out, Spans, Val, get, str_of};
use crate::tool::{self, Kind, Meaning, Path};
use simd_json::prelude::*;

/// Write a value of the current line: its canonical bytes when `spans` knows them, else from the
/// tape.
fn write_val(o: &mut Out, v: Val<'_, '_>, spans: Option<&Spans<'_>>) {
    match spans.and_then(|s| s.canonical(v)) {
        Some(b) => o.raw_value(b),
        None => o.value(v),
    }
}

/// Write what a call does ([`crate::tool`]): `kind`, `paths`, `command` and `edit` (`null` when
/// it has none). The one writer of these members, for calls from messages and from deltas.
pub(super) fn write_meaning(o: &mut Out, m: &Meaning<Val<'_, '_>>, spans: Option<&Spans<'_>>) {
    o.key("kind");
    o.str(m.kind.as_str());
    o.key("paths");
    o.raw(b"[");
    for (i, p) in m.paths.iter().enumerate() {
        if i > 0 {
            o.raw(b",");
        }
        match *p {
            Path::Value(v) => write_val(o, v, spans),
            Path::Part(..) => match p.text() {
                Some(t) => o.str(t),
                None => o.raw(b"null"),
            },
        }
    }
    o.raw(b"]");
    o.key("command");
    match m.command {
        Some(c) => write_val(o, c, spans),
        None => o.raw(b"null"),
    }
    o.key("edit");
    let Some(e) = &m.edit else {
        o.raw(b"null");
        return;
    };
    o.raw(b"{");
    o.str("path");
    o.raw(b":");
    write_val(o, e.path, spans);
    if let Some(cell) = e.cell {
        o.key("cell");
        match cell {
            Some(c) => write_val(o, c, spans),
            None => o.raw(b"null"),
        }
    }
    o.key("changes");
    o.raw(b"[");
    for (i, c) in e.changes.iter().enumerate() {
        if i > 0 {
            o.raw(b",");
        }
        o.raw(b"{");
        o.str("old_text");
        o.raw(b":");
        match c.old {
            Some(v) => write_val(o, v, spans),
            None => o.raw(b"null"),
        }
        o.key("new_text");
        write_val(o, c.new, spans);
        if c.all {
            o.key("replace_all");
            o.bool(true);
        }
        o.raw(b"}");
    }
    o.raw(b"]}");
}

/// What a tool result says of its effect, besides its content.
pub(super) struct ResultFacts<'t, 'i> {
    /// Its call's kind (`None` when unpaired).
    pub kind: Option<Kind>,
    /// The agent's own verdict.
    pub is_error: bool,
    /// The block's `content`.
    pub content: Option<Val<'t, 'i>>,
    /// The CLI's structured result.
    pub structured: Option<Val<'t, 'i>>,
}

/// Write a tool result's `kind` (its call's, `null` when unpaired), `edit` (the file and the
/// CLI's structured patch when the result carries them, see [`tool::result_patch`]) and
/// `exit_code` (for a call of kind `execute`, the exit status its agent states, see
/// [`tool::exit_code`]; else `null`).
pub(super) fn write_result_meaning(
    o: &mut Out,
    dialect: tool::Dialect,
    r: &ResultFacts<'_, '_>,
    spans: Option<&Spans<'_>>,
) {
    let (kind, structured) = (r.kind, r.structured);
    o.key("kind");
    match kind {
        Some(k) => o.str(k.as_str()),
        None => o.raw(b"null"),
    }
    o.key("edit");
    match tool::result_patch(structured) {
        Some((path, patch)) => {
            o.raw(b"{");
            o.str("path");
            o.raw(b":");
            write_val(o, path, spans);
            o.key("patch");
            write_val(o, patch, spans);
            o.raw(b"}");
        }
        None => o.raw(b"null"),
    }
    o.key("exit_code");
    let code = (kind == Some(Kind::Execute))
        .then(|| tool::exit_code(dialect, r.is_error, r.content, structured))
        .flatten();
    match code {
        Some(n) => o.i64(n),
        None => o.raw(b"null"),
    }
}

/// What a block member must be.
#[derive(Clone, Copy)]
pub(super) enum Want {
    Str,
    Bool,
}

/// The schema violations of block `b` for `required` members (`None` when it has none), and
/// whether a member is present with the wrong type (then the block is kept raw).
pub(super) fn violations(b: Val<'_, '_>, required: &[(&str, Want)]) -> Option<(String, bool)> {
    let mut parts: Vec<String> = Vec::new();
    let mut wrong_type = false;
    let block = get(b, "type").and_then(str_of).unwrap_or("block");
    for (member, want) in required {
        match get(b, member) {
            None => parts.push(format!("has no \"{member}\"")),
            Some(x) => {
                let ok = match want {
                    Want::Str => str_of(x).is_some(),
                    Want::Bool => x.as_bool().is_some(),
                };
                if !ok {
                    wrong_type = true;
                    let t = match want {
                        Want::Str => "a string",
                        Want::Bool => "a boolean",
                    };
                    parts.push(format!("\"{member}\" is not {t}"));
                }
            }
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some((
        format!("the {block} block {}", parts.join(", ")),
        wrong_type,
    ))
}

/// Write `violation` (with the line's own, see [`Events::violation`]) and the raw block when a
/// member had the wrong type into the open event.
pub(super) fn write_violation(ev: &mut Events, v: &Option<(String, bool)>, b: Val<'_, '_>) {
    ev.violation(v.as_ref().map(|(why, _)| why.as_str()));
    if let Some((_, true)) = v {
        ev.out().key("raw");
        ev.out().value(b);
    }
}

/// How line `v` of type `kind` breaks the schema of the CLI's output, if it does: no
/// `session_id` (every line the CLI writes has one), and for `assistant` and `user` lines no
/// `message` object or no `content` in it.
pub(super) fn line_violation(kind: &str, v: Val<'_, '_>) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    if matches!(
        kind,
        "system" | "assistant" | "user" | "result" | "stream_event"
    ) && get(v, "session_id").and_then(str_of).is_none()
    {
        parts.push(match get(v, "session_id") {
            None => "has no \"session_id\"",
            Some(_) => "has a \"session_id\" that is not a string",
        });
    }
    if matches!(kind, "assistant" | "user") {
        match get(v, "message") {
            None => parts.push("has no \"message\""),
            Some(m) if m.as_object().is_none() => {
                parts.push("has a \"message\" that is not an object")
            }
            Some(m) => match get(m, "content") {
                None => parts.push("has no \"message.content\""),
                Some(c) if c.is_null() => parts.push("has \"message.content\" null"),
                Some(_) => {}
            },
        }
    }
    (!parts.is_empty()).then(|| format!("the {kind} line {}", parts.join(", ")))
}

/// Members of a `tool_use` block that `tool.call` maps.
pub(super) const CALL_MAPPED: &[&str] = &["type", "id", "name", "input"];
/// Members of a `tool_result` block that `tool.result` maps.
pub(super) const RESULT_MAPPED: &[&str] = &["type", "tool_use_id", "content", "is_error"];
/// Members of a `text` block that `text` and `user.text` map.
pub(super) const TEXT_MAPPED: &[&str] = &["type", "text"];
/// Members of a `thinking` block that `thinking` maps.
pub(super) const THINKING_MAPPED: &[&str] = &["type", "thinking"];

/// Write `block_extra` into the open event: the members of block `b` it does not map (a thinking
/// block's `signature`, a tool_use's `caller`, a text block's `citations`, …), when there are any.
pub(super) fn write_block_extra(o: &mut Out, b: Val<'_, '_>, mapped: &[&str]) {
    let Some(obj) = b.as_object() else { return };
    if obj.iter().all(|(k, _)| mapped.contains(&k)) {
        return;
    }
    o.key("block_extra");
    o.members_where(b, |k, _| !mapped.contains(&k));
}

/// The members of block `b` that `mapped` does not name, as a JSON object kept beyond the
/// current line (`None` when there are none): a streamed call's `block_extra`.
pub(super) fn block_extra_detached(
    b: Val<'_, '_>,
    mapped: &[&str],
    holes: &Out,
    line: &[u8],
) -> Option<Vec<u8>> {
    let obj = b.as_object()?;
    let mut o = Out::default();
    o.raw(b"{");
    for (k, x) in obj.iter().filter(|(k, _)| !mapped.contains(k)) {
        if o.buf.len() > 1 {
            o.raw(b",");
        }
        o.str(k);
        o.raw(b":");
        o.value_detached(x, holes, line);
    }
    o.raw(b"}");
    (o.buf.len() > 2).then_some(o.buf)
}

/// A digest of a tool input, to tell a repeated call from a revised one: of the bytes the
/// envelope writes for it (`canonical` when they are the line's own, see [`crate::json::Spans::canonical`]),
/// which do not depend on how the line spelled it. foldhash, seeded per process.
pub(super) fn input_digest(
    input: Option<Val<'_, '_>>,
    canonical: Option<&[u8]>,
    holes: &Out,
    line: &[u8],
) -> u64 {
    static SEED: LazyLock<foldhash::quality::RandomState> = LazyLock::new(Default::default);
    let Some(v) = input else {
        return SEED.hash_one(b"");
    };
    match canonical {
        Some(b) => SEED.hash_one(b),
        None => {
            let mut o = Out::default();
            o.value_detached(v, holes, line);
            SEED.hash_one(&o.buf[..])
        }
    }
}

/// Write a tool input: its `canonical` bytes when known, else from the tape.
fn write_input(o: &mut Out, input: Option<Val<'_, '_>>, canonical: Option<&[u8]>) {
    match canonical {
        Some(b) => o.raw_value(b),
        None => o.opt_value(input),
    }
}

impl State {
    /// A `tool_use`, `server_tool_use` or `mcp_tool_use` block of an assistant line.
    pub(super) fn tool_use_block(
        &mut self,
        b: Val<'_, '_>,
        ctx: &Ctx<'_>,
        ev: &mut Events,
        message_id: Option<&str>,
    ) {
        let server = get(b, "type").and_then(str_of) != Some("tool_use");
        let id = get(b, "id").and_then(str_of);
        let name = get(b, "name").and_then(str_of);
        let input = get(b, "input");
        let canonical = input.and_then(|v| ctx.spans.canonical(v));
        let digest = input_digest(input, canonical, &ev.out, ctx.raw);
        let bad = violations(b, &[("id", Want::Str), ("name", Want::Str)]);
        let meaning = tool::meaning(self.opts.dialect, name, input);
        // Without an id the call cannot be paired with a result: it is not remembered.
        if let Some(id) = id {
            let scope = self.scope;
            if let Some(t) = self
                .tools
                .get_mut(id)
                .filter(|t| t.call_emitted && t.scope == scope)
            {
                if t.input == digest {
                    self.skip_reason = Some("the tool call was already emitted with this input");
                    return;
                }
                t.input = digest;
                t.kind = meaning.kind;
                let o = ev.begin(kind::TOOL_CALL_REVISED, ctx);
                o.key("tool_use_id");
                o.str(id);
                o.key("name");
                o.opt_str(name);
                o.key("input");
                write_input(o, input, canonical);
                o.key("message_id");
                o.opt_str(message_id);
                write_meaning(o, &meaning, Some(&ctx.spans));
                ev.end();
                return;
            }
            self.forget_pending_call(ctx.parent, id);
            self.tools.insert(
                id.to_owned(),
                ToolInfo {
                    name: name.map(str::to_owned),
                    call_emitted: true,
                    scope: self.scope,
                    input: digest,
                    kind: meaning.kind,
                },
            );
        }
        let o = ev.begin(kind::TOOL_CALL, ctx);
        o.key("tool_use_id");
        o.opt_str(id);
        o.key("name");
        o.opt_str(name);
        o.key("input");
        write_input(o, input, canonical);
        o.key("input_error");
        o.raw(b"null");
        o.key("message_id");
        o.opt_str(message_id);
        o.key("subagent");
        o.bool(meaning.kind == Kind::Subagent);
        write_meaning(o, &meaning, Some(&ctx.spans));
        o.key("server");
        o.bool(server);
        o.key("source");
        o.str("message");
        write_violation(ev, &bad, b);
        write_block_extra(ev.out(), b, CALL_MAPPED);
        ev.end();
    }
}
