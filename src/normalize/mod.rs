//! The stateful normalizer: one stream-json line in, zero or more envelope events out.
//!
//! It owns cross-line state (current session, tool names by id, partial-message assembly, usage
//! per message id, run statistics) and nothing else: no I/O, no clock. Every input line yields at
//! least one event (or a `diagnostic`), so the envelope and the audit log account for every line.

mod blob;
mod calls;
mod diag;
mod end;
mod holes;
mod message;
mod partial;
mod result;
mod system;
mod totals;
mod usage;
mod write;

pub use end::{EndInfo, Stats};

pub use blob::{MIN_BLOB, write_elided};
pub use result::outcome;
pub use system::{MAPPINGS, Mapping};

use std::collections::{BTreeMap, HashMap, HashSet};

use totals::{Tokens, Totals};

use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::repair::{self, Refused};
use crate::json::{Engine, HOLLOW_DEFAULT, ParseError, Parser, Spans, Val, get, get_str, str_of};
use crate::read::Line;

/// What line `v` shows of a session transcript's ids. Its type is left out: the line types only
/// transcripts have (`summary`, `api-request-blob`, …) are the normalizer's to map, from the
/// transcript reader's stream-json lines.
fn transcript_marks(v: Val<'_, '_>) -> crate::transcript::detect::Marks<'static> {
    let has = |k: &str| get(v, k).is_some();
    crate::transcript::detect::Marks {
        kind: None,
        session_snake: has("session_id"),
        session_camel: has("sessionId"),
        parent_uuid: has("parentUuid"),
        is_sidechain: has("isSidechain"),
        leaf_uuid: has("leafUuid"),
        seq: has("seq"),
    }
}

/// Normalizer options.
#[derive(Debug, Clone, Default)]
pub struct NormalizeOptions {
    /// Keep base64 image/document data instead of replacing it with `{media_type, bytes, sha256}`.
    pub keep_blobs: bool,
    /// Parse with serde_json only (the reference path) instead of simd-json.
    pub reference_parser: bool,
    /// Which string literals the parser hollows (see [`Parser::hollowing`]): `None` for the
    /// default, [`crate::json::HOLLOW_DEFAULT`]. The output does not depend on it.
    pub hollow: Option<(usize, usize)>,
    /// Write every value from the tape, never copied from the input line (see
    /// [`crate::json::Spans`]). The output does not depend on it.
    pub write_from_tape: bool,
    /// Do not treat a stream without `result` as an error: no `run.error` before `run.end`.
    pub allow_no_result: bool,
    /// Whose tool names the stream's calls use (what `kind`, `paths`, `command` and `edit` of
    /// `tool.call` are read with; see [`crate::tool`]): Claude Code's unless a reader of another
    /// agent's output says otherwise.
    pub dialect: crate::tool::Dialect,
}

/// A tool call whose input is being assembled from `input_json_delta` fragments.
#[derive(Debug, Clone)]
struct PendingCall {
    /// `None` when the block's `content_block_start` had none (never paired).
    id: Option<String>,
    name: Option<String>,
    json: String,
    complete: bool,
    parent: Option<String>,
    session: Option<String>,
    message_id: Option<String>,
    /// A `server_tool_use` or `mcp_tool_use` block.
    server: bool,
    /// The `content_block`'s members `tool.call` does not map (`caller`, …), as a JSON object.
    block_extra: Option<Vec<u8>>,
}

/// Usage of one API message, emitted once when the message is over.
#[derive(Debug, Clone, Default)]
struct PendingUsage {
    message_id: String,
    model: Option<String>,
    /// Object members as raw JSON, later keys overriding earlier ones.
    fields: Vec<(String, Vec<u8>)>,
    line: Option<u64>,
    session: Option<String>,
    parent: Option<String>,
    /// The values are final: they came from a `message_delta`, or from an assistant line that
    /// carries its `stop_reason` (see [`usage_is_final`](State::note_usage)).
    final_seen: bool,
    /// The message came from a session transcript (its lines carry `isSidechain`): its later
    /// lines, written after its tool results, may carry larger counts (see
    /// [`State::usage_awaits_lines`]).
    from_transcript: bool,
    /// The message's `stop_reason` and `stop_sequence` (raw JSON; the last non-null wins).
    stop_reason: Option<Vec<u8>>,
    stop_sequence: Option<Vec<u8>>,
    /// The message's other members (`stop_details`, `context_management`, `container`, …).
    extra: Vec<(String, Vec<u8>)>,
}

/// Partial-message state of one stream (keyed by `parent_tool_use_id`).
#[derive(Debug, Default)]
struct StreamState {
    message_id: Option<String>,
    model: Option<String>,
    /// Block index → block being streamed.
    blocks: BTreeMap<u64, StreamBlock>,
}

#[derive(Debug)]
enum StreamBlock {
    Text(String),
    /// The thinking so far and its `signature` (from `signature_delta`s).
    Thinking(String, String),
    Tool(PendingCall),
    Other,
}

/// What is known about a tool use id.
#[derive(Debug, Clone)]
struct ToolInfo {
    /// `None` when the call's block had no name.
    name: Option<String>,
    call_emitted: bool,
    /// The init scope the call was emitted in.
    scope: u64,
    /// Digest of the emitted input (see [`calls::input_digest`]).
    input: u64,
    /// What the call does (see [`crate::tool`]), for its result's `kind`.
    kind: crate::tool::Kind,
}

/// The maps of [`State`], keyed by ids from the input: hashed with foldhash (seeded per
/// process), several times faster than std's SipHash on these short keys.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
/// A set of ids (see [`Map`]).
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// Cross-line state.
#[derive(Default)]
struct State {
    opts: NormalizeOptions,
    session: Option<String>,
    cli_version: Option<String>,
    /// The agent whose dialect the lines were read from ([`crate::dialect`]): `None` for Claude
    /// Code's own stream-json.
    agent: Option<&'static str>,
    tools: Map<String, ToolInfo>,
    streams: Map<Option<String>, StreamState>,
    usage: Map<Option<String>, PendingUsage>,
    usage_done: Set<String>,
    /// Subagent call id → the subagent's latest message (see [`State::subagent_final_usage`]).
    sub_tail: Map<String, usage::SubagentTail>,
    /// Message ids whose text/thinking were synthesized from deltas (skip them if the assistant
    /// line shows up later).
    text_from_deltas: Set<String>,
    /// Message ids seen on assistant lines.
    assistant_seen: Set<String>,
    init_seen: bool,
    /// Number of `system/init` lines so far: the scope of the one-call-per-id rule.
    scope: u64,
    terminal_seen: bool,
    turns: u64,
    stats: Stats,
    blob_scratch: Vec<u8>,
    /// A repaired copy of the current line (see [`crate::json::repair`]).
    repair_scratch: Vec<u8>,
    totals: Totals,
    /// Type and seq of the last event written.
    last_event: Option<(&'static str, u64)>,
    /// The main thread's latest API message since the last result and the `stop_reason` it
    /// carried itself (for `turn.end` of CLIs whose result line has none).
    last_message: Option<usage::LastMessage>,
    /// Why the current line yielded no event of its own (for its `skipped` event).
    skip_reason: Option<&'static str>,
    /// A line whose leading UTF-8 byte order mark was dropped before it was read
    /// ([`Normalizer::bom_dropped`]): its `line.repaired` follows its events.
    bom_line: Option<u64>,
    /// The line being pushed is an input line (`raw_len` > 0): its parse counts in
    /// `stats.json_lines` (once, whatever else is parsed for it).
    input_line: bool,
}

/// Turns stream-json lines into envelope events.
pub struct Normalizer {
    parser: Parser,
    st: State,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self::new(NormalizeOptions::default())
    }
}

/// Whether a line parsed with hollowed literals (see [`crate::json::Hole`]) may be normalized as
/// is. Every event writes such literals straight into the output, except for `stream_event`
/// deltas, which are accumulated, and objects without `type`, whose excerpt is built apart.
fn holes_allowed(v: Val<'_, '_>) -> bool {
    get_str(v, "type").is_some_and(|t| t != "stream_event")
}

/// Longest excerpt of a bad line kept in a `diagnostic`.
const TEXT_CAP: usize = 240;

impl Normalizer {
    /// A normalizer with the given options.
    pub fn new(opts: NormalizeOptions) -> Self {
        let engine = if opts.reference_parser {
            Engine::Serde
        } else {
            Engine::Simd
        };
        Normalizer {
            parser: Parser::new(engine).hollowing(Some(opts.hollow.unwrap_or(HOLLOW_DEFAULT))),
            st: State {
                opts,
                ..Default::default()
            },
        }
    }

    /// Run statistics so far.
    pub fn stats(&self) -> &Stats {
        &self.st.stats
    }

    /// The CLI version from the last `system/init` that carried one.
    pub fn cli_version(&self) -> Option<&str> {
        self.st.cli_version.as_deref()
    }

    /// The lines come from `agent`'s dialect, read into stream-json ([`crate::dialect`]):
    /// `session.init` and `run.end` name it, its init's `agent_version` is the CLI version, and
    /// the lines' schema rules are the dialect reader's (a dialect that names its session on one
    /// line only has lines without `session_id`).
    pub fn set_agent(&mut self, agent: Option<&'static str>) {
        self.st.agent = agent;
    }

    /// Read the calls that follow with another agent's tool names (see [`crate::tool`]).
    pub fn set_tool_dialect(&mut self, dialect: crate::tool::Dialect) {
        self.st.opts.dialect = dialect;
    }

    /// The agent set by [`Normalizer::set_agent`].
    pub fn agent(&self) -> Option<&'static str> {
        self.st.agent
    }

    /// Whether a `result` came after the last `init`.
    pub fn terminal_seen(&self) -> bool {
        self.st.terminal_seen
    }

    /// Whether the run is missing its `result` and that counts as an error (`run.error` with cause
    /// `no_result` is written before `run.end`; the commands exit 3).
    pub fn no_result(&self) -> bool {
        !self.st.terminal_seen && !self.st.opts.allow_no_result
    }

    /// Accept (or not) a run without a `result` line from now on (an input found to be a
    /// session transcript once read: see [`crate::transcript`]).
    pub fn set_allow_no_result(&mut self, yes: bool) {
        self.st.opts.allow_no_result = yes;
    }

    /// The current session id (from the last line that carried one).
    pub fn session_id(&self) -> Option<&str> {
        self.st.session.as_deref()
    }

    /// Count events appended by someone else (from index `first` of `ev`) in the run's
    /// statistics, as if the normalizer had written them.
    pub fn count_events(&mut self, ev: &Events, first: usize) {
        self.st.count(ev, first);
    }

    /// Normalize one framed line, appending its events to `ev`.
    pub fn push_line(&mut self, line: &Line<'_>, ev: &mut Events) {
        let first = ev.len();
        let st = &mut self.st;
        // `raw_len` 0: synthesized by a line transform (e.g. released redacted delta text), not
        // an input line.
        if line.raw_len > 0 {
            st.stats.lines += 1;
        }
        st.input_line = line.raw_len > 0;
        st.stats.bytes += line.raw_len;
        let n = line.number;
        if let Some(real) = line.oversized {
            st.diagnostic(ev, n, "line_too_long", line.bytes, real, None);
        } else if line.bytes.iter().all(|b| b.is_ascii_whitespace()) {
            st.diagnostic(
                ev,
                n,
                "empty_line",
                line.bytes,
                line.bytes.len() as u64,
                None,
            );
        } else if let Err(e) = self.parse_line(line.bytes, n, ev) {
            // What JavaScript's JSON.parse accepts, strict parsers refuse: repair and say so
            // (the same reading `profile` does: `json::repair::refused`).
            let mut fixed = std::mem::take(&mut self.st.repair_scratch);
            let kind = match repair::refused(line.bytes, &e, &mut fixed) {
                Refused::InvalidUtf8 => "invalid_utf8",
                Refused::TooDeep => "too_deep",
                Refused::OutOfRange => "number_out_of_range",
                // The line's events come first, then the notice.
                Refused::Repaired(count) if self.parse_line(&fixed, n, ev).is_ok() => {
                    self.st.repaired(ev, n, count);
                    self.st.stats.repaired += 1;
                    ""
                }
                Refused::Repaired(_) | Refused::NotJson if !line.terminated => "truncated_line",
                Refused::Repaired(_) | Refused::NotJson => "not_json",
            };
            self.st.repair_scratch = fixed;
            if !kind.is_empty() {
                let len = line.bytes.len() as u64;
                self.st
                    .diagnostic(ev, n, kind, line.bytes, len, Some(&e.message));
            }
        }
        if self.st.bom_line == Some(n) {
            self.st.bom_line = None;
            self.st.bom(ev, n);
            self.st.stats.repaired += 1;
        }
        let st = &mut self.st;
        if ev.len() == first {
            // Consumed without a visible effect (e.g. a tool_use already emitted): say so, so
            // that every line is accounted for.
            let ctx = st.ctx_line(n);
            ev.begin(kind::SKIPPED, &ctx);
            ev.out().key("reason");
            ev.out().str("consumed without an event of its own");
            ev.end();
        }
        st.count(ev, first);
    }

    /// Line `n`, about to be pushed, began with a UTF-8 byte order mark that the reader dropped
    /// (Windows editors write one): its events are followed by a `line.repaired` saying so.
    pub fn bom_dropped(&mut self, n: u64) {
        self.st.bom_line = Some(n);
    }

    /// Parse `bytes` (line `n`) and append its events; the parse error when it is not JSON.
    fn parse_line(&mut self, bytes: &[u8], n: u64, ev: &mut Events) -> Result<(), ParseError> {
        let st = &mut self.st;
        let parsed = match self.parser.parse(bytes) {
            Ok(p) if !p.holes.is_empty() && !holes_allowed(p.tape.as_value()) => {
                let spare = p.into_spare();
                self.parser.recycle(spare);
                self.parser.parse_whole(bytes)
            }
            other => other,
        }?;
        // An input line, not one a dialect reader or a transform made from it.
        if st.input_line {
            st.input_line = false;
            st.stats.json_lines += 1;
        }
        if parsed.engine == Engine::Serde && !st.opts.reference_parser {
            st.stats.reference_fallbacks += 1;
        }
        let v = parsed.tape.as_value();
        if parsed.engine == Engine::Simd {
            ev.out.set_source(&parsed);
        }
        if v.as_object().is_some() {
            let memo = std::cell::OnceCell::new();
            let spans = if st.opts.write_from_tape {
                Spans::default()
            } else {
                Spans::new(&parsed, bytes, &memo)
            };
            st.object_line(v, bytes, spans, n, ev);
        } else {
            let len = bytes.len() as u64;
            st.diagnostic(ev, n, "not_object", bytes, len, None);
        }
        ev.out.clear_source();
        if ev.out.has_splices() {
            holes::fill_holes(ev, bytes, &mut st.blob_scratch);
        }
        let spare = parsed.into_spare();
        self.parser.recycle(spare);
        Ok(())
    }

    /// Write what the input left pending (usage of an unfinished message, tool calls from
    /// fragments) without ending the run; [`Normalizer::finish`] does this too.
    pub fn flush_pending(&mut self, ev: &mut Events) {
        self.st
            .flush_all(ev, "input ended before the tool input was complete");
    }
}

impl State {
    fn count(&mut self, ev: &Events, first: usize) {
        if let Some(m) = ev.metas[first..].last() {
            self.last_event = Some((m.kind, m.seq));
        }
        for m in &ev.metas[first..] {
            *self.stats.by_type.entry(m.kind).or_insert(0) += 1;
            match m.kind {
                kind::UNKNOWN => self.stats.unknown += 1,
                kind::DIAGNOSTIC => self.stats.diagnostics += 1,
                _ => {}
            }
        }
    }

    fn ctx_line(&self, line: u64) -> Ctx<'_> {
        Ctx {
            session_id: self.session.as_deref(),
            parent: None,
            line: Some(line),
            uuid: None,
            ..Default::default()
        }
    }

    /// A JSON object line: dispatch on `type`.
    fn object_line(
        &mut self,
        v: Val<'_, '_>,
        raw: &[u8],
        spans: Spans<'_>,
        line: u64,
        ev: &mut Events,
    ) {
        let Some(kind) = get(v, "type") else {
            return self.missing_type(v, line, ev);
        };
        let kind = str_of(kind).unwrap_or("");
        // Claude Code session transcripts (~/.claude/projects/*.jsonl) share type names with
        // stream-json but use camelCase ids: never read them as CLI output.
        // (A line with `session_id`, nearly every one, is asked nothing more.)
        let lookalike = get(v, "session_id").is_none()
            && crate::transcript::detect::transcript_line(&transcript_marks(v)) == Some(true);
        if lookalike {
            let ctx = Ctx {
                session_id: self.session.as_deref(),
                line: Some(line),
                ..Default::default()
            };
            let o = ev.begin(kind::UNKNOWN, &ctx);
            o.key("kind");
            o.str("lookalike");
            o.key("name");
            o.str(kind);
            o.key("raw");
            o.value(v);
            ev.end();
            return;
        }
        if crate::dialect::STREAM_JSON_TYPES.contains(&kind) {
            self.stats.stream_json_lines += 1;
        }
        if self.agent.is_none()
            && let Some(why) = calls::line_violation(kind, v)
        {
            ev.set_line_violation(line, why);
        }
        let own_sid = get_str(v, "session_id");
        if let Some(sid) = own_sid
            && self.session.as_deref() != Some(sid)
        {
            self.session = Some(sid.to_owned());
        }
        // Lines without a session id (wrapper markers, foreign objects) belong to the current one.
        let fallback = if own_sid.is_none() {
            self.session.clone()
        } else {
            None
        };
        let ctx = Ctx {
            session_id: own_sid.or(fallback.as_deref()),
            parent: get_str(v, "parent_tool_use_id"),
            line: Some(line),
            uuid: get_str(v, "uuid"),
            // The extras rule (see crate::envelope::extras) covers these line types; the others
            // keep their unmapped members under their event's own `extra`.
            src: matches!(kind, "assistant" | "user" | "stream_event").then_some(v),
            raw,
            spans,
        };
        let first = ev.len();
        self.skip_reason = None;
        match kind {
            "assistant" => self.assistant(v, &ctx, ev),
            "user" => self.user(v, &ctx, ev),
            "stream_event" => self.stream_event(v, &ctx, ev),
            "result" => self.result(v, &ctx, ev),
            "system" => self.system(v, &ctx, ev),
            _ => self.other_type(v, kind, &ctx, ev),
        }
        if ctx.src.is_some() && !ev.metas[first..].iter().any(|m| m.line == Some(line)) {
            // Consumed without an event of its own: say what happened; the line's facts and
            // extras go here.
            let reason = self
                .skip_reason
                .take()
                .unwrap_or("the line carried nothing new");
            let o = ev.begin(kind::SKIPPED, &ctx);
            o.key("reason");
            o.str(reason);
            ev.end();
        }
    }

    /// `unknown` for a whole line (its raw object keeps every member: no facts or extras).
    fn unknown_line(
        &mut self,
        v: Val<'_, '_>,
        ctx: &Ctx<'_>,
        ev: &mut Events,
        kind: &str,
        name: &str,
    ) {
        let ctx = ctx.without_src();
        self.unknown(v, &ctx, ev, kind, name);
    }

    /// `unknown`: a type, subtype or block this version does not map. The raw object is kept.
    fn unknown(&mut self, v: Val<'_, '_>, ctx: &Ctx<'_>, ev: &mut Events, kind: &str, name: &str) {
        let o = ev.begin(kind::UNKNOWN, ctx);
        o.key("kind");
        o.str(kind);
        o.key("name");
        o.str(name);
        o.key("raw");
        o.value_in(v, &ctx.spans);
        ev.end();
    }

    /// Emit every pending delta-assembled call and usage (end of a turn, a run or the input).
    fn flush_all(&mut self, ev: &mut Events, why: &str) {
        // Hash maps iterate in random order: sort, so output is the same on every run.
        let mut keys: Vec<Option<String>> = self.streams.keys().cloned().collect();
        keys.sort();
        for k in keys {
            self.flush_stream(&k, ev, why);
        }
        let mut keys: Vec<(Option<u64>, Option<String>)> = self
            .usage
            .iter()
            .map(|(k, p)| (p.line, k.clone()))
            .collect();
        keys.sort();
        for (_, k) in keys {
            self.flush_usage(&k, ev);
        }
    }
}
