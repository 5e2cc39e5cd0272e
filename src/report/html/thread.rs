//! The transcript: turns of the main thread, and inside them every item in stream order;
//! a tool call is a `<details>` with its input, its subagent's thread (nested, with its own
//! totals) and its paired result, previewed head and tail with the full body kept compressed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::super::blob::Blobs;
use super::super::escape::{attr, html, text};
use super::super::markdown;
use super::super::model::{Call, Item, Run, Subtotals, Tokens};
use crate::tool::Head;
use crate::view::args::Args;
use crate::view::clip::{Limits, Source, clip};
use crate::view::diff::Diff;
use crate::view::num::{self, Style::Roomy};
use crate::view::text::clip_line;
use crate::view::tool::{self, Kind};

/// Tool output and long inputs: the first 8 and last 4 lines, at most 1.2 KB in all.
const BODY: Limits = Limits {
    head: 8,
    tail: 4,
    max_line: usize::MAX,
    budget: 1200,
};
/// Subagents nested deeper than this are drawn after the turns (bounded recursion whatever
/// the input's `parent_tool_use_id` chains).
const MAX_DEPTH: usize = 16;

/// Writes HTML for one run.
pub struct W<'r> {
    /// The page so far.
    pub out: String,
    /// Full bodies.
    pub blobs: Blobs,
    /// The run.
    pub run: &'r Run,
    /// Tool calls open by default (small runs).
    pub open: bool,
    /// Subagent threads already drawn (each once, even if ids repeat).
    drawn: HashSet<String>,
    /// Subagent nesting depth being drawn.
    depth: usize,
    /// Every subagent thread's totals.
    pub subs: HashMap<&'r str, Subtotals>,
}

impl<'r> W<'r> {
    /// A writer for `run`.
    pub fn new(run: &'r Run, open: bool) -> Self {
        W {
            out: String::with_capacity(1 << 16),
            blobs: Blobs::default(),
            run,
            open,
            drawn: HashSet::new(),
            depth: 0,
            subs: run.all_subtotals(),
        }
    }

    /// Push raw markup (never data).
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Push text, escaped.
    pub fn text(&mut self, s: &str) {
        text(&mut self.out, s);
    }

    /// Push an attribute value, escaped (quotes too).
    pub fn attr(&mut self, s: &str) {
        attr(&mut self.out, s);
    }

    /// The transcript section: the main thread by turn, then subagent threads whose call never
    /// appeared.
    pub fn transcript(&mut self) {
        self.raw("<section id=\"transcript\"><h2>Transcript</h2>\n");
        let run = self.run;
        let mut turn = 1;
        let mut start = 0;
        for (i, it) in run.main.iter().enumerate() {
            let last = i + 1 == run.main.len();
            if matches!(it, Item::TurnEnd(_)) || last {
                self.turn(turn, &run.main[start..=i]);
                turn += 1;
                start = i + 1;
            }
        }
        if run.main.is_empty() {
            self.raw("<p class=\"empty\">No events in the main thread.</p>");
        }
        // Threads not drawn under their call: the call is not in the input, sits in a thread
        // that is itself not drawn, or is nested deeper than MAX_DEPTH. Each pass draws what is
        // left (a pass can leave deeper threads for the next).
        loop {
            let mut progress = false;
            for (t, (id, items)) in run.threads.iter().enumerate() {
                if !self.drawn.insert(id.clone()) {
                    continue;
                }
                progress = true;
                let why = if run.call_index.contains_key(id) {
                    "Subagent output of call"
                } else {
                    "Subagent output for a call not in the input:"
                };
                self.raw(&format!("<section class=\"turn orphan\" id=\"thread-{t}\"><h3 class=\"turnh\">{why} <code>"));
                self.text(id);
                self.raw("</code></h3>");
                self.items(items);
                self.raw("</section>\n");
            }
            if !progress {
                break;
            }
        }
        self.raw("</section>\n");
    }

    fn turn(&mut self, n: usize, items: &[Item]) {
        self.raw(&format!("<section class=\"turn\" id=\"turn-{n}\"><h3 class=\"turnh\"><a href=\"#turn-{n}\">Turn {n}</a></h3>\n"));
        self.items(items);
        self.raw("</section>\n");
    }

    /// Every item of a thread.
    pub fn items(&mut self, items: &[Item]) {
        let mut last_text: Option<&str> = None;
        for it in items {
            match it {
                Item::Text { seq, text } => {
                    self.raw(&format!(
                        "<div class=\"ev text\" id=\"seq-{seq}\" data-k=\"text\"><div class=\"md\">"
                    ));
                    markdown::render(&mut self.out, text);
                    self.raw("</div></div>\n");
                    last_text = Some(text);
                }
                Item::Thinking {
                    seq,
                    text,
                    redacted,
                } => self.thinking(*seq, text.as_deref(), *redacted),
                Item::User {
                    seq,
                    text,
                    synthetic,
                } => {
                    let label = if *synthetic {
                        "user (synthetic)"
                    } else {
                        "user"
                    };
                    self.raw(&format!("<div class=\"ev user\" id=\"seq-{seq}\" data-k=\"user\"><div class=\"lbl\">{label}</div>"));
                    self.body(text, "md-pre");
                    self.raw("</div>\n");
                }
                Item::Call(i) => self.call(*i),
                Item::Usage(i) => self.usage(*i),
                Item::Notice(n) => {
                    let sym = match n.level.class() {
                        "error" => "✖",
                        "warn" => "⚠",
                        _ => "ℹ",
                    };
                    self.raw(&format!(
                        "<div class=\"ev notice {c}\" id=\"seq-{s}\" data-k=\"notice\"><span class=\"sym\">{sym}</span> <span class=\"nk\">",
                        c = n.level.class(),
                        s = n.seq
                    ));
                    self.text(&n.kind);
                    self.raw("</span> ");
                    if n.text.len() > 400 {
                        self.body(&n.text, "");
                    } else {
                        self.text(&n.text);
                    }
                    self.raw("</div>\n");
                }
                Item::TurnEnd(i) => self.turn_end(*i, last_text),
                Item::Init(i) => {
                    let init = &self.run.inits[*i];
                    self.raw(&format!(
                        "<div class=\"ev init\" id=\"seq-{}\" data-k=\"init\">session",
                        init.seq
                    ));
                    for (k, v) in [
                        ("model", &init.model),
                        ("cwd", &init.cwd),
                        ("CLI", &init.cli_version),
                        ("permissions", &init.permission_mode),
                    ] {
                        if let Some(v) = v {
                            self.raw(&format!(" · {k} <code>"));
                            self.text(&clip_line(v, 120));
                            self.raw("</code>");
                        }
                    }
                    self.raw(&format!(" · {} tools</div>\n", init.tools));
                }
            }
        }
    }

    fn thinking(&mut self, seq: u64, t: Option<&str>, redacted: bool) {
        self.raw(&format!("<details class=\"ev thinking\" id=\"seq-{seq}\" data-k=\"thinking\"><summary><span class=\"lbl\">thinking</span> "));
        match t {
            _ if redacted => self.raw("<i>(redacted)</i></summary>"),
            Some(t) if !t.trim().is_empty() => {
                self.text(&clip_line(t.trim().lines().next().unwrap_or(""), 160));
                self.raw("</summary><div class=\"md\">");
                markdown::render(&mut self.out, t);
                self.raw("</div>");
            }
            _ => self.raw("<i>(empty)</i></summary>"),
        }
        self.raw("</details>\n");
    }

    fn usage(&mut self, i: usize) {
        let u = &self.run.usages[i];
        self.raw(&format!(
            "<div class=\"ev usage\" id=\"seq-{}\" data-k=\"usage\">",
            u.seq
        ));
        if let Some(m) = &u.model {
            self.text(m);
            self.raw(" · ");
        }
        self.raw(&tokens(&u.tokens));
        if let Some(r) = &u.stop_reason {
            self.raw(" · stop ");
            self.text(r);
        }
        if u.provisional {
            self.raw(" · provisional");
        }
        self.raw("</div>\n");
    }

    fn turn_end(&mut self, i: usize, last_text: Option<&str>) {
        let t = &self.run.turn_ends[i];
        let ok = !t.is_error && t.outcome == "success";
        self.raw(&format!(
            "<div class=\"ev turnend {}\" id=\"seq-{}\" data-k=\"result\"><div class=\"tl\">{} ",
            if ok { "ok" } else { "bad" },
            t.seq,
            if ok { "✓" } else { "✖" }
        ));
        self.text(&t.outcome);
        if let Some(d) = t.duration_ms {
            self.raw(&format!(" · {}", Roomy.duration_ms(d)));
        }
        if let Some(d) = t.duration_api_ms {
            self.raw(&format!(" (API {})", Roomy.duration_ms(d)));
        }
        if let Some(n) = t.num_turns {
            self.raw(&format!(" · {}", num::plural(n, "API turn", "API turns")));
        }
        self.raw(&format!(
            " · {} · {}",
            tokens(&t.tokens),
            t.cost_usd.map_or("n/a".into(), |c| Roomy.usd(c))
        ));
        if t.denials > 0 {
            self.raw(&format!(
                " · {}",
                num::plural(t.denials as u64, "permission denial", "permission denials")
            ));
        }
        self.raw("</div>");
        for e in &t.errors {
            self.raw("<div class=\"err\">");
            self.text(e);
            self.raw("</div>");
        }
        match (&t.result, last_text) {
            (Some(r), Some(l)) if r.trim() == l.trim() => {
                self.raw("<div class=\"dim\">result: the last message above</div>")
            }
            (Some(r), _) if !r.is_empty() => {
                self.raw("<div class=\"md\">");
                markdown::render(&mut self.out, r);
                self.raw("</div>");
            }
            _ => {}
        }
        self.raw("</div>\n");
    }

    fn call(&mut self, i: usize) {
        let run = self.run;
        let c = &run.calls[i];
        let edits = c.edits();
        let sub =
            c.id.as_deref()
                .and_then(|id| run.thread(id).map(|t| (id, t)));
        let mut cls = String::from("ev call");
        if c.failed() {
            cls.push_str(" err");
        }
        if sub.is_some() {
            cls.push_str(" hassub");
        }
        self.raw(&format!(
            "<details class=\"{cls}\" id=\"seq-{}\" data-k=\"tool\" data-tool=\"",
            c.seq
        ));
        self.attr(&c.name);
        self.raw(if self.open { "\" open>" } else { "\">" });
        self.raw("<summary><span class=\"tn\">");
        let (name, line) = headline(c, 160);
        self.text(&name);
        self.raw("</span> <span class=\"hl\">");
        self.text(&line);
        self.raw("</span><span class=\"cm\">");
        self.raw(&call_meta(c, edits.as_ref().map(|e| &e.1[..])));
        self.raw("</span></summary><div class=\"cb\">");
        if !c.orphan {
            self.input(c, edits.as_ref().map(|e| &e.1[..]));
        } else {
            self.raw("<div class=\"dim\">no tool call with this id in the input</div>");
        }
        if let Some((id, items)) = sub {
            if self.depth >= MAX_DEPTH {
                let t = run.thread_index.get(id).copied().unwrap_or_default();
                self.raw(&format!(
                    "<div class=\"dim\">subagent nested too deep to draw here: <a href=\"#thread-{t}\">its thread, below</a></div>"
                ));
            } else if self.drawn.insert(id.to_owned()) {
                self.depth += 1;
                self.subagent(id, items, c);
                self.depth -= 1;
            }
        }
        match &c.result {
            Some(r) => {
                let cls = if r.is_error { "res err" } else { "res" };
                if c.orphan {
                    self.raw(&format!("<div class=\"{cls}\">"));
                } else {
                    self.raw(&format!("<div class=\"{cls}\" id=\"seq-{}\">", r.seq));
                }
                let lines = r.body.lines().count();
                self.raw(&format!(
                    "<div class=\"rl\">{} · {} · {}</div>",
                    if r.is_error { "error" } else { "result" },
                    num::plural(lines as u64, "line", "lines"),
                    Roomy.bytes(r.body.len() as u64)
                ));
                self.body(&r.body, "");
                self.raw("</div>");
            }
            None => self.raw("<div class=\"res none\">no result</div>"),
        }
        self.raw("</div></details>\n");
    }

    fn input(&mut self, c: &Call, edits: Option<&[Diff]>) {
        if let Some(e) = &c.input_error {
            self.raw("<div class=\"err\">input did not parse: ");
            self.text(e);
            self.raw("</div>");
        }
        let get = |k: &str| c.input.get(k).and_then(Value::as_str);
        let kind = tool::kind(c.dialect, &c.name);
        let shell = crate::tool::head(c.dialect, &c.name) == Head::Shell;
        match (kind, edits) {
            _ if shell && get("command").is_some() => {
                if let Some(d) = get("description") {
                    self.raw("<div class=\"dim\">");
                    self.text(d);
                    self.raw("</div>");
                }
                self.raw("<pre class=\"in\">$ ");
                self.text(get("command").unwrap_or(""));
                self.raw("</pre>");
            }
            (Kind::Write, Some([d])) => {
                self.raw(&format!(
                    "<div class=\"dim\">+{} (written)</div>",
                    num::plural(d.added, "line", "lines")
                ));
                self.body(get("content").unwrap_or(""), "in");
            }
            (_, Some(diffs)) => {
                // The diffs themselves are in the Changes section (once per report).
                let a: u64 = diffs.iter().map(|d| d.added).sum();
                let r: u64 = diffs.iter().map(|d| d.removed).sum();
                self.raw(&format!(
                    "<div class=\"dim\">{} edit{} · <span class=\"a\">+{a}</span> <span class=\"d\">−{r}</span> · <a href=\"#chg-{}\">diff in Changes</a></div>",
                    diffs.len(),
                    if diffs.len() == 1 { "" } else { "s" },
                    c.seq
                ));
            }
            (Kind::Todo, _) if c.input.get("todos").is_some_and(Value::is_array) => {
                self.raw("<ul class=\"todo\">");
                for t in c.input["todos"].as_array().into_iter().flatten() {
                    let mark = match t.get("status").and_then(Value::as_str) {
                        Some("completed") => "☑",
                        Some("in_progress") => "◐",
                        _ => "☐",
                    };
                    self.raw(&format!("<li>{mark} "));
                    self.text(t.get("content").and_then(Value::as_str).unwrap_or(""));
                    self.raw("</li>");
                }
                self.raw("</ul>");
            }
            (Kind::Subagent, _) if get("prompt").is_some() => {
                self.raw("<div class=\"in md\">");
                markdown::render(&mut self.out, get("prompt").unwrap_or(""));
                self.raw("</div>");
            }
            _ if c.input.is_null() || said(c) => {}
            _ if c.input.as_object().is_some_and(|o| o.is_empty()) => {}
            _ => {
                let json = serde_json::to_string_pretty(&c.input).unwrap_or_default();
                self.body(&json, "in");
            }
        }
        for r in &c.revised {
            self.raw("<div class=\"dim\">revised input:</div>");
            let json = serde_json::to_string_pretty(r).unwrap_or_default();
            self.body(&json, "in");
        }
    }

    fn subagent(&mut self, id: &str, items: &[Item], c: &Call) {
        let run = self.run;
        let t = self.subs.get(id).copied().unwrap_or_default();
        let task = run.tasks.get(id);
        self.raw("<details class=\"sub\"");
        self.raw(if self.open { " open>" } else { ">" });
        self.raw("<summary><span class=\"lbl\">subagent</span> ");
        if let (Some(k), _) = run.subagent_label(c) {
            self.raw("<b>");
            self.text(&clip_line(k, 60));
            self.raw("</b> ");
        }
        let mut meta = format!("{} call{}", t.calls, if t.calls == 1 { "" } else { "s" });
        if t.errors > 0 {
            meta.push_str(&format!(", {} failed", t.errors));
        }
        meta.push_str(&format!(
            " · {} message{} · {}",
            t.messages,
            if t.messages == 1 { "" } else { "s" },
            tokens(&t.tokens)
        ));
        if let Some(d) = c.duration_us() {
            meta.push_str(&format!(" · {}", Roomy.duration_ms((d / 1000) as u64)));
        }
        self.raw(&format!("<span class=\"cm\">{meta}</span>"));
        if let Some(s) = task.and_then(|t| t.status.as_deref()) {
            self.raw(" · ");
            self.text(&clip_line(s, 60));
        }
        self.raw("</summary><div class=\"subb\">");
        self.items(items);
        if let Some(s) = task.and_then(|t| t.summary.as_deref()) {
            self.raw("<div class=\"dim\">task summary: ");
            self.text(s);
            self.raw("</div>");
        }
        self.raw("</div></details>");
    }

    /// A long text: head and tail shown, the middle counted, the whole kept compressed.
    pub fn body(&mut self, s: &str, class: &str) {
        let c = clip(&[Source::Text(Cow::Borrowed(s))], BODY);
        let cut = c.omitted_bytes > 0;
        let open_pre = if class.is_empty() {
            "<pre>".to_owned()
        } else {
            format!("<pre class=\"{class}\">")
        };
        self.raw("<div class=\"body\">");
        self.raw(&open_pre);
        let head = if cut {
            Cow::Owned(c.head_text())
        } else {
            Cow::Borrowed(s)
        };
        self.text(&head);
        self.raw("</pre>");
        if cut {
            self.raw(&format!(
                "<div class=\"more\">… {} ({}) …</div>{open_pre}",
                num::plural(c.omitted_lines, "more line", "more lines"),
                Roomy.bytes(c.omitted_bytes)
            ));
            self.text(&c.tail_text());
            self.raw("</pre>");
            let id = self.blobs.add(s);
            self.raw(&format!(
                "<button type=\"button\" class=\"full\" data-blob=\"{id}\" hidden>show full body ({})</button>",
                Roomy.bytes(s.len() as u64)
            ));
        }
        self.raw("</div>");
    }
}

/// A call's input as [`Args`] need it (JSON text).
fn input_json(c: &Call) -> String {
    serde_json::to_string(&c.input).unwrap_or_default()
}

/// A call's headline as the report shows it: the tool as named (60 cells at most), and the
/// argument that matters with its details on one line of at most `cells` cells.
pub(super) fn headline(c: &Call, cells: usize) -> (String, String) {
    let json = input_json(c);
    let h = tool::headline(c.dialect, &c.name, &Args::parse(&json));
    let line = std::iter::once(h.arg)
        .chain(h.detail)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    (clip_line(&h.tool, 60), clip_line(&line, cells))
}

/// Whether the headline says all of the call's input (an object).
fn said(c: &Call) -> bool {
    c.input.is_object() && tool::said(c.dialect, &c.name, &Args::parse(&input_json(c)))
}

/// The summary's right side of a call: time, edit counts, status.
fn call_meta(c: &Call, edits: Option<&[Diff]>) -> String {
    let mut m = Vec::new();
    if let Some(d) = c.duration_us() {
        m.push(Roomy.duration_ms((d / 1000) as u64));
    }
    if let Some(ds) = edits {
        let a: u64 = ds.iter().map(|d| d.added).sum();
        let r: u64 = ds.iter().map(|d| d.removed).sum();
        m.push(format!("+{a} −{r}"));
    }
    match &c.result {
        Some(r) if r.is_error => m.push("error".into()),
        Some(_) => {}
        None => m.push("no result".into()),
    }
    // A command's non-zero exit status, where its agent states it (some call it a success).
    if let Some(code) = c
        .result
        .as_ref()
        .and_then(|r| r.exit_code)
        .filter(|c| *c != 0)
    {
        m.push(format!("exit {code}"));
    }
    m.join(" · ")
}

/// `in 1.2k · out 340 · cache r 45k / w 2k`.
pub fn tokens(t: &Tokens) -> String {
    format!(
        "in {} · out {} · cache r {} / w {}",
        Roomy.tokens(t.input),
        Roomy.tokens(t.output),
        Roomy.tokens(t.cache_read),
        Roomy.tokens(t.cache_write)
    )
}

/// Escaped text (for callers that build strings).
pub fn esc(s: &str) -> String {
    html(s)
}
