//! The `--format pretty` sink: a live, append-only terminal view of a run for people. Each event
//! is written as it arrives (text as its deltas stream, never twice), tool calls with the
//! argument that matters and their results paired under them, subagent work attributed in a
//! gutter on every row, notices on one line, usage per turn and a final summary that agrees
//! with `run.end`. Untrusted text never reaches the terminal raw (see [`crate::view::text`]);
//! the only escape sequences written are SGR colors, and only when color is on.
//!
//! The events are read through the member index the pipeline builds once for every sink that
//! reads members ([`crate::json::fields`], no tree per event); a tool result is measured
//! and clipped while still escaped, so a result of megabytes costs a scan, not a copy.

mod notice;
mod style;
mod summary;
mod term;
mod tools;

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{self, Write};

pub use style::{ColorChoice, Thinking, use_color, utf8_locale, width};
use style::{Glyphs, Palette, Role};
use term::{Gutter, StreamKey, StreamStyle, Term};

use crate::envelope::kind;
use crate::envelope::{EventMeta, Events};
use crate::json::fields::{Fields, Index};
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

/// Untrusted `text` made safe for one row, line breaks shown with the glyph.
fn one_line(text: &str, g: &Glyphs) -> String {
    crate::view::text::sanitize_with(text, &format!(" {} ", g.newline), 2)
}

/// A JSON value as a string, when it is one.
fn s(v: Option<&[u8]>) -> Option<Cow<'_, str>> {
    v.and_then(crate::json::fields::string)
}

/// A JSON value as a number, when it is one.
fn n(v: Option<&[u8]>) -> Option<f64> {
    v.and_then(|r| std::str::from_utf8(r).ok()?.parse::<f64>().ok())
}

/// A JSON value as a whole non-negative number, when it is one.
fn u(v: Option<&[u8]>) -> Option<u64> {
    n(v).filter(|x| *x >= 0.0).map(|x| x as u64)
}

/// A JSON value as a boolean, when it is one.
fn b(v: Option<&[u8]>) -> Option<bool> {
    v.and_then(|r| std::str::from_utf8(r).ok()?.parse().ok())
}

/// A JSON value for one line of text: a string as its text, anything else as compact JSON.
fn display(v: &[u8]) -> Cow<'_, str> {
    s(Some(v)).unwrap_or(Cow::Borrowed(text(v)))
}

/// A JSON value's text (the events are UTF-8: an invalid slice reads as nothing).
fn text(v: &[u8]) -> &str {
    std::str::from_utf8(v).unwrap_or_default()
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
    /// The agent the session header named, when the run is another agent's (see
    /// [`crate::dialect`]).
    agent: Option<String>,
    /// Names of the unknown events shown so far (another agent's are shown once each).
    unknown_seen: HashSet<String>,
    /// The member index of an event when the pipeline gives none.
    index: Index,
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
            agent: None,
            unknown_seen: HashSet::new(),
            index: Index::default(),
        }
    }

    fn gutter(&self, e: &Fields<'_>) -> Gutter {
        self.subs.gutter(
            e.str("parent_tool_use_id").as_deref(),
            &self.t.pal,
            &self.t.g,
        )
    }

    fn event_of(&mut self, meta: &EventMeta, e: &Fields<'_>) -> io::Result<()> {
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
                let text = s(e.json("text")).unwrap_or_default();
                let synthetic = b(e.json("is_synthetic")) == Some(true);
                let g = self.gutter(e);
                self.prompt(&g, &text, synthetic)
            }
            kind::TURN_END => self.turn_end(e),
            kind::RUN_END => self.run_end(e),
            kind::USAGE => {
                let t = summary::Tokens::of(e.json("usage"));
                self.subs.usage(e.str("parent_tool_use_id").as_deref(), &t);
                Ok(())
            }
            _ => self.notice(meta, e),
        }
    }

    /// Text or thinking as it streams.
    fn delta(&mut self, thinking: bool, e: &Fields<'_>) -> io::Result<()> {
        let raw = if thinking {
            e.json("thinking")
        } else {
            e.json("text")
        };
        let chunk = s(raw).unwrap_or_default();
        if chunk.is_empty() || (thinking && self.o.thinking == Thinking::Hide) {
            return Ok(());
        }
        let parent = e.str("parent_tool_use_id").as_deref().map(str::to_owned);
        match e.str("message_id").as_deref() {
            Some(m) => {
                self.streamed
                    .insert((parent.clone(), m.to_owned(), thinking));
            }
            None => self.unnamed[usize::from(thinking)].push_str(&chunk),
        }
        let key = StreamKey {
            parent,
            message: e.str("message_id").as_deref().map(str::to_owned),
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
    fn block(&mut self, thinking: bool, e: &Fields<'_>) -> io::Result<()> {
        let parent = e.str("parent_tool_use_id").as_deref().map(str::to_owned);
        if let Some(m) = e.str("message_id").as_deref()
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
        if !thinking && e.json("error").is_some() {
            return Ok(());
        }
        let raw = if thinking {
            e.json("thinking")
        } else {
            e.json("text")
        };
        let full = s(raw).unwrap_or_default();
        let mut body: &str = &full;
        let streamed = std::mem::take(&mut self.unnamed[usize::from(thinking)]);
        if e.str("message_id").is_none() && !streamed.is_empty() {
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
                let why = if b(e.json("redacted")) == Some(true) {
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
            message: e.str("message_id").as_deref().map(str::to_owned),
            thinking,
        };
        self.t.settle()?;
        let style = self.stream_style(thinking);
        self.t.stream(&key, &g, &style, body)?;
        self.t.settle()
    }

    /// An event before the resume point: rebuild what later events refer to (calls,
    /// subagents, totals), write nothing.
    fn rebuild(&mut self, meta: &EventMeta, e: &Fields<'_>) {
        match meta.kind {
            kind::TOOL_CALL => {
                self.calls.remember(meta, e, &mut self.subs, &self.t);
                if let Some(name) = s(e.json("name")) {
                    let a = e
                        .json("input")
                        .map(|i| crate::view::args::Args::parse(text(i)));
                    let d = self.calls.dialect;
                    self.tally.call(d, &name, &a.unwrap_or_default());
                    if crate::view::tool::kind(d, &name) == crate::view::tool::Kind::Subagent {
                        self.tally.subagents += 1;
                    }
                }
            }
            kind::TOOL_RESULT => self.calls.settle(e, &mut self.tally),
            kind::TURN_END => self.tally.turn(e),
            _ => {}
        }
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
            crate::view::clip::Limits::lines(lines, 0, 4 * self.t.width),
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

    fn wants_fields(&self, _: &EventMeta) -> bool {
        true
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        let mut own = std::mem::take(&mut self.index);
        let res = match ctx.fields(events, meta, &mut own) {
            Some(e) if ctx.before_resume => {
                self.rebuild(meta, &e);
                Ok(())
            }
            Some(e) => self.event_of(meta, &e),
            None if ctx.before_resume => Ok(()),
            None => {
                let why = match serde_json::from_slice::<serde::de::IgnoredAny>(events.bytes(meta))
                {
                    Err(err) => err.to_string(),
                    Ok(_) => "not a JSON object".to_owned(),
                };
                let msg = format!(
                    "{} event {} ({}) could not be shown: {why}",
                    self.t.g.warn, meta.seq, meta.kind
                );
                self.t.row(&Gutter::default(), 0, &[(Role::Warn, &msg)])
            }
        };
        self.index = own;
        res
    }

    fn flush(&mut self) -> io::Result<()> {
        self.t.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.t.settle()?;
        self.t.flush()
    }
}
