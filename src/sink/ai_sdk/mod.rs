//! The `--sse-profile ai-sdk` sink: envelope events translated into the Vercel AI SDK "UI
//! message stream" v1, the SSE format `useChat` and `readUIMessageStream` read.
//!
//! # AI SDK UI message stream (`--sse-profile ai-sdk`)
//!
//! Every chunk is `data: <JSON chunk>` plus a blank line, and the stream ends with
//! `data: [DONE]`. The last chunk produced by envelope event `seq` also carries `id: <seq>`, so
//! `--last-event-id` resumes here too (the translation state is rebuilt from the skipped events;
//! only their output is dropped). A server sends the headers
//! `x-vercel-ai-ui-message-stream: v1`, `content-type: text/event-stream`,
//! `cache-control: no-cache`, `connection: keep-alive` and `x-accel-buffering: no` (see
//! [`HEADERS`]).
//!
//! The whole run is one assistant message:
//!
//! | envelope | chunks |
//! |---|---|
//! | first event | `start` (with `messageMetadata: {session_id, model}` when it is `session.init`) |
//! | first `session.init` when it is not the first event (`/compact` writes `status` first) | `message-metadata` with `{session_id, model}` |
//! | new API message (`message_id` changes) | `finish-step` for the previous one, `start-step` |
//! | `text.delta` / `thinking.delta` | `text-start`/`reasoning-start` once (id `<message_id>:<index>`), then `text-delta`/`reasoning-delta` |
//! | `block.stop`, `message.stop` | `text-end` / `reasoning-end` for the open parts |
//! | `text` / `thinking` not streamed as deltas | `*-start`, one `*-delta` with the whole text, `*-end` (id `t<seq>` / `r<seq>`); without a message id, only what the deltas did not already bring |
//! | `tool.input.delta` | `tool-input-start` once, then `tool-input-delta` with `partial_json` |
//! | `tool.call` | `tool-input-available` (`input`), or `tool-input-error` when its input did not parse |
//! | `tool.result` | `tool-output-available` (`output` = `content`), or `tool-output-error` when `is_error` |
//! | `tool.call.revised` | `tool-input-available` again with the new input, unless the call's output came |
//! | `tool.result` without `tool_use_id` | a [`UNPAIRED`] data chunk (`{isError, output}`) |
//! | `turn.end` | `finish-step`; an `error` chunk when the outcome is not `success` (its `result`, else its `errors` joined by `; `) |
//! | `run.end` | `finish-step` if open, `error` if no result line was seen, `finish` (`finishReason`, `messageMetadata: {session_id, outcome, cost_usd, usage, turns}`: the last turn's outcome, the run's `cost_usd`, `usage` and `turns` from `run.end`, so a run of several turns is counted whole), then `[DONE]` |
//!
//! Tool parts are `dynamic: true` (the client has no schema for Claude Code's tools; they show up
//! as `dynamic-tool` parts with `toolName`). The chunks require `toolCallId` and `toolName`
//! strings; a call whose envelope `tool_use_id` or `name` is null (the CLI's block had none) gets
//! [`GENERATED_ID`]`<seq>` (never paired with a result) or [`UNNAMED`] and says so in
//! `providerMetadata: {"boo-normalize": {"generated": [...]}}`; nothing is silently made up, and
//! a result without id is never attached to another call. Server tools (web search, …) carry
//! `providerExecuted: true`. Events inside a subagent (`parent_tool_use_id` set) are left out:
//! the subagent appears as its `Task` tool call and result. Other envelope events (usage,
//! diagnostics, hooks, …) have no UI message counterpart and are left out; use the default
//! profile or the envelope for them.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Deserialize;

use crate::envelope::kind;
use crate::envelope::{EventMeta, Events};
use crate::json::Out;
use crate::json::fields::Index;
use crate::sink::{EventCtx, Sink};

mod event;
#[cfg(test)]
mod tests;
mod tools;
use event::Ev;
pub use tools::{GENERATED_ID, UNNAMED, UNPAIRED};

/// Sets of ids from the events (foldhash: only ever asked whether they hold an id, never
/// iterated).
type Set<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The headers a server must send with this profile, as (name, value).
pub const HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Text,
    Reasoning,
}

impl Part {
    fn slot(self) -> usize {
        match self {
            Part::Text => 0,
            Part::Reasoning => 1,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Part::Text => "text",
            Part::Reasoning => "reasoning",
        }
    }
}

/// What the last `turn.end` said, for `finish`.
#[derive(Default)]
struct LastTurn {
    outcome: String,
    session_id: Option<String>,
}

/// AI SDK UI message stream v1 sink.
pub struct AiSdk<W: Write> {
    w: io::BufWriter<W>,
    /// Chunks of the current event, back to back; `ends` marks where each one ends.
    out: Out,
    ends: Vec<usize>,
    started: bool,
    /// `{session_id, model}` went out (on `start` or in a `message-metadata` chunk).
    metadata_sent: bool,
    step_open: bool,
    step_msg: Option<String>,
    /// Open streamed text/reasoning parts of the current message: block index → (id, kind).
    open: BTreeMap<u64, (String, Part)>,
    /// (message id, kind) pairs whose text arrived as deltas (their final event is skipped).
    streamed: Set<(String, bool)>,
    /// Text and reasoning streamed as deltas without a message id since the last message start
    /// (indexed by [`Part::slot`]): the final event of such a message cannot be matched by id.
    unnamed: [String; 2],
    /// What went out for each tool call, by its id.
    tools: Map<String, tools::Sent>,
    last_turn: Option<LastTurn>,
    /// The members of an event the pipeline did not index (a sink driven on its own).
    index: Index,
}

impl<W: Write> AiSdk<W> {
    /// A sink over `w` (buffered here).
    pub fn new(w: W) -> Self {
        AiSdk {
            w: io::BufWriter::with_capacity(128 * 1024, w),
            out: Out::default(),
            ends: Vec::new(),
            started: false,
            metadata_sent: false,
            step_open: false,
            step_msg: None,
            open: BTreeMap::new(),
            streamed: Set::default(),
            unnamed: Default::default(),
            tools: Map::default(),
            last_turn: None,
            index: Index::default(),
        }
    }

    fn chunk(&mut self, ty: &str) -> &mut Out {
        self.out.raw(b"{\"type\":");
        self.out.str(ty);
        &mut self.out
    }

    fn end_chunk(&mut self) {
        self.out.raw(b"}");
        self.ends.push(self.out.buf.len());
    }

    fn simple(&mut self, ty: &str) {
        self.chunk(ty);
        self.end_chunk();
    }

    fn part_chunk(&mut self, part: Part, what: &str, id: &str, delta: Option<&str>) {
        self.out.raw(b"{\"type\":\"");
        self.out.raw(part.prefix().as_bytes());
        self.out.raw(b"-");
        self.out.str_content(what);
        let o = &mut self.out;
        o.raw(b"\"");
        o.key("id");
        o.str(id);
        if let Some(d) = delta {
            o.key("delta");
            o.str(d);
        }
        self.end_chunk();
    }

    fn close_parts(&mut self) {
        for (_, (id, part)) in std::mem::take(&mut self.open) {
            self.part_chunk(part, "end", &id, None);
        }
    }

    fn finish_step(&mut self) {
        self.close_parts();
        if self.step_open {
            self.simple("finish-step");
            self.step_open = false;
        }
        self.step_msg = None;
    }

    /// Open a step for message `msg` (a new message id closes the current step).
    fn step(&mut self, msg: Option<&str>) {
        if self.step_open {
            let Some(m) = msg else { return };
            let same = match &self.step_msg {
                Some(cur) => cur == m,
                None => {
                    self.step_msg = Some(m.to_owned());
                    return;
                }
            };
            if same {
                return;
            }
            self.finish_step();
        }
        self.simple("start-step");
        self.step_open = true;
        self.step_msg = msg.map(str::to_owned);
    }

    fn whole_part(&mut self, part: Part, id: &str, text: &str) {
        self.part_chunk(part, "start", id, None);
        self.part_chunk(part, "delta", id, Some(text));
        self.part_chunk(part, "end", id, None);
    }

    fn delta(&mut self, part: Part, e: &Ev<'_>, text: &str) {
        let msg = e.message_id.as_deref();
        self.step(msg);
        match msg {
            Some(m) => {
                self.streamed
                    .insert((m.to_owned(), part == Part::Reasoning));
            }
            None => self.unnamed[part.slot()].push_str(text),
        }
        let index = e.index.unwrap_or(0);
        let id = match self.open.get(&index) {
            Some((id, p)) if *p == part => id.clone(),
            _ => {
                if let Some((id, p)) = self.open.remove(&index) {
                    self.part_chunk(p, "end", &id, None);
                }
                let id = format!("{}:{index}", msg.unwrap_or("message"));
                self.part_chunk(part, "start", &id, None);
                self.open.insert(index, (id.clone(), part));
                id
            }
        };
        if !text.is_empty() {
            self.part_chunk(part, "delta", &id, Some(text));
        }
    }

    fn tool_flags(&mut self, server: bool) {
        self.out.raw(b",\"dynamic\":true");
        if server {
            self.out.raw(b",\"providerExecuted\":true");
        }
    }

    /// Whether the translation reads event `meta`: the run's first event (it opens the stream)
    /// and the kinds [`AiSdk::translate`] makes chunks of. The others (usage, progress, notices
    /// of the CLI) make none and are not read.
    fn reads(&self, meta: &EventMeta) -> bool {
        !self.started
            || matches!(
                meta.kind,
                kind::SESSION_INIT
                    | kind::MESSAGE_START
                    | kind::TEXT_DELTA
                    | kind::THINKING_DELTA
                    | kind::BLOCK_STOP
                    | kind::MESSAGE_STOP
                    | kind::TEXT
                    | kind::THINKING
                    | kind::TOOL_INPUT_DELTA
                    | kind::TOOL_CALL
                    | kind::TOOL_CALL_REVISED
                    | kind::TOOL_RESULT
                    | kind::TURN_END
                    | kind::RUN_END
            )
    }

    fn translate(&mut self, meta: &EventMeta, e: &Ev<'_>) {
        let init = meta.kind == kind::SESSION_INIT && !self.metadata_sent;
        if !self.started || init {
            // The session and model go on `start`, or, when events came before the first
            // session.init, in a message-metadata chunk (the client merges it into the message).
            let ty = if self.started {
                "message-metadata"
            } else {
                "start"
            };
            self.started = true;
            self.metadata_sent |= init;
            let o = self.chunk(ty);
            if init {
                o.raw(b",\"messageMetadata\":{\"session_id\":");
                o.opt_str(e.session_id.as_deref());
                o.raw(b",\"model\":");
                o.raw(e.model.unwrap_or(b"null"));
                o.raw(b"}");
            }
            self.end_chunk();
        }
        if e.parent_tool_use_id.is_some() {
            return;
        }
        let msg = e.message_id.as_deref();
        match meta.kind {
            kind::MESSAGE_START => {
                self.unnamed = Default::default();
                self.step(msg);
            }
            kind::TEXT_DELTA => self.delta(Part::Text, e, e.text.as_deref().unwrap_or("")),
            kind::THINKING_DELTA => {
                self.delta(Part::Reasoning, e, e.thinking.as_deref().unwrap_or(""))
            }
            kind::BLOCK_STOP => {
                if let Some((id, part)) = e.index.and_then(|i| self.open.remove(&i)) {
                    self.part_chunk(part, "end", &id, None);
                }
            }
            kind::MESSAGE_STOP => self.close_parts(),
            kind::TEXT | kind::THINKING => {
                let part = if meta.kind == kind::TEXT {
                    Part::Text
                } else {
                    Part::Reasoning
                };
                let key = msg.map(|m| (m.to_owned(), part == Part::Reasoning));
                if key.is_some_and(|k| self.streamed.contains(&k)) || e.redacted == Some(true) {
                    return;
                }
                let text = match part {
                    Part::Text => e.text.as_deref(),
                    Part::Reasoning => e.thinking.as_deref(),
                };
                self.step(msg);
                let mut text = text.unwrap_or("");
                // Without a message id, the final text of what streamed as deltas is matched by
                // content: nothing new is left out, a longer text adds only what did not stream.
                let streamed = std::mem::take(&mut self.unnamed[part.slot()]);
                if msg.is_none()
                    && !streamed.is_empty()
                    && let Some(rest) = text.strip_prefix(streamed.as_str())
                {
                    let open = self.open.values().find(|(_, p)| *p == part).cloned();
                    match open {
                        _ if rest.is_empty() => return,
                        Some((id, _)) => return self.part_chunk(part, "delta", &id, Some(rest)),
                        None => text = rest,
                    }
                }
                let id = format!("{}{}", &part.prefix()[..1], meta.seq);
                self.whole_part(part, &id, text);
            }
            kind::TOOL_INPUT_DELTA => self.tool_input_delta(e),
            kind::TOOL_CALL => self.tool_call(msg, e, meta.seq),
            kind::TOOL_CALL_REVISED => self.tool_revised(e),
            kind::TOOL_RESULT => self.tool_result(e),
            kind::TURN_END => {
                self.finish_step();
                let outcome = e.outcome.as_deref().unwrap_or("error");
                if outcome != "success" {
                    // The result text, else the error result's `errors` (SDK 0.3.x error
                    // results have no result text), else the outcome.
                    let errors = e
                        .errors
                        .and_then(|r| serde_json::from_slice::<Vec<String>>(r).ok())
                        .filter(|v| !v.is_empty());
                    let text = match e.result.map(serde_json::from_slice::<String>) {
                        Some(Ok(s)) if !s.is_empty() => s,
                        _ => match errors {
                            Some(errors) => errors.join("; "),
                            None => format!("the turn ended with outcome {outcome}"),
                        },
                    };
                    let o = self.chunk("error");
                    o.key("errorText");
                    o.str(&text);
                    self.end_chunk();
                }
                self.last_turn = Some(LastTurn {
                    outcome: outcome.to_owned(),
                    session_id: e.session_id.as_deref().map(str::to_owned),
                });
            }
            kind::RUN_END => self.run_end(e),
            // Not read once the stream started (see `reads`).
            _ => {}
        }
    }

    fn run_end(&mut self, e: &Ev<'_>) {
        self.finish_step();
        if e.terminal_seen != Some(true) {
            let o = self.chunk("error");
            o.key("errorText");
            o.str(&format!(
                "the run ended ({}) before Claude Code reported a result",
                e.cause.as_deref().unwrap_or("eof")
            ));
            self.end_chunk();
        }
        let reason = match self.last_turn.as_ref().map(|t| t.outcome.as_str()) {
            Some("success") => "stop",
            Some("max_turns" | "max_budget") => "length",
            Some(_) => "error",
            None if e.terminal_seen == Some(true) => "other",
            None => "error",
        };
        let turn = self.last_turn.take();
        let o = self.chunk("finish");
        o.key("finishReason");
        o.str(reason);
        if let Some(t) = turn {
            o.raw(b",\"messageMetadata\":{\"session_id\":");
            o.opt_str(t.session_id.as_deref());
            o.raw(b",\"outcome\":");
            o.str(&t.outcome);
            // The run's figures (every turn of it), not only the last turn's.
            o.raw(b",\"cost_usd\":");
            o.raw(e.cost_usd.unwrap_or(b"null"));
            o.raw(b",\"usage\":");
            o.raw(e.usage.unwrap_or(b"null"));
            o.raw(b",\"turns\":");
            o.raw(e.turns.unwrap_or(b"null"));
            o.raw(b"}");
        }
        self.end_chunk();
    }

    fn write_chunks(&mut self, seq: u64) -> io::Result<()> {
        let mut start = 0;
        let last = self.ends.len().saturating_sub(1);
        for (i, &end) in self.ends.iter().enumerate() {
            if i == last {
                let mut b = itoa::Buffer::new();
                self.w.write_all(b"id: ")?;
                self.w.write_all(b.format(seq).as_bytes())?;
                self.w.write_all(b"\n")?;
            }
            crate::sink::sse::write_data(&mut self.w, &self.out.buf[start..end])?;
            self.w.write_all(b"\n")?;
            start = end;
        }
        Ok(())
    }
}

/// `errorText` of a failed tool: the content string, the text blocks of a content array, or
/// the JSON itself.
fn error_text(content: &[u8]) -> String {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<Block>),
    }
    #[derive(Deserialize)]
    struct Block {
        text: Option<String>,
    }
    match serde_json::from_slice::<Content>(content) {
        Ok(Content::Text(s)) => s,
        Ok(Content::Blocks(b)) if b.iter().any(|b| b.text.is_some()) => b
            .into_iter()
            .filter_map(|b| b.text)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::from_utf8_lossy(content).into_owned(),
    }
}

impl<W: Write> Sink for AiSdk<W> {
    fn wants_time(&self) -> bool {
        false
    }

    fn keeps_history(&self) -> bool {
        true
    }

    fn wants_fields(&self, meta: &EventMeta) -> bool {
        self.reads(meta)
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        if !self.reads(meta) {
            return Ok(());
        }
        self.out.buf.clear();
        self.ends.clear();
        let mut own = std::mem::take(&mut self.index);
        // The members the pipeline indexed; serde_json only where they do not read as this
        // translation expects (it then says why).
        let read = ctx
            .fields(events, meta, &mut own)
            .and_then(|f| Ev::from_fields(&f))
            .map_or_else(|| serde_json::from_slice::<Ev<'_>>(events.bytes(meta)), Ok);
        match read {
            Ok(e) => self.translate(meta, &e),
            Err(err) => {
                let o = self.chunk("error");
                o.key("errorText");
                o.str(&format!(
                    "boo-normalize: event {} ({}) could not be translated: {err}",
                    meta.seq, meta.kind
                ));
                self.end_chunk();
            }
        }
        self.index = own;
        if ctx.before_resume {
            return Ok(());
        }
        self.write_chunks(meta.seq)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.w.write_all(crate::sink::sse::KEEP_ALIVE)?;
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.write_all(b"data: [DONE]\n\n")?;
        self.w.flush()
    }
}
