//! The top of the report: the summary header (outcome, models, CLI version, times, turns,
//! tokens by kind, cost, the audit chain's verdict), the per-tool table, the subagent table and
//! the list of event types shown nowhere else.

use std::collections::BTreeMap;

use super::super::model::{Level, Run};
use super::super::{Chain, Source};
use super::thread::{W, tokens};
use crate::view::num::{self, Style::Roomy};
use crate::view::text::clip_line;

/// The outcome badge text and whether it is good.
pub fn outcome(run: &Run) -> (String, bool) {
    let main_ends: Vec<_> = run
        .turn_ends
        .iter()
        .filter(|t| t.parent.is_none())
        .collect();
    match main_ends.last() {
        Some(t) => (t.outcome.clone(), !t.is_error && t.outcome == "success"),
        None => ("no result".into(), false),
    }
}

impl W<'_> {
    /// The header with the summary grid.
    pub fn header(&mut self, src: &Source) {
        let run = self.run;
        let (out, ok) = outcome(run);
        self.raw("<header id=\"top\"><h1>");
        self.text(run.agent());
        self.raw(" run <span class=\"badge ");
        self.raw(if ok { "ok\">" } else { "bad\">" });
        self.text(&clip_line(&out, 40));
        self.raw("</span></h1>\n");
        if src.redacted {
            self.raw(&format!(
                "<p class=\"banner\">Redacted before writing: {} placeholder{} in the events drawn here.</p>",
                run.placeholders,
                if run.placeholders == 1 { "" } else { "s" }
            ));
        }
        if let Some(argv) = &src.argv {
            self.raw("<div class=\"argv\"><span class=\"lbl\">command</span> <code>");
            self.text(&argv.join(" "));
            self.raw("</code></div>");
        }
        self.raw("<dl class=\"grid\">");
        let models = run.models();
        self.row(
            "models",
            &if models.is_empty() {
                "unknown".into()
            } else {
                models.join(", ")
            },
        );
        self.row(run.agent(), run.cli_version().unwrap_or("unknown"));
        if let Some(i) = run.inits.last() {
            if let Some(c) = &i.cwd {
                self.row("cwd", c);
            }
            if let Some(s) = &i.session_id {
                self.row("session", s);
            }
        }
        if let Some((a, b)) = run.span_us {
            self.row("started", &num::utc(a));
            self.row("wall time", &Roomy.duration_ms(((b - a) / 1000) as u64));
        }
        let mains: Vec<_> = run
            .turn_ends
            .iter()
            .filter(|t| t.parent.is_none())
            .collect();
        let api: u64 = mains.iter().filter_map(|t| t.duration_api_ms).sum();
        let dur: u64 = mains.iter().filter_map(|t| t.duration_ms).sum();
        if dur > 0 {
            self.row(
                "run time (CLI)",
                &format!(
                    "{} (API {})",
                    Roomy.duration_ms(dur),
                    Roomy.duration_ms(api)
                ),
            );
        }
        let api_turns: u64 = mains.iter().filter_map(|t| t.num_turns).sum();
        self.row(
            "turns",
            &format!(
                "{}, {}",
                num::plural(mains.len() as u64, "result", "results"),
                num::plural(api_turns, "API turn", "API turns")
            ),
        );
        let end = run.end.clone().unwrap_or_default();
        let calls = end.tool_calls.unwrap_or(run.calls.len() as u64);
        let failed = run.calls.iter().filter(|c| c.failed()).count();
        self.row("tool calls", &format!("{calls} ({failed} failed)"));
        if let Some(m) = end.api_messages {
            self.row("API messages", &m.to_string());
        }
        self.row(
            "cost",
            &format!(
                "{}{}",
                end.cost_usd.map_or("n/a".into(), |c| Roomy.usd(c)),
                if end.cost_usd.is_some() {
                    " (as the CLI reported it)"
                } else {
                    ""
                }
            ),
        );
        self.row(
            "end",
            &format!(
                "{}{}{}",
                if end.cause.is_empty() {
                    "?"
                } else {
                    &end.cause
                },
                end.exit_code
                    .map(|c| format!(", exit {c}"))
                    .unwrap_or_default(),
                end.signal
                    .as_deref()
                    .map(|s| format!(", {s}"))
                    .unwrap_or_default()
            ),
        );
        let notes: Vec<String> = [Level::Error, Level::Warn, Level::Info]
            .iter()
            .filter_map(|l| {
                run.notice_counts
                    .get(l)
                    .map(|n| format!("{n} {}", l.class()))
            })
            .collect();
        if !notes.is_empty() {
            self.row("notices", &notes.join(", "));
        }
        self.raw("</dl>");
        self.tokens_table(&end.tokens, end.provisional);
        self.chain(src);
        self.raw("</header>\n");
    }

    fn row(&mut self, k: &str, v: &str) {
        self.raw("<div><dt>");
        self.text(k);
        self.raw("</dt><dd>");
        self.text(&clip_line(v, 240));
        self.raw("</dd></div>");
    }

    fn tokens_table(&mut self, t: &super::super::model::Tokens, provisional: bool) {
        self.raw("<table class=\"tok\"><caption>tokens");
        if provisional {
            self.raw(" (provisional: no final count for some message)");
        }
        self.raw("</caption><tr><th>input</th><th>output</th><th>cache read</th><th>cache write</th><th>total</th></tr><tr>");
        for n in [t.input, t.output, t.cache_read, t.cache_write, t.total()] {
            self.raw(&format!("<td title=\"{n}\">{}</td>", Roomy.tokens(n)));
        }
        self.raw("</tr></table>");
    }

    fn chain(&mut self, src: &Source) {
        for (name, c) in &src.chains {
            let (cls, msg) = match c {
                Chain::Verified { records, runs } => (
                    "ok",
                    format!(
                        "hash chain verified: {}, {}",
                        num::plural(*records, "record", "records"),
                        num::plural(*runs, "run", "runs")
                    ),
                ),
                Chain::Broken(why) => ("bad", format!("hash chain broken: {why}")),
            };
            self.raw(&format!("<p class=\"chain {cls}\">"));
            self.text(&format!("{name}: {msg}"));
            self.raw("</p>");
        }
    }

    /// Per tool: calls, errors, total and longest time.
    pub fn tools_table(&mut self) {
        let run = self.run;
        let mut by: BTreeMap<&str, (u64, u64, i64, i64, u64)> = BTreeMap::new();
        for c in &run.calls {
            let e = by.entry(&c.name).or_default();
            e.0 += 1;
            e.1 += u64::from(c.failed());
            if let Some(d) = c.duration_us() {
                e.2 += d;
                e.3 = e.3.max(d);
                e.4 += 1;
            }
        }
        if by.is_empty() {
            return;
        }
        let mut rows: Vec<_> = by.into_iter().collect();
        rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
        self.raw("<section id=\"tools\"><h2>Tools</h2><table class=\"tools\"><tr><th>tool</th><th>calls</th><th>errors</th><th>time</th><th>longest</th></tr>");
        for (name, (n, err, total, max, timed)) in rows {
            self.raw("<tr><td><code>");
            self.text(&clip_line(name, 60));
            let t = |us: i64| {
                if timed > 0 {
                    Roomy.duration_ms((us / 1000) as u64)
                } else {
                    "–".into()
                }
            };
            self.raw(&format!(
                "</code></td><td>{n}</td><td class=\"{}\">{err}</td><td>{}</td><td>{}</td></tr>",
                if err > 0 { "errn" } else { "" },
                t(total),
                t(max)
            ));
        }
        self.raw("</table></section>\n");
    }

    /// Every subagent with its own totals, linked to its call.
    pub fn subagents_table(&mut self) {
        let run = self.run;
        let subs: Vec<_> = run
            .calls
            .iter()
            .filter(|c| c.id.as_deref().is_some_and(|id| run.thread(id).is_some()))
            .collect();
        if subs.is_empty() {
            return;
        }
        self.raw("<section id=\"subagents\"><h2>Subagents</h2><table class=\"tools\"><tr><th>call</th><th>type</th><th>description</th><th>calls</th><th>messages</th><th>tokens</th><th>time</th><th>status</th></tr>");
        for c in subs {
            let id = c.id.as_deref().unwrap_or_default();
            let t = self.subs.get(id).copied().unwrap_or_default();
            let task = run.tasks.get(id);
            let (kind, desc) = run.subagent_label(c);
            let (kind, desc) = (kind.unwrap_or_default(), desc.unwrap_or_default());
            self.raw(&format!(
                "<tr><td><a href=\"#seq-{}\">#{}</a></td><td>",
                c.seq, c.seq
            ));
            self.text(&clip_line(kind, 40));
            self.raw("</td><td>");
            self.text(&clip_line(desc, 80));
            self.raw(&format!(
                "</td><td>{}{}</td><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>",
                t.calls,
                if t.errors > 0 {
                    format!(" ({} failed)", t.errors)
                } else {
                    String::new()
                },
                t.messages,
                tokens(&t.tokens),
                Roomy.tokens(t.tokens.total()),
                c.duration_us()
                    .map_or("–".into(), |d| Roomy.duration_ms((d / 1000) as u64))
            ));
            let status = task.and_then(|t| t.status.clone()).unwrap_or_else(|| {
                if c.failed() {
                    "error".into()
                } else if c.result.is_some() {
                    "done".into()
                } else {
                    "no result".into()
                }
            });
            self.text(&clip_line(&status, 40));
            self.raw("</td></tr>");
        }
        self.raw("</table></section>\n");
    }

    /// Event types the report does not draw, with counts (nothing disappears unseen).
    pub fn other_events(&mut self) {
        let run = self.run;
        self.raw(&format!(
            "<p class=\"dim\">{} events; {} streaming deltas and lifecycle events dropped",
            run.events + run.ephemeral,
            run.ephemeral
        ));
        if !run.other.is_empty() {
            self.raw("; not drawn: ");
            let list: Vec<String> = run.other.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            self.text(&list.join(", "));
        }
        self.raw(".</p>");
    }
}
