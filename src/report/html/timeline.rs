//! The timeline: turns, tool calls and subagents as bars over wall-clock time, in inline SVG
//! (no library, no style attributes); parallel calls go on separate rows, each bar links to its
//! event.

use super::super::model::{Item, Run};
use super::thread::{W, esc};
use crate::view::num::Style::Roomy;

/// At most this many rows of tool bars (later ones share the last).
const ROWS: usize = 24;
/// Drawing width (viewBox units).
const WIDTH: f64 = 1000.0;
const ROW_H: f64 = 14.0;

struct Bar {
    start: i64,
    end: i64,
    seq: u64,
    class: &'static str,
    title: String,
}

impl W<'_> {
    /// The section; says so when the input has no times.
    pub fn timeline(&mut self) {
        let run = self.run;
        self.raw("<section id=\"timeline\"><h2>Timeline</h2>");
        let Some((t0, t1)) = run.span_us.filter(|(a, b)| b > a) else {
            self.raw("<p class=\"dim\">No timeline: the input carries no times (plain stream-json from CLIs that write no timestamps).</p></section>\n");
            return;
        };
        let turns = turn_bars(run, t0, t1);
        let mut rows: Vec<Vec<Bar>> = Vec::new();
        let mut ends: Vec<i64> = Vec::new();
        for c in &run.calls {
            let Some(s) = c.at_us else { continue };
            let e = c.result.as_ref().and_then(|r| r.at_us).unwrap_or(t1).max(s);
            let sub = c.id.as_deref().is_some_and(|id| run.thread(id).is_some());
            let class = match (c.failed(), sub, c.parent.is_some()) {
                (true, _, _) => "b-err",
                (_, true, _) => "b-sub",
                (_, _, true) => "b-in",
                _ => "b-tool",
            };
            let (name, line) = super::thread::headline(c, 60);
            let title = format!(
                "{name}{}{line} · {}",
                if line.is_empty() { "" } else { ": " },
                Roomy.duration_ms(((e - s) / 1000) as u64)
            );
            let bar = Bar {
                start: s,
                end: e,
                seq: c.seq,
                class,
                title,
            };
            let row = ends
                .iter()
                .position(|&end| end <= s)
                .unwrap_or(ends.len())
                .min(ROWS - 1);
            if row == ends.len() {
                ends.push(e);
                rows.push(Vec::new());
            } else {
                ends[row] = ends[row].max(e);
            }
            rows[row].push(bar);
        }
        let span = (t1 - t0) as f64;
        let x = |t: i64| (t - t0) as f64 / span * WIDTH;
        let h = (rows.len() as f64 + 1.0) * ROW_H + 18.0;
        self.raw(&format!("<svg class=\"tl\" viewBox=\"0 0 {WIDTH} {h}\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"timeline\">"));
        for i in 0..=4 {
            let t = t0 + (t1 - t0) * i / 4;
            let xx = x(t).min(WIDTH - 40.0);
            self.raw(&format!(
                "<line class=\"tick\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" y2=\"{1:.1}\"/><text class=\"tt\" x=\"{2:.1}\" y=\"{3:.1}\">{4}</text>",
                x(t),
                h - 14.0,
                xx + 2.0,
                h - 3.0,
                Roomy.duration_ms(((t - t0) / 1000) as u64)
            ));
        }
        for b in &turns {
            self.bar(b, x(b.start), x(b.end), 0.0);
        }
        for (r, row) in rows.iter().enumerate() {
            for b in row {
                self.bar(b, x(b.start), x(b.end), (r as f64 + 1.0) * ROW_H);
            }
        }
        self.raw("</svg><p class=\"legend dim\"><span class=\"k b-turn\"></span>turn <span class=\"k b-tool\"></span>tool <span class=\"k b-sub\"></span>subagent <span class=\"k b-in\"></span>call inside a subagent <span class=\"k b-err\"></span>failed</p></section>\n");
    }

    fn bar(&mut self, b: &Bar, x0: f64, x1: f64, y: f64) {
        let w = (x1 - x0).max(1.5);
        self.raw(&format!(
            "<a href=\"#seq-{}\"><rect class=\"{}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\"><title>{}</title></rect></a>",
            b.seq,
            b.class,
            y + 1.0,
            ROW_H - 3.0,
            esc(&b.title)
        ));
    }
}

/// One bar per main-thread turn, from its first timed item to its `turn.end`.
fn turn_bars(run: &Run, t0: i64, t1: i64) -> Vec<Bar> {
    let mut bars = Vec::new();
    let mut start: Option<i64> = None;
    let mut last = t0;
    let mut n = 0;
    for it in &run.main {
        let t = match it {
            Item::Call(i) => run.calls[*i].at_us,
            Item::Usage(i) => run.usages[*i].at_us,
            _ => None,
        };
        if let Some(t) = t {
            start.get_or_insert(t);
            last = last.max(t);
        }
        if let Item::TurnEnd(i) = it {
            n += 1;
            let s = start.take().unwrap_or(last);
            let end = run.turn_ends[*i]
                .duration_ms
                .map_or(last, |d| s + d as i64 * 1000)
                .clamp(s, t1.max(s));
            bars.push(Bar {
                start: s,
                end,
                seq: run.turn_ends[*i].seq,
                class: "b-turn",
                title: format!(
                    "turn {n} · {}",
                    Roomy.duration_ms(((end - s) / 1000) as u64)
                ),
            });
            last = end;
        }
    }
    bars
}
