//! The "Changes" section: every Edit, MultiEdit, Write and NotebookEdit, grouped per file in
//! the order the files were first touched, each with its diff, counts and a link to its call.

use super::thread::W;
use crate::view::diff::{Diff, Line};
use crate::view::num;
use crate::view::tool::{self, Kind};

/// Diffs longer than this many lines are cut (head and tail kept).
const DIFF_LINES: usize = 120;

/// One call's edits of a file: the call's index and its diffs.
type Edit = (usize, Vec<Diff>);

impl W<'_> {
    /// The section (nothing when the run edited no file).
    pub fn changes(&mut self) {
        let run = self.run;
        let mut files: Vec<(String, Vec<Edit>)> = Vec::new();
        for (i, c) in run.calls.iter().enumerate() {
            let Some((path, diffs)) = c.edits() else {
                continue;
            };
            match files.iter_mut().find(|(p, _)| *p == path) {
                Some((_, v)) => v.push((i, diffs)),
                None => files.push((path, vec![(i, diffs)])),
            }
        }
        if files.is_empty() {
            return;
        }
        self.raw(&format!(
            "<section id=\"changes\"><h2>Changes <span class=\"dim\">{} files</span></h2>\n",
            files.len()
        ));
        for (path, edits) in &files {
            let added: u64 = edits.iter().flat_map(|e| &e.1).map(|d| d.added).sum();
            let removed: u64 = edits.iter().flat_map(|e| &e.1).map(|d| d.removed).sum();
            let failed = edits.iter().filter(|e| run.calls[e.0].failed()).count();
            self.raw("<details class=\"file\"");
            self.raw(if self.open { " open>" } else { ">" });
            self.raw("<summary><code>");
            self.text(path);
            self.raw(&format!(
                "</code> <span class=\"cm\">{} edit{} · <span class=\"a\">+{added}</span> <span class=\"d\">−{removed}</span>{}</span></summary>",
                edits.len(),
                if edits.len() == 1 { "" } else { "s" },
                if failed > 0 { format!(" · {failed} failed") } else { String::new() }
            ));
            for (i, diffs) in edits {
                let c = &run.calls[*i];
                self.raw(&format!(
                    "<div class=\"edit{}\" id=\"chg-{}\"><a href=\"#seq-{}\">",
                    if c.failed() { " err" } else { "" },
                    c.seq,
                    c.seq
                ));
                self.text(&c.name);
                self.raw(&format!(" #{}</a>", c.seq));
                if let Some(t) = c.at_us {
                    self.raw(&format!(" <span class=\"dim\">{}</span>", num::utc(t)));
                }
                if c.failed() {
                    self.raw(" <span class=\"errn\">failed: not applied</span>");
                }
                if tool::kind(c.dialect, &c.name) == Kind::Write {
                    let n = diffs.first().map_or(0, |d| d.added);
                    self.raw(&format!(
                        " <span class=\"dim\">+{} written (content in the call)</span>",
                        num::plural(n, "line", "lines")
                    ));
                } else {
                    for d in diffs {
                        self.diff(d);
                    }
                }
                self.raw("</div>");
            }
            self.raw("</details>\n");
        }
        self.raw("</section>\n");
    }

    /// A diff, cut to its first and last lines when long.
    fn diff(&mut self, d: &Diff) {
        self.raw("<div class=\"body\"><pre class=\"diff\">");
        let lines = rows(d);
        let n = lines.len();
        let cut = n > DIFF_LINES;
        let (head, tail) = if cut {
            (DIFF_LINES * 3 / 4, DIFF_LINES / 4)
        } else {
            (n, 0)
        };
        for (i, &(tag, l)) in lines.iter().enumerate() {
            if i == head && cut {
                self.raw(&format!(
                    "</pre><div class=\"more\">… {} …</div><pre class=\"diff\">",
                    num::plural((n - head - tail) as u64, "more line", "more lines")
                ));
            }
            if i >= head && i < n - tail {
                continue;
            }
            let cls = match tag {
                '+' => "a",
                '-' => "d",
                '@' => "h",
                _ => "c",
            };
            self.raw(&format!("<span class=\"{cls}\">"));
            if tag == '@' {
                self.raw("⋯");
            } else {
                self.out.push(tag);
                self.text(&tool_line(l));
            }
            self.raw("</span>\n");
        }
        self.raw("</pre>");
        if cut {
            let id = self.blobs.add(&unified(&lines));
            self.raw(&format!("<button type=\"button\" class=\"full\" data-blob=\"{id}\" hidden>show full diff</button>"));
        }
        self.raw("</div>");
    }
}

/// A diff's lines as drawn: tag `+`, `-`, ` ` (context) or `@` (between two hunks), and text.
fn rows(d: &Diff) -> Vec<(char, &str)> {
    let mut rows = Vec::with_capacity(d.lines.len());
    for l in &d.lines {
        rows.push(match l {
            // The first hunk needs no separator.
            Line::Hunk { .. } if rows.is_empty() => continue,
            Line::Hunk { .. } => ('@', ""),
            Line::Context(t) => (' ', t.as_str()),
            Line::Removed(t) => ('-', t.as_str()),
            Line::Added(t) => ('+', t.as_str()),
        });
    }
    rows
}

/// The drawn lines as text (the full diff behind its button, and what search finds).
fn unified(rows: &[(char, &str)]) -> String {
    let mut s = String::new();
    for &(tag, l) in rows {
        s.push(tag);
        if tag == '@' {
            s.push_str("@ …");
        }
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// A diff line, cut at 2000 characters.
fn tool_line(l: &str) -> String {
    if l.len() <= 2000 {
        return l.to_owned();
    }
    let mut end = 2000;
    while !l.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … ({} more bytes)", &l[..end], l.len() - end)
}
