//! The extras rule: every member of an `assistant`, `user` or `stream_event` line reaches the
//! envelope, under a name of its own or in the `extra` of one designated event.
//!
//! A line's members fall into four groups (the tables below say which member is in which):
//!
//! - common keys: `type`, `session_id`, `parent_tool_use_id`, `uuid` ([`COMMON`]);
//! - members the line's events map ([`MAPPED`]): the message's blocks become `text`, `thinking`,
//!   `tool.call`, `tool.result`, … events; `error` and its details become an `api.error` event.
//!   A content block's own members that its event does not map (a thinking block's `signature`,
//!   a `tool_use`'s `caller`, …) go under that event's `block_extra`;
//! - named facts ([`NAMED`]): written on every event of the line, as optional common keys
//!   (`timestamp`, `agent_id`, `subagent_type`, `is_synthetic`, `supersedes`);
//! - everything else: under `extra` (an object, members in source order) on the line's first
//!   event that carries the line's facts. Events a line causes for earlier lines (the `usage` of
//!   a message the line ends) do not count; a line without events of its own gets a `skipped`.
//!
//! A mapped member whose value has the wrong type (a string where an object belongs) is not
//! mapped: it goes under `extra` unchanged, so the value is never lost. The deliberate drops,
//! with their reasons, are in [`DROPPED`].

use crate::json::{Out, Val, get, str_of};
use simd_json::prelude::*;

/// Members every event carries under its common keys (`type` picks the event types).
pub const COMMON: &[&str] = &["type", "session_id", "parent_tool_use_id", "uuid"];

/// Line members written on every event of the line as optional common keys: `(source, key)`.
pub const NAMED: &[(&str, &str)] = &[
    ("timestamp", "timestamp"),
    ("agent_id", "agent_id"),
    ("subagent_type", "subagent_type"),
    ("isSynthetic", "is_synthetic"),
    ("supersedes", "supersedes"),
];

/// Members mapped by the line's events: `(line type, member, where it goes)`. A member name
/// ending in `*` is a prefix.
pub const MAPPED: &[(&str, &str, &str)] = &[
    (
        "assistant",
        "message",
        "text, thinking, tool.call, tool.result (server tools) events; usage (the per-message record)",
    ),
    ("assistant", "error", "api.error error; text error"),
    ("assistant", "is_api_error_message", "api.error details"),
    ("assistant", "api_error_*", "api.error details"),
    (
        "user",
        "message",
        "user.text, tool.result, user.block events",
    ),
    (
        "user",
        "tool_use_result",
        "tool.result structured (the line's first tool_result block; a line without one keeps it under extra)",
    ),
    ("user", "isReplay", "user.text replay"),
    (
        "stream_event",
        "abandoned_blocks",
        "message.stop abandoned_blocks (CLI 2.1.332 writes it beside event on its own message_stop)",
    ),
    (
        "stream_event",
        "event",
        "message.start, block.*, *.delta, message.delta, message.stop, stream.ping, stream.error events; members they do not map go under extra.event",
    ),
];

/// Members the envelope drops on purpose: `(line type, member path, reason)`.
pub const DROPPED: &[(&str, &str, &str)] = &[
    (
        "assistant",
        "message.role",
        "always \"assistant\": the event types say who spoke",
    ),
    ("assistant", "message.type", "always \"message\""),
    (
        "user",
        "message.role",
        "always \"user\": the event types say who spoke",
    ),
];

/// Whether `member` of a `kind` line with value `x` is mapped (has the type its mapping reads).
pub fn is_mapped(kind: &str, member: &str, x: Val<'_, '_>) -> bool {
    if COMMON.contains(&member) {
        return match member {
            "type" => true,
            _ => x.is_null() || str_of(x).is_some(),
        };
    }
    if NAMED.iter().any(|(s, _)| *s == member) {
        return true;
    }
    let listed = MAPPED.iter().any(|(k, m, _)| {
        *k == kind
            && match m.strip_suffix('*') {
                Some(prefix) => member.starts_with(prefix),
                None => *m == member,
            }
    });
    listed
        && match member {
            "message" | "event" => x.as_object().is_some(),
            "isReplay" => x.as_bool().is_some(),
            _ => true,
        }
}

/// Write the named facts of line `src` (see [`NAMED`]) as members (each starting with `,`).
pub fn write_facts(o: &mut Out, src: Val<'_, '_>) {
    // One pass over the line's members; written in the order of [`NAMED`], the last of a
    // repeated member winning (as everywhere else).
    let Some(obj) = src.as_object() else { return };
    let mut found: [Option<Val<'_, '_>>; NAMED.len()] = [None; NAMED.len()];
    for (k, x) in obj.iter() {
        if let Some(i) = NAMED.iter().position(|(s, _)| *s == k) {
            found[i] = Some(x);
        }
    }
    for ((_, key), x) in NAMED.iter().zip(found) {
        if let Some(x) = x {
            o.key(key);
            o.value(x);
        }
    }
}

/// Whether member `k` (value `x`) of line `src` is mapped by the line's own events: as
/// [`is_mapped`], a user line's `tool_use_result` only when a `tool_result` block of the line
/// takes it (a string-content line or one of text blocks keeps it under `extra`), and a stream
/// line's `abandoned_blocks` only on a `message_stop` whose event has none of its own.
fn mapped_on(kind: &str, src: Val<'_, '_>, k: &str, x: Val<'_, '_>) -> bool {
    is_mapped(kind, k, x)
        && match k {
            "tool_use_result" => has_tool_result_block(src),
            "abandoned_blocks" => get(src, "event").is_some_and(|e| {
                get(e, "type").and_then(str_of) == Some("message_stop")
                    && get(e, "abandoned_blocks").is_none()
            }),
            _ => true,
        }
}

/// Whether the line's message has a `tool_result` block.
fn has_tool_result_block(src: Val<'_, '_>) -> bool {
    get(src, "message")
        .and_then(|m| get(m, "content"))
        .and_then(|c| c.as_array())
        .is_some_and(|bs| {
            bs.iter()
                .any(|b| get(b, "type").and_then(str_of) == Some("tool_result"))
        })
}

/// Whether line `src` of type `kind` has members for `extra`.
pub fn has_extra(kind: &str, src: Val<'_, '_>) -> bool {
    let members = src
        .as_object()
        .is_some_and(|obj| obj.iter().any(|(k, x)| !mapped_on(kind, src, k, x)));
    members || event_extra(src).is_some() || message_extra(src).is_some()
}

/// Whether member `k` of an assistant or user `message` has a type its mapping can read: `id`
/// and `model` strings, `usage` an object (others are mapped whatever they hold, or kept raw).
fn message_member_readable(k: &str, x: Val<'_, '_>) -> bool {
    match k {
        "id" | "model" => str_of(x).is_some() || x.is_null(),
        "usage" => x.as_object().is_some() || x.is_null(),
        _ => true,
    }
}

/// The `message` object of an assistant or user line, when a member has the wrong type.
fn message_extra<'t, 'i>(src: Val<'t, 'i>) -> Option<Val<'t, 'i>> {
    let kind = get(src, "type").and_then(str_of)?;
    if !matches!(kind, "assistant" | "user") {
        return None;
    }
    let m = get(src, "message")?;
    m.as_object()?
        .iter()
        .any(|(k, x)| !message_member_readable(k, x))
        .then_some(m)
}

/// Write `,"extra":{…}` for line `src` of type `kind`: its unmapped members, and for a
/// `stream_event` the members of its `event` that the stream events do not map (under `event`).
pub fn write_extra(o: &mut Out, kind: &str, src: Val<'_, '_>) {
    o.key("extra");
    o.members_where(src, |k, x| !mapped_on(kind, src, k, x));
    if let Some(m) = message_extra(src) {
        nest(o, "message", m, |k, x| !message_member_readable(k, x));
    }
    if let Some((e, et)) = event_extra(src) {
        nest(o, "event", e, |k, _| !event_member_mapped(et, k));
    }
}

/// Add member `name`, the members of `x` that `keep` holds, to the object just written.
fn nest(o: &mut Out, name: &str, x: Val<'_, '_>, keep: impl Fn(&str, Val<'_, '_>) -> bool) {
    o.buf.pop();
    if o.buf.last() != Some(&b'{') {
        o.raw(b",");
    }
    o.str(name);
    o.raw(b":");
    o.members_where(x, keep);
    o.raw(b"}");
}

/// Members of a stream event's `event` object that its envelope event maps, by event type.
pub const EVENT_MAPPED: &[(&str, &[&str])] = &[
    ("message_start", &["type", "message"]),
    ("content_block_start", &["type", "index", "content_block"]),
    ("content_block_delta", &["type", "index", "delta"]),
    ("content_block_stop", &["type", "index"]),
    ("message_delta", &["type", "delta", "usage"]),
    ("message_stop", &["type", "abandoned_blocks"]),
    ("ping", &["type"]),
    ("error", &["type", "error"]),
];

fn event_member_mapped(event_type: &str, member: &str) -> bool {
    EVENT_MAPPED
        .iter()
        .find(|(t, _)| *t == event_type)
        .is_some_and(|(_, ms)| ms.contains(&member))
}

/// The `event` object of a stream line and its type, when it has members the events do not map.
fn event_extra<'t, 'i>(src: Val<'t, 'i>) -> Option<(Val<'t, 'i>, &'i str)> {
    let e = get(src, "event")?;
    let et = get(e, "type").and_then(str_of)?;
    // Unmapped stream event types become `unknown` events that keep the whole line.
    EVENT_MAPPED.iter().find(|(t, _)| *t == et)?;
    let obj = e.as_object()?;
    obj.iter()
        .any(|(k, _)| !event_member_mapped(et, k))
        .then_some((e, et))
}
