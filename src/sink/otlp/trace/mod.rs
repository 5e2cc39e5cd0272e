//! Envelope events → OpenTelemetry GenAI spans: one `invoke_agent` root per run, a `chat` span
//! per API message, an `execute_tool` span per tool call, an `invoke_agent <subagent_type>` span
//! per subagent under the tool call that started it (its chats nest there), span events for
//! diagnostics, policy violations, retries and turn ends.
//! This module owns the span tree, its ids, threads and timing, the root and the subagent spans
//! (`chat.rs` the chat spans, `tools.rs` the tool spans, `events.rs` the span events, `end.rs`
//! the closing); the sink decides where finished spans go.

use std::collections::{HashMap, HashSet};

/// Maps keyed by ids from the events (foldhash: iteration order never reaches the output, the
/// spans still open at the end are sorted first).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

use std::borrow::Cow;

use serde_json::{Value, json};

mod chat;
mod end;
mod events;
#[cfg(test)]
mod tests;
mod tools;

use super::attr;
use super::span::{Span, SpanKind};
use crate::clock::Stamp;
use crate::envelope::kind as ek;
use crate::json::fields::Fields;

/// `gen_ai.provider.name` of every span of a Claude Code run (Anthropic's Messages API); another
/// agent's run names its own ([`crate::dialect::agent_provider`]).
pub const PROVIDER: &str = "anthropic";
/// `gen_ai.agent.name` of the root span of a Claude Code run (another agent's run says its
/// name: [`crate::dialect::agent_display`]).
pub const AGENT: &str = "Claude Code";

/// Spans a trace's maps have room for from the start (a run has dozens: growing them one
/// doubling at a time rehashes every entry).
const ROOM: usize = 64;

fn sized<K, V>() -> Map<K, V> {
    Map::with_capacity_and_hasher(ROOM, Default::default())
}

/// `m`'s room, emptied (taken from `m`).
fn emptied<K, V>(m: &mut Map<K, V>) -> Map<K, V> {
    let mut m = std::mem::take(m);
    m.clear();
    m
}

/// A `chat` span still open (its message may get more blocks or its usage).
struct Chat {
    span: Span,
    /// Time of the last event that carried this message id (the span's end).
    last: u64,
    /// Output parts (content on only).
    parts: Vec<Value>,
    finish: Option<String>,
}

/// A tool call seen: its span's id and start, and what a subagent it starts is called.
struct Call {
    span_id: [u8; 8],
    start: u64,
    /// `subagent_type` of its input, else the tool's name.
    agent: String,
    /// `description` of its input.
    description: Option<String>,
}

/// The state of one conversation thread: the main agent (key "") or one subagent (key = the
/// spawning tool call's id).
#[derive(Default)]
struct Thread {
    /// Time of the thread's last event: a new API message of the thread starts here.
    last: Option<u64>,
    /// The most recent chat span: parent of tool calls that name no message.
    last_chat: Option<[u8; 8]>,
    /// Input parts since the previous chat span (content on only).
    input: Vec<Value>,
}

/// Builds the span tree of one run from envelope events.
pub struct Trace {
    run_id: String,
    /// What trace and span ids derive from: the run id, plus `#n` for the n-th invocation.
    seed: String,
    /// 1 for the run's first `claude` invocation, n for the n-th (a log of several, see
    /// [`Trace::invocation`]).
    invocation: u32,
    /// The turn this trace is, when the run has one trace per turn ([`Trace::turn`]).
    turn: Option<u32>,
    /// When the trace's last event arrived.
    last_at: Option<Stamp>,
    trace_id: [u8; 16],
    content: bool,
    root: Option<Span>,
    ended: bool,
    chats: Map<String, Chat>,
    /// Span ids of chats already finished, by message id (late tool calls still find them).
    chat_ids: Map<String, [u8; 8]>,
    tools: Map<String, Span>,
    /// Tool calls, open or finished, by tool_use_id.
    calls: Map<String, Call>,
    /// Open `invoke_agent` spans of subagents, by the spawning tool_use_id (closed at the end:
    /// a background subagent outlives its tool call).
    agents: Map<String, Span>,
    /// The main conversation's thread.
    main: Thread,
    /// Subagents' threads, by the spawning tool call's id.
    threads: Map<String, Thread>,
    used: Set<u64>,
    /// How often each span key was used (a repeated message or tool id gets `key#n`).
    keys: Map<String, u32>,
    finished: Vec<Span>,
    session_id: Option<String>,
    model: Option<String>,
    /// The model the CLI switched to (`model.fallback`) until the turn ends: the request model
    /// of a chat whose first event names none (the CLI tries its main model again next turn).
    fallback: Option<String>,
    cli_version: Option<String>,
    /// `gen_ai.provider.name` of the spans: [`PROVIDER`], or another agent's (its
    /// `session.init` names it).
    provider: &'static str,
    /// The last turn's outcome when it was not `success`.
    failed_outcome: Option<String>,
    /// Whether a `turn.end` came after the last `session.init`.
    terminal: bool,
}

impl Trace {
    /// A trace for the run `run_id`; `content` adds prompts, outputs and tool input/output.
    pub fn new(run_id: &str, content: bool) -> Self {
        Self::invocation(run_id, 1, content)
    }

    /// The trace of the `n`-th `claude` invocation of run `run_id` (a log holding several runs
    /// one after the other): its own trace id and root, derived from the run id and `n`.
    pub fn invocation(run_id: &str, n: u32, content: bool) -> Self {
        let mut t = Self::roomless(run_id, n, content);
        t.chat_ids = sized();
        t.calls = sized();
        t.keys = sized();
        t.used = Set::with_capacity_and_hasher(ROOM, Default::default());
        t
    }

    /// [`Trace::invocation`] with maps that have no room yet.
    fn roomless(run_id: &str, n: u32, content: bool) -> Self {
        let seed = match n {
            1 => run_id.to_owned(),
            n => format!("{run_id}#{n}"),
        };
        Trace {
            run_id: run_id.to_owned(),
            trace_id: attr::trace_id(&seed),
            seed,
            invocation: n,
            turn: None,
            last_at: None,
            content,
            root: None,
            ended: false,
            chats: Map::default(),
            chat_ids: Map::default(),
            tools: Map::default(),
            calls: Map::default(),
            agents: Map::default(),
            main: Thread::default(),
            threads: Map::default(),
            used: Set::default(),
            keys: Map::default(),
            finished: Vec::new(),
            session_id: None,
            model: None,
            fallback: None,
            cli_version: None,
            provider: PROVIDER,
            failed_outcome: None,
            terminal: false,
        }
    }

    /// The trace of turn `n` of run `run_id` (one trace per turn: `acp`'s prompts): its own
    /// trace id and root, derived from the run id and `n` as [`Trace::invocation`]'s are; the
    /// root says `boo_normalize.turn`.
    pub fn turn(run_id: &str, n: u32, content: bool) -> Self {
        let mut t = Self::invocation(run_id, n, content);
        t.turn = Some(n);
        t
    }

    /// Make this the trace of turn `n` (see [`Trace::turn`]), keeping the room of its maps.
    pub fn next_turn(&mut self, n: u32) {
        self.renew(n);
        self.turn = Some(n);
    }

    /// The turn this trace is (one trace per turn), else `None`.
    pub fn turn_number(&self) -> Option<u32> {
        self.turn
    }

    /// Whether nothing has happened in this trace yet (no root, not ended).
    pub fn is_fresh(&self) -> bool {
        self.root.is_none() && !self.ended
    }

    /// End a trace that never started, without the root [`Trace::end`] would give it (a run
    /// with one trace per turn ending between turns).
    pub fn close_empty(&mut self) {
        self.ended = true;
    }

    /// The Claude Code version, once known (resource attribute).
    pub fn cli_version(&self) -> Option<&str> {
        self.cli_version.as_deref()
    }

    /// Make this the trace of the run's next invocation (see [`Trace::invocation`]), keeping the
    /// room of its maps.
    pub fn next_invocation(&mut self) {
        self.renew(self.invocation + 1);
    }

    /// This trace replaced by the `n`-th of its run, keeping the room of its maps.
    fn renew(&mut self, n: u32) {
        let mut next = Trace::roomless(&self.run_id, n, self.content);
        next.chat_ids = emptied(&mut self.chat_ids);
        next.calls = emptied(&mut self.calls);
        next.keys = emptied(&mut self.keys);
        next.used = std::mem::take(&mut self.used);
        next.used.clear();
        next.finished = std::mem::take(&mut self.finished);
        *self = next;
    }

    /// The session of the trace's events, once one named it.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// When the trace's last event arrived.
    pub fn last_at(&self) -> Option<Stamp> {
        self.last_at
    }

    /// Spans finished since the last call.
    pub fn take_finished(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.finished)
    }

    /// Move the spans finished since the last call to the end of `into` (this trace keeps its
    /// room for the next ones).
    pub fn move_finished(&mut self, into: &mut Vec<Span>) {
        into.append(&mut self.finished);
    }

    /// Whether the root span has been closed (later events are ignored).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// A new span of operation `op` (`gen_ai.operation.name`, and the provider after it) named
    /// `name`, under `parent` from `start`, with a deterministic id derived from `key` (made
    /// unique within the run by a counter when a key repeats). `room`: how many attributes the
    /// span usually gets in all (its list is sized once: growing it costs more than the span).
    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        key: String,
        op: &'static str,
        name: String,
        kind: SpanKind,
        parent: Option<[u8; 8]>,
        start: u64,
        room: usize,
    ) -> Span {
        let n = match self.keys.get_mut(&key) {
            Some(uses) => {
                *uses += 1;
                *uses
            }
            None => 1,
        };
        let mut id = match n {
            1 => attr::span_id(&self.seed, &key),
            n => attr::span_id(&self.seed, &format!("{key}#{n}")),
        };
        let mut m = n;
        while !self.used.insert(u64::from_le_bytes(id)) {
            m += 1; // a hash collision: practically never
            id = attr::span_id(&self.seed, &format!("{key}#{m}"));
        }
        if n == 1 {
            self.keys.insert(key, 1);
        }
        let mut attributes = Vec::with_capacity(room.max(2));
        attributes.extend([
            attr::str("gen_ai.operation.name", op),
            attr::str("gen_ai.provider.name", self.provider),
        ]);
        Span {
            trace_id: self.trace_id,
            span_id: id,
            parent,
            name,
            kind,
            start,
            end: start,
            attributes,
            events: Vec::new(),
            status: None,
        }
    }

    /// The run is another agent's (`session.init` said `agent`): the spans name its provider,
    /// the root span its name.
    fn name_agent(&mut self, agent: &str) {
        self.provider = crate::dialect::agent_provider(Some(agent));
        let name = crate::dialect::agent_display(Some(agent));
        let provider = self.provider;
        if let Some(root) = self.root.as_mut() {
            root.name = format!("invoke_agent {name}");
            for a in &mut root.attributes {
                match a.key.as_ref() {
                    "gen_ai.agent.name" => *a = attr::str("gen_ai.agent.name", name),
                    "gen_ai.provider.name" => *a = attr::str("gen_ai.provider.name", provider),
                    _ => {}
                }
            }
        }
    }

    fn root_id(&self) -> Option<[u8; 8]> {
        self.root.as_ref().map(|r| r.span_id)
    }

    /// Handle one envelope event of type `kind` (its members `ev`) that arrived at `at`;
    /// `source`: the input line it came from, when known (see [`Trace::message_event`]).
    pub fn event(
        &mut self,
        kind: &str,
        ev: &Fields<'_>,
        at: Stamp,
        cli_version: Option<&str>,
        source: Option<&[u8]>,
    ) {
        if self.ended {
            return;
        }
        let now = attr::nanos(at);
        self.last_at = Some(at);
        if self.root.is_none() {
            let name = format!("invoke_agent {AGENT}");
            let internal = SpanKind::Internal;
            let mut root = self.open(
                "invoke_agent".into(),
                "invoke_agent",
                name,
                internal,
                None,
                now,
                10,
            );
            root.attributes.extend([
                attr::str("gen_ai.agent.name", AGENT),
                attr::str("boo_normalize.run_id", self.run_id.clone()),
            ]);
            if let Some(turn) = self.turn {
                root.attributes
                    .push(attr::int("boo_normalize.turn", turn.into()));
            } else if self.invocation > 1 {
                root.attributes.push(attr::int(
                    "boo_normalize.invocation",
                    self.invocation.into(),
                ));
            }
            self.root = Some(root);
        }
        if let Some(v) = cli_version {
            self.cli_version.get_or_insert_with(|| v.to_owned());
        }
        if self.session_id.is_none()
            && let Some(s) = text(ev, "session_id")
        {
            self.session_id = Some(s.into_owned());
        }
        let thread = text(ev, "parent_tool_use_id").unwrap_or_default();
        let msg = text(ev, "message_id");
        if let Some(msg) = &msg {
            self.message_event(kind, msg, &thread, ev, now, source);
        } else if kind == ek::USAGE {
            // A message without an id (a subagent's final message read from its call's result,
            // a hand-made stream's): a chat span of its own, named by no id.
            let key = format!("{}{}", chat::ANONYMOUS, ev.u64("seq").unwrap_or(0));
            self.message_event(kind, &key, &thread, ev, now, source);
        }
        match kind {
            ek::SESSION_INIT => {
                self.terminal = false;
                if let Some(m) = text(ev, "model") {
                    self.model.get_or_insert_with(|| m.into_owned());
                }
                if let Some(v) = text(ev, "cli_version") {
                    self.cli_version.get_or_insert_with(|| v.into_owned());
                }
                if let Some(a) = text(ev, "agent") {
                    self.name_agent(&a);
                }
            }
            ek::TOOL_CALL => self.tool_call(&thread, msg.as_deref(), ev, now),
            ek::TOOL_RESULT => self.tool_result(&thread, ev, now),
            ek::USER_TEXT if self.content => {
                if let Some(t) = text(ev, "text") {
                    let part = json!({"role": "user", "parts": [{"type": "text", "content": t}]});
                    self.thread(&thread).input.push(part);
                }
            }
            _ => self.span_event(kind, ev, now),
        }
        let t = self.thread(&thread);
        t.last = Some(t.last.map_or(now, |l| l.max(now)));
    }

    fn thread(&mut self, key: &str) -> &mut Thread {
        if key.is_empty() {
            return &mut self.main;
        }
        if !self.threads.contains_key(key) {
            self.threads.insert(key.to_owned(), Thread::default());
        }
        self.threads.get_mut(key).expect("inserted above")
    }

    /// The span a new chat of `thread` hangs under, and its start: the root for the main
    /// conversation; for a subagent its `invoke_agent` span (opened on first need, under the
    /// tool call that started it).
    fn thread_parent(&mut self, thread: &str, now: u64) -> (Option<[u8; 8]>, u64) {
        if thread.is_empty() {
            let start = self.root.as_ref().map_or(now, |r| r.start);
            return (self.root_id(), start);
        }
        if let Some(a) = self.agents.get(thread) {
            return (Some(a.span_id), a.start);
        }
        let (parent, start, name, description) = match self.calls.get(thread) {
            Some(c) => (
                Some(c.span_id),
                c.start.min(now),
                c.agent.clone(),
                c.description.clone(),
            ),
            None => (self.root_id(), now, "subagent".to_owned(), None),
        };
        let mut span = self.open(
            format!("agent\0{thread}"),
            "invoke_agent",
            format!("invoke_agent {name}"),
            SpanKind::Internal,
            parent,
            start,
            5,
        );
        span.attributes.extend([
            attr::str("gen_ai.agent.name", name),
            attr::str("boo_normalize.parent_tool_use_id", thread.to_owned()),
        ]);
        if let Some(d) = description {
            span.attributes
                .push(attr::str("gen_ai.agent.description", d));
        }
        let id = span.span_id;
        self.agents.insert(thread.to_owned(), span);
        (Some(id), start)
    }
}

fn text<'a>(ev: &Fields<'a>, key: &str) -> Option<Cow<'a, str>> {
    ev.str(key)
}
