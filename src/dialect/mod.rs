//! Input dialects: the JSON streams of coding-agent CLIs other than Claude Code, each read by one
//! module of this folder into the stream-json lines the one normalizer reads, so every output
//! (envelope, audit, SSE, OTLP, pretty, report, …) works on any agent's run unchanged.
//!
//! The seam: a dialect is recognised from its content ([`recognise`], [`detect`]) or chosen
//! with `--input-format`; its [`Reader`] turns each input line into zero or more stream-json
//! lines through [`Emit`], which accounts for the input line once (its first line carries the
//! input line's bytes count; the others are marked as synthesized) and marks a line that lacks a
//! field its dialect requires ([`Emit::violation`]). The rules every dialect shares are then the
//! normalizer's, applied once: one `tool.call` per call id and one paired `tool.result`, usage
//! once per message id, `run.end` last with totals, every line an event or a `diagnostic`,
//! unknown types as `unknown`. Claude Code's own stream-json needs no reading (the stage steps
//! aside once the input is known to be it); session transcripts are read by
//! [`crate::transcript`].
//!
//! | module | CLI | command |
//! |---|---|---|
//! | [`codex`] | OpenAI Codex | `codex exec --json` |
//! | [`gemini`] | Gemini CLI | `gemini -p … --output-format stream-json` |
//! | [`qwen`] | Qwen Code | `qwen -p … --output-format stream-json` |
//! | [`amp`] | Amp | `amp -x … --stream-json` |
//! | [`opencode`] | OpenCode | `opencode run --format json` |
//! | [`cursor`] | Cursor | `cursor-agent -p … --output-format stream-json` |
//! | [`copilot`] | GitHub Copilot CLI | `copilot -p … --output-format json`, `events.jsonl` |
//!
//! Tool names of each dialect that the tool-meaning module needs are in [`tools`].

pub mod amp;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod emit;
pub mod gemini;
pub mod opencode;
pub mod qwen;

use std::fmt;

pub use emit::Emit;

use simd_json::prelude::*;

use crate::json::{Engine, Parser, Val, get, get_str, str_of};
use crate::read::Line;
use crate::transform::Transformed;

/// The top-level `type`s of Claude Code's stream-json lines. A line is stream-json when it is a
/// JSON object with one of these and is not a session transcript's (which has `sessionId` and
/// no `session_id`).
pub const STREAM_JSON_TYPES: &[&str] = &["system", "assistant", "user", "result", "stream_event"];

/// Non-blank lines of an input's head that are examined to tell what it is: its dialect
/// ([`detect`]) or its kind ([`crate::sniff`]).
pub const HEAD_LINES: usize = 256;

/// A stream's dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Claude Code stream-json (read as it is).
    Claude,
    /// `codex exec --json`.
    Codex,
    /// `gemini --output-format stream-json`.
    Gemini,
    /// `cursor-agent --output-format stream-json`.
    Cursor,
    /// `opencode run --format json`.
    OpenCode,
    /// `amp --stream-json`.
    Amp,
    /// `qwen --output-format stream-json`.
    Qwen,
    /// `copilot --output-format json`, and its session log (`events.jsonl`).
    Copilot,
}

impl Dialect {
    /// Every dialect but Claude's own.
    pub const OTHERS: &'static [Dialect] = &[
        Dialect::Codex,
        Dialect::Gemini,
        Dialect::Cursor,
        Dialect::OpenCode,
        Dialect::Amp,
        Dialect::Qwen,
        Dialect::Copilot,
    ];

    /// The `--input-format` value.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Claude => "stream-json",
            Dialect::Codex => "codex",
            Dialect::Gemini => "gemini",
            Dialect::Cursor => "cursor",
            Dialect::OpenCode => "opencode",
            Dialect::Amp => "amp",
            Dialect::Qwen => "qwen",
            Dialect::Copilot => "copilot",
        }
    }

    /// Whose tool names the dialect's calls carry, for the tool-meaning table ([`crate::tool`]).
    pub fn tools(self) -> crate::tool::Dialect {
        use crate::tool::Dialect as T;
        match self {
            Dialect::Claude => T::Claude,
            Dialect::Codex => T::Codex,
            Dialect::Gemini | Dialect::Qwen => T::Gemini,
            Dialect::Cursor => T::Cursor,
            Dialect::OpenCode => T::OpenCode,
            Dialect::Amp => T::Amp,
            Dialect::Copilot => T::Copilot,
        }
    }

    /// The agent's name as `session.init` and `run.end` say it (`agent`).
    pub fn agent(self) -> &'static str {
        match self {
            Dialect::Claude => "claude-code",
            Dialect::Codex => "codex",
            Dialect::Gemini => "gemini-cli",
            Dialect::Cursor => "cursor-agent",
            Dialect::OpenCode => "opencode",
            Dialect::Amp => "amp",
            Dialect::Qwen => "qwen-code",
            Dialect::Copilot => "copilot-cli",
        }
    }

    /// The dialect whose `agent` (as `session.init` and `run.end` say it) is `agent`.
    pub fn from_agent(agent: &str) -> Option<Dialect> {
        std::iter::once(Dialect::Claude)
            .chain(Dialect::OTHERS.iter().copied())
            .find(|d| d.agent() == agent)
    }

    /// Whose tool names the calls of a run of `agent` carry (Claude Code's when it names none or
    /// one this build does not know), for the views.
    pub fn tools_of(agent: Option<&str>) -> crate::tool::Dialect {
        agent
            .and_then(Dialect::from_agent)
            .map_or(crate::tool::Dialect::Claude, Dialect::tools)
    }

    /// What the stream is, as a phrase (in messages).
    pub fn what(self) -> &'static str {
        match self {
            Dialect::Claude => "Claude Code stream-json",
            Dialect::Codex => "OpenAI Codex JSON (`codex exec --json`)",
            Dialect::Gemini => "Gemini CLI stream-json (`gemini --output-format stream-json`)",
            Dialect::Cursor => "Cursor stream-json (`cursor-agent --output-format stream-json`)",
            Dialect::OpenCode => "OpenCode JSON (`opencode run --format json`)",
            Dialect::Amp => "Amp stream-json (`amp --stream-json`)",
            Dialect::Qwen => "Qwen Code stream-json (`qwen --output-format stream-json`)",
            Dialect::Copilot => "GitHub Copilot CLI JSON (`copilot --output-format json`)",
        }
    }

    /// The dialect named `name` (an `--input-format` value).
    pub fn from_name(name: &str) -> Option<Dialect> {
        std::iter::once(Dialect::Claude)
            .chain(Dialect::OTHERS.iter().copied())
            .find(|d| d.name() == name)
    }

    /// A reader of this dialect, when there is one.
    pub fn reader(self) -> Option<Box<dyn Reader>> {
        match self {
            Dialect::Codex => Some(Box::new(codex::Codex::default())),
            Dialect::Gemini => Some(Box::new(gemini::Gemini::default())),
            Dialect::Qwen => Some(Box::new(qwen::Qwen)),
            Dialect::Amp => Some(Box::new(amp::Amp)),
            Dialect::OpenCode => Some(Box::new(opencode::OpenCode::default())),
            Dialect::Cursor => Some(Box::new(cursor::Cursor::default())),
            Dialect::Copilot => Some(Box::new(copilot::Copilot::default())),
            Dialect::Claude => None,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The agent's name for people (`Codex`, `Gemini CLI`, …) of an `agent` as `session.init` and
/// `run.end` say it; `Claude Code` for none (Claude Code's own stream-json names no agent).
pub fn agent_display(agent: Option<&str>) -> &'static str {
    match agent {
        None | Some("claude-code") => "Claude Code",
        Some("codex") => "Codex",
        Some("gemini-cli") => "Gemini CLI",
        Some("cursor-agent") => "Cursor",
        Some("opencode") => "OpenCode",
        Some("amp") => "Amp",
        Some("qwen-code") => "Qwen Code",
        Some("copilot-cli") => "Copilot CLI",
        Some(_) => "agent",
    }
}

/// The OpenTelemetry GenAI `gen_ai.provider.name` of an `agent`'s run: the well-known value of
/// the API its CLI talks to (`anthropic`, `openai`, `gcp.gemini`), else the agent's own name
/// (Cursor, Amp, OpenCode, Qwen Code and Copilot CLI use several providers, or one the
/// conventions do not name).
pub fn agent_provider(agent: Option<&str>) -> &'static str {
    match agent {
        None | Some("claude-code") => "anthropic",
        Some("codex") => "openai",
        Some("gemini-cli") => "gcp.gemini",
        Some("cursor-agent") => "cursor",
        Some("opencode") => "opencode",
        Some("amp") => "amp",
        Some("qwen-code") => "qwen",
        Some("copilot-cli") => "github.copilot",
        Some(_) => "unknown",
    }
}

/// One dialect's reader: input lines (JSON objects) in, stream-json lines out.
pub trait Reader: Send {
    /// Read one input line `raw` that is a JSON object (`v`, its parsed form: the members a
    /// reader needs are read from it borrowed), writing what it says to `out`. A line the reader
    /// leaves without output is accounted for by [`Emit::finish_line`].
    fn line(&mut self, v: Val<'_, '_>, raw: &[u8], out: &mut Emit<'_>);
    /// End of input: write what is still pending (an open text message).
    fn finish(&mut self, _out: &mut Emit<'_>) {}
    /// Whether the line `raw` may need reading: a reader that passes most lines as they are
    /// (Qwen, Amp) says no for lines without the marks of those it rewrites, which then pass
    /// unparsed.
    fn needs(&self, _raw: &[u8]) -> bool {
        true
    }
}

/// What one line (`o`, parsed) says about the dialect of its stream: `Some` when it tells.
pub fn recognise(o: Val<'_, '_>) -> Option<Dialect> {
    let t = get_str(o, "type")?;
    let has = |k: &str| get(o, k).is_some();
    let str_of = |k: &str| get_str(o, k);
    let is_str = |k: &str| get(o, k).and_then(crate::json::str_of).is_some();
    // An envelope event or a transcript line is none of these.
    if (has("v") && has("seq")) || has("parentUuid") || has("isSidechain") {
        return None;
    }
    if t.starts_with("thread.")
        || t.starts_with("turn.")
        || t.starts_with("item.")
        || t == "request_user_input"
    {
        return Some(Dialect::Codex);
    }
    let only_type_and_message = o
        .as_object()
        .is_some_and(|m| m.keys().all(|k| k == "type" || k == "message"));
    if t == "error" && only_type_and_message && has("message") {
        return Some(Dialect::Codex);
    }
    if has("sessionID") && (has("part") || matches!(t, "error" | "done")) {
        return Some(Dialect::OpenCode);
    }
    if get(o, "data").is_some_and(|d| d.as_object().is_some()) && t.contains('.') && has("id") {
        return Some(Dialect::Copilot);
    }
    if t == "result" && has("sessionId") && has("exitCode") {
        return Some(Dialect::Copilot);
    }
    let stamped = is_str("timestamp");
    let gemini = match t {
        "init" => has("session_id") && has("model"),
        "message" => has("role") && is_str("content"),
        "tool_use" => has("tool_name") && has("tool_id"),
        "tool_result" => has("tool_id") && has("status"),
        "result" => has("stats") || (has("status") && !has("subtype")),
        "error" => has("severity"),
        _ => false,
    };
    if stamped && gemini {
        return Some(Dialect::Gemini);
    }
    if t == "tool_call" && has("call_id")
        || t == "thinking" && matches!(str_of("subtype"), Some("delta" | "completed"))
        || has("model_call_id")
        || has("timestamp_ms")
        || (t == "result" && has("request_id"))
    {
        return Some(Dialect::Cursor);
    }
    if t == "system" && (has("qwen_code_version") || str_of("subtype") == Some("session_start")) {
        return Some(Dialect::Qwen);
    }
    if STREAM_JSON_TYPES.contains(&t) && str_of("session_id").is_some_and(|s| s.starts_with("T-")) {
        return Some(Dialect::Amp);
    }
    if t == "system"
        && str_of("subtype") == Some("init")
        && has("apiKeySource")
        && !has("tools")
        && !has("claude_code_version")
    {
        return Some(Dialect::Cursor);
    }
    if STREAM_JSON_TYPES.contains(&t) {
        return Some(Dialect::Claude);
    }
    None
}

/// Whether `t` is a line type that only another agent's stream has (not stream-json's, not one
/// of boo-normalize's own outputs; `error` and `done` too, which a failed Codex or OpenCode run
/// may hold alone): Codex's `thread.*`, `turn.*`, `item.*`, Gemini's `init` and
/// `message`, OpenCode's `step_start`/`step_finish`, Cursor's `tool_call`, Copilot's session
/// events (`session.start`, `user.message`, `assistant.message`, `tool.execution_start`, …).
pub fn is_own_type(t: &str) -> bool {
    t.starts_with("thread.")
        || t.starts_with("turn.")
        || t.starts_with("item.")
        || matches!(
            t,
            "init"
                | "error"
                | "done"
                | "message"
                | "step_start"
                | "step_finish"
                | "tool_call"
                | "session.start"
                | "session.shutdown"
                | "user.message"
                | "assistant.message"
                | "assistant.message_delta"
                | "assistant.turn_start"
                | "tool.execution_start"
                | "tool.execution_complete"
        )
}

/// The dialect of the first line of `head` (some lines of an input) that tells one; `None` when
/// none does.
pub fn detect(head: &[u8]) -> Option<Dialect> {
    head.split(|&b| b == b'\n')
        .take(HEAD_LINES)
        .find_map(|l| line_dialect(l.trim_ascii()))
}

/// The dialect one line (trimmed) tells, if it is a JSON object that tells one.
pub fn line_dialect(line: &[u8]) -> Option<Dialect> {
    if !line.starts_with(b"{") {
        return None;
    }
    let mut p = Parser::new(Engine::Simd).hollowing(None);
    let parsed = p.parse(line).ok()?;
    let v = parsed.tape.as_value();
    v.as_object().and(recognise(v))
}

/// The message for a wrong explicit `--input-format` (`chosen`) on input `name` whose lines look
/// like `seen`.
pub fn mismatch(name: &str, chosen: Dialect, seen: Dialect) -> String {
    format!(
        "{name}: --input-format {chosen} was given, but this looks like {}; use --input-format {} (or auto)",
        seen.what(),
        seen.name()
    )
}

/// How a stage picks its dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// From the first line that tells ([`recognise`]).
    #[default]
    Auto,
    /// As given (`--input-format`).
    Forced(Dialect),
}

enum State {
    Undecided,
    Reading(Dialect, Box<dyn Reader>),
    /// Claude stream-json, or a dialect without a reader yet: lines pass as they are.
    Asis(Dialect),
}

/// The dialect stage of a pipeline: every input line through its dialect's reader. See the
/// module docs.
pub struct Stage {
    state: State,
    violations: Vec<(usize, String)>,
    /// Parses each line the reader reads (every string kept whole: no hollowing).
    parser: Parser,
}

impl Stage {
    /// A stage choosing its dialect as `choice` says.
    pub fn new(choice: Choice) -> Self {
        let state = match choice {
            Choice::Auto => State::Undecided,
            Choice::Forced(d) => Self::reading(d),
        };
        Stage {
            state,
            violations: Vec::new(),
            parser: Parser::new(Engine::Simd).hollowing(None),
        }
    }

    fn reading(d: Dialect) -> State {
        match d.reader() {
            Some(r) => State::Reading(d, r),
            None => State::Asis(d),
        }
    }

    /// The dialect, once known.
    pub fn dialect(&self) -> Option<Dialect> {
        match &self.state {
            State::Undecided => None,
            State::Reading(d, _) | State::Asis(d) => Some(*d),
        }
    }

    /// Whether lines pass as they are from now on (the stage can be dropped).
    pub fn passes_through(&self) -> bool {
        matches!(self.state, State::Asis(_))
    }

    /// The violation of output line `i` of the last call, if it has one.
    pub fn violation(&self, i: usize) -> Option<&str> {
        self.violations
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, w)| w.as_str())
    }

    /// Read one input line, appending the stream-json lines it makes to `out`.
    pub fn line(&mut self, line: &Line<'_>, out: &mut Transformed) {
        self.violations.clear();
        let trimmed = line.bytes.trim_ascii();
        if let State::Reading(_, r) = &self.state
            && !r.needs(trimmed)
        {
            return out.keep_line();
        }
        if line.oversized.is_some() || !trimmed.starts_with(b"{") {
            // Not a JSON object: the normalizer says what it is.
            return out.keep_line();
        }
        let Ok(parsed) = self.parser.parse(trimmed) else {
            return out.keep_line();
        };
        let v = parsed.tape.as_value();
        if v.as_object().is_some() {
            if matches!(self.state, State::Undecided)
                && let Some(d) = recognise(v)
            {
                self.state = Self::reading(d);
            }
            match &mut self.state {
                State::Reading(d, r) => {
                    let mut e = Emit::new(out, Some(line), &mut self.violations);
                    e.stamp(line_time(*d, v));
                    r.line(v, trimmed, &mut e);
                    e.finish_line();
                }
                // Undecided or read as it is.
                _ => out.keep_line(),
            }
        } else {
            out.keep_line();
        }
        let spare = parsed.into_spare();
        self.parser.recycle(spare);
    }

    /// End of input: what the reader still holds, as lines of the last input line `last`.
    pub fn finish(&mut self, last: &Line<'_>, out: &mut Transformed) {
        self.violations.clear();
        if let State::Reading(_, r) = &mut self.state {
            let mut e = Emit::new(out, Some(last), &mut self.violations);
            e.main_done();
            r.finish(&mut e);
        }
    }
}

/// The time an input line of dialect `d` states, as RFC 3339 (what Claude Code's `timestamp`
/// is): Gemini CLI's and Copilot CLI's `timestamp` (already such a string), OpenCode's
/// `timestamp` (milliseconds since the epoch, written in UTC with milliseconds). The other
/// dialects' lines state none.
pub fn line_time(d: Dialect, v: Val<'_, '_>) -> Option<String> {
    match d {
        Dialect::Gemini | Dialect::Copilot => s(v, "timestamp").map(str::to_owned),
        Dialect::OpenCode => {
            let ms = get(v, "timestamp")?.as_u64()?;
            // humantime writes years up to 9999 only.
            (ms < 253_402_300_800_000).then(|| {
                let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
                humantime::format_rfc3339_millis(at).to_string()
            })
        }
        _ => None,
    }
}

/// The string member `k` of `o`.
pub(crate) fn s<'i>(o: Val<'_, 'i>, k: &str) -> Option<&'i str> {
    get_str(o, k)
}

/// The integer member `k` of `o`, or 0.
pub(crate) fn n(o: Val<'_, '_>, k: &str) -> u64 {
    get(o, k).and_then(|x| x.as_u64()).unwrap_or(0)
}

/// The member `k` of `o` when it is an object.
pub(crate) fn object<'t, 'i>(o: Val<'t, 'i>, k: &str) -> Option<Val<'t, 'i>> {
    get(o, k).filter(|x| x.as_object().is_some())
}

/// `v` when it is a string.
pub(crate) fn string<'i>(v: Val<'_, 'i>) -> Option<&'i str> {
    str_of(v)
}

#[cfg(test)]
mod tests;
