//! The page: one self-contained HTML file (inline CSS and JS allowed by their SHA-256 hashes in
//! a Content-Security-Policy that loads nothing), readable without JavaScript; the script only
//! adds folding, filters, search, full bodies and the URL-hash state.

mod changes;
mod summary;
mod thread;
mod timeline;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::Source;
use super::model::{Item, Run};
use crate::view::num::{self, Style::Roomy};
use crate::view::text::clip_line;
use thread::W;

/// The stylesheet, inlined.
const CSS: &str = include_str!("../assets/report.css");
/// The script, inlined.
const JS: &str = include_str!("../assets/report.js");

/// Above this many tool calls, calls and subagents start folded.
const OPEN_CALLS: usize = 60;

/// `'sha256-…'` of an inline element's text, for the CSP.
fn csp_hash(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(d)
    )
}

/// The Content-Security-Policy: nothing may be loaded; only this page's own style and script
/// (by hash) run; images only from `data:`.
pub fn csp() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        csp_hash(JS),
        csp_hash(CSS)
    )
}

/// The whole page for `run`.
pub fn page(run: &Run, src: &Source) -> String {
    let mut w = W::new(run, run.calls.len() <= OPEN_CALLS);
    let (outcome, _) = summary::outcome(run);
    w.raw("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"");
    w.raw(&csp());
    w.raw("\">\n<meta name=\"referrer\" content=\"no-referrer\"><meta name=\"color-scheme\" content=\"light dark\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"boo-normalize ");
    w.attr(src.tool_version);
    w.raw("\">\n<title>");
    let models = run.models();
    w.text(&format!(
        "{} run · {outcome} · {}",
        run.agent(),
        models.first().map_or("unknown model", String::as_str)
    ));
    w.raw("</title>\n<style>");
    w.raw(CSS);
    w.raw("</style></head>\n<body>\n");
    toolbar(&mut w);
    w.raw("<main>\n");
    w.header(src);
    toc(&mut w);
    w.tools_table();
    w.subagents_table();
    w.timeline();
    w.transcript();
    w.changes();
    w.raw("</main>\n");
    footer(&mut w, src);
    let blobs = std::mem::take(&mut w.blobs);
    blobs.write(&mut w.out);
    w.raw("<script>");
    w.raw(JS);
    w.raw("</script>\n</body></html>\n");
    w.out
}

/// Links to the sections this report has.
fn toc(w: &mut W<'_>) {
    let run = w.run;
    let subs = run
        .calls
        .iter()
        .any(|c| c.id.as_deref().is_some_and(|id| run.thread(id).is_some()));
    let edits = run.calls.iter().any(|c| c.edits().is_some());
    w.raw("<nav class=\"toc\"><a href=\"#top\">Summary</a>");
    for (on, id, label) in [
        (!run.calls.is_empty(), "tools", "Tools"),
        (subs, "subagents", "Subagents"),
        (true, "timeline", "Timeline"),
        (true, "transcript", "Transcript"),
        (edits, "changes", "Changes"),
    ] {
        if on {
            w.raw(&format!(" <a href=\"#{id}\">{label}</a>"));
        }
    }
    w.raw("</nav>\n");
}

/// Counts per item kind over every thread: (data-k, label, count).
fn kind_counts(run: &Run) -> Vec<(&'static str, &'static str, usize)> {
    let mut c = [0usize; 7];
    for it in run.main.iter().chain(run.threads.iter().flat_map(|t| &t.1)) {
        let i = match it {
            Item::Text { .. } => 0,
            Item::Thinking { .. } => 1,
            Item::User { .. } => 2,
            Item::Call(_) => 3,
            Item::Usage(_) => 4,
            Item::Notice(_) => 5,
            Item::TurnEnd(_) | Item::Init(_) => 6,
        };
        c[i] += 1;
    }
    let names = [
        ("text", "text"),
        ("thinking", "thinking"),
        ("user", "user"),
        ("tool", "tool calls"),
        ("usage", "usage"),
        ("notice", "notices"),
        ("result", "results"),
    ];
    names
        .iter()
        .zip(c)
        .map(|((k, l), n)| (*k, *l, n))
        .filter(|x| x.2 > 0)
        .collect()
}

/// The toolbar: hidden until the script shows it (its controls need JavaScript).
fn toolbar(w: &mut W<'_>) {
    let run = w.run;
    w.raw("<nav id=\"bar\" hidden><input id=\"q\" type=\"search\" placeholder=\"search, tool output too\" aria-label=\"search\"> <span id=\"qn\" class=\"dim\"></span> ");
    for (k, label, n) in kind_counts(run) {
        w.raw(&format!("<label><input type=\"checkbox\" data-k=\"{k}\" checked> {label} <span class=\"n\">{n}</span></label> "));
    }
    let mut tools: Vec<(&str, usize)> = Vec::new();
    for c in &run.calls {
        match tools.iter_mut().find(|t| t.0 == c.name) {
            Some(t) => t.1 += 1,
            None => tools.push((&c.name, 1)),
        }
    }
    tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !tools.is_empty() {
        w.raw(&format!(
            "<select id=\"tool\" aria-label=\"tool\"><option value=\"\">all tools ({})</option>",
            run.calls.len()
        ));
        for (t, n) in tools {
            w.raw("<option value=\"");
            w.attr(t);
            w.raw("\">");
            w.text(&clip_line(t, 40));
            w.raw(&format!(" ({n})</option>"));
        }
        w.raw("</select> ");
    }
    let errs = run.calls.iter().filter(|c| c.failed()).count();
    w.raw(&format!("<label><input type=\"checkbox\" id=\"erronly\"> failed only <span class=\"n\">{errs}</span></label> "));
    w.raw("<button type=\"button\" id=\"expand\">expand all</button> <button type=\"button\" id=\"collapse\">collapse all</button> <button type=\"button\" id=\"theme\">theme: auto</button></nav>\n");
}

fn footer(w: &mut W<'_>, src: &Source) {
    w.raw("<footer><p>boo-normalize ");
    w.text(src.tool_version);
    w.raw(" · envelope v1 · ");
    w.text(src.kind);
    w.raw(" input · run ");
    w.text(&src.run_id);
    w.raw(" · generated ");
    w.text(&num::utc(src.generated_us));
    w.raw("</p><ul class=\"inputs\">");
    for i in &src.inputs {
        w.raw("<li><code>");
        w.text(&i.name);
        w.raw("</code> ");
        w.text(&Roomy.bytes(i.bytes));
        w.raw(" · sha256 <code>");
        w.text(&i.sha256);
        w.raw("</code></li>");
    }
    w.raw("</ul>");
    w.other_events();
    w.raw("</footer>\n");
}
