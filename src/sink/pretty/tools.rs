//! Tool calls and their results in the pretty view: the call's headline, Edit/MultiEdit diffs,
//! todo lists; each result paired with its call (named again when other rows came between, as
//! with parallel calls), head and tail kept; and subagents: the label every row of their work
//! carries in the gutter, and their own duration and tokens when they end.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::value::RawValue;

use super::style::{Glyphs, Palette, Role};
use super::summary::{Change, Tokens, change_of};
use super::term::{Gutter, Term};
use super::{Pretty, b, one_line, s, text, u};
use crate::envelope::{EventMeta, kind as ev};
use crate::json::fields::{Fields, members_named};
use crate::view::args::{self, Args};
use crate::view::clip::{self, Limits, Source};
use crate::view::num::{Style::Terse, plural};
use crate::view::text;
use crate::view::tool::{self, Kind};

/// `… N more lines (M bytes) …`.
pub(super) fn more(g: &Glyphs, lines: u64, bytes: u64) -> String {
    format!(
        "{e} {} ({}) {e}",
        plural(lines, "more line", "more lines"),
        Terse.bytes(bytes),
        e = g.ellipsis
    )
}

/// Cells of a subagent's id that label its work when its call was not seen.
const ORPHAN_ID_CELLS: usize = 6;

/// A subagent: its label and gutter, when it started, what it used.
struct Sub {
    label: String,
    gutter: Gutter,
    tokens: Tokens,
    ended: bool,
    background: bool,
    /// What its `task.notification` said: duration, total tokens, tool uses.
    notified: Option<(Option<u64>, Option<u64>, Option<u64>)>,
}

/// The subagents of the run, by the tool use id of the call that started each.
#[derive(Default)]
pub(super) struct Subagents {
    by_id: HashMap<String, Sub>,
    per_type: HashMap<String, u32>,
    /// The view's width.
    pub(super) width: usize,
}

impl Subagents {
    /// No subagents yet, for rows `width` cells wide.
    pub(super) fn new(width: usize) -> Subagents {
        Subagents {
            width,
            ..Subagents::default()
        }
    }

    /// The gutter of rows inside `parent` (none on the main thread).
    pub(super) fn gutter(&self, parent: Option<&str>, pal: &Palette, g: &Glyphs) -> Gutter {
        match parent {
            None => Gutter::default(),
            Some(p) => match self.by_id.get(p) {
                Some(sub) => sub.gutter.clone(),
                // Work of a call this view did not see (a resumed or cut stream): labelled by
                // the last cells of its id, cut between whole characters.
                None => {
                    let id = one_line(p, g);
                    let tail = &id[text::fit_tail(&id, ORPHAN_ID_CELLS)..];
                    Gutter::default().nested(&format!("agent {tail}"), pal, g, self.width)
                }
            },
        }
    }

    fn start(&mut self, id: &str, ty: &str, parent: &Gutter, pal: &Palette, g: &Glyphs) {
        let n = self.per_type.entry(ty.to_owned()).or_insert(0);
        *n += 1;
        let base = text::truncate(&one_line(ty, g), 24, g.ellipsis);
        let label = if *n > 1 { format!("{base}#{n}") } else { base };
        let gutter = parent.nested(&label, pal, g, self.width);
        self.by_id.insert(
            id.to_owned(),
            Sub {
                label,
                gutter,
                tokens: Tokens::default(),
                ended: false,
                background: false,
                notified: None,
            },
        );
    }

    /// The gutter of a task event about the subagent started by call `id` (its own rows).
    pub(super) fn task_gutter(&self, id: Option<&str>) -> Option<Gutter> {
        id.and_then(|i| self.by_id.get(i)).map(|s| s.gutter.clone())
    }

    /// Add a usage record of work inside `parent` (and so of every subagent around it).
    pub(super) fn usage(&mut self, parent: Option<&str>, t: &Tokens) {
        if let Some(sub) = parent.and_then(|p| self.by_id.get_mut(p)) {
            sub.tokens.add(t);
        }
    }
}

/// A call waiting for its result.
struct Call {
    name: String,
    change: Option<Change>,
    summary: String,
    kind: Kind,
}

/// The calls of the run that have no result yet.
#[derive(Default)]
pub(super) struct Calls {
    open: HashMap<String, (Call, u64)>,
    /// Whose tool names the run's calls carry (from the session header's agent).
    pub(super) dialect: crate::tool::Dialect,
}

impl Calls {
    /// Register a call (before the resume point: nothing is written).
    pub(super) fn remember<W: Write>(
        &mut self,
        meta: &EventMeta,
        e: &Fields<'_>,
        subs: &mut Subagents,
        t: &Term<W>,
    ) {
        if meta.kind != ev::TOOL_CALL {
            return;
        }
        let id = e.str("tool_use_id");
        let (Some(id), Some(name)) = (id.as_deref(), s(e.json("name"))) else {
            return;
        };
        let a = e
            .json("input")
            .map(|i| Args::parse(text(i)))
            .unwrap_or_default();
        let d = self.dialect;
        let h = tool::headline(d, &name, &a);
        if tool::kind(d, &name) == Kind::Subagent {
            let ty = a.str("subagent_type").unwrap_or(Cow::Borrowed("agent"));
            let parent = subs.gutter(e.str("parent_tool_use_id").as_deref(), &t.pal, &t.g);
            subs.start(id, &ty, &parent, &t.pal, &t.g);
        }
        let mut call = call_of(d, &name, &h, &t.g);
        call.change = change_of(d, &name, &a);
        self.open.insert(id.to_owned(), (call, 0));
    }

    /// The result of a call before the resume point: its change counted if it succeeded.
    pub(super) fn settle(&mut self, e: &Fields<'_>, tally: &mut super::summary::Tally) {
        let call = e
            .str("tool_use_id")
            .as_deref()
            .and_then(|i| self.open.remove(i));
        let error = b(e.json("is_error")) == Some(true);
        let name = call
            .as_ref()
            .map(|(c, _)| c.name.clone())
            .or_else(|| s(e.json("name")).map(Cow::into_owned));
        tally.result(name.as_deref().unwrap_or("(unpaired)"), error);
        if let Some(c) = call.and_then(|(c, _)| c.change).filter(|_| !error) {
            tally.touch(c);
        }
    }
}

fn call_of(d: crate::tool::Dialect, name: &str, h: &tool::Headline, g: &Glyphs) -> Call {
    let arg = text::truncate(&one_line(&h.arg, g), 60, g.ellipsis);
    Call {
        name: name.to_owned(),
        change: None,
        summary: format!("{} {arg}", one_line(&h.tool, g)),
        kind: tool::kind(d, name),
    }
}

/// The lines of a result's `content`: a string, or the blocks of an array (text blocks as
/// text, others in one line naming them).
fn sources(content: Option<&[u8]>) -> Vec<Source<'_>> {
    #[derive(serde::Deserialize)]
    struct Block<'a> {
        #[serde(borrow, rename = "type")]
        ty: Option<Cow<'a, str>>,
        #[serde(borrow)]
        text: Option<&'a RawValue>,
        #[serde(borrow)]
        source: Option<&'a RawValue>,
    }
    let Some(c) = content.map(text) else {
        return Vec::new();
    };
    if c.len() >= 2 && c.starts_with('"') {
        return vec![Source::Json(&c[1..c.len() - 1])];
    }
    let Ok(blocks) = serde_json::from_str::<Vec<Block<'_>>>(c) else {
        return match c {
            "null" => Vec::new(),
            other => vec![Source::Text(Cow::Borrowed(other))],
        };
    };
    blocks
        .into_iter()
        .map(|bl| match bl.text.and_then(args::escaped) {
            Some(raw) => Source::Json(raw),
            None => {
                let ty = bl.ty.unwrap_or(Cow::Borrowed("block"));
                let what = bl.source.map(|s| blob(s.get())).unwrap_or_default();
                Source::Text(Cow::Owned(format!("[{ty}{what}]")))
            }
        })
        .collect()
}

/// ` image/png 12 KB` for an (elided) image or document source.
fn blob(src: &str) -> String {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Src {
        media_type: Option<String>,
        bytes: Option<u64>,
    }
    let s: Src = serde_json::from_str(src).unwrap_or_default();
    let mut out = String::new();
    if let Some(m) = s.media_type {
        out.push(' ');
        out.push_str(&m);
    }
    if let Some(n) = s.bytes {
        out.push(' ');
        out.push_str(&Terse.bytes(n));
    }
    out
}

impl<W: Write> Pretty<W> {
    pub(super) fn tool_call(&mut self, meta: &EventMeta, e: &Fields<'_>) -> io::Result<()> {
        let name = s(e.json("name"))
            .map(Cow::into_owned)
            .unwrap_or_else(|| "(unnamed tool)".into());
        let a = e
            .json("input")
            .map(|i| Args::parse(text(i)))
            .unwrap_or_default();
        let d = self.calls.dialect;
        let mut h = tool::headline(d, &name, &a);
        if e.json("input").is_none_or(|i| text(i) == "null")
            && let Some(why) = s(e.json("input_error"))
        {
            h.detail.push(format!("input did not parse: {why}"));
        }
        let g = self.gutter(e);
        let revised = meta.kind == ev::TOOL_CALL_REVISED;
        let glyph = format!("{} ", self.t.g.call);
        let tool_name = one_line(&h.tool, &self.t.g);
        let arg = one_line(&h.arg, &self.t.g);
        let mut detail = String::new();
        for d in &h.detail {
            detail.push_str(&format!(" {} {}", self.t.g.dot, one_line(d, &self.t.g)));
        }
        let lead = if revised { "revised " } else { "" };
        self.t.row(
            &g,
            0,
            &[
                (Role::Tool, &glyph),
                (Role::Dim, lead),
                (Role::Tool, &tool_name),
                (Role::Text, " "),
                (Role::Arg, &arg),
                (Role::Dim, &detail),
            ],
        )?;
        let k = tool::kind(d, &name);
        match k {
            Kind::Edit | Kind::MultiEdit => self.diffs(&g, &name, &a)?,
            Kind::Todo => self.todos(&g, &a)?,
            _ => {}
        }
        if revised {
            return Ok(());
        }
        self.tally.call(d, &name, &a);
        let id = e.str("tool_use_id");
        let Some(id) = id.as_deref() else {
            return Ok(());
        };
        if k == Kind::Subagent {
            let ty = a.str("subagent_type").unwrap_or(Cow::Borrowed("agent"));
            self.subs.start(id, &ty, &g, &self.t.pal, &self.t.g);
            self.tally.subagents += 1;
        }
        let mut call = call_of(d, &name, &h, &self.t.g);
        call.change = change_of(d, &name, &a);
        self.calls.open.insert(id.to_owned(), (call, self.t.rows()));
        Ok(())
    }

    fn diffs(&mut self, g: &Gutter, name: &str, a: &Args<'_>) -> io::Result<()> {
        use crate::view::diff::{Line, diff};
        let cap = (self.o.result_lines * 3).max(8);
        let mut shown = 0usize;
        let mut left = 0u64;
        for (old, new) in crate::view::diff::replacements(self.calls.dialect, name, a) {
            let d = diff(&old, &new, 2);
            for line in d.lines {
                if shown >= cap {
                    left += 1;
                    continue;
                }
                shown += 1;
                let (role, mark, body) = match &line {
                    Line::Hunk {
                        old_start,
                        old_len,
                        new_start,
                        new_len,
                    } => {
                        let h = format!("@@ -{old_start},{old_len} +{new_start},{new_len} @@");
                        self.t.row(g, 4, &[(Role::Hunk, &h)])?;
                        continue;
                    }
                    Line::Context(t) => (Role::Dim, "  ", t),
                    Line::Removed(t) => (Role::Removed, "- ", t),
                    Line::Added(t) => (Role::Added, "+ ", t),
                };
                self.t.untrusted_row(g, 4, &[(role, mark)], role, body)?;
            }
        }
        if left > 0 {
            let more = format!(
                "{e} {} {e}",
                plural(left, "more diff line", "more diff lines"),
                e = self.t.g.ellipsis
            );
            self.t.row(g, 4, &[(Role::Dim, &more)])?;
        }
        Ok(())
    }

    fn todos(&mut self, g: &Gutter, a: &Args<'_>) -> io::Result<()> {
        for t in tool::todos(a) {
            let (i, role) = match t.status.as_str() {
                "completed" => (2, Role::Ok),
                "in_progress" => (1, Role::Warn),
                _ => (0, Role::Dim),
            };
            let mark = format!("{} ", self.t.g.todo[i]);
            self.t
                .untrusted_row(g, 4, &[(role, &mark)], Role::Text, &t.content)?;
        }
        Ok(())
    }

    pub(super) fn tool_result(&mut self, e: &Fields<'_>) -> io::Result<()> {
        let id = e.str("tool_use_id");
        let id = id.as_deref();
        let call = id.and_then(|i| self.calls.open.remove(i));
        let g = self.gutter(e);
        let name = match &call {
            Some((c, _)) => c.name.clone(),
            None => s(e.json("name"))
                .map(Cow::into_owned)
                .unwrap_or_else(|| "(unpaired)".into()),
        };
        let error = b(e.json("is_error")) == Some(true);
        self.tally.result(&name, error);
        if let Some(c) = call
            .as_ref()
            .and_then(|(c, _)| c.change.clone())
            .filter(|_| !error)
        {
            self.tally.touch(c);
        }
        let adjacent = call
            .as_ref()
            .is_some_and(|(_, rows)| *rows == self.t.rows());
        let glyph = format!("  {} ", self.t.g.result);
        // Named again when other rows came between the call and its result.
        let named = match &call {
            Some((c, _)) if !adjacent => format!("{} {} ", c.summary, self.t.g.dot),
            None => format!("{} {} ", one_line(&name, &self.t.g), self.t.g.dot),
            _ => String::new(),
        };
        let kind = call
            .as_ref()
            .map_or(tool::kind(self.calls.dialect, &name), |(c, _)| c.kind);
        if kind == Kind::Subagent && !error {
            return self.subagent_end(&g, e, id, &glyph, &named);
        }
        let src = sources(e.json("content"));
        let r = self.o.result_lines;
        let (head, tail) = match kind {
            _ if error => (r - r / 3, r / 3),
            Kind::Read => (0, 0),
            Kind::Edit | Kind::MultiEdit | Kind::Write | Kind::Notebook | Kind::Todo => (1, 0),
            _ => (r - r / 3, r / 3),
        };
        let c = clip::clip(&src, Limits::lines(head, tail, 4 * self.t.width));
        if kind == Kind::Todo && !error {
            return Ok(());
        }
        let role = if error { Role::Error } else { Role::Dim };
        let mut lead = vec![(role, glyph.as_str()), (Role::Dim, named.as_str())];
        let err = format!("{} error ", self.t.g.error);
        if error {
            lead.push((Role::Error, &err));
        }
        // A command's non-zero exit status, where its agent states it (some say success).
        let exit = e
            .i64("exit_code")
            .filter(|c| *c != 0)
            .map(|c| format!("exit {c} "));
        if let Some(x) = &exit {
            lead.push((if error { Role::Error } else { Role::Warn }, x));
        }
        let body_role = if error { Role::Error } else { Role::Text };
        if c.lines == 1 && c.head.len() == 1 {
            return self.t.untrusted_row(&g, 0, &lead, body_role, &c.head[0]);
        }
        let size = match c.lines {
            0 => "(no output)".to_owned(),
            n => format!("{} ({})", plural(n, "line", "lines"), Terse.bytes(c.bytes)),
        };
        lead.push((Role::Dim, &size));
        self.t.row(&g, 0, &lead)?;
        self.body(&g, &c, body_role)
    }

    /// The kept lines of a result under its row, with the count of those left out between
    /// them (nothing when no line is kept: the row's size says it).
    fn body(&mut self, g: &Gutter, c: &clip::Clip, role: Role) -> io::Result<()> {
        for line in &c.head {
            self.t.untrusted_row(g, 4, &[], role, line)?;
        }
        if c.omitted_lines > 0 && !(c.head.is_empty() && c.tail.is_empty()) {
            let m = more(&self.t.g, c.omitted_lines, c.omitted_bytes);
            self.t.row(g, 4, &[(Role::Dim, &m)])?;
        }
        for line in &c.tail {
            self.t.untrusted_row(g, 4, &[], role, line)?;
        }
        Ok(())
    }

    fn subagent_end(
        &mut self,
        g: &Gutter,
        e: &Fields<'_>,
        id: Option<&str>,
        glyph: &str,
        named: &str,
    ) -> io::Result<()> {
        let [
            status,
            total_duration_ms,
            total_tokens,
            total_tool_use_count,
        ] = e.json("structured").map_or([None; 4], |r| {
            members_named(
                r,
                [
                    "status",
                    "totalDurationMs",
                    "totalTokens",
                    "totalToolUseCount",
                ],
            )
        });
        if s(status).as_deref() == Some("async_launched") {
            let sub = id.and_then(|i| self.subs.by_id.get_mut(i));
            let label = sub.map_or("agent".into(), |s| {
                s.background = true;
                s.label.clone()
            });
            let msg = format!("{label} runs in the background");
            return self.t.row(
                g,
                0,
                &[(Role::Dim, glyph), (Role::Dim, named), (Role::Label, &msg)],
            );
        }
        let said = id
            .and_then(|i| self.subs.by_id.get(i))
            .and_then(|s| s.notified)
            .unwrap_or_default();
        // Only what the CLI reported: the view's own clock is the reading time, not the run's.
        let ms = u(total_duration_ms).or(said.0);
        let tools = u(total_tool_use_count).or(said.2);
        self.sub_done(g, id, ms, u(total_tokens).or(said.1), tools, glyph, named)?;
        let src = sources(e.json("content"));
        let r = self.o.result_lines;
        let c = clip::clip(&src, Limits::lines(r - r / 3, r / 3, 4 * self.t.width));
        self.body(g, &c, Role::Text)
    }

    /// The row that ends a subagent: its label, duration, tokens, tool uses and cost.
    #[allow(clippy::too_many_arguments)]
    fn sub_done(
        &mut self,
        g: &Gutter,
        id: Option<&str>,
        ms: Option<u64>,
        total: Option<u64>,
        tools: Option<u64>,
        glyph: &str,
        named: &str,
    ) -> io::Result<()> {
        let sub = id.and_then(|i| self.subs.by_id.get_mut(i));
        let (label, tokens) = match sub {
            Some(s) => {
                s.ended = true;
                (s.label.clone(), s.tokens)
            }
            None => ("agent".to_owned(), Tokens::default()),
        };
        let mut parts = vec![if named.is_empty() {
            format!("{label} done")
        } else {
            "done".to_owned()
        }];
        parts.extend(ms.map(|m| Terse.duration_ms(m)));
        if tokens.any() {
            parts.extend(tokens.parts());
        } else if let Some(t) = total {
            parts.push(format!("{} tokens", Terse.tokens(t)));
        }
        parts.extend(tools.map(|t| plural(t, "tool use", "tool uses")));
        parts.push("cost n/a".into());
        let lead = format!("{glyph}{named}");
        let sep = format!(" {} ", self.t.g.dot);
        self.t.packed(g, 0, Role::Label, &lead, &parts, &sep)
    }

    /// `task.notification`: a background subagent finished (or any task reports its end).
    pub(super) fn task_done(&mut self, e: &Fields<'_>) -> io::Result<bool> {
        let id = e.str("tool_use_id");
        let Some(id) = id.as_deref() else {
            return Ok(false);
        };
        match self.subs.by_id.get(id) {
            None => return Ok(false),
            Some(s) if s.ended => return Ok(true),
            Some(_) => {}
        }
        let [total_tokens, tool_uses, duration_ms] = e.json("usage").map_or([None; 3], |r| {
            members_named(r, ["total_tokens", "tool_uses", "duration_ms"])
        });
        let said = (u(duration_ms), u(total_tokens), u(tool_uses));
        if let Some(sub) = self.subs.by_id.get_mut(id)
            && !sub.background
        {
            // A foreground subagent ends with its call's result, which follows.
            sub.notified = Some(said);
            return Ok(true);
        }
        let g = self.gutter(e);
        let status = s(e.json("status")).unwrap_or(Cow::Borrowed("done"));
        let glyph = format!("  {} ", self.t.g.result);
        let named = format!("{} {} ", one_line(&status, &self.t.g), self.t.g.dot);
        self.sub_done(&g, Some(id), said.0, said.1, said.2, &glyph, &named)?;
        Ok(true)
    }
}
