//! The `--format pretty` sink: a live, append-only terminal view of a run for people. Each event
//! is written as it arrives (text as its deltas stream, never twice), tool calls with the
//! argument that matters and their results paired under them, subagent work attributed in a
//! gutter on every row, notices on one line, usage per turn and a final summary that agrees
//! with `run.end`. Untrusted text never reaches the terminal raw (see [`crate::view::text`]);
//! the only escape sequences written are SGR colors, and only when color is on.
//!
//! The events are read with a borrowed struct (no tree per event); a tool result is measured
//! and clipped while still escaped, so a result of megabytes costs a scan, not a copy.

mod notice;
mod style;
mod summary;
mod term;
mod tools;

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{self, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

pub use style::{ColorChoice, Thinking, use_color, utf8_locale, width};
use style::{Glyphs, Palette, Role};
use term::{Gutter, StreamKey, StreamStyle, Term};

use crate::envelope::kind;
use crate::envelope::{EventMeta, Events};
use crate::sink::{EventCtx, Sink};

/// How the view looks (decided by the command line from the flags, the environment and the
/// terminal: see [`PrettyOptions::resolve`]).
#[derive(Debug, Clone)]
pub struct PrettyOptions {
    /// Write SGR colors.
    pub color: bool,
    /// The width in cells.
    pub width: usize,
    /// ASCII glyphs only.
    pub ascii: bool,
    /// How much thinking to show.
    pub thinking: Thinking,
    /// Lines of a tool result to show (head and tail together).
    pub result_lines: usize,
    /// The prompt, when the command knows it (`spawn --prompt`): shown first.
    pub prompt: Option<String>,
}

impl Default for PrettyOptions {
    fn default() -> Self {
        PrettyOptions {
            color: false,
            width: 100,
            ascii: false,
            thinking: Thinking::Summary,
            result_lines: 6,
            prompt: None,
        }
    }
}

/// What the command line says about the view, before the terminal is asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--color`.
    pub color: ColorChoice,
    /// `--width`.
    pub width: Option<usize>,
    /// `--ascii`.
    pub ascii: bool,
    /// `--thinking`.
    pub thinking: Thinking,
    /// `--result-lines`.
    pub result_lines: Option<usize>,
}

impl PrettyOptions {
    /// The options `flags` give on a stdout that is a terminal (`tty`) of `terminal` columns
    /// (`None`: not a terminal, or unknown), with the environment read by `env`.
    pub fn resolve(
        flags: Flags,
        tty: bool,
        terminal: Option<usize>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> PrettyOptions {
        PrettyOptions {
            color: use_color(flags.color, tty, env),
            width: width(flags.width, terminal, env),
            ascii: flags.ascii || !utf8_locale(env),
            thinking: flags.thinking,
            result_lines: flags.result_lines.unwrap_or(6),
            prompt: None,
        }
    }
}

/// The fields of an envelope event the view reads (borrowed from the event's bytes).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Ev<'a> {
    #[serde(borrow)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    thinking: Option<&'a RawValue>,
    #[serde(borrow)]
    redacted: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    input_error: Option<&'a RawValue>,
    #[serde(borrow)]
    is_error: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    structured: Option<&'a RawValue>,
    #[serde(borrow)]
    outcome: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    errors: Option<&'a RawValue>,
    #[serde(borrow)]
    cost_usd: Option<&'a RawValue>,
    #[serde(borrow)]
    duration_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    duration_api_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    num_turns: Option<&'a RawValue>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    #[serde(borrow)]
    model: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow)]
    cli_version: Option<&'a RawValue>,
    #[serde(borrow)]
    permission_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    tools: Option<&'a RawValue>,
    #[serde(borrow)]
    mcp_servers: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    cause: Option<&'a RawValue>,
    #[serde(borrow)]
    terminal_seen: Option<&'a RawValue>,
    #[serde(borrow)]
    turns: Option<&'a RawValue>,
    #[serde(borrow)]
    exit_code: Option<&'a RawValue>,
    #[serde(borrow)]
    signal: Option<&'a RawValue>,
    #[serde(borrow)]
    reason: Option<&'a RawValue>,
    #[serde(borrow)]
    elapsed_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_results: Option<&'a RawValue>,
    #[serde(borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    detail: Option<&'a RawValue>,
    #[serde(borrow)]
    bytes: Option<&'a RawValue>,
    #[serde(borrow)]
    rule: Option<&'a RawValue>,
    #[serde(borrow)]
    enforced: Option<&'a RawValue>,
    #[serde(borrow)]
    quiet_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    #[serde(borrow)]
    attempt: Option<&'a RawValue>,
    #[serde(borrow)]
    max_retries: Option<&'a RawValue>,
    #[serde(borrow)]
    retry_delay_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    error_status: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    trigger: Option<&'a RawValue>,
    #[serde(borrow)]
    pre_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    description: Option<&'a RawValue>,
    #[serde(borrow)]
    subagent_type: Option<&'a RawValue>,
    #[serde(borrow)]
    summary: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_name: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    decision_reason: Option<&'a RawValue>,
    #[serde(borrow)]
    resets_at: Option<&'a RawValue>,
    #[serde(borrow)]
    rate_limit_type: Option<&'a RawValue>,
    #[serde(borrow)]
    utilization: Option<&'a RawValue>,
    #[serde(borrow)]
    original_model: Option<&'a RawValue>,
    #[serde(borrow)]
    fallback_model: Option<&'a RawValue>,
    #[serde(borrow)]
    replay: Option<&'a RawValue>,
    #[serde(borrow)]
    is_synthetic: Option<&'a RawValue>,
    #[serde(borrow)]
    block: Option<&'a RawValue>,
    #[serde(borrow)]
    hook_name: Option<&'a RawValue>,
    #[serde(borrow)]
    hook_event: Option<&'a RawValue>,
    #[serde(borrow)]
    level: Option<&'a RawValue>,
    #[serde(borrow)]
    title: Option<&'a RawValue>,
    #[serde(borrow)]
    last_tool_name: Option<&'a RawValue>,
    #[serde(borrow)]
    limit: Option<&'a RawValue>,
    #[serde(borrow)]
    count: Option<&'a RawValue>,
}

/// Untrusted `text` made safe for one row, line breaks shown with the glyph.
fn one_line(text: &str, g: &Glyphs) -> String {
    crate::view::text::sanitize_with(text, &format!(" {} ", g.newline), 2)
}

/// The members `T` names of a JSON object (all absent when it is not one, or does not fit).
fn members<'a, T: Deserialize<'a> + Default>(v: Option<&'a RawValue>) -> T {
    v.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// A JSON value as a string, when it is one.
fn s(v: Option<&RawValue>) -> Option<Cow<'_, str>> {
    v.and_then(crate::view::args::string)
}

/// A JSON value as a number, when it is one.
fn n(v: Option<&RawValue>) -> Option<f64> {
    v.and_then(|r| r.get().parse::<f64>().ok())
}

/// A JSON value as a whole non-negative number, when it is one.
fn u(v: Option<&RawValue>) -> Option<u64> {
    n(v).filter(|x| *x >= 0.0).map(|x| x as u64)
}

/// A JSON value as a boolean, when it is one.
fn b(v: Option<&RawValue>) -> Option<bool> {
    v.and_then(|r| r.get().parse().ok())
}

/// The pretty view.
pub struct Pretty<W: Write> {
    t: Term<W>,
    o: PrettyOptions,
    subs: tools::Subagents,
    calls: tools::Calls,
    tally: summary::Tally,
    /// Messages (parent, id, thinking) whose text or thinking was shown from deltas.
    streamed: HashSet<(Option<String>, String, bool)>,
    /// Text streamed without a message id since the last message start, per kind.
    unnamed: [String; 2],
    prompt_shown: bool,
}

impl<W: Write> Pretty<W> {
    /// A view over `w` (buffered here).
    pub fn new(w: W, o: PrettyOptions) -> Self {
        let g = if o.ascii {
            Glyphs::ASCII
        } else {
            Glyphs::UNICODE
        };
        Pretty {
            t: Term::new(w, o.width, Palette::new(o.color), g),
            subs: tools::Subagents::new(o.width),
            o,
            calls: tools::Calls::default(),
            tally: summary::Tally::default(),
            streamed: HashSet::new(),
            unnamed: Default::default(),
            prompt_shown: false,
        }
    }

    fn gutter(&self, e: &Ev<'_>) -> Gutter {
        self.subs.gutter(e.parent_tool_use_id.as_deref())
    }

    fn event_of(&mut self, meta: &EventMeta, e: &Ev<'_>) -> io::Result<()> {
        if !self.prompt_shown {
            self.prompt_shown = true;
            if let Some(p) = self.o.prompt.take() {
                self.prompt(&Gutter::default(), &p, false)?;
            }
        }
        match meta.kind {
            kind::TEXT_DELTA | kind::THINKING_DELTA => {
                self.delta(meta.kind == kind::THINKING_DELTA, e)
            }
            kind::TEXT | kind::THINKING => self.block(meta.kind == kind::THINKING, e),
            kind::MESSAGE_START => {
                self.unnamed = Default::default();
                Ok(())
            }
            kind::BLOCK_STOP | kind::MESSAGE_STOP => self.t.settle(),
            kind::TOOL_CALL | kind::TOOL_CALL_REVISED => self.tool_call(meta, e),
            kind::TOOL_RESULT => self.tool_result(e),
            kind::USER_TEXT => {
                let text = s(e.text).unwrap_or_default();
                let synthetic = b(e.is_synthetic) == Some(true);
                let g = self.gutter(e);
                self.prompt(&g, &text, synthetic)
            }
            kind::TURN_END => self.turn_end(e),
            kind::RUN_END => self.run_end(e),
            kind::USAGE => {
                let t = summary::Tokens::of(e.usage);
                self.subs.usage(e.parent_tool_use_id.as_deref(), &t);
                Ok(())
            }
            _ => self.notice(meta, e),
        }
    }

    /// Text or thinking as it streams.
    fn delta(&mut self, thinking: bool, e: &Ev<'_>) -> io::Result<()> {
        let raw = if thinking { e.thinking } else { e.text };
        let chunk = s(raw).unwrap_or_default();
        if chunk.is_empty() || (thinking && self.o.thinking == Thinking::Hide) {
            return Ok(());
        }
        let parent = e.parent_tool_use_id.as_deref().map(str::to_owned);
        match e.message_id.as_deref() {
            Some(m) => {
                self.streamed
                    .insert((parent.clone(), m.to_owned(), thinking));
            }
            None => self.unnamed[usize::from(thinking)].push_str(&chunk),
        }
        let key = StreamKey {
            parent,
            message: e.message_id.as_deref().map(str::to_owned),
            thinking,
        };
        let g = self.gutter(e);
        let style = self.stream_style(thinking);
        self.t.stream(&key, &g, &style, &chunk)
    }

    fn stream_style(&self, thinking: bool) -> StreamStyle {
        let g = &self.t.g;
        if thinking {
            StreamStyle {
                marker: format!("{} ", g.thinking),
                marker_role: Role::Thinking,
                role: Role::Thinking,
                one_row: self.o.thinking == Thinking::Summary,
            }
        } else {
            StreamStyle {
                marker: format!("{} ", g.text),
                marker_role: Role::Text,
                role: Role::Text,
                one_row: false,
            }
        }
    }

    /// A complete text or thinking block: shown unless its deltas already were.
    fn block(&mut self, thinking: bool, e: &Ev<'_>) -> io::Result<()> {
        let parent = e.parent_tool_use_id.as_deref().map(str::to_owned);
        if let Some(m) = e.message_id.as_deref()
            && self
                .streamed
                .contains(&(parent.clone(), m.to_owned(), thinking))
        {
            return Ok(());
        }
        if thinking && self.o.thinking == Thinking::Hide {
            return Ok(());
        }
        // The text of a failed API call: its `api.error` event shows it, as an error.
        if !thinking && e.error.is_some_and(|r| r.get() != "null") {
            return Ok(());
        }
        let raw = if thinking { e.thinking } else { e.text };
        let full = s(raw).unwrap_or_default();
        let mut body: &str = &full;
        let streamed = std::mem::take(&mut self.unnamed[usize::from(thinking)]);
        if e.message_id.is_none() && !streamed.is_empty() {
            if let Some(rest) = body.strip_prefix(streamed.as_str()) {
                body = rest;
            }
            if body.is_empty() {
                return Ok(());
            }
        }
        let g = self.gutter(e);
        if body.trim().is_empty() {
            if thinking {
                let why = if b(e.redacted) == Some(true) {
                    "redacted"
                } else {
                    "empty"
                };
                let label = format!("{} thinking ({why})", self.t.g.thinking);
                self.t.settle()?;
                return self.t.row(&g, 0, &[(Role::Thinking, &label)]);
            }
            return Ok(());
        }
        let key = StreamKey {
            parent,
            message: e.message_id.as_deref().map(str::to_owned),
            thinking,
        };
        self.t.settle()?;
        let style = self.stream_style(thinking);
        self.t.stream(&key, &g, &style, body)?;
        self.t.settle()
    }

    /// The prompt (or a subagent's prompt, a replayed or synthetic user message).
    fn prompt(&mut self, g: &Gutter, text: &str, synthetic: bool) -> io::Result<()> {
        let (role, label) = if synthetic {
            (Role::Dim, "(synthetic) ")
        } else {
            (Role::Prompt, "")
        };
        let lines = self.o.result_lines.max(2);
        let clip = crate::view::clip::clip(
            &[crate::view::clip::Source::Text(Cow::Borrowed(text))],
            lines,
            0,
            4 * self.t.width,
        );
        let marker = format!("{} {label}", self.t.g.prompt);
        for (i, line) in clip.head.iter().chain(clip.tail.iter()).enumerate() {
            let lead: &[(Role, &str)] = if i == 0 {
                &[(role, &marker)]
            } else {
                &[(role, "  ")]
            };
            self.t.untrusted_row(g, 0, lead, role, line)?;
        }
        if clip.omitted_lines > 0 {
            let more = tools::more(&self.t.g, clip.omitted_lines, clip.omitted_bytes);
            self.t.row(g, 2, &[(Role::Dim, &more)])?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for Pretty<W> {
    fn wants_time(&self) -> bool {
        false
    }

    fn keeps_history(&self) -> bool {
        true
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        if ctx.before_resume {
            // Rebuild what later events refer to (calls, subagents, totals), write nothing.
            if let Ok(e) = serde_json::from_slice::<Ev<'_>>(events.bytes(meta)) {
                match meta.kind {
                    kind::TOOL_CALL => {
                        self.calls.remember(meta, &e, &mut self.subs, &self.t);
                        if let Some(name) = s(e.name) {
                            let a = e.input.map(|i| crate::view::args::Args::parse(i.get()));
                            self.tally.call(&name, &a.unwrap_or_default());
                            if crate::view::tool::kind(&name) == crate::view::tool::Kind::Subagent {
                                self.tally.subagents += 1;
                            }
                        }
                    }
                    kind::TOOL_RESULT => self.calls.settle(&e, &mut self.tally),
                    kind::TURN_END => self.tally.turn(&e),
                    _ => {}
                }
            }
            return Ok(());
        }
        match serde_json::from_slice::<Ev<'_>>(events.bytes(meta)) {
            Ok(e) => self.event_of(meta, &e),
            Err(err) => {
                let msg = format!(
                    "{} event {} ({}) could not be shown: {err}",
                    self.t.g.warn, meta.seq, meta.kind
                );
                self.t.row(&Gutter::default(), 0, &[(Role::Warn, &msg)])
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.t.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.t.settle()?;
        self.t.flush()
    }
}
