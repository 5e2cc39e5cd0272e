//! The envelope v1 wire format: the event buffer every sink reads, and the contract's docs.
//!
//! # Format
//!
//! Every output line is one JSON object. These keys are on every event, in this order:
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `v` | integer | envelope version, `1` |
//! | `seq` | integer | 0 for the first event, +1 per event, no gaps (shared by all sinks of a run) |
//! | `type` | string | the event type (below) |
//! | `session_id` | string \| null | the CLI session the event belongs to |
//! | `parent_tool_use_id` | string \| null | set inside a subagent: the `tool_use_id` of the spawning `Task`/`Agent` call |
//! | `line` | integer \| null | 1-based input line the event came from; `null` for synthesized events |
//!
//! Optional common keys: `uuid` (the source line's `uuid`, when it has one), `ephemeral: true`
//! (live-only progress: deltas and stream lifecycle; a consumer that only wants final state drops
//! them) and `redactions` (with `--redact`: `[{"path", "kind", "count"}]`, what was redacted in
//! the input line named by `line`, `path` being a JSON Pointer into that line; never the secret).
//!
//! # Nothing the CLI says is lost: the extras rule
//!
//! Every member of an `assistant`, `user` or `stream_event` line reaches the envelope:
//!
//! - `type`, `session_id`, `parent_tool_use_id`, `uuid`: the common keys above;
//! - members the line's events map: the message's blocks (`text`, `thinking`, `tool.call`,
//!   `tool.result`, `user.text`, `user.block`), the message's usage and `stop_reason` (the
//!   per-message `usage` record), `error` with its `api_error_*` details (`api.error`),
//!   `tool_use_result` (`tool.result.structured`), `isReplay` (`user.text.replay`), the stream
//!   `event`;
//! - named facts, written on every event of the line as optional common keys: `timestamp`,
//!   `agent_id`, `subagent_type`, `is_synthetic` (from `isSynthetic`: a compaction summary or
//!   hook feedback, not a person) and `supersedes` (the `uuid` of the line this one replaces);
//! - everything else (`request_id`, `tool_result_meta`, `task_description`, `thinking_duration_ms`,
//!   `ttft_ms`, a stream event's unmapped members under `event`, …): under `extra`, once per line,
//!   on the line's FIRST event (the first that carries its named facts: a `usage` the line
//!   releases for an earlier message does not count). A line without events of its own gets a
//!   `skipped` event, which carries them.
//!
//! A mapped member with a value of the wrong type is kept under `extra` as is. `system`,
//! `result` and other lines keep every unmapped member under their event's own `extra`. Dropped
//! on purpose: `message.role` and `message.type` (always `assistant`/`user` and `message`). The
//! tables are in [`extras`].
//!
//! Example (`claude … | boo-normalize`):
//!
//! ```text
//! {"v":1,"seq":0,"type":"session.init","session_id":"6f14…","parent_tool_use_id":null,"line":1,"model":"claude-sonnet-4-5","cwd":"/repo",…}
//! {"v":1,"seq":1,"type":"tool.call","session_id":"6f14…","parent_tool_use_id":null,"line":2,"tool_use_id":"toolu_01…","name":"Bash","input":{"command":"ls"},…}
//! {"v":1,"seq":2,"type":"tool.result","session_id":"6f14…","parent_tool_use_id":null,"line":3,"tool_use_id":"toolu_01…","name":"Bash","is_error":false,"content":"README.md",…}
//! {"v":1,"seq":3,"type":"turn.end","session_id":"6f14…","parent_tool_use_id":null,"line":5,"outcome":"success","is_error":false,"result":"Done.",…}
//! {"v":1,"seq":4,"type":"run.end","session_id":"6f14…","parent_tool_use_id":null,"line":null,"cause":"eof","terminal_seen":true,"turns":1,"stats":{…}}
//! ```
//!
//! The event types, their fields and the versioning policy are listed in `boo-normalize schema`
//! (JSON Schema draft 2020-12), in `man boo-normalize` and in the README. Additive changes (new
//! event types, new fields) keep `v: 1`; renaming or removing a field or type bumps `v`.

pub mod extras;
pub mod fields;
pub mod kind;

use crate::json::fields::Index;
use crate::json::{Out, Spans, Val, get_str};

/// The envelope version written in every event's `v`.
pub const VERSION: u64 = 1;

/// Where an event came from: the common keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx<'a> {
    /// Session id (`null` when unknown).
    pub session_id: Option<&'a str>,
    /// Subagent parent tool use id.
    pub parent: Option<&'a str>,
    /// 1-based input line, `None` for synthesized events.
    pub line: Option<u64>,
    /// The source line's `uuid`.
    pub uuid: Option<&'a str>,
    /// The source line itself, for an event of that line's own (not one it causes for an earlier
    /// line): its named facts and `extra` are written from it (see [`extras`]).
    pub src: Option<Val<'a, 'a>>,
    /// The source line's bytes (empty when not known): what its hollowed literals are read from
    /// when a value is kept beyond the line (see [`crate::json::Out::value_detached`]).
    pub raw: &'a [u8],
    /// Where the source line's values lie in `raw`, for copying those it has canonical (see
    /// [`crate::json::Spans`]; empty: every value is written from the tape).
    pub spans: Spans<'a>,
}

impl Ctx<'_> {
    /// The same context without the source line (for an event that keeps the whole line).
    pub fn without_src(&self) -> Self {
        Ctx { src: None, ..*self }
    }
}

/// One finished event inside [`Events`].
#[derive(Debug, Clone)]
pub struct EventMeta {
    /// The event's sequence number.
    pub seq: u64,
    /// The event's `type`.
    pub kind: &'static str,
    /// Input line, if any.
    pub line: Option<u64>,
    /// Whether the event is ephemeral.
    pub ephemeral: bool,
    /// Byte range of the event's JSON (no trailing newline) inside [`Events::bytes`].
    pub start: usize,
    /// End of the range.
    pub end: usize,
}

/// A batch of serialized events. The normalizer appends; sinks read; the pipeline clears it after
/// each input line. Each event is serialized once and shared by every sink.
pub struct Events {
    /// Serialized events, back to back; its marks say where their long values lie (see
    /// [`Out::with_marks`]), for the sinks that read members ([`Events::index`]).
    pub out: Out,
    /// One entry per event, in order.
    pub metas: Vec<EventMeta>,
    next_seq: u64,
    first_seq: u64,
    open: Option<(usize, &'static str, Option<u64>, bool)>,
    /// Extra common members (raw JSON, each starting with `,`) for events of one input line.
    line_members: (u64, Vec<u8>),
    /// The line whose `extra` was written (on its first event with a source line).
    extra_line: Option<u64>,
    /// How an input line broke the schema, until its first event carries it (see
    /// [`Events::set_line_violation`]).
    line_violation: Option<(u64, String)>,
    /// The open event wrote its own `violation` (which then holds the line's too).
    open_violation: bool,
}

impl Default for Events {
    fn default() -> Self {
        Events::starting_at(0)
    }
}

impl Events {
    /// A buffer whose first event gets sequence number `first_seq` (resumed runs).
    pub fn starting_at(first_seq: u64) -> Self {
        Events {
            out: Out::with_marks(),
            metas: Vec::new(),
            next_seq: first_seq,
            first_seq,
            open: None,
            line_members: (0, Vec::new()),
            extra_line: None,
            line_violation: None,
            open_violation: false,
        }
    }

    /// Write `members` (raw JSON members, each starting with `,`; empty for none) into every
    /// event begun with `line` as its input line, until changed.
    pub fn set_line_members(&mut self, line: u64, members: &[u8]) {
        self.line_members.0 = line;
        self.line_members.1.clear();
        self.line_members.1.extend_from_slice(members);
    }

    /// Input line `line` broke the schema (`why`, e.g. `the user line has no "session_id"`): its
    /// first event says so in `violation` (`the source broke the schema: …`), joined with what
    /// the event's own block broke when it has a `violation` of its own.
    pub fn set_line_violation(&mut self, line: u64, why: String) {
        self.line_violation = Some((line, why));
    }

    /// Write `violation` into the open event: `block` (how one of its blocks broke the schema,
    /// without the `the source broke the schema: ` opening) and its line's violation if no event
    /// carried that yet. Nothing when there is neither.
    pub fn violation(&mut self, block: Option<&str>) {
        let line = self.open.as_ref().and_then(|o| o.2);
        let own = self.take_line_violation(line);
        let why = match (own, block) {
            (Some(l), Some(b)) => format!("{l}; {b}"),
            (Some(l), None) => l,
            (None, Some(b)) => b.to_owned(),
            (None, None) => return,
        };
        self.open_violation = true;
        self.out.key("violation");
        self.out.str(&format!("the source broke the schema: {why}"));
    }

    fn take_line_violation(&mut self, line: Option<u64>) -> Option<String> {
        match (&self.line_violation, line) {
            (Some((l, _)), Some(n)) if *l == n => self.line_violation.take().map(|(_, w)| w),
            _ => None,
        }
    }

    /// The extra members of events from `line` (see [`Events::set_line_members`]).
    pub fn line_members(&self, line: Option<u64>) -> &[u8] {
        match line {
            Some(n) if n == self.line_members.0 => &self.line_members.1,
            _ => b"",
        }
    }

    /// The sequence number the next event gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// How many events this buffer has numbered (a continued run starts above 0).
    pub fn numbered(&self) -> u64 {
        self.next_seq - self.first_seq
    }

    /// Start an event: writes the common keys. Fields follow with `out().key(..)` + a value.
    pub fn begin(&mut self, kind: &'static str, ctx: &Ctx<'_>) -> &mut Out {
        self.begin_inner(kind, ctx, false)
    }

    /// Start an ephemeral event (`"ephemeral":true` is written after the common keys).
    pub fn begin_ephemeral(&mut self, kind: &'static str, ctx: &Ctx<'_>) -> &mut Out {
        self.begin_inner(kind, ctx, true)
    }

    fn begin_inner(&mut self, kind: &'static str, ctx: &Ctx<'_>, ephemeral: bool) -> &mut Out {
        debug_assert!(self.open.is_none(), "event {kind} begun inside another");
        let start = self.out.buf.len();
        self.open = Some((start, kind, ctx.line, ephemeral));
        let o = &mut self.out;
        o.raw(b"{\"v\":1,\"seq\":");
        o.u64(self.next_seq);
        o.raw(b",\"type\":");
        o.str(kind);
        o.raw(b",\"session_id\":");
        o.opt_str(ctx.session_id);
        o.raw(b",\"parent_tool_use_id\":");
        o.opt_str(ctx.parent);
        o.raw(b",\"line\":");
        match ctx.line {
            Some(n) => o.u64(n),
            None => o.raw(b"null"),
        }
        if let Some(u) = ctx.uuid {
            o.key("uuid");
            o.str(u);
        }
        if ephemeral {
            o.raw(b",\"ephemeral\":true");
        }
        if ctx.line.is_some() && ctx.line == Some(self.line_members.0) {
            o.raw(&self.line_members.1);
        }
        if let Some(src) = ctx.src {
            extras::write_facts(o, src);
            if ctx.line != self.extra_line {
                self.extra_line = ctx.line;
                let kind = get_str(src, "type").unwrap_or("");
                if extras::has_extra(kind, src) {
                    extras::write_extra(o, kind, src);
                }
            }
        }
        o
    }

    /// The output of the open event.
    pub fn out(&mut self) -> &mut Out {
        &mut self.out
    }

    /// Close the open event.
    pub fn end(&mut self) {
        if !std::mem::take(&mut self.open_violation) {
            // The first event of a line that broke the schema says so.
            self.violation(None);
            self.open_violation = false;
        }
        let (start, kind, line, ephemeral) = self.open.take().expect("end without begin");
        self.out.buf.push(b'}');
        self.metas.push(EventMeta {
            seq: self.next_seq,
            kind,
            line,
            ephemeral,
            start,
            end: self.out.buf.len(),
        });
        self.next_seq += 1;
    }

    /// Insert `lens[i]` bytes at offset `places[i]` of the buffered events (offsets ascending,
    /// each inside an event), written by `fill(i, dst)`; the events' byte ranges move with their
    /// bytes. The buffer grows once, to its final size, and bytes are moved in place.
    pub fn insert(
        &mut self,
        places: &[usize],
        lens: &[usize],
        mut fill: impl FnMut(usize, &mut [u8]),
    ) {
        debug_assert_eq!(places.len(), lens.len());
        let Some(&first) = places.first() else { return };
        let total: usize = lens.iter().sum();
        let buf = &mut self.out.buf;
        let old_len = buf.len();
        buf.resize(old_len + total, 0);
        // From the back: move the bytes after each place to their final position, then fill
        // the gap just before them.
        let (mut src_end, mut dst_end) = (old_len, old_len + total);
        for i in (0..places.len()).rev() {
            let seg = src_end - places[i];
            buf.copy_within(places[i]..src_end, dst_end - seg);
            dst_end -= seg;
            fill(i, &mut buf[dst_end - lens[i]..dst_end]);
            dst_end -= lens[i];
            src_end = places[i];
        }
        debug_assert_eq!(src_end, dst_end);
        let shift = |x: usize| -> usize {
            x + places
                .iter()
                .zip(lens)
                .take_while(|(at, _)| **at < x)
                .map(|(_, n)| n)
                .sum::<usize>()
        };
        for m in self.metas.iter_mut().filter(|m| m.end > first) {
            m.start = shift(m.start);
            m.end = shift(m.end);
        }
        self.out.shift_marks(first, shift);
    }

    /// The bytes of one event.
    pub fn bytes(&self, m: &EventMeta) -> &[u8] {
        &self.out.buf[m.start..m.end]
    }

    /// Index the top-level members of event `m` into `index`, stepping over the long values
    /// the normalizer marked as it wrote them. False when the event is not a JSON object.
    pub fn index(&self, m: &EventMeta, index: &mut Index) -> bool {
        index.build_marked(self.bytes(m), m.start, self.out.marks())
    }

    /// Number of buffered events.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    /// True when no event is buffered.
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    /// Drop the buffered events (sequence numbering continues).
    pub fn clear(&mut self) {
        self.out.clear();
        self.metas.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_moves_bytes_and_event_ranges() {
        let mut ev = Events::default();
        let ctx = Ctx::default();
        for text in ["ab", "cd"] {
            ev.begin("t", &ctx).key("x");
            ev.out().str(text);
            ev.end();
        }
        let at = |s: &[u8], ev: &Events| ev.out.buf.windows(4).position(|w| w == s).unwrap();
        let (ab, cd) = (at(b"\"ab\"", &ev), at(b"\"cd\"", &ev));
        ev.insert(&[ab + 2, cd + 2], &[3, 1], |i, dst| {
            dst.fill([b'1', b'2'][i])
        });
        let texts: Vec<String> = ev
            .metas
            .iter()
            .map(|m| {
                let v: serde_json::Value = serde_json::from_slice(ev.bytes(m)).unwrap();
                v["x"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(texts, ["a111b", "c2d"]);
    }

    /// The members of every event, as the index finds them.
    fn members_of(ev: &Events, marked: bool) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut index = Index::default();
        ev.metas
            .iter()
            .map(|m| {
                let built = match marked {
                    true => ev.index(m, &mut index),
                    false => index.build(ev.bytes(m)),
                };
                assert!(built);
                let view = index.view(ev.bytes(m));
                view.keyed()
                    .map(|(k, v)| (k.written().to_vec(), v.to_vec()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn marked_values_index_as_scanned_ones_after_inserts() {
        let mut ev = Events::default();
        let ctx = Ctx {
            session_id: Some("s"),
            ..Ctx::default()
        };
        let long = "x\"}]{[".repeat(20);
        let object = format!(r#"{{"a":"{}","b":[1,{{"c":"]"}}]}}"#, "y".repeat(80));
        for i in 0..3 {
            let o = ev.begin("t", &ctx);
            o.key("text");
            o.str(&long);
            o.key("input");
            o.raw_value(object.as_bytes());
            o.key("content");
            o.raw(b"[");
            o.str(&long[i..]);
            o.raw(b",\"short\"]");
            o.key("last");
            o.str(&long);
            ev.end();
        }
        assert!(ev.out.marks().len() >= 9, "{:?}", ev.out.marks());
        // Bytes inserted into the first event's text and the last event's content (as hollowed
        // literals are filled) move the marks with them.
        let text = ev.out.marks()[0];
        let content = ev.out.marks()[ev.out.marks().len() - 2];
        ev.insert(&[text.1 - 1, content.0 + 1], &[3, 70], |i, dst| {
            dst.fill([b'1', b'2'][i])
        });
        let (marked, scanned) = (members_of(&ev, true), members_of(&ev, false));
        assert_eq!(marked, scanned);
        assert_eq!(marked.len(), 3);
        for (i, m) in ev.metas.iter().enumerate() {
            let v: serde_json::Value = serde_json::from_slice(ev.bytes(m)).unwrap();
            let obj = v.as_object().unwrap();
            assert_eq!(marked[i].len(), obj.len());
            for (k, raw) in &marked[i] {
                let want = &obj[std::str::from_utf8(k).unwrap()];
                assert_eq!(
                    &serde_json::from_slice::<serde_json::Value>(raw).unwrap(),
                    want
                );
            }
        }
    }
}
